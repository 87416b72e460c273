"""Packing memories into pasteable context for an AI chat, within a token budget.

Tokens are estimated, not counted with a model's tokenizer (which differs per AI):
``max(ceil(characters / 4), ceil(words * 4 / 3))``. For English prose the common BPE
tokenizers average about 4 characters or 0.75 words per token; taking the larger of the two
estimates keeps code and non-Latin text (more tokens per character) from overflowing the budget.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from .models import Memory, Passage, local
from .passages import trim
from .query import terms
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


def _joined(content: str, chosen: Sequence[Passage]) -> str:
    """Passages of one memory in the text's order, "…" where text between or around them is left out."""
    parts: list[str] = []
    last = 0
    for p in sorted(chosen, key=lambda p: p.start):
        gap = content[last : p.start]
        if parts and not gap.strip():
            parts[-1] += gap + p.of_text(content)
        else:
            parts.append(("… " if p.start > 0 and gap.strip() else "") + p.of_text(content))
        last = p.end
    tail = " …" if content[last:].strip() else ""
    return "\n…\n".join(parts) + tail


def _passage_note(m: Memory) -> str:
    return f" · passage of \u201c{m.title or first_line(m.content, 60)}\u201d"


def build_context(
    memories: Sequence[Memory],
    *,
    query: str | None = None,
    budget: int = DEFAULT_BUDGET,
    fmt: str = "text",
    passages: Mapping[str, Sequence[Passage]] | None = None,
) -> Context:
    """Pack memories (already in relevance order) into at most `budget` estimated tokens.

    Each memory goes in whole if it fits; else, for a long memory with `passages` (best for the query
    first), its best passage (cut around the sentence holding most of the query's words if even that is
    too long), labelled with its title and date; else its summary, else an excerpt of its opening if at
    least a useful few tokens remain; otherwise it is left out. Room left at the end goes to the next
    passages of the memories shown by passage, in their order.
    """
    if fmt not in FORMATS:
        raise ValueError(f"unknown context format {fmt!r} (use {' or '.join(FORMATS)})")
    passages = passages or {}
    words = terms(query or "", prefix_last=False)
    ctx = Context(text="", tokens=0, budget=budget)
    header_cost = estimate_tokens(_header(len(memories), query, fmt))
    used = header_cost
    items: list[tuple[Memory, str, str]] = []  # (memory, body, note)
    chosen: dict[int, list[Passage]] = {}  # item index -> passages shown, for a memory shown by passage
    for m in memories:
        index = len(items) + 1
        ranked = passages.get(m.id) or ()
        frame = estimate_tokens(_item(index, m, "", fmt, _passage_note(m) if ranked else " · summary")) + 1
        room = budget - used - frame
        full = m.content
        if fits(full, room):
            body, note, bucket = full, "", None
        elif ranked and room >= MIN_EXCERPT_TOKENS:
            first = trim(full, ranked[0], words, max(1, room - 2))
            chosen[len(items)] = [first]
            body, note, bucket = _joined(full, [first]), _passage_note(m), ctx.truncated
            if not fits(body, room):  # an unbreakable word longer than the room
                body = _excerpt(body, room)
        elif m.summary and estimate_tokens(m.summary) <= room:
            body, note, bucket = m.summary, " · summary", ctx.summarised
        elif room >= MIN_EXCERPT_TOKENS:
            body, note, bucket = _excerpt(full, room), " · excerpt", ctx.truncated
        else:
            ctx.left_out.append(m.id)
            continue
        used += estimate_tokens(_item(index, m, body, fmt, note))
        items.append((m, body, note))
        ctx.included.append(m.id)
        if bucket is not None:
            bucket.append(m.id)
    for k, shown in chosen.items():  # room left: the next passages of those shown by passage
        m, body, note = items[k]
        for p in passages[m.id][1:]:
            if any(p.start < q.end and q.start < p.end for q in shown):
                continue
            wider = _joined(m.content, [*shown, p])
            grown = (estimate_tokens(_item(k + 1, m, wider, fmt, note))
                     - estimate_tokens(_item(k + 1, m, body, fmt, note)))
            if used + grown <= budget:
                shown.append(p)
                body, used = wider, used + grown
        items[k] = (m, body, note)
    parts = [_item(k + 1, m, body, fmt, note) for k, (m, body, note) in enumerate(items)]
    if not parts:
        ctx.text = ""
        return ctx
    ctx.text = _header(len(parts), query, fmt) + "\n" + "\n".join(parts)
    ctx.tokens = estimate_tokens(ctx.text)
    return ctx
