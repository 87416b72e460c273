"""How results read: snippets, highlighting, dates and filter chips (pure functions)."""

from __future__ import annotations

from desktop_memory.core.text import first_line
from desktop_memory.qt import display


def test_snippet_highlights_query_words_and_escapes_html() -> None:
    text = "Notes <b>raw</b> & more. " + "filler " * 40 + "The beta release ships on March 3rd."
    html = display.snippet_html(text, "when is the beta released? source:clipboard")
    assert "<b>beta</b>" in html and "<b>release</b>" in html
    assert html.startswith("… ")  # the excerpt starts near the match, not at the top
    assert "<b>raw</b>" not in display.snippet_html("x <b>raw</b>", "")
    assert "&lt;b&gt;raw" in display.snippet_html("x <b>raw</b>", "")


def test_filter_tokens_and_removing_one() -> None:
    query = "beta source:clipboard #work is:pinned after:2026-01-01"
    assert display.filter_tokens(query) == ["source:clipboard", "#work", "is:pinned", "after:2026-01-01"]
    assert display.query_words(query) == ["beta"]
    assert display.without_token(query, "#work") == "beta source:clipboard is:pinned after:2026-01-01 "


def test_relative_time() -> None:
    now = 1_800_000_000.0
    assert display.relative_time(now - 5, now) == "just now"
    assert display.relative_time(now - 300, now) == "5 min ago"
    assert display.relative_time(now - 3 * 3600, now) == "3 h ago"
    assert display.relative_time(now - 86400 - 10, now) == "yesterday"
    assert display.relative_time(now - 4 * 86400, now) == "4 days ago"
    assert display.relative_time(now - 400 * 86400, now).endswith("2025")


def test_the_snippet_line_continues_after_a_title_made_from_the_first_line() -> None:
    long = "Beta release checklist: changelog, screenshots, signed installers for Windows and macOS, smoke test."
    title = first_line(long, 60)
    assert title.endswith("…")
    assert display.after_title(long, title).endswith("smoke test.")
    assert display.after_title("short note", "short note") == ""
