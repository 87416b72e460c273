"""The headline a memory is shown under: a title or summary only when it is grounded in the text.

A small local model sometimes invents: it titled "Rapid copy number 200" as "Rapid copy number 201" and
wrote "The production database password rotation is a 10" for a note that says nothing of the kind.
`grounded` accepts a candidate only when every number in it occurs in the text as written, and every
other word occurs in the text too (common small words and plain plurals aside), and it does not stop
mid-phrase; otherwise `headline` falls back to the text's first line, cut at a word. Enrichment stores a
model's title only when it is grounded (core/enrich.py). Pure functions, standard library only.
"""

from __future__ import annotations

import re

from .query import STOP_WORDS

# a number as written: 200, 9:30, 1,200, 0.9.0, 2026-03-14 (a sign or unit around it does not matter)
_NUMBER = re.compile(r"\d+(?:[.,:/-]\d+)*")
_WORD = re.compile(r"[^\W\d_]+(?:['’][^\W\d_]+)*", re.UNICODE)
HEADLINE_CHARS = 90
# a headline ending on one of these was cut off mid-phrase ("... slipped a week because of")
DANGLING = frozenset(["a", "an", "the", "of", "to", "and", "or", "but", "with", "for", "from", "in", "on", "at",
                      "by", "as", "is", "are", "was", "were", "be", "because", "that", "than", "into", "about"])


def _numbers(text: str) -> set[str]:
    found = set()
    for n in _NUMBER.findall(text):
        found.add(n)
        found.update(re.split(r"[.,:/-]", n))  # "1,200" also vouches for "1" and "200"... but not "201"
    return found


def _forms(word: str) -> set[str]:
    """A word and its plain inflections: plural, possessive (never a different word)."""
    w = word.lower().replace("’", "'")
    forms = {w}
    for end in ("'s", "s", "es"):
        if w.endswith(end) and len(w) - len(end) >= 2:
            forms.add(w[: -len(end)])
    return forms


def grounded(candidate: str, text: str) -> bool:
    """True when the candidate's words come from the text: each number exactly as written there, each
    other word (bar common small words) in the text itself or as a plain plural or possessive; and it does
    not stop mid-phrase (on "of", "the", "because"...)."""
    candidate = candidate.strip()
    if not candidate or not text:
        return False
    tokens = re.findall(r"\w+", candidate)
    if tokens and tokens[-1].lower() in DANGLING:
        return False
    numbers = _numbers(text)
    if any(n not in numbers for n in _NUMBER.findall(candidate)):
        return False
    known: set[str] = set()
    for w in _WORD.findall(text):
        known |= _forms(w)
    for word in _WORD.findall(candidate):
        forms = _forms(word)
        if word.lower() in STOP_WORDS or forms & known:
            continue
        return False
    return bool(_WORD.findall(candidate) or _NUMBER.findall(candidate))


def cut(text: str, width: int = HEADLINE_CHARS) -> str:
    """One line of at most `width` characters, cut at a word boundary with an ellipsis."""
    flat = " ".join(text.split())
    if len(flat) <= width:
        return flat
    piece = flat[: width - 1]
    if " " in piece and not flat[width - 1].isspace():
        piece = piece.rsplit(" ", 1)[0]
    return piece.rstrip(" ,;:.-–—") + "…"


def first_line(text: str, width: int = HEADLINE_CHARS) -> str:
    """The text's first non-empty line, cut at a word boundary."""
    for line in text.splitlines():
        if line.strip():
            return cut(line, width)
    return ""


def headline(content: str, title: str = "", summary: str = "", width: int = HEADLINE_CHARS) -> str:
    """What a memory is shown under: its title, else its summary, when grounded in `content`; else the first
    line of `content` ("(empty)" for a text with none)."""
    for candidate in (title, summary):
        if candidate and candidate.strip() and grounded(candidate, content):
            return cut(candidate, width)
    return first_line(content, width) or "(empty)"
