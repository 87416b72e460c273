"""A question about when something happened finds the turn that dates it (real store, Chroma, MiniLM)."""

import json

import pytest

from desktop_memory.core.ranking import RankingParams
from desktop_memory.service import MemoryService

pytestmark = pytest.mark.integration

CHAT = [
    "Melanie: Hey Caroline! How was your week? Anything new with the support group?",
    "Caroline: The support group is amazing, everyone in the group shares their stories and it helps so much.",
    "Melanie: I love that the support group gives you that. What did the group talk about?",
    "Caroline: I went to the support group again yesterday and we talked about coming out to family.",
    "Melanie: That sounds powerful. I have been painting a lot, a sunrise over the lake.",
    "Caroline: Your paintings are beautiful! Send me a photo of the lake one.",
]


def test_when_question_puts_the_dated_turn_first(tmp_path):
    lines = [json.dumps({"content": t, "source": "chat", "created_at": "2023-05-08T13:56:00"}) for t in CHAT]
    with MemoryService(tmp_path / "data") as svc:
        svc.import_records(lines)
        hits = svc.search("When did Caroline go to the support group?", limit=5, record_access=False)
        assert "yesterday" in hits[0].memory.content, [h.memory.content[:40] for h in hits]
        assert hits[0].explain.get("time_mention") is True
        other = svc.search("What does Caroline like about the support group?", limit=5, record_access=False)
        assert not any(h.explain.get("time_mention") for h in other)  # only questions about time are lifted
    with MemoryService(tmp_path / "data", ranking=RankingParams(time_mention_boost=0.0)) as svc:
        hits = svc.search("When did Caroline go to the support group?", limit=5, record_access=False)
        assert not any(h.explain.get("time_mention") for h in hits)
