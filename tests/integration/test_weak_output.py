"""Weak matches are visible where people and agents read hits (issue 33 item 6): the CLI prints a "weaker
matches" line before them and `--json` says `weak`; the MCP search tool's hits say `weak`. Both go through the
folder's engine service, so `Hit.weak` crosses the socket too."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from mcp import ClientSession

from tests.mcp_stdio import mcp_session

from .test_cli import run
from .test_weak_matches import ALLERGY, CHAT, GERMAN, PARKING

pytestmark = pytest.mark.integration
QUERY = "medication I must not be prescribed"


def _import(data: Path) -> None:
    """Notes written on different days: notes copied minutes apart are one session, and a session neighbour of a
    good match shares its standing (core/ranking.mark_weak), which is not what these tests are about."""
    lines = "".join(json.dumps({"content": t, "source": "note", "created_at": f"2026-0{i + 1}-10T09:00:00"}) + "\n"
                    for i, t in enumerate((PARKING, ALLERGY, CHAT, GERMAN)))
    run(data, "import", "-", stdin=lines)


def test_cli_search_draws_a_line_before_the_weaker_matches(tmp_path: Path):
    data = tmp_path / "data"
    _import(data)
    shown = run(data, "search", QUERY).stdout.decode().splitlines()
    line = shown.index("  -- weaker matches --")
    assert "Allergy" in "\n".join(shown[:line]) and "Parking" in "\n".join(shown[line:])
    hits = json.loads(run(data, "search", QUERY, "--json").stdout)
    assert [h["weak"] for h in hits][:2] == [False, True] and "Allergy" in hits[0]["content"]
    weak_only = run(data, "search", "Rechnung").stdout.decode().splitlines()
    assert weak_only[0] == "  -- weaker matches --"  # nothing here is about it: every hit under the line
    assert all(h["weak"] for h in json.loads(run(data, "search", "Rechnung", "--json").stdout))
    plain = run(data, "search", "penicillin").stdout.decode()
    assert "weaker matches" not in plain.splitlines()[0] and "Allergy" in plain.splitlines()[0]


def test_mcp_search_hits_say_whether_they_are_weak(tmp_path: Path):
    folder = tmp_path / "data"
    _import(folder)

    async def body(s: ClientSession) -> list[dict]:
        res = await s.call_tool("search_memories", {"query": QUERY})
        assert not res.is_error
        return (res.structured_content or {})["hits"]

    hits, _ = mcp_session(folder, body)
    assert "Allergy" in hits[0]["content"] and hits[0]["weak"] is False
    assert all(h["weak"] is True for h in hits if "Parking" in h["content"])
