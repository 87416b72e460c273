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
from .passages import trim, units
from .query import terms
from .ranking import weighted_coverage
from .text import first_line

DEFAULT_BUDGET = 1500
FORMATS = ("text", "markdown")
MIN_EXCERPT_TOKENS = 24
SEED_SHARE = 0.5  # of the room left, what the lines around a long memory's best line may take before the next memory


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


HEADER_SHARE = 20  # the header's full wording takes at most 1/20 of the budget; else its short form


def _header(count: int, query: str | None, fmt: str, budget: int = DEFAULT_BUDGET) -> str:
    about = f' about "{first_line(query, 60)}"' if query else ""
    line = (
        f"Context from my personal notes{about} ({count} item{'s' if count != 1 else ''}, "
        "most relevant first, each with its date and source):"
    )
    if estimate_tokens(line) * HEADER_SHARE > budget:  # a small budget: the words that matter first
        line = f"Context from my personal notes{about}, most relevant first:"
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
    return f" · from \u201c{m.title}\u201d" if m.title else " · excerpts"


Scored = tuple[float, Passage]  # a line (or sentence) of a long memory and its score for the query


def _candidates(content: str, scored: Sequence[tuple[Passage, float]], words: Sequence[str],
                weights: Mapping[str, float], boost: float, budget: int) -> list[Scored]:
    """The lines of a long memory's best passages, each scored cosine of its passage (not below 0) x (1 + boost
    x the weighted share of the query's words the line holds), in the text's order. Passages are ranked the
    same way and taken until they hold twice the budget (a huge text is not read line by line)."""
    def score(cos: float, text: str) -> float:
        return max(cos, 0.0) * (1.0 + boost * weighted_coverage(words, text, weights))

    ranked = sorted(scored, key=lambda pc: -score(pc[1], pc[0].of_text(content)))
    out: list[Scored] = []
    held = 0
    for p, cos in ranked:
        out += [(score(cos, u.of_text(content)), u) for u in units(content, p)]
        held += estimate_tokens(p.of_text(content))
        if held >= 2 * budget:
            break
    return sorted(out, key=lambda su: su[1].start)


def _neighbours(content: str, cands: list[Scored], shown: list[Passage], room: int) -> int:
    """Add to `shown` the line before, then the line after, each chosen line (best first) while they fit in
    `room`: a question's answer follows it, a line is read in its place; returns the tokens used."""
    used = 0
    at = {u.start: k for k, (_, u) in enumerate(cands)}
    best_first = sorted((u for u in shown if u.start in at), key=lambda u: -cands[at[u.start]][0])
    for step in (-1, 1):
        for u in best_first:
            k = at[u.start] + step
            if not 0 <= k < len(cands) or any(cands[k][1].start < q.end and q.start < cands[k][1].end for q in shown):
                continue
            need = estimate_tokens(cands[k][1].of_text(content)) + 1
            if used + need <= room:
                shown.append(cands[k][1])
                used += need
    return used


def build_context(
    memories: Sequence[Memory],
    *,
    query: str | None = None,
    budget: int = DEFAULT_BUDGET,
    fmt: str = "text",
    passages: Mapping[str, Sequence[tuple[Passage, float]]] | None = None,
    weights: Mapping[str, float] | None = None,
    boost: float = 2.0,
) -> Context:
    """Pack memories (already in relevance order) into at most `budget` estimated tokens.

    Each memory goes in whole if it fits; else, for a long memory with `passages` (each with its cosine to the
    query), its best line for the query (see `_candidates`; `weights`: how much each query word counts,
    `boost`: how much the words held lift a cosine), labelled with its title and date; else its summary, else
    an excerpt of its opening if at least a useful few tokens remain; otherwise it is left out. Room left at
    the end goes to the next best lines of the memories shown by lines, across them, then to the lines around
    those chosen; each memory's lines are shown in the text's order, "…" where text is left out.
    """
    if fmt not in FORMATS:
        raise ValueError(f"unknown context format {fmt!r} (use {' or '.join(FORMATS)})")
    passages = passages or {}
    weights = weights or {}
    words = terms(query or "", prefix_last=False)
    ctx = Context(text="", tokens=0, budget=budget)
    header_cost = estimate_tokens(_header(len(memories), query, fmt, budget))
    used = header_cost
    items: list[tuple[Memory, str, str]] = []  # (memory, body, note)
    chosen: dict[int, tuple[list[Scored], list[Passage]]] = {}  # item index -> (its lines, those shown)
    ranks: dict[int, int] = {}  # item index -> its rank among the memories shown by lines
    unseeded: list[int] = []  # memories shown by lines still without a line
    for m in memories:
        index = len(items) + 1
        scored = passages.get(m.id) or ()
        frame = estimate_tokens(_item(index, m, "", fmt, _passage_note(m) if scored else " · summary")) + 1
        full = m.content
        if unseeded and not scored:  # a memory ranked higher gets its best line before this one gets anything
            used += _seed(items, chosen, unseeded, fmt, budget - used)
            unseeded = []
        room = budget - used - frame
        if fits(full, room):
            body, note, bucket = full, "", None
        elif scored and room >= MIN_EXCERPT_TOKENS and (
                cands := _candidates(full, scored, words, weights, boost, budget)):
            chosen[len(items)] = (cands, [])  # its lines are chosen below, across the memories shown by lines
            ranks[len(items)] = len(ranks)
            unseeded.append(len(items))
            body, note, bucket = "", _passage_note(m), ctx.truncated
            items.append((m, body, note))
            ctx.included.append(m.id)
            bucket.append(m.id)
            continue
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
    if chosen:
        used += _by_lines(items, chosen, ranks, words, fmt, budget - used)
        empty = {k for k, (_, shown) in chosen.items() if not shown}
        for k in sorted(empty):
            ctx.left_out.append(items[k][0].id)  # no line of it fitted
            ctx.included.remove(items[k][0].id)
            ctx.truncated.remove(items[k][0].id)
        kept = [k for k in range(len(items)) if k not in empty]
        items = [items[k] for k in kept]
        chosen = {new: chosen[old] for new, old in enumerate(kept) if old in chosen}
        parts = [_item(k + 1, m, body, fmt, note) for k, (m, body, note) in enumerate(items)]
        while estimate_tokens(_header(len(parts), query, fmt, budget) + "\n" + "\n".join(parts)) > budget and _drop_one(
                chosen, items):  # the per-line estimate was short: the lowest-scored added line goes
            parts = [_item(k + 1, m, body, fmt, note) for k, (m, body, note) in enumerate(items)]
    parts = [_item(k + 1, m, body, fmt, note) for k, (m, body, note) in enumerate(items)]
    if not parts:
        ctx.text = ""
        return ctx
    ctx.text = _header(len(parts), query, fmt, budget) + "\n" + "\n".join(parts)
    ctx.tokens = estimate_tokens(ctx.text)
    return ctx


