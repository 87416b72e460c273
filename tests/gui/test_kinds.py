"""What kind of thing a memory is, from its text: realistic copies, prose that only looks a bit like code, any text."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from desktop_memory.core.models import Memory
from desktop_memory.qt.kinds import KINDS, kind_of
from tests.gui.realistic import REALISTIC


def kind(text: str) -> str:
    return kind_of(Memory(id="x", content=text))


def test_the_realistic_copies() -> None:
    assert [kind(r["content"]) for r in REALISTIC] == [
        "note", "code", "link", "email", "note", "chat", "list", "person", "code", "note", "note", "code"]


@pytest.mark.parametrize("text", [
    "Meet at 5; bring the slides;",
    "C++ has std::vector and std::map, which the course covers next week.",
    "The arrow => means 'implies' in the logic notes.",
    "Remember: return the library books by Friday",
    "if it rains: take the bus",
])
def test_prose_with_a_little_punctuation_is_not_code(text) -> None:
    assert kind(text) != "code"


@pytest.mark.parametrize(("text", "want"), [
    ("docker compose up -d --build", "code"),
    ("const total = items.reduce((a, b) => a + b, 0);\nconsole.log(total);", "code"),
    ("www.example.org/some/page", "link"),
    ("priya@example.com", "person"),
    ("", "note"),
])
def test_short_examples(text, want) -> None:
    assert kind(text) == want


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=2000))
def test_any_text_has_a_kind(text) -> None:
    assert kind(text) in KINDS
