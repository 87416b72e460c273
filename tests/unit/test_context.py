import pytest

from desktop_memory.core.context import build_context, estimate_tokens
from desktop_memory.core.models import Memory


def mem(i: int, content: str, summary: str = "", **kw) -> Memory:
    return Memory(id=f"id{i}", content=content, summary=summary, created_at=1_700_000_000 + i, **kw)


def test_estimate_is_the_larger_of_chars_and_words():
    assert estimate_tokens("") == 0
    assert estimate_tokens("abcd" * 10) == 10
    assert estimate_tokens("a b c d e f") == 8


def test_everything_fits_in_order_with_header_dates_and_sources():
    ctx = build_context([mem(1, "first fact", source="clipboard", source_app="firefox"), mem(2, "second fact")],
                        query="facts")
    lines = ctx.text.splitlines()
    assert lines[0].startswith('Context from my personal notes about "facts" (2 items')
    assert "clipboard, firefox" in ctx.text
    assert ctx.text.index("first fact") < ctx.text.index("second fact")
    assert ctx.included == ["id1", "id2"] and ctx.tokens <= ctx.budget


def test_summary_replaces_text_that_does_not_fit():
    long = "word " * 2000
    ctx = build_context([mem(1, long, summary="A short summary of the long note.")], budget=200)
    assert "A short summary" in ctx.text and "word word" not in ctx.text
    assert ctx.summarised == ["id1"] and ctx.tokens <= 200


def test_excerpt_when_no_summary_and_left_out_when_no_room():
    ctx = build_context([mem(1, "alpha " * 1000), mem(2, "beta " * 1000)], budget=120)
    assert ctx.truncated == ["id1"] and ctx.left_out == ["id2"]
    assert ctx.tokens <= 120 and "…" in ctx.text


@pytest.mark.parametrize("budget", [60, 100, 300, 1500, 5000])
def test_budget_is_never_exceeded(budget):
    memories = [mem(i, (f"text number {i} ") * (i * 7 + 1), summary=f"summary {i}") for i in range(30)]
    for fmt in ("text", "markdown"):
        ctx = build_context(memories, query="q", budget=budget, fmt=fmt)
        assert ctx.tokens <= budget


def test_markdown_format_has_headings():
    ctx = build_context([mem(1, "body", title="A title")], fmt="markdown")
    assert ctx.text.startswith("## Context from my personal notes")
    assert "### 1. A title" in ctx.text


def test_nothing_to_pack_gives_empty_text():
    assert build_context([]).text == ""


def test_a_long_memory_ranked_first_keeps_the_lines_around_its_best_line_before_short_ones():
    """Issue 32: the line holding the question's words is often next to the one that answers; the short memories
    ranked below must not take the room the lines around it need (half of what is left goes to them first)."""
    from desktop_memory.core.passages import split

    lines = [f"Item {i}: the team reviewed topic number {i} and agreed to revisit it later." for i in range(40)]
    lines[20] = "Backups: every night the datasets go to the external disk with restic."
    lines[21] = "Test a restore every quarter by restoring a random folder and comparing it."
    long = Memory(id="long", content="\n".join(lines), title="Home server", created_at=1_700_000_000.0)
    scored = [(p, 0.5 if p.start <= long.content.index("Backups") < p.end else 0.1) for p in split(long.content)]
    shorts = [Memory(id=f"s{i}", content=f"Unrelated short note number {i} about groceries, the weather and bikes.",
                     created_at=1_700_000_000.0) for i in range(8)]
    ctx = build_context([long, *shorts], query="how do backups work", budget=300, passages={"long": scored})
    assert "Backups: every night" in ctx.text
    assert "Test a restore every quarter" in ctx.text, ctx.text
    assert estimate_tokens(ctx.text) <= 300
