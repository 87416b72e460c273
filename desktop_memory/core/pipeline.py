"""The ranking pipeline: the order of the steps in core/ranking.py, and what they read, in one place.

`rank` chains fusion, the coverage and time lifts, session neighbours, an optional reranker and the
grouping of look-alikes. It is pure: whatever it needs from where the memories live is read through
`RankReads`, for one query. The service (service/retrieval.py) reads its store's SQL and its vector
index; the tuning bench (bench/locomo_folds.py) reads each question's cached candidates. So the
settings the bench tunes are measured on the ranking that ships.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import replace
from typing import Protocol, runtime_checkable

from .models import Hit, Memory, Passage
from .passages import order
from .query import terms
from .ranking import (
    SIMILAR_CAP,
    Rankable,
    RankingParams,
    collapse_families,
    collapse_near_duplicates,
    first_slots,
    fuse,
    ideal_bm25,
    in_context,
    is_time_question,
    lift_coverage,
    lift_time_mentions,
    mark_weak,
    rarity_weights,
    spread_to_neighbours,
    two_steps,
)

CANDIDATES = 100  # keyword candidates read at least (twice the hits asked for, if more)

Reranker = Callable[[str, list[Hit]], list[Hit]]  # (query text, ranked candidates) -> reordered candidates


class RankReads(Protocol):
    """What `rank` reads for one query; every memory it gives passes the query's filters."""

    def candidates(self, depth: int) -> tuple[Mapping[str, float], Mapping[str, float], Mapping[str, Rankable]]:
        """(keyword scores, semantic cosines, the ranking rows read with the keyword candidates): up to
        `depth` keyword candidates (BM25, higher is better) and the candidates found by meaning."""
        ...

    def rows(self, ids: Sequence[str]) -> Mapping[str, Rankable]:
        """What fusion reads of these candidates (those found by meaning alone)."""
        ...

    def previous(self, ids: Sequence[str], rows: Mapping[str, Rankable]) -> Mapping[str, float]:
        """The query's cosine to the memory just before each of these candidates in its session (none for
        a session's first memory); `rows` are the candidates' rows as read above."""
        ...

    def full(self, ids: Sequence[str]) -> Mapping[str, Memory]:
        """The full memories of these candidates, whose rows were lighter than a `Memory` (no text)."""
        ...

    def passing(self, ids: Collection[str]) -> Mapping[str, Memory]:
        """Those of these memories that pass the filters (neighbours that were not candidates)."""
        ...

    def neighbourhood(self, ids: Sequence[str]) -> tuple[Mapping[str, Sequence[str]], Mapping[str, Sequence[str]]]:
        """For each id the memories just before and after it in its session, and the same for those."""
        ...

    def family_members(self, family_ids: Sequence[str], limit: int) -> Mapping[str, Sequence[Memory]]:
        """Up to `limit` members of each family of look-alikes, newest first, those that pass the filters."""
        ...

    def passages(self, ids: Sequence[str]) -> Mapping[str, Sequence[tuple[Passage, float]]]:
        """For those of these memories that have passages (long ones), each passage in order with its cosine
        to the query."""
        ...


@runtime_checkable
class Frequencies(Protocol):
    """What a `RankReads` may also give: how many memories hold each word (a reads without it weighs every
    word the same and reads BM25 against the best keyword match alone)."""

    def frequencies(self, words: Sequence[str]) -> tuple[Mapping[str, int], int]:
        """(the document frequency of each whole word among `words`, typed prefixes (`word*`) left out; the
        number of memories the keyword index holds)."""
        ...


def rank(text: str, reads: RankReads, *, params: RankingParams, now: float, limit: int, expand: bool = False,
         rerank: Reranker | None = None) -> list[Hit]:
    """The best `limit` hits for the query words `text`, best first.

    Keyword and semantic candidates are fused (a short turn's cosine read with the one before it), the
    hits holding more of the question's distinct words lifted, for a question about time those that say
    when, then the memories next to strong hits in their session share their score; `rerank` may reorder
    the candidates after that. A family of look-alikes takes one place, look-alike wordings are attached
    to the better hit (`expand`: neither, every memory its own hit).
    """
    keyword, semantic, found = reads.candidates(max(CANDIDATES, limit * 2))
    rows = {**found, **reads.rows([i for i in semantic if i not in keyword])}
    if params.context_weight > 0 and semantic:  # a short turn read with the one before it
        semantic = in_context(semantic, reads.previous(list(semantic), rows), params.context_weight)
    grouped = not expand and any(getattr(r, "family_id", None) for r in rows.values())
    question = terms(text, prefix_last=True)
    frequencies, total = reads.frequencies(question) if isinstance(reads, Frequencies) else ({}, 0)
    hits = fuse(keyword, semantic, rows, now=now, params=params, limit=None if grouped else limit * 2,
                ideal=ideal_bm25(frequencies, total))
    if grouped:  # a family of look-alikes takes one of the places
        hits = first_slots(hits, limit * 2)
    hits = _full(hits, reads)
    # hits holding more of the question's distinct words first
    hits = lift_coverage(hits, question, params.coverage_boost)
    if params.time_mention_boost > 0 and is_time_question(text):  # the hits that say when
        hits = lift_time_mentions(hits, params.time_mention_boost, question)
    if params.neighbour_weight > 0 and hits:
        sources = [h.memory.id for h in hits[: params.neighbour_sources]]
        near, of_near = reads.neighbourhood(sources)
        far = two_steps(near, of_near) if params.far_neighbour_weight > 0 else {}
        wanted = {n for ns in (*near.values(), *far.values()) for n in ns} - set(rows)
        hits = spread_to_neighbours(hits, near, reads.passing(wanted), params.neighbour_weight,
                                    far=far, far_weight=params.far_neighbour_weight)
    if rerank is not None and hits:
        hits = rerank(text, hits)
    # good matches first, each hit marked by its own evidence (meaning, or much of the query's rarer words)
    hits = mark_weak(hits, question, rarity_weights(question, frequencies, total), params)
    if expand:
        return _with_passages(hits[:limit], reads, question, params)
    # one hit per family (its other members attached), then look-alike wordings attached to the better
    # hit (Jaccard); nothing is dropped, only grouped
    hits = first_slots(hits, limit * 2)
    members = reads.family_members([h.memory.family_id for h in hits if h.memory.family_id], SIMILAR_CAP + 1)
    hits = collapse_families(hits, members)
    hits = collapse_near_duplicates(hits, params.collapse_jaccard)[:limit]
    return _with_passages(hits, reads, question, params)


def _with_passages(hits: list[Hit], reads: RankReads, question: Sequence[str], params: RankingParams) -> list[Hit]:
    """Each hit on a long memory with the passage that best matches the query (core/passages.order)."""
    scored = reads.passages([h.memory.id for h in hits]) if hits else {}
    for h in hits:
        if found := scored.get(h.memory.id):
            h.passage = order(h.memory.content, found, question, params.coverage_boost)[0]
    return hits


def _full(hits: list[Hit], reads: RankReads) -> list[Hit]:
    """The hits holding full memories (the lifts read their text): lighter rows swapped for full ones."""
    light = [h.memory.id for h in hits if not isinstance(h.memory, Memory)]
    if not light:
        return hits
    full = reads.full(light)
    return [h if isinstance(h.memory, Memory) else replace(h, memory=full[h.memory.id])
            for h in hits if isinstance(h.memory, Memory) or h.memory.id in full]
