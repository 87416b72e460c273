"""Deterministic importance signals, blended with a model's score when there is one."""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from .extract import Entity

MODEL_WEIGHT = 0.25
PINNED_FLOOR = 0.9

_DECISION = re.compile(
    r"\b(?:decid(?:e|ed|ing)|decision|agreed|approved|we(?:'ll| will) (?:go with|use|ship)|final(?:ly|ised|ized)?|"
    r"sign(?:ed)? off|deadline|due (?:on|by)|commit(?:ted)? to|must|policy|contract)\b",
    re.I,
)
_TODO = re.compile(
    r"(?:\bTODO\b|\bFIXME\b|\baction items?\b|\bremember to\b|\bdon'?t forget\b|\bneed(?:s)? to\b|\bhave to\b|"
    r"\bremind me\b|\bfollow[- ]up\b|^\s*[-*]\s*\[ \])",
    re.I | re.M,
)
_CODE = re.compile(r"(?:^\s*(?:def |class |import |from \S+ import|function |const |let |fn |#include|SELECT |\$ )|"
                   r"[{};]\s*$|=>|::|\w+\([^)]*\)\s*[{:]?\s*$)", re.M)
_SECRET = re.compile(r"\[REDACTED:\w+\]")
_PERSONAL = re.compile(r"\b(?:password|address|phone|birthday|passport|account number|bank|salary|doctor|"
                       r"appointment|allerg\w*|medication)\b", re.I)


@dataclass
class Importance:
    """A score in 0..1 and the signals behind it (for explanations)."""

    score: float
    signals: dict[str, float] = field(default_factory=dict)


def signals(text: str, entities: Sequence[Entity] = (), *, pinned: bool = False, repeats: int = 0) -> Importance:
    """Importance from the text alone: length, code, decisions, to-dos, questions, facts, repeats, pins."""
    sample = text[:20_000]
    s: dict[str, float] = {}
    length = len(sample)
    s["length"] = 0.12 * min(1.0, math.log10(max(length, 10)) / 3.3) - 0.06
    if _DECISION.search(sample):
        s["decision"] = 0.15
    if _TODO.search(sample):
        s["todo"] = 0.12
    if "?" in sample[:2000]:
        s["question"] = 0.03
    if len(_CODE.findall(sample)) >= 2:
        s["code"] = 0.06
    kinds = {e.type for e in entities}
    factual = len(kinds & {"datetime", "amount", "email", "url", "person", "organisation", "place"})
    if factual:
        s["facts"] = min(0.12, 0.04 * factual)
    if _PERSONAL.search(sample):
        s["personal"] = 0.06
    if _SECRET.search(sample):
        s["secret"] = 0.04
    if repeats > 0:
        s["repeats"] = min(0.15, 0.05 * repeats)
    if length < 25:
        s["very_short"] = -0.1
    score = 0.4 + sum(s.values())
    if pinned:
        s["pinned"] = 1.0
        score = max(score, PINNED_FLOOR)
    return Importance(round(min(1.0, max(0.0, score)), 3), s)


def blend(deterministic: Importance, model_score: float | None, *, pinned: bool = False) -> float:
    """Mostly the deterministic score; the model nudges it (a small model's judgement is noisy)."""
    score = deterministic.score
    if model_score is not None and math.isfinite(model_score):
        score = (1 - MODEL_WEIGHT) * score + MODEL_WEIGHT * min(1.0, max(0.0, model_score))
    if pinned:
        score = max(score, PINNED_FLOOR)
    return round(min(1.0, max(0.0, score)), 3)
