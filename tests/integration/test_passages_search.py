"""A long memory is found by the passage that answers, shows it, and gives it to context (real store, MiniLM)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from desktop_memory.core.passages import split
from desktop_memory.service import MemoryService

pytestmark = pytest.mark.integration

TOPICS = [
    "The quarterly planning meeting covered hiring, the office move and the budget for new laptops. "
    "Everyone agreed that the timeline was tight but workable if the vendors deliver on time.",
    "Our deployment pipeline builds the containers, runs the unit tests and pushes the images to the "
    "registry; the staging cluster pulls them every hour and the smoke tests run after that.",
    "The marketing team wants a new landing page with clearer pricing and a short video. The designers "
    "proposed three layouts and the second one tested best with the focus group.",
    "```python\ndef retry(call, attempts=3):\n    for n in range(attempts):\n        try:\n            return call()\n"
    "        except TimeoutError:\n            continue\n    raise RuntimeError('gave up')\n```",
    "Die Lieferung der Bürostühle verzögert sich um zwei Wochen, weil der Hersteller Probleme mit dem Stoff hat.",
]
ANSWER = ("About the sourdough: the starter finally became reliable once I fed it with rye flour twice a day and "
          "kept the jar on top of the fridge, where it stays warm.")
QUESTION = "what made my bread starter dependable"


def _long_text() -> str:
    paragraphs = [TOPICS[i % len(TOPICS)] for i in range(90)]
    paragraphs.insert(70, ANSWER)  # deep: far past the 256 tokens the model reads of the whole text
    return "\n\n".join(paragraphs)


def _passage_rows(svc: MemoryService) -> int:
    return int(svc.store.scalar("SELECT count(*) FROM passage_vectors"))


def test_a_deep_paragraph_finds_its_long_memory_and_fills_the_context(tmp_path):
    text = _long_text()
    assert len(text) > 15_000 and text.index(ANSWER) > 11_000
    notes = ["Bread recipe ideas: try spelt next time.", "The bakery on the corner opens at seven.",
             "Flour prices went up again this month.", "My sister keeps her jars on the window sill."]
    with MemoryService(tmp_path / "data") as svc:
        svc.import_records([json.dumps({"content": n, "source": "note", "created_at": f"2024-05-{10 + 3 * k}T09:00:00"})
                            for k, n in enumerate(notes)])  # days apart: each its own session
        long_id = svc.add(text, source="chat", title="Work chat").memory.id
        assert _passage_rows(svc) == len(split(text)) > 20  # written with the memory, nothing left queued
        assert svc.store.passages.queue_length() == 0
        hits = svc.search(QUESTION, limit=5, record_access=False)
        assert long_id in [h.memory.id for h in hits[:3]]
        hit = next(h for h in hits if h.memory.id == long_id)
        assert hit.passage is not None and ANSWER in hit.passage.of(hit.memory)
        assert hit.to_dict()["passage"]["text"] == hit.passage.of(hit.memory)
        ctx = svc.context(QUESTION, budget=300)
        assert ANSWER in ctx.text and "Work chat" in ctx.text and ctx.tokens <= 300
        # chosen memories with the typed query (the search window): in the order given, a long one by the
        # lines matching the query, not its opening
        note_id = next(h.memory.id for h in svc.search("bakery corner", limit=1, record_access=False))
        chosen = svc.context(QUESTION, ids=[note_id, long_id], budget=300)
        assert chosen.included == [note_id, long_id] and ANSWER in chosen.text and chosen.tokens <= 300
        assert chosen.text.index("bakery") < chosen.text.index(ANSWER)
        assert ANSWER not in svc.context(ids=[note_id, long_id], budget=300).text  # no query: the opening
        assert all(h.passage is None for h in hits if h.memory.id != long_id)  # short memories: none

        # an edit drops the old passages (a trigger) and queues the memory; the vector sync makes the new ones
        edited = text.replace(ANSWER, "Nothing about bread here at all.")
        with svc.store.transaction():
            svc.store.update(long_id, content=edited)
            assert svc.store.passages.spans([long_id]) == {} and svc.store.passages.queue_length() == 1
        svc.edit(long_id, content=edited + "\n\nOne more line.")  # its passages made at once
        kept = svc.store.passages.spans([long_id])[long_id]
        assert [p for p, _ in kept] == split(edited + "\n\nOne more line.")
        assert svc.store.passages.queue_length() == 0
        assert not any(ANSWER in h.memory.content for h in svc.search(QUESTION, limit=5, record_access=False))

        svc.purge([long_id])
        assert _passage_rows(svc) == 0 and svc.store.passages.queue_length() == 0


def test_a_new_embedding_model_makes_the_passages_again_and_older_stores_are_backfilled(tmp_path):
    text = _long_text()
    with MemoryService(tmp_path / "data") as svc:
        mid = svc.add(text, source="chat").memory.id
        rows = _passage_rows(svc)
        with svc.store.transaction():  # as if another model made them: zero vectors, the meta says so
            svc.store.db.execute("UPDATE passage_vectors SET vec = zeroblob(length(vec))")
            svc.store.set_meta("embedding_model", "another-model/v0")
    with MemoryService(tmp_path / "data") as svc:
        hits = svc.search(QUESTION, limit=5, record_access=False)  # the model is adopted: everything re-embedded
        assert svc.vector_sync.backlog is not None and svc.vector_sync.backlog.wait(60)  # passages: in the background
        assert _passage_rows(svc) == rows and svc.store.passages.queue_length() == 0
        vecs = np.stack([v for _, v in svc.store.passages.spans([mid])[mid]])
        assert np.all(np.linalg.norm(vecs, axis=1) > 0.9)
        assert mid in [h.memory.id for h in hits]
        with svc.store.transaction():  # a store from before m006: the migration queued its long memories
            svc.store.db.execute("DELETE FROM passage_vectors")
            svc.store.db.execute("INSERT INTO passage_queue(memory) "
                                 "SELECT rowid FROM memories WHERE length(content) > 512")
    with MemoryService(tmp_path / "data") as svc:
        svc.search(QUESTION, limit=5, record_access=False)
        assert svc.vector_sync.backlog is not None and svc.vector_sync.backlog.wait(60)
        assert _passage_rows(svc) == rows
