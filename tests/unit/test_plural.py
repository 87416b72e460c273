"""Counts read right: one memory, two memories, never "1 memories"."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from desktop_memory.core.plural import count, plural


def test_the_words_the_app_counts() -> None:
    assert [count(n, "memory") for n in (0, 1, 2, 1204)] == ["0 memories", "1 memory", "2 memories",
                                                              "1,204 memories"]
    assert [plural(w) for w in ("capture", "entry", "match", "day", "box", "secret")] == [
        "captures", "entries", "matches", "days", "boxes", "secrets"]
    assert count(3, "person", "people") == "3 people" and count(1, "person", "people") == "1 person"


@given(st.integers(min_value=0, max_value=10**9), st.sampled_from(["memory", "capture", "rule", "copy", "file"]))
def test_one_is_singular_and_every_other_count_plural(n: int, word: str) -> None:
    text = count(n, word)
    assert text.startswith(f"{n:,} ") and (text.endswith(f" {word}") == (n == 1))


def test_the_cli_counts_one_memory_as_one_memory(fake_service, capsys) -> None:
    import argparse

    from desktop_memory.cli.commands import cmd_purge, cmd_retention

    first = fake_service.add("the boiler service is booked for the ninth").memory
    fake_service.set_forgotten(first.id, True)
    cmd_retention(fake_service, argparse.Namespace(older_than=0.0, below_importance=1.0, forgotten_only=True,
                                                   dry_run=True, yes=True))
    assert capsys.readouterr().out.strip() == "1 memory would be purged"
    cmd_purge(fake_service, argparse.Namespace(ids=[first.id], yes=True))
    assert capsys.readouterr().out.strip() == "Purged 1 memory from every store"
