"""`desktop-memory mcp` driven by the official MCP SDK client over stdio, with the real engine and model."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

import pytest
from mcp import ClientSession

from desktop_memory.ipc.client import connect
from desktop_memory.ipc.service_start import stop_service
from tests.mcp_stdio import mcp_session

from .test_ipc import HOLDER, HOST, cli, start, stop

pytestmark = pytest.mark.integration
TOOLS = {"search_memories", "get_context", "add_memory", "pin_memory", "forget_memory"}


async def call(session: ClientSession, tool: str, args: dict[str, Any]) -> Any:
    """A successful tool call's structured result (or its text)."""
    res = await session.call_tool(tool, args)
    assert not res.is_error, res.content[0].text
    return res.structured_content if res.structured_content is not None else res.content[0].text


async def error(session: ClientSession, tool: str, args: dict[str, Any]) -> str:
    """A failed tool call's message: one line, as everywhere in the product."""
    res = await session.call_tool(tool, args)
    assert res.is_error
    text = res.content[0].text
    assert "\n" not in text and "pydantic" not in text, text
    return text


def server_rss_kb(folder: Path) -> int:
    """Resident memory of the MCP server's engine: the folder's engine service (ipc/service_start.py), plus the
    thin `desktop-memory mcp` process itself, from /proc."""
    total, seen = 0, []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            ppid = int(stat.read_text().rsplit(")", 1)[1].split()[1])
            cmd = (stat.parent / "cmdline").read_bytes().split(b"\0")
        except (OSError, IndexError, ValueError):
            continue
        ours = str(folder).encode() in cmd and (
            (ppid == os.getpid() and b"mcp" in cmd) or (b"engine-host" in cmd and b"--service" in cmd))
        if ours:
            status = (stat.parent / "status").read_text()
            total += int(next(line.split()[1] for line in status.splitlines() if line.startswith("VmRSS:")))
            seen.append(cmd)
    assert len(seen) == 2, f"the MCP server and its engine service were not both found: {seen}"
    return total


def test_tools_over_stdio_with_titles_annotations_and_tool_errors(tmp_path: Path):
    folder = tmp_path / "data"

    async def body(s: ClientSession) -> None:
        tools = {t.name: t for t in (await s.list_tools()).tools}
        assert set(tools) == TOOLS
        for t in tools.values():
            assert t.title and len(t.description or "") > 40 and t.input_schema["type"] == "object"
            assert t.annotations is not None and t.annotations.open_world_hint is False
        assert tools["search_memories"].annotations.read_only_hint is True
        assert tools["get_context"].annotations.read_only_hint is True
        assert tools["add_memory"].annotations.destructive_hint is False
        assert tools["pin_memory"].annotations.read_only_hint is False
        assert tools["forget_memory"].annotations.destructive_hint is True

        added = await call(s, "add_memory", {"content": "Staging deploys use key AKIAIOSFODNN7EXAMPLE and run "
                                             "every Tuesday at 10:00", "tags": ["Ops"], "title": "Deploys"})
        assert added["status"] == "added" and added["redacted_secrets"] == 1
        await call(s, "add_memory", {"content": "Grandma's lasagne: bake 45 minutes at 180 degrees"})
        again = await call(s, "add_memory", {"content": "Grandma's lasagne: bake 45 minutes at 180 degrees"})
        assert again["status"] == "duplicate"

        hits = (await call(s, "search_memories", {"query": "when do we ship to staging?", "limit": 5}))["hits"]
        assert hits[0]["id"] == added["id"] and hits[0]["source"] == "mcp" and hits[0]["tags"] == ["ops"]
        assert "AKIA" not in json.dumps(hits) and "[REDACTED:aws_access_key]" in hits[0]["content"]
        only = (await call(s, "search_memories", {"query": "cooking", "tag": "ops"}))["hits"]
        assert [h["id"] for h in only] == [added["id"]] or only == []
        ctx = await call(s, "get_context", {"query": "deploy schedule", "budget": 200})
        assert "Tuesday" in ctx and "AKIA" not in ctx
        by_id = await call(s, "get_context", {"ids": [added["id"][:8]], "format": "text"})
        assert by_id.startswith("Context from my personal notes")

        pinned = await call(s, "pin_memory", {"id": added["id"]})
        assert pinned == {"id": added["id"], "title": "Deploys", "pinned": True, "forgotten": False}
        assert (await call(s, "pin_memory", {"id": added["id"], "pinned": False}))["pinned"] is False
        assert (await call(s, "forget_memory", {"id": added["id"][:8]}))["forgotten"] is True
        hits = (await call(s, "search_memories", {"query": "staging deploys"}))["hits"]
        assert added["id"] not in [h["id"] for h in hits]

        # bad arguments and unknown ids: tool errors with a readable message, and the server carries on
        assert "no memory" in await error(s, "pin_memory", {"id": "ffffffff-0000"})
        assert "no memory" in await error(s, "forget_memory", {"id": "nope"})
        assert "no memory" in await error(s, "get_context", {"ids": ["nope"]})
        assert "limit" in await error(s, "search_memories", {"query": "x", "limit": "many"})
        assert "limit" in await error(s, "search_memories", {"query": "x", "limit": 0})
        assert "query" in await error(s, "search_memories", {})
        assert "content" in await error(s, "add_memory", {"content": ""})
        assert "empty" in (await error(s, "add_memory", {"content": " \n\t "})).lower()
        assert "after" in await error(s, "search_memories", {"query": "x", "after": "last tuesday"})
        assert "query or memory ids" in await error(s, "get_context", {})
        assert "budget" in await error(s, "get_context", {"query": "x", "budget": 5})
        assert "Unknown tool" in await error(s, "drop_all_memories", {})
        assert (await call(s, "search_memories", {"query": "lasagne"}))["hits"]

    _, log = mcp_session(folder, body)
    assert "Traceback" not in log
    assert "AKIA" not in log and "lasagne" not in log  # captured content is never logged above debug


