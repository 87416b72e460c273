"""The MCP tools and the engine socket with generated arguments and frames: one-line answers, never a bug, every
acknowledged write kept. The real MCP server object and the real socket server, over an engine with the fake
embedder (what is drawn here is the input, not the model)."""

from __future__ import annotations

import os
from multiprocessing.connection import Client, answer_challenge, deliver_challenge
from pathlib import Path

import anyio
import pytest
from hypothesis import given
from hypothesis import strategies as st
from mcp.server.mcpserver.exceptions import ToolError

from desktop_memory.ipc import address, codec
from desktop_memory.ipc.server import CALLS, IpcServer
from desktop_memory.mcp.engine import EngineAccess
from desktop_memory.mcp.server import build_server
from tests.fakes import FakeEmbedder

from .conftest import FUZZ
from .strategies import NASTY, any_text, dumps, json_values, words

TOOLS = {  # each tool's arguments, and values of the types it takes
    "search_memories": ["query", "limit", "source", "app", "tag", "after", "before", "pinned_only"],
    "get_context": ["query", "ids", "budget", "format"],
    "add_memory": ["content", "tags", "title"],
    "pin_memory": ["id", "pinned"],
    "forget_memory": ["id"],
}
typed = st.one_of(json_values, st.integers(min_value=-5, max_value=300), st.sampled_from(["markdown", "text"]),
                  st.lists(any_text, max_size=3), words)


def _one_line(text: str) -> None:
    assert text.strip() and "\n" not in text and "\r" not in text, repr(text)
    for internal in ("Traceback", "pydantic", "[type=", "input_value", "unexpected error"):
        assert internal not in text, text


@pytest.fixture(scope="module")
def mcp(tmp_path_factory):
    access = EngineAccess(tmp_path_factory.mktemp("fuzz-mcp") / "data", embedder=FakeEmbedder(), idle_close_s=60)
    server = build_server(access)
    yield server, access, set()
    access.close()


def _call(server, tool: str, args: dict):
    async def go():
        return await server.call_tool(tool, args)

    return anyio.run(go)


@FUZZ
@given(tool=st.sampled_from(sorted(TOOLS)), data=st.data())
def test_any_tool_arguments_answer_or_fail_in_one_line(mcp, tool, data):
    server, access, acknowledged = mcp
    names = data.draw(st.lists(st.one_of(st.sampled_from(TOOLS[tool]), st.sampled_from(NASTY[:12])), unique=True,
                               max_size=5))
    args = {name: data.draw(typed) for name in names}
    try:
        result = _call(server, tool, args)
    except ToolError as exc:
        _one_line(str(exc))
    else:
        if tool == "add_memory":
            content = result[1] if isinstance(result, tuple) else result
            acknowledged.add(content["id"] if isinstance(content, dict) else content.structured_content["id"])
    assert all(access.call(lambda e, mid=mid: e.get(mid)).id == mid for mid in acknowledged)


# -- the engine socket ---------------------------------------------------------------------------------
# methods that delete or replace on purpose, change the folder's key or model, or write files where they are
# told: drawn with their own tests, not here
LEFT_OUT = {"purge", "retention", "erase_everything", "restore_backup", "set_encryption", "set_embedding_model",
            "save_settings", "create_backup", "export_to_file", "start_enrichment", "enrich", "stop_enrichment",
            "set_enrichment_model", "verify_enrichment_model", "enrichment_changes"}
METHODS = sorted(set(CALLS) - LEFT_OUT)


@pytest.fixture(scope="module")
def socket(tmp_path_factory, ring_module):
    from desktop_memory.service import MemoryService

    folder = tmp_path_factory.mktemp("fuzz-socket") / "data"
    with MemoryService(folder, embedder=FakeEmbedder()) as service, IpcServer(service, folder):
        token = address.read_token(folder) if hasattr(address, "read_token") else None
        yield service, folder, token, set()


def _connect(folder: Path, token: bytes | None):
    from desktop_memory.ipc.client import connect

    remote = connect(folder)
    assert remote is not None
    return remote


frames = st.one_of(
    st.binary(max_size=300),
    st.sampled_from([b"", b"{}", b"[]", b"null", b'{"method": 5}', b'{"method": "ping", "params": []}',
                     b'{"method": "add", "params": {"text": "\\ud83d"}}', b'{"method": "get", "params": {"memory_id":'
                     b' "\\udcff"}}']),
    st.builds(lambda m, p: dumps({"method": m, "params": p}).encode(),
              st.one_of(st.sampled_from(METHODS), any_text), json_values),
    st.builds(lambda m, p: dumps({"method": m, "params": p}).encode(), st.sampled_from(METHODS),
              st.dictionaries(st.sampled_from(["text", "memory_id", "ids", "query", "limit", "budget", "source",
                                               "tags", "title", "filters", "pinned", "forgotten", "content", "seq",
                                               "records", "add", "remove", "fmt", "include_forgotten"]),
                              json_values, max_size=4)),
)


@FUZZ
@given(raw=frames, text=words)
def test_any_frame_gets_a_one_line_answer_and_the_connection_keeps_serving(socket, raw, text):
    service, folder, token, acknowledged = socket
    remote = _connect(folder, token)
    conn = remote._conn
    try:
        try:
            conn.send_bytes(raw)
        except ValueError:  # a frame the connection itself refuses to send
            return
        answer = codec.loads(conn.recv_bytes())
        assert isinstance(answer, dict) and ("result" in answer) != ("error" in answer), answer
        if "error" in answer:
            assert answer["error"]["kind"] != "bug", answer["error"]
            _one_line(answer["error"]["message"])
        added = remote.add(text + " " + os.urandom(4).hex(), source="cli")  # the same connection still serves
        acknowledged.add(added.memory.id)
    finally:
        remote.close()
    assert all(service.get(mid).id == mid for mid in acknowledged)


@pytest.fixture(scope="module")
def ring_module():
    import keyring

    from tests.fakes import MemoryKeyring

    before = keyring.get_keyring()
    keyring.set_keyring(MemoryKeyring())
    yield
    keyring.set_keyring(before)


def test_client_side_helpers_exist():
    """The fuzz talks the socket's own framing (multiprocessing.connection) after its handshake."""
    assert Client and answer_challenge and deliver_challenge
