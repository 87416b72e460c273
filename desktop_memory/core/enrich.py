"""Turning one text (and a language model's answer, if any) into an enrichment: pure rules, no I/O.

The deterministic extractors always run; a model's answer adds names, types, a title, a summary for
long texts and a nudge to importance, each kept only when it is grounded in the text. The model itself
is called by engine/enrichment.py, which hands its parsed answer (`answer`) to `combine`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from . import extract as ex
from .headline import grounded
from .importance import blend, signals

DETERMINISTIC = "patterns"  # `Enrichment.by` when only the deterministic part ran
MODEL_ENTITY_TYPES = ["person", "organisation", "product", "place"]
_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9\"“(])")
_WORDS = re.compile(r"\w+", re.UNICODE)


@dataclass
class Enrichment:
    """What enrichment found for one text."""

    title: str
    summary: str
    importance: float
    entities: list[dict[str, str]]
    by: str  # the model id, or "patterns" when only the deterministic part ran


def answer_schema(with_summary: bool) -> dict[str, Any]:
    """The JSON schema the model's answer must follow (its grammar bounds every string)."""
    props: dict[str, Any] = {
        "title": {"type": "string", "minLength": 3, "maxLength": 50},
        "entities": {
            "type": "array", "maxItems": 4,
            "items": {"type": "object",
                      "properties": {"text": {"type": "string", "minLength": 2, "maxLength": 30},
                                     "type": {"type": "string", "enum": MODEL_ENTITY_TYPES}},
                      "required": ["text", "type"]},
        },
        "importance": {"type": "integer", "enum": [1, 2, 3, 4, 5]},
    }
    if with_summary:
        props["summary"] = {"type": "string", "minLength": 10, "maxLength": 240}
    return {"type": "object", "properties": props, "required": list(props)}


def mostly_from(candidate: str, text: str, share: float) -> bool:
    """True when at least `share` of the candidate's words occur in the text (no invented content)."""
    words = [w.lower() for w in _WORDS.findall(candidate)]
    if not words:
        return False
    known = {w.lower() for w in _WORDS.findall(text)}
    return sum(w in known for w in words) / len(words) >= share


def good_title(title: str, text: str) -> bool:
    """2-10 words, mostly from the text, and not just a long stretch of it copied."""
    words = title.split()
    if not (2 <= len(words) <= 10 and len(title) <= 80 and mostly_from(title, text, 0.75)):
        return False
    return not (len(words) > 5 and " ".join(title.lower().split()) in " ".join(text.lower().split()))


def lead_summary(text: str, limit: int = 240) -> str:
    """The first one or two sentences of a text, cut at a word boundary."""
    flat = " ".join(text.split())
    sentences = _SENTENCE.split(flat[: limit * 3])
    out = sentences[0]
    if len(sentences) > 1 and len(out) + len(sentences[1]) < limit:
        out += " " + sentences[1]
    if len(out) > limit:
        out = out[:limit].rsplit(" ", 1)[0].rstrip(",;:") + "…"
    return out


def _title(answer: dict[str, Any], text: str) -> str:
    """The model's title when it is a good one for this text, else ""."""
    title = " ".join(str(answer.get("title") or "").split()).strip(" \"'.:-")
    return title if good_title(title, text) and grounded(title, text) else ""  # numbers and names as written


def _summary(answer: dict[str, Any], text: str, long_text: bool) -> str:
    """A short text is its own summary; a long one gets the model's (when grounded) or its lead."""
    if not long_text:
        return text.strip()
    candidate = " ".join(str(answer.get("summary") or "").split())
    ok = 20 <= len(candidate) <= 320 and mostly_from(candidate, text, 0.8)
    return candidate if ok else lead_summary(text)


def _entities(answer: dict[str, Any], text: str) -> list[ex.Entity]:
    """The extractors' entities, merged with the model's of a known type."""
    found = ex.extract(text)
    model_entities = []
    for item in answer.get("entities") or []:
        if isinstance(item, dict) and (kind := ex.normalise_type(item.get("type"))):
            model_entities.append(ex.Entity(str(item.get("text") or ""), kind))
    return ex.merge(found, model_entities, text) if model_entities else found


def combine(text: str, answer: dict[str, Any] | None = None, *, model_id: str = "", pinned: bool = False,
            repeats: int = 0, summary_chars: int = 280) -> Enrichment:
    """The enrichment of `text`: the deterministic part, with the model's parsed `answer` when there is one.

    `model_id` names the model that answered; an empty or missing answer means "patterns only".
    """
    data = answer or {}
    entities = _entities(data, text)
    raw = data.get("importance")
    model_score = (raw - 1) / 4 if isinstance(raw, int) and 1 <= raw <= 5 else None
    det = signals(text, entities, pinned=pinned, repeats=repeats)
    return Enrichment(title=_title(data, text), summary=_summary(data, text, len(text) > summary_chars),
                      importance=blend(det, model_score, pinned=pinned),
                      entities=[e.to_dict() for e in entities],
                      by=model_id if model_id and data else DETERMINISTIC)