def test_mcp_uses_the_running_app_when_there_is_one(tmp_path: Path):
    folder = tmp_path / "data"
    host = start(HOST, folder)
    try:
        async def body(s: ClientSession) -> str:
            added = await call(s, "add_memory", {"content": "Parking spot at the office is B-17", "tags": ["car"]})
            hits = (await call(s, "search_memories", {"query": "where did I park"}))["hits"]
            assert hits[0]["id"] == added["id"]
            await call(s, "pin_memory", {"id": added["id"]})
            return added["id"]

        memory_id, log = mcp_session(folder, body)
        assert "Traceback" not in log
        remote = connect(folder)  # the host held the lock all along: MCP went through it
        assert remote is not None
        with remote:
            m = remote.get(memory_id)
            assert m.source == "mcp" and m.pinned and m.tags == ["car"]
    finally:
        stop(host)


def test_mcp_never_touches_a_folder_another_process_holds(tmp_path: Path):
    folder = tmp_path / "data"
    cli(folder, "add", "Created before anyone held the folder")
    assert stop_service(folder)  # the service that add started hands the folder over
    holder = start(HOLDER, folder)
    db = folder / "memories.sqlite3"
    before = db.stat().st_mtime_ns, (folder / "vectors").stat().st_mtime_ns

    async def refused(s: ClientSession) -> None:
        # waited for (a CLI command may hold the folder a moment), then refused with the holder named
        message = await error(s, "add_memory", {"content": "should not be written while the folder is held"})
        assert "in use by another desktop-memory process" in message
        assert "in use" in await error(s, "search_memories", {"query": "anything"})

    try:
        _, log = mcp_session(folder, refused)
        assert "Traceback" not in log
        assert (db.stat().st_mtime_ns, (folder / "vectors").stat().st_mtime_ns) == before
    finally:
        stop(holder)

    async def shared(s: ClientSession) -> None:
        # MCP starts the folder's engine service; the CLI writes through it in between
        first = await call(s, "add_memory", {"content": "MCP wrote this: the wifi password hint is 'blue door'"})
        cli(folder, "add", "The CLI wrote this: dentist appointment on May 4th at 14:30")
        hits = (await call(s, "search_memories", {"query": "when do I see the dentist?"}))["hits"]
        assert "dentist" in hits[0]["content"]
        assert first["id"] in [h["id"] for h in (await call(s, "search_memories", {"query": "wifi"}))["hits"]]

    mcp_session(folder, shared)
    doctor = json.loads(cli(folder, "doctor", "--json").stdout)
    # through the service: changes it has queued for the index may be written now (not repairs); nothing missing
    repairs = doctor["vector_repairs"]
    assert doctor["ok"] is True and (repairs["copied"], repairs["missing"], repairs["orphans"]) == (0, 0, 0), repairs
    assert json.loads(cli(folder, "stats", "--json").stdout)["memories"] == 3


def test_a_long_session_of_1000_calls_keeps_memory_flat(tmp_path: Path):
    """1,000 tool calls in one session; the server's resident memory must level off (see docs/benchmarks.md)."""
    folder = tmp_path / "data"
    samples: list[tuple[int, int]] = []

    async def body(s: ClientSession) -> None:
        ids = [(await call(s, "add_memory", {"content": f"Seed note {i}: project {i % 7} meeting about topic {i}"}))
               ["id"] for i in range(20)]
        started = time.monotonic()
        for n in range(1, 1001):
            kind = n % 5
            if kind == 0:
                await call(s, "search_memories", {"query": f"project {n % 7} meeting", "limit": 5})
            elif kind == 1:
                await call(s, "get_context", {"query": f"topic {n % 20}", "budget": 300})
            elif kind == 2:
                await call(s, "add_memory", {"content": f"Call {n}: a new note about topic {n % 50}"})
            elif kind == 3:
                await call(s, "pin_memory", {"id": ids[n % 20], "pinned": n % 2 == 0})
            else:
                await error(s, "forget_memory", {"id": f"missing-{n}"})
            if n % 100 == 0:
                samples.append((n, server_rss_kb(folder)))
        print(f"\n1000 MCP calls in {time.monotonic() - started:.1f} s; RSS (KiB) by call: {samples}")

    mcp_session(folder, body)
    warm = samples[1][1]  # after 200 calls: models loaded, caches filled
    last = samples[-1][1]
    assert last - warm < 25 * 1024, f"RSS grew {(last - warm) / 1024:.1f} MiB from call 200 to 1000: {samples}"
