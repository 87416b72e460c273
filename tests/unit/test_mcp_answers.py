"""MCP answers like the rest of the product (issue 30, item 4).

Bad arguments are one line in plain words naming the argument, never pydantic's dump; an empty query gets a
clear answer, not arbitrary memories; the resource and the prompt the server advertises are useful.
In process: the real MCP server object over an engine with the fake embedder. Over stdio: the official SDK
client driving `python -m desktop_memory mcp` as an AI app would (nothing there embeds: no model loads).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import ClientSession
from mcp.server.mcpserver.exceptions import ToolError

from desktop_memory.mcp.engine import EngineAccess
from desktop_memory.mcp.server import build_server
from tests.fakes import FakeEmbedder
from tests.mcp_stdio import mcp_session

BAD = [  # (tool, arguments, what the one line says)
    ("search_memories", {"query": "x", "limit": 0}, "limit: must be between 1 and 50"),
    ("search_memories", {"query": "x", "limit": 10000}, "limit: must be between 1 and 50"),
    ("search_memories", {"query": "x", "limit": "many"}, "limit: must be a whole number"),
    ("search_memories", {"query": "x", "limit": 2.5}, "limit: must be a whole number"),
    ("search_memories", {"query": ["x"]}, "query: must be text"),
    ("search_memories", {}, "query: is required"),
    ("search_memories", {"query": "x", "max_results": 5}, "max_results: unknown argument"),
    ("search_memories", {"query": "x", "pinned_only": "maybe"}, "pinned_only: must be true or false"),
    ("add_memory", {"content": ""}, "content: must not be empty"),
    ("add_memory", {"content": 5}, "content: must be text"),
    ("add_memory", {"content": "a note", "title": "t" * 300}, "title: must have at most 200 characters"),
    ("add_memory", {"content": "a note", "tags": [1]}, '"tags" must hold strings only'),
    ("get_context", {"query": "x", "budget": 10}, "budget: must be between 50 and 200000"),
    ("get_context", {"query": "x", "format": "html"}, "format: must be 'text' or 'markdown'"),
    ("get_context", {"ids": "abc"}, "ids: must be a list"),
    ("get_context", {"ids": ["abcd", 7]}, "ids (item 2): must be text"),
    ("pin_memory", {"id": "abcd", "pinned": "no"}, '"pinned" must be true or false'),
    ("forget_memory", {"memory": "abcd"}, "memory: unknown argument"),
]


def one_plain_line(text: str) -> None:
    assert "\n" not in text and "\r" not in text, text
    for internal in ("Arguments", "pydantic", "http", "[type=", "input_value", "Input should"):
        assert internal not in text, text


@pytest.fixture
def server(data_dir: Path):
    access = EngineAccess(data_dir, embedder=FakeEmbedder(), idle_close_s=5)
    yield build_server(access), access
    access.close()


def _call(srv, tool: str, args: dict) -> Any:
    async def go():
        result = await srv.call_tool(tool, args)
        return result.structured_content if result.structured_content is not None else result.content[0].text

    return anyio.run(go)


def _refused(srv, tool: str, args: dict) -> str:
    with pytest.raises(ToolError) as caught:
        _call(srv, tool, args)
    return str(caught.value)


@pytest.mark.parametrize(("tool", "args", "says"), BAD, ids=[says for _, _, says in BAD])
def test_bad_arguments_are_one_plain_line_naming_the_argument(server, tool, args, says):
    srv, access = server
    message = _refused(srv, tool, args)
    one_plain_line(message)
    assert says in message
    assert access.call(lambda e: e.stats()).memories == 0


def test_several_bad_arguments_are_still_one_line(server):
    message = _refused(server[0], "get_context", {"query": "x", "budget": 1, "format": "pdf"})
    one_plain_line(message)
    assert "budget: must be between 50 and 200000; format: must be 'text' or 'markdown'" in message


def test_an_unknown_argument_is_refused_before_the_tool_runs_and_the_known_ones_are_named(server):
    srv, access = server
    message = _refused(srv, "add_memory", {"content": "the harbour plan", "text": "x", "tag": "work"})
    one_plain_line(message)
    assert message.endswith("text, tag: unknown arguments; add_memory takes content, tags, title")
    assert access.call(lambda e: e.stats()).memories == 0


@pytest.mark.parametrize("query", ["", "   ", "\n\t"])
def test_an_empty_query_is_a_clear_one_line_answer_not_arbitrary_memories(server, query):
    srv, _ = server
    _call(srv, "add_memory", {"content": "the harbour meeting moved to Thursday"})
    message = _refused(srv, "search_memories", {"query": query})
    one_plain_line(message)
    assert "query" in message and "words to look for" in message


def test_filters_alone_list_the_newest_memories_that_pass_them_and_say_so(server):
    srv, _ = server
    kept = _call(srv, "add_memory", {"content": "the glacier trip plan", "tags": ["travel"]})["id"]
    _call(srv, "add_memory", {"content": "the orchard delivery is on Monday"})
    for args in ({"query": "#travel"}, {"query": "", "tag": "travel"}):
        found = _call(srv, "search_memories", args)
        assert [h["id"] for h in found["hits"]] == [kept]
        assert "newest" in found["note"]
    assert "note" not in _call(srv, "search_memories", {"query": "glacier"})


def _read(srv, uri: str) -> str:
    async def go():
        return [c.content for c in await srv.read_resource(uri)]

    (text,) = anyio.run(go)
    return text


def test_the_recent_resource_lists_the_20_newest_memories_one_line_each_with_its_id(server):
    srv, access = server
    assert _read(srv, "memory://recent").strip() == "No memories yet."
    ids = [_call(srv, "add_memory", {"content": f"note {n}: the harbour plan, part {n}"})["id"] for n in range(25)]
    gone = _call(srv, "add_memory", {"content": "a note forgotten later"})["id"]
    _call(srv, "forget_memory", {"id": gone})
    lines = _read(srv, "memory://recent").splitlines()
    assert len(lines) == 20
    assert [line.split()[0] for line in lines] == ids[::-1][:20]
    assert "note 24: the harbour plan, part 24" in lines[0]
    assert access.call(lambda e: e.get(ids[-1])).access_count == 0  # listing is not using
    _call(srv, "pin_memory", {"id": ids[0]})
    first = _read(srv, "memory://recent").splitlines()[0]
    assert first.startswith(ids[0]) and first.endswith("(pinned)")


def test_the_recall_prompt_asks_to_search_memories_about_the_topic(server):
    srv, _ = server

    async def go():
        return await srv.get_prompt("recall", {"topic": "the harbour project"})

    result = anyio.run(go)
    (message,) = result.messages
    assert message.role == "user"
    assert "the harbour project" in message.content.text and "search_memories" in message.content.text


def test_over_stdio_the_sdk_client_gets_one_line_errors_a_resource_and_a_prompt(tmp_path: Path):
    folder = tmp_path / "data"

    async def body(s: ClientSession) -> None:
        for tool, args, says in BAD:
            res = await s.call_tool(tool, args)
            assert res.is_error, (tool, args)
            (content,) = res.content
            one_plain_line(content.text)
            assert says in content.text
        res = await s.call_tool("search_memories", {"query": " "})
        assert res.is_error and "words to look for" in res.content[0].text

        (resource,) = (await s.list_resources()).resources
        assert str(resource.uri) == "memory://recent" and resource.description
        (contents,) = (await s.read_resource("memory://recent")).contents
        assert contents.text.strip() == "No memories yet."

        (prompt,) = (await s.list_prompts()).prompts
        assert prompt.name == "recall" and [(a.name, a.required) for a in prompt.arguments] == [("topic", True)]
        got = await s.get_prompt("recall", {"topic": "tax return"})
        assert "tax return" in got.messages[0].content.text

    _, log = mcp_session(folder, body)
    assert "Traceback" not in log
