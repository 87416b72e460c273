"""Fusing keyword and semantic evidence into one ranking, with mild personal signals."""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from .models import Hit, Memory

_WORD = re.compile(r"\w+")


@dataclass(frozen=True)
class RankingParams:
    """Weights of the fused score; see docs/ranking.md for how they were chosen."""

    keyword_weight: float = 0.5
    semantic_weight: float = 0.5
    importance_weight: float = 0.05
    recency_weight: float = 0.03
    recency_half_life_days: float = 30.0
    pinned_boost: float = 0.05
    collapse_jaccard: float = 0.9


def _minmax(scores: Mapping[str, float]) -> dict[str, float]:
    if not scores:
        return {}
    hi, lo = max(scores.values()), min(scores.values())
    span = hi - lo
    return {k: (v - lo) / span if span > 1e-9 else 1.0 for k, v in scores.items()}


def fuse(
    keyword: Mapping[str, float],
    semantic: Mapping[str, float],
    memories: Mapping[str, Memory],
    *,
    now: float,
    params: RankingParams = RankingParams(),
) -> list[Hit]:
    """Rank every memory in `memories` by the weighted, normalised channel scores.

    keyword: bm25 scores (higher is better; absent = no keyword match).
    semantic: cosine similarities (absent = not scored).
    """
    kw = {k: v for k, v in keyword.items() if k in memories}
    kw_norm = {k: v / max(kw.values()) for k, v in kw.items()} if kw else {}
    sem = {k: v for k, v in semantic.items() if k in memories}
    sem_norm = _minmax(sem)
    hits = []
    for mid, m in memories.items():
        k = kw_norm.get(mid, 0.0)
        s = sem_norm.get(mid, 0.0)
        relevance = params.keyword_weight * k + params.semantic_weight * s
        age_days = max(0.0, (now - m.created_at) / 86400.0)
        recency = math.exp(-math.log(2) * age_days / params.recency_half_life_days)
        personal = (
            params.importance_weight * (m.importance - 0.5)
            + params.recency_weight * recency
            + (params.pinned_boost if m.pinned else 0.0)
        )
        score = relevance * (1.0 + personal)
        hits.append(Hit(m, score, {
            "keyword_bm25": round(kw.get(mid, 0.0), 4), "keyword": round(k, 4),
            "semantic_cosine": round(sem.get(mid, 0.0), 4), "semantic": round(s, 4),
            "relevance": round(relevance, 4), "personal": round(personal, 4), "final": round(score, 6),
        }))
    hits.sort(key=lambda h: (-h.score, -h.memory.created_at))
    return hits


def _words(text: str) -> frozenset[str]:
    return frozenset(_WORD.findall(text.lower()))


def collapse_near_duplicates(hits: Sequence[Hit], threshold: float) -> list[Hit]:
    """Drop a hit whose words overlap a better hit's by at least `threshold` (Jaccard)."""
    kept: list[tuple[Hit, frozenset[str]]] = []
    for hit in hits:
        words = _words(hit.memory.content)
        dup = False
        for other, other_words in kept:
            union = len(words | other_words)
            if union and len(words & other_words) / union >= threshold:
                other.explain.setdefault("collapsed", []).append(hit.memory.id)
                dup = True
                break
        if not dup:
            kept.append((hit, words))
    return [h for h, _ in kept]
