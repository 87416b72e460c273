"""Filters from typed fields (CLI options, MCP arguments): one builder, tags normalised like stored tags."""

from __future__ import annotations

import argparse

import pytest
from hypothesis import given
from hypothesis import strategies as st

from desktop_memory.cli.commands import filters_from
from desktop_memory.core.errors import InvalidInput
from desktop_memory.core.filter_input import filters_from_fields
from desktop_memory.core.text import clean_tags, normalise_tag
from desktop_memory.mcp.server import _filters as mcp_filters


def _cli(**over) -> argparse.Namespace:
    values = {"source": [], "app": [], "tags": [], "after": None, "before": None, "pinned": False,
              "include_forgotten": False} | over
    return argparse.Namespace(**values)


@pytest.mark.parametrize("typed", ["#Deploy  Notes", "  deploy notes ", "# deploy\tnotes", "DEPLOY NOTES"])
def test_a_typed_tag_finds_the_stored_tag_from_the_cli_and_mcp(fake_service, typed):
    m = fake_service.add("release checklist for friday", tags=["Deploy Notes"]).memory
    assert m.tags == ["deploy notes"]
    for filters in (filters_from(_cli(tags=[typed])), mcp_filters(None, None, typed, None, None, False)):
        assert filters.tags == ("deploy notes",)
        assert [h.memory.id for h in fake_service.search("", filters=filters)] == [m.id]


def test_cli_and_mcp_build_the_same_filters():
    cli = filters_from(_cli(source=["Slack"], app=["Firefox"], tags=["#Ops"], after="2026-01-01", pinned=True))
    mcp = mcp_filters("Slack", "Firefox", "#Ops", "2026-01-01", None, True)
    assert cli == mcp
    assert mcp_filters(None, None, None, None, None, False) == filters_from(_cli())


@pytest.mark.parametrize(("name", "shown"), [("--{}", "--after"), ("{}", "after")])
def test_a_bad_date_is_a_clear_error(name, shown):
    with pytest.raises(InvalidInput, match=f"^{shown}: not an ISO date"):
        filters_from_fields(after="last tuesday", name=name)


@given(st.lists(st.text(alphabet=st.sampled_from("#  \tab\u00c9\u00e9x"), max_size=80) | st.text(max_size=80),
                max_size=8))
def test_tag_normalisation_is_stable(tags):
    once = clean_tags(tags)
    assert clean_tags(once) == once
    assert all(t == normalise_tag(t) and t and len(t) <= 64 and not t.startswith(("#", " ")) for t in once)
