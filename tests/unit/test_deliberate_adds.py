"""Deliberate adds are never merged (issue 30, item 5).

`add` (the service, the CLI) and MCP's `add_memory` always make a memory of their own, even when the text
extends the one added just before from the same source: the person (or the agent) meant two memories.
Exact repeats still bump. The in-place update stays for captures (a selection growing, an answer streaming).
"""

from __future__ import annotations

from pathlib import Path

import anyio

from desktop_memory.cli.commands import cmd_add
from desktop_memory.cli.main import build_parser
from desktop_memory.core.capture import Snapshot
from desktop_memory.mcp.engine import EngineAccess
from desktop_memory.mcp.server import build_server
from tests.fakes import FakeEmbedder

FIRST = "Meeting notes: budget"
LONGER = "Meeting notes: budget approved for Q3"


def test_an_add_that_extends_the_previous_add_is_a_memory_of_its_own(fake_service):
    first = fake_service.add(FIRST, source="clipboard", source_app="Editor")
    second = fake_service.add(LONGER, source="clipboard", source_app="Editor")
    assert second.status in ("added", "related") and second.memory.id != first.memory.id
    assert fake_service.get(first.memory.id).content == FIRST
    assert fake_service.get(second.memory.id).content == LONGER
    assert fake_service.versions(first.memory.id) == [] and fake_service.stats().memories == 2
    again = fake_service.add(LONGER, source="clipboard", source_app="Editor")
    assert again.status == "duplicate" and again.memory.id == second.memory.id


def test_a_capture_that_extends_the_previous_capture_still_updates_it(fake_service):
    first = fake_service.capture(Snapshot(FIRST, app="Editor", automatic=True))
    grown = fake_service.capture(Snapshot(LONGER, app="Editor", automatic=True))
    assert grown.status == "extended" and grown.memory_id == first.memory_id
    assert [v.content for v in fake_service.versions(first.memory_id)] == [FIRST]


def test_an_add_after_a_capture_does_not_extend_the_capture(fake_service):
    captured = fake_service.capture(Snapshot(FIRST, source="cli"))
    added = fake_service.add(LONGER, source="cli")
    assert added.memory.id != captured.memory_id and fake_service.get(captured.memory_id).content == FIRST


def test_cli_add_says_remembered_twice_and_keeps_both(fake_service, capsys):
    parser = build_parser()
    assert cmd_add(fake_service, parser.parse_args(["add", "todo: call"])) == 0
    assert cmd_add(fake_service, parser.parse_args(["add", "todo: call the bank"])) == 0
    first, second = capsys.readouterr().out.splitlines()
    assert first.startswith("Remembered ") and second.startswith("Remembered ")
    assert "Updated" not in second and first.split()[1] != second.split()[1]
    assert sorted(r["content"] for r in fake_service.export_records()) == ["todo: call", "todo: call the bank"]


def test_mcp_add_memory_keeps_both_texts(data_dir: Path):
    access = EngineAccess(data_dir, embedder=FakeEmbedder(), idle_close_s=5)
    server = build_server(access)

    async def add(text: str) -> dict:
        return (await server.call_tool("add_memory", {"content": text})).structured_content

    try:
        first, second = anyio.run(add, FIRST), anyio.run(add, LONGER)
        assert second["status"] in ("added", "related") and second["id"] != first["id"]
        assert access.call(lambda e: e.get(first["id"])).content == FIRST
        assert access.call(lambda e: e.versions(first["id"])) == []
    finally:
        access.close()
