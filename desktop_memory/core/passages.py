"""Passages of a long memory: pieces of a few hundred tokens, cut where the text itself breaks.

The embedding model reads the first 256 word pieces of a text, so a long answer, an article or a
transcript is found by its opening only. `split` cuts a text into passages the model reads whole, in
order: at blank lines (a fenced code block stays whole when it fits), then at line ends, then at
sentence ends (not inside code), then between words, and a word longer than a passage (CJK without spaces, a long
token) is cut hard. A text that fits is one passage: short memories get nothing new. `order` ranks a
memory's passages for a query (their cosine to it, lifted by the share of the query's words they hold,
as hits are: core/ranking.lift_coverage), and `trim` cuts one passage around the sentences that match.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator, Sequence

from .models import Passage
from .ranking import coverage

PASSAGE_TOKENS = 128  # a passage's estimated tokens at most (MiniLM reads 256 word pieces)
LONG_CHARS = PASSAGE_TOKENS * 4  # a text this long or shorter is one passage (4 characters a token at most)

_FENCE = re.compile(r"^[ \t]*(```|~~~)", re.MULTILINE)
_BLANK = re.compile(r"\n[ \t]*\r?\n\s*")
_SENTENCE_END = re.compile(r"(?<=[.!?。！？…])[\"'”’)\]]*\s+|(?<=[。！？])|\r?\n")
_LINE_END = re.compile(r"\r?\n")
_NON_SPACE = re.compile(r"\S+")
_WIDE = re.compile(r"[\u2e80-\u9fff\uac00-\ud7af\uf900-\ufaff\U00020000-\U0002fa1f]")

Span = tuple[int, int]


def cost(text: str) -> int:
    """Estimated tokens of a text (core/context.estimate_tokens), each CJK or Hangul character counted as a
    word: the model's tokenizer reads each as one or more pieces."""
    if not text:
        return 0
    words = len(text.split()) + len(_WIDE.findall(text))
    return max(math.ceil(len(text) / 4), math.ceil(words * 4 / 3))


def _fits(text: str, limit: int) -> bool:
    return len(text) <= 4 * limit and cost(text) <= limit


def split(text: str, limit: int = PASSAGE_TOKENS) -> list[Passage]:
    """The passages of `text`, in order, each at most `limit` estimated tokens (`cost`) unless a single
    character is; together they hold every non-space character. A text that fits is one passage; a
    blank text none."""
    if not text.strip():
        return []
    if _fits(text, limit):
        start, end = _trimmed(text, 0, len(text)) or (0, len(text))
        return [Passage(start, end)]
    return [Passage(s, e) for s, e in _pack(text, _blocks(text, 0, len(text)), limit, 0)]


def _trimmed(text: str, start: int, end: int) -> Span | None:
    """The span without the white space at its ends (None if nothing else)."""
    piece = text[start:end]
    stripped = piece.strip()
    if not stripped:
        return None
    lead = len(piece) - len(piece.lstrip())
    return start + lead, start + lead + len(stripped)


def _cut(text: str, start: int, end: int, pattern: re.Pattern[str]) -> Iterator[Span]:
    """The non-blank pieces of text[start:end] between matches of `pattern`."""
    at = start
    for m in pattern.finditer(text, start, end):
        if m.end() == m.start() and m.start() in (start, end):
            continue
        if (span := _trimmed(text, at, m.start())) is not None:
            yield span
        at = m.end()
    if (span := _trimmed(text, at, end)) is not None:
        yield span


def _blocks(text: str, start: int, end: int) -> list[Span]:
    """Paragraphs (between blank lines) and fenced code blocks (whole, blank lines and all)."""
    out: list[Span] = []
    at = start
    fences = [m.start() for m in _FENCE.finditer(text, start, end)]
    for opening, closing in zip(fences[::2], fences[1::2], strict=False):
        out += _cut(text, at, opening, _BLANK)
        line_end = text.find("\n", closing)
        close_end = end if line_end < 0 else min(line_end, end)
        if (span := _trimmed(text, opening, close_end)) is not None:
            out.append(span)
        at = close_end
    if len(fences) % 2:  # an unclosed fence: the rest is its block
        out += _cut(text, at, fences[-1], _BLANK)
        at_end = _trimmed(text, fences[-1], end)
        return out + ([at_end] if at_end else [])
    return out + list(_cut(text, at, end, _BLANK))


