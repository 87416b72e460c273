"""Hits holding more of the query's distinct words move up (real store, Chroma, MiniLM)."""

import json

import pytest

from desktop_memory.core.query import terms
from desktop_memory.core.ranking import RankingParams, _distinct, _held
from desktop_memory.service import MemoryService

pytestmark = pytest.mark.integration

NOTES = [
    "Caroline: the LGBTQ support group met again and it helped me a lot.",
    "Melanie: LGBTQ LGBTQ! The parade downtown was so loud.",
    "Caroline: I painted a sunrise over the lake this weekend.",
    "Shopping list: milk, eggs, bread",
]
QUERY = "When did Caroline go to the LGBTQ support group?"


def test_search_lifts_hits_by_their_share_of_the_query_words(tmp_path):
    lines = [json.dumps({"content": t, "source": "note"}) for t in NOTES]
    with MemoryService(tmp_path / "data") as svc:
        svc.import_records(lines)
        hits = svc.search(QUERY, limit=10, record_access=False)
        assert hits[0].memory.content == NOTES[0]
        boost = RankingParams().coverage_boost
        assert boost > 0  # on by default (docs/ranking.md: the folds chose it)
        for h in hits:
            share = _held(_distinct(terms(QUERY)), h.memory.content)
            assert h.explain["coverage"] == pytest.approx(share, abs=1e-4)
        assert next(h for h in hits if h.memory.content == NOTES[0]).explain["coverage"] == 0.8  # all but "go"
    with MemoryService(tmp_path / "data", ranking=RankingParams(coverage_boost=0.0)) as svc:
        hits = svc.search(QUERY, limit=10, record_access=False)
        assert hits and all("coverage" not in h.explain for h in hits)  # off: scores as fused
