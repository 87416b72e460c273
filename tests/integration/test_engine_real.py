"""The engine with the real MiniLM model, real SQLite and real Chroma in temporary folders."""

import pytest

from desktop_memory.core.query import Filters

pytestmark = pytest.mark.integration

NOTES = [
    "Decision: the mobile beta ships on March 3rd and Priya writes the release notes.",
    "To rotate the staging database password run make rotate-db ENV=staging.",
    "Pasta recipe: boil spaghetti for nine minutes, then toss with garlic, olive oil and chili.",
    "The dentist appointment moved to Tuesday at 4pm.",
    "Kubernetes pods keep restarting because the liveness probe times out after 1 second.",
]


@pytest.fixture
def filled(real_service):
    ids = [real_service.add(text, source="clipboard" if i % 2 else "cli").memory.id for i, text in enumerate(NOTES)]
    return real_service, ids


def test_meaning_finds_a_paraphrase_with_no_shared_words(filled):
    service, ids = filled
    hits = service.search("what should I cook for dinner with noodles", limit=3)
    assert hits[0].memory.id == ids[2]
    assert hits[0].explain["keyword_bm25"] == 0 and hits[0].explain["semantic_cosine"] > 0.3


def test_words_and_meaning_together(filled):
    service, ids = filled
    assert service.search("when is the beta release", limit=1)[0].memory.id == ids[0]
    assert service.search("container health check failing", limit=1)[0].memory.id == ids[4]


def test_unrelated_queries_do_not_return_everything(filled):
    service, _ = filled
    assert len(service.search("quantum chromodynamics lattice gauge", limit=10)) < len(NOTES)


def test_filters_apply_to_the_semantic_channel_too(filled):
    """A filter keeps a memory found only by meaning out, and lets such a memory in: never an empty answer."""
    service, ids = filled
    unfiltered = service.search("cooking dinner", limit=3)
    assert unfiltered[0].memory.id == ids[2] and unfiltered[0].explain["keyword_bm25"] == 0  # by meaning only
    hits = service.search("cooking dinner", filters=Filters(sources=("clipboard",)))
    assert ids[2] not in [h.memory.id for h in hits]
    assert all(h.memory.source == "clipboard" for h in hits)
    for source, query, wanted in (("cli", "cooking dinner", ids[2]), ("clipboard", "tooth doctor visit", ids[3])):
        hits = service.search(query, filters=Filters(sources=(source,)), limit=3)
        assert hits and hits[0].memory.id == wanted, (query, [h.memory.content for h in hits])
        assert hits[0].explain["keyword_bm25"] == 0 and hits[0].explain["semantic_cosine"] > 0.2
        assert all(h.memory.source == source for h in hits)


def test_near_duplicate_is_related_and_both_kept_with_the_real_model(real_service):
    text = ("Meeting notes: we agreed to move the launch to Friday, hire two designers for the mobile team, "
            "and review the budget again next week.")
    a = real_service.add(text.replace("budget", "budgett"))  # a typo, then the corrected copy
    b = real_service.add(text)
    c = real_service.add("Grocery list: eggs, milk, bread")
    assert b.status == "related" and b.memory.id != a.memory.id and c.status == "added"
    assert "budgett" in real_service.get(a.memory.id).content  # nothing distinct is overwritten
    assert real_service.get(a.memory.id).family_id == real_service.get(b.memory.id).family_id == a.memory.id
    (hit,) = real_service.search("launch moved to Friday, designers hired", limit=5)[:1]
    assert {hit.memory.id, *(m.id for m in hit.similar)} == {a.memory.id, b.memory.id}


def test_new_memory_is_searchable_immediately(real_service):
    m = real_service.add("The wifi at the cabin is called PineNet").memory
    assert real_service.search("PineNet", limit=1)[0].memory.id == m.id
    assert real_service.search("wireless network name at the lodge", limit=1)[0].memory.id == m.id


def test_purge_removes_the_text_from_every_store(real_service, data_dir):
    phrase = "Zanzibar-marmalade-7391"
    m = real_service.add(f"The secret family recipe is called {phrase} and nobody knows it").memory
    real_service.add("another memory so the stores are not empty")
    real_service.store.db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    raw = b"".join(p.read_bytes() for p in data_dir.rglob("*") if p.is_file())
    assert phrase.encode() in raw  # present before purge (in SQLite; never in Chroma, see below)
    chroma = b"".join(p.read_bytes() for p in (data_dir / "vectors").rglob("*") if p.is_file())
    assert phrase.encode() not in chroma and b"family recipe" not in chroma
    real_service.purge([m.id])
    raw = b"".join(p.read_bytes() for p in data_dir.rglob("*") if p.is_file())
    assert phrase.encode() not in raw and phrase.lower().encode() not in raw
    assert m.id not in real_service.vectors.all_ids()
    assert m.id not in [h.memory.id for h in real_service.search(phrase)]