def _seed(items: list[tuple[Memory, str, str]], chosen: dict[int, tuple[list[Scored], list[Passage]]],
          these: list[int], fmt: str, room: int) -> int:
    """Give each of these memories shown by lines its best line (and pay its label) while they fit in `room`,
    with the lines around it up to SEED_SHARE of the room left; returns the tokens used."""
    used = 0
    for k in these:
        m, _, note = items[k]
        cands, shown = chosen[k]
        best = max(cands, key=lambda su: (su[0], -su[1].start))[1]
        need = estimate_tokens(best.of_text(m.content)) + 1 + estimate_tokens(_item(k + 1, m, "", fmt, note)) + 1
        if used + need <= room:
            shown.append(best)
            used += need
            # and the lines around it, up to half of what is left: the answer is often next to the line with
            # the question's words, and the memories ranked below must not crowd it out
            used += _neighbours(m.content, cands, shown, int((room - used) * SEED_SHARE))
    return used


def _by_lines(items: list[tuple[Memory, str, str]], chosen: dict[int, tuple[list[Scored], list[Passage]]],
              ranks: dict[int, int], words: Sequence[str], fmt: str, room: int) -> int:
    """Fill `room` with the best lines of the memories shown by lines: each line's score discounted by its
    memory's rank r among them (1 / log2(r + 2), as DCG discounts a ranking: the first memory's lines lead
    until they grow weak), a memory's label paid with its first line; then the lines around those chosen.
    Sets the items' bodies; returns the tokens used (estimated per line)."""
    used = 0
    pool = [(s / math.log2(ranks[k] + 2), k, u) for k, (cands, _) in chosen.items() for s, u in cands]
    for _, k, u in sorted(pool, key=lambda t: (-t[0], t[1], t[2].start)):
        m, _, note = items[k]
        shown = chosen[k][1]
        need = estimate_tokens(u.of_text(m.content)) + 1
        if not shown:
            need += estimate_tokens(_item(k + 1, m, "", fmt, note)) + 1
        if used + need <= room:
            shown.append(u)
            used += need
    if not any(shown for _, shown in chosen.values()):  # even the best line is longer: cut around its sentence
        k = min(chosen, key=lambda k: ranks[k])
        m, _, note = items[k]
        best = max(chosen[k][0], key=lambda su: (su[0], -su[1].start))[1]
        left = room - estimate_tokens(_item(k + 1, m, "", fmt, note)) - 3
        if left >= MIN_EXCERPT_TOKENS // 2:
            chosen[k][1].append(trim(m.content, best, words, left))
            used += room - left
    for k, (cands, shown) in chosen.items():
        if shown:
            used += _neighbours(items[k][0].content, cands, shown, room - used)
    for k, (_, shown) in chosen.items():
        m, _, note = items[k]
        items[k] = (m, _joined(m.content, shown) if shown else "", note)
    return used


def _drop_one(chosen: dict[int, tuple[list[Scored], list[Passage]]], items: list[tuple[Memory, str, str]]) -> bool:
    """Take the lowest-scored line added after a memory's first back out; False if there is none."""
    worst: tuple[float, int, int] | None = None
    for k, (cands, shown) in chosen.items():
        score = {u.start: s for s, u in cands}
        for j, u in enumerate(shown[1:], 1):
            if worst is None or score.get(u.start, 0.0) < worst[0]:
                worst = (score.get(u.start, 0.0), k, j)
    if worst is None:
        return False
    _, k, j = worst
    shown = chosen[k][1]
    del shown[j]
    m, _, note = items[k]
    items[k] = (m, _joined(m.content, shown), note)
    return True
