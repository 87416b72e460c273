"""Counts in words people read: "1 memory", "2 memories", "1,204 captures" (never "1 memories")."""

from __future__ import annotations

_IRREGULAR = {"memory": "memories", "entry": "entries", "copy": "copies", "match": "matches", "was": "were",
              "is": "are", "has": "have"}


def plural(word: str) -> str:
    """The plural of an English noun as the app uses them: memory -> memories, match -> matches, rule -> rules."""
    if word in _IRREGULAR:
        return _IRREGULAR[word]
    if word.endswith("y") and len(word) > 1 and word[-2] not in "aeiou":
        return word[:-1] + "ies"
    if word.endswith(("s", "x", "z", "ch", "sh")):
        return word + "es"
    return word + "s"


def count(n: int, word: str, many: str = "") -> str:
    """`n word` with the word in the singular for exactly one and the plural (`many`, or the regular one)
    otherwise; thousands separated ("1,204 memories")."""
    return f"{n:,} {word if n == 1 else many or plural(word)}"
