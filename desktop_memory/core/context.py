"""Packing memories into pasteable context for an AI chat, within a token budget.

Tokens are estimated, not counted with a model's tokenizer (which differs per AI):
``max(ceil(characters / 4), ceil(words * 4 / 3))``. For English prose the common BPE
tokenizers average about 4 characters or 0.75 words per token; taking the larger of the two
estimates keeps code and non-Latin text (more tokens per character) from overflowing the budget.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

from .models import Memory, local
from .text import first_line

DEFAULT_BUDGET = 1500
FORMATS = ("text", "markdown")
MIN_EXCERPT_TOKENS = 24


def estimate_tokens(text: str) -> int:
    """Estimated token count of text (see the module docstring)."""
    if not text:
        return 0
    return max(math.ceil(len(text) / 4), math.ceil(len(text.split()) * 4 / 3))


def fits(text: str, tokens: int) -> bool:
    """estimate_tokens(text) <= tokens, without counting the words of a text whose characters alone are too many
    (the search window counts its selection on every keystroke; a 2 MB copy took 30-80 ms to split)."""
    return math.ceil(len(text) / 4) <= tokens and estimate_tokens(text) <= tokens


@dataclass
class Context:
    """The packed text and what went into it."""

    text: str
    tokens: int
    budget: int
    included: list[str] = field(default_factory=list)
    summarised: list[str] = field(default_factory=list)
    truncated: list[str] = field(default_factory=list)
    left_out: list[str] = field(default_factory=list)

    def to_dict(self) -> dict:
        return {
            "text": self.text,
            "tokens": self.tokens,
            "budget": self.budget,
            "included": self.included,
            "summarised": self.summarised,
            "truncated": self.truncated,
            "left_out": self.left_out,
        }


def _date(ts: float) -> str:
    return local(ts).strftime("%Y-%m-%d %H:%M")


def _label(m: Memory) -> str:
    where = m.source + (f", {m.source_app}" if m.source_app else "")
    return f"{_date(m.created_at)} · {where}"


def _header(count: int, query: str | None, fmt: str) -> str:
    about = f' about "{first_line(query, 60)}"' if query else ""
    line = (
        f"Context from my personal notes{about} ({count} item{'s' if count != 1 else ''}, "
        "most relevant first, each with its date and source):"
    )
    return f"## {line}\n" if fmt == "markdown" else line + "\n"


def _item(index: int, m: Memory, body: str, fmt: str, note: str = "") -> str:
    if fmt == "markdown":
        title = m.title or first_line(m.content, 60)
        head = f"### {index}. {title}\n*{_label(m)}{note}*\n\n"
        return head + body + "\n"
    return f"[{index}] {_label(m)}{note}\n{body}\n"


def _excerpt(text: str, tokens: int) -> str:
    """The start of text cut to roughly `tokens` tokens, at a word boundary."""
    cut = text[: max(0, tokens * 4 - 1)]
    if len(cut) < len(text):
        cut = cut.rsplit(" ", 1)[0] if " " in cut[-40:] else cut
        cut = cut.rstrip() + "…"
    while cut and estimate_tokens(cut) > tokens:
        cut = cut[: int(len(cut) * 0.9)].rstrip() + "…"
    return cut


def build_context(
    memories: Sequence[Memory],
    *,
    query: str | None = None,
    budget: int = DEFAULT_BUDGET,
    fmt: str = "text",
) -> Context:
    """Pack memories (already in relevance order) into at most `budget` estimated tokens.

    Each memory goes in whole if it fits, else its summary, else an excerpt of it if at least
    a useful few tokens remain; otherwise it is left out.
    """
    if fmt not in FORMATS:
        raise ValueError(f"unknown context format {fmt!r} (use {' or '.join(FORMATS)})")
    ctx = Context(text="", tokens=0, budget=budget)
    header_cost = estimate_tokens(_header(len(memories), query, fmt))
    used = header_cost
    parts: list[str] = []
    for m in memories:
        index = len(parts) + 1
        frame = estimate_tokens(_item(index, m, "", fmt, " · summary")) + 1
        room = budget - used - frame
        full = m.content
        if fits(full, room):
            body, note, bucket = full, "", None
        elif m.summary and estimate_tokens(m.summary) <= room:
            body, note, bucket = m.summary, " · summary", ctx.summarised
        elif room >= MIN_EXCERPT_TOKENS:
            body, note, bucket = _excerpt(full, room), " · excerpt", ctx.truncated
        else:
            ctx.left_out.append(m.id)
            continue
        part = _item(index, m, body, fmt, note)
        used += estimate_tokens(part)
        parts.append(part)
        ctx.included.append(m.id)
        if bucket is not None:
            bucket.append(m.id)
    if not parts:
        ctx.text = ""
        return ctx
    ctx.text = _header(len(parts), query, fmt) + "\n" + "\n".join(parts)
    ctx.tokens = estimate_tokens(ctx.text)
    return ctx
