"""A short chat turn is read with the turn before it (real store, Chroma, MiniLM)."""

import json

import numpy as np
import pytest

from desktop_memory.core.ranking import RankingParams
from desktop_memory.service import MemoryService

pytestmark = pytest.mark.integration

CHAT = [
    "Sam: Did you finish the quilt for your niece's birthday?",
    "Ana: Yes! It took me three weekends but she loved it.",
    "Sam: My car broke down again on the highway this morning.",
    "Ana: Oh no, do you need a lift to work tomorrow?",
]
QUERY = "How long did the quilt for the niece take?"


def _reply_cosine(svc: MemoryService) -> tuple[float, float, float]:
    """(cosine shown for the reply, the reply's own cosine, the cosine of the turn before it)."""
    hits = svc.search(QUERY, limit=10, record_access=False)
    reply = next(h for h in hits if h.memory.content == CHAT[1])
    qvec = svc.embedder.encode_query(QUERY)
    own, before = (float(v @ qvec) for v in svc.embedder.encode([CHAT[1], CHAT[0]]))
    return reply.explain["semantic_cosine"], own, before


def test_a_reply_takes_part_of_the_cosine_of_the_turn_it_answers(tmp_path):
    lines = [json.dumps({"content": t, "source": "chat", "created_at": "2023-05-08T13:56:00"}) for t in CHAT]
    lines.append(json.dumps({"content": "Shopping list: milk, eggs, bread", "source": "note",
                             "created_at": "2023-05-09T10:00:00"}))
    with MemoryService(tmp_path / "data", ranking=RankingParams(context_weight=0.5)) as svc:
        svc.import_records(lines)
        shown, own, before = _reply_cosine(svc)
        assert before > own  # the question names the quilt and the niece; the reply does not
        assert shown == pytest.approx((own + 0.5 * before) / 1.5, abs=0.01)
    with MemoryService(tmp_path / "data", ranking=RankingParams(context_weight=0.0)) as svc:
        shown, own, _ = _reply_cosine(svc)
        assert shown == pytest.approx(own, abs=0.01)  # off: the reply's own cosine
    assert np.isfinite(shown)
    w = RankingParams().context_weight
    with MemoryService(tmp_path / "data") as svc:  # on by default (docs/ranking.md: the folds chose it)
        shown, own, before = _reply_cosine(svc)
        assert w > 0 and shown == pytest.approx((own + w * before) / (1 + w), abs=0.01)