def _finer(text: str, span: Span, level: int, code: bool) -> list[Span]:
    """A span too long for a passage in smaller pieces: lines (a chat's turns, a list's items, code), then
    sentences (not in code), then words."""
    start, end = span
    if level == 0:
        return list(_cut(text, start, end, _LINE_END))
    if level == 1 and not code:
        return list(_cut(text, start, end, _SENTENCE_END))
    return [(m.start(), m.end()) for m in _NON_SPACE.finditer(text, start, end)]


def _hard(text: str, span: Span, limit: int) -> list[Span]:
    """A word longer than a passage, cut into the longest pieces that fit (at least one character each)."""
    start, end = span
    out: list[Span] = []
    while start < end:
        lo, hi = start + 1, min(end, start + 4 * limit)
        while lo < hi:  # the longest piece that fits: cost grows with length
            mid = (lo + hi + 1) // 2
            if _fits(text[start:mid], limit):
                lo = mid
            else:
                hi = mid - 1
        out.append((start, lo))
        start = lo
    return out


def _pack(text: str, spans: Sequence[Span], limit: int, level: int) -> list[Span]:
    """Consecutive spans joined while the text they cover fits; a span too long alone is cut finer, and its
    pieces join the passage under way (no stub of a sentence left alone before a long one)."""
    out: list[Span] = []
    current: list[Span | None] = [None]

    def add(span: Span) -> None:
        held = current[0]
        if held is not None and _fits(text[held[0]:span[1]], limit):
            current[0] = (held[0], span[1])
            return
        if held is not None:
            out.append(held)
        current[0] = span

    def walk(pieces: Sequence[Span], depth: int, code: bool) -> None:
        for span in pieces:
            if _fits(text[span[0]:span[1]], limit):
                add(span)
            elif depth >= 3:
                for piece in _hard(text, span, limit):
                    add(piece)
            else:
                inside = code or (depth == 0 and _FENCE.match(text, span[0]) is not None)
                walk(_finer(text, span, depth, inside), depth + 1, inside)

    walk(spans, level, False)
    if current[0] is not None:
        out.append(current[0])
    return out


def order(content: str, scored: Sequence[tuple[Passage, float]], query_terms: Sequence[str],
          boost: float) -> list[Passage]:
    """A memory's passages, best for the query first: cosine (not below 0) x (1 + boost x the share of the
    query's distinct words the passage holds), as hits are lifted (core/ranking.lift_coverage); ties keep
    the text's order."""
    ranked = sorted(enumerate(scored), key=lambda item: (
        -max(item[1][1], 0.0) * (1.0 + boost * coverage(query_terms, item[1][0].of_text(content))), item[0]))
    return [p for _, (p, _) in ranked]


def trim(content: str, passage: Passage, query_terms: Sequence[str], limit: int) -> Passage:
    """The part of a passage within `limit` estimated tokens around its sentence holding most of the query's
    words (the passage itself if it fits; its start if no sentence fits)."""
    if _fits(passage.of_text(content), limit):
        return passage
    sentences = _pack(content, list(_cut(content, passage.start, passage.end, _SENTENCE_END)), limit, 2)
    if not sentences:
        return passage
    shares = [coverage(query_terms, content[s:e]) for s, e in sentences]
    best = max(range(len(sentences)), key=lambda i: (shares[i], -i))
    lo = hi = best
    while True:  # grow around it, the next sentence first, while it fits
        if hi + 1 < len(sentences) and _fits(content[sentences[lo][0]:sentences[hi + 1][1]], limit):
            hi += 1
        elif lo > 0 and _fits(content[sentences[lo - 1][0]:sentences[hi][1]], limit):
            lo -= 1
        else:
            break
    return Passage(sentences[lo][0], sentences[hi][1])


def units(content: str, passage: Passage, limit: int = PASSAGE_TOKENS) -> list[Passage]:
    """The lines of a passage (a chat's turns, a list's items, a paragraph), a line longer than `limit`
    estimated tokens cut into its sentences (joined while they fit): the pieces context is packed from
    (core/context.py). A paragraph of prose stays whole: its sentences are read together."""
    out: list[Passage] = []
    for start, end in _cut(content, passage.start, passage.end, _LINE_END):
        if _fits(content[start:end], limit):
            out.append(Passage(start, end))
        else:
            out += [Passage(s, e) for s, e in _pack(content, list(_cut(content, start, end, _SENTENCE_END)), limit, 2)]
    return out
