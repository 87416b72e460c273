"""MCP tool inputs are checked like import lines: `pinned` true/false only, tags strings only.

The real MCP server object (SDK argument validation included) over an in-process engine with the fake embedder.
"""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest
from mcp.server.mcpserver.exceptions import ToolError

from desktop_memory.mcp.engine import EngineAccess
from desktop_memory.mcp.server import build_server
from tests.fakes import FakeEmbedder


@pytest.fixture
def server(data_dir: Path):
    access = EngineAccess(data_dir, embedder=FakeEmbedder(), idle_close_s=5)
    yield build_server(access), access
    access.close()


def _call(server, tool: str, args: dict):
    async def go():
        return await server.call_tool(tool, args)

    return anyio.run(go)


def _added_id(result) -> str:
    content = result[1] if isinstance(result, tuple) else result
    return content["id"] if isinstance(content, dict) else content.structured_content["id"]


@pytest.mark.parametrize("value", ["no", "yes", 1, 0, "0", "on"])
def test_pin_memory_refuses_anything_but_true_or_false(server, value):
    srv, access = server
    mid = _added_id(_call(srv, "add_memory", {"content": "the harbour meeting moved to Thursday"}))
    with pytest.raises(ToolError, match="pinned"):
        _call(srv, "pin_memory", {"id": mid, "pinned": value})
    assert access.call(lambda e: e.get(mid)).pinned is False


@pytest.mark.parametrize(("value", "pinned"), [(False, False), ("false", False), (True, True), ("true", True)])
def test_pin_memory_takes_true_and_false(server, value, pinned):
    srv, access = server
    mid = _added_id(_call(srv, "add_memory", {"content": "the orchard delivery is on Monday"}))
    _call(srv, "pin_memory", {"id": mid, "pinned": value})
    assert access.call(lambda e: e.get(mid)).pinned is pinned


@pytest.mark.parametrize("tags", [[1, None], [{"x": 2}], ["ok", 3]])
def test_add_memory_refuses_tags_that_are_not_strings(server, tags):
    srv, access = server
    with pytest.raises(ToolError, match="tags"):
        _call(srv, "add_memory", {"content": "a note with odd tags", "tags": tags})
    assert access.call(lambda e: e.stats()).memories == 0


def test_add_memory_takes_tags_as_one_string_too(server):
    srv, access = server
    mid = _added_id(_call(srv, "add_memory", {"content": "the glacier trip plan", "tags": "travel, plans"}))
    assert access.call(lambda e: e.get(mid)).tags == ["travel", "plans"]


def test_a_full_disk_is_a_one_line_tool_error(server, monkeypatch):
    import apsw

    srv, access = server
    _call(srv, "add_memory", {"content": "a note before the disk filled"})

    def full(*_a, **_k):
        raise apsw.FullError("database or disk is full")

    access.call(lambda e: monkeypatch.setattr(e, "add", full))
    with pytest.raises(ToolError, match=": the disk is full: free some space and try again$"):
        _call(srv, "add_memory", {"content": "a note on a full disk"})
