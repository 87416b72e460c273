"""Each component of the service, built with its collaborators only (no MemoryService): real SQLite and
Chroma, the fake embedder."""

from __future__ import annotations

import json
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from pathlib import Path

import pytest

from desktop_memory.core.errors import DataDirLocked, InvalidInput, NotFound
from desktop_memory.core.models import Hit
from desktop_memory.core.query import Filters
from desktop_memory.core.ranking import RankingParams
from desktop_memory.engine.foreground import Foreground
from desktop_memory.engine.settings import Settings
from desktop_memory.engine.store import Store
from desktop_memory.service.enrichment import EnrichmentControl
from desktop_memory.service.importing import Importer
from desktop_memory.service.ingest import Ingest
from desktop_memory.service.lifecycle import Lifecycle
from desktop_memory.service.ownership import Ownership
from desktop_memory.service.reports import IndexStatus
from desktop_memory.service.retrieval import Retrieval
from desktop_memory.service.vector_sync import VectorSync
from tests.fakes import FakeEmbedder


@dataclass
class Parts:
    store: Store
    vectors: VectorSync
    ingest: Ingest
    retrieval: Retrieval
    lifecycle: Lifecycle


@pytest.fixture
def parts(tmp_path: Path) -> Iterator[Parts]:
    folder = tmp_path / "data"
    folder.mkdir()
    store, settings, embedder = Store(folder / "memories.sqlite3"), Settings(), FakeEmbedder()
    lane = ThreadPoolExecutor(1)
    vectors = VectorSync(folder, store, embedder, Foreground())
    ingest = Ingest(store, settings, embedder, vectors, lane)
    vectors.on_reembed = ingest.forget_recent
    retrieval = Retrieval(store, settings, embedder, vectors, RankingParams(), lane)
    lifecycle = Lifecycle(folder, store, settings, embedder, vectors, ingest.forget_recent)
    yield Parts(store, vectors, ingest, retrieval, lifecycle)
    lane.shutdown()
    vectors.close()
    store.close()


def test_vector_sync_drains_the_queue_and_scores_from_the_copies(parts):
    a = parts.ingest.add("alpha beta gamma").memory
    assert parts.store.vectors.queued_upserts(10) == [a.id]  # an add leaves its vector for Chroma
    qvec = FakeEmbedder().encode_query("alpha beta gamma")
    assert parts.vectors.similarities(qvec, [a.id])[a.id] == pytest.approx(1.0, abs=1e-3)  # from the copy
    assert parts.store.vectors.queue_length() == 1  # the index is not even open yet
    parts.vectors.sync()  # opens the index (which drains the queue as it is reconciled at open)
    assert parts.store.vectors.queue_length() == 0 and parts.vectors.index.count() == 1
    assert parts.vectors.similarities(qvec, ["no-such-id"]) == {}
    assert parts.vectors.status() == IndexStatus("ok", "")
    assert parts.vectors.reconcile(full=True) == {"queued": 0, "missing": 0, "orphans": 0, "copied": 0}
    b = parts.ingest.add("delta epsilon zeta").memory
    assert parts.vectors.sync() == 1 and parts.vectors.index.count() == 2  # the index open: a plain drain
    assert parts.vectors.index.vectors([b.id])[b.id] @ FakeEmbedder().encode_query("delta epsilon zeta") > 0.999


def test_similarities_use_vectors_already_read(parts, monkeypatch):
    """Vectors read while the query embeds are not read again; the rest are, in the order asked."""
    a, b = (parts.ingest.add(t).memory for t in ("alpha beta gamma", "delta epsilon zeta"))
    qvec = FakeEmbedder().encode_query("alpha beta gamma")
    plain = parts.vectors.similarities(qvec, [b.id, a.id])
    asked: list[list[str]] = []
    read = parts.store.vectors.stored
    monkeypatch.setattr(parts.store.vectors, "stored", lambda ids: asked.append(list(ids)) or read(ids))
    known = read([a.id])
    assert parts.vectors.similarities(qvec, [b.id, a.id, b.id], known=known) == plain
    assert list(parts.vectors.similarities(qvec, [b.id, a.id], known=known)) == [b.id, a.id]
    assert asked == [[b.id], [b.id]]


def test_a_search_reads_the_keyword_candidates_rows_and_copies_once(parts, monkeypatch):
    """The keyword statement brings the candidates' ranking rows and vector copies with it: no second lookup
    by id for them (rank_fields is asked only about memories found by meaning alone, vectors.stored never),
    and the ranking is the one reading them separately by id gives."""
    for n in range(12):  # look-alikes: the same invoice line but for one number
        parts.ingest.add(f"invoice {n} for the garden shed, total {100 + n} euros")
    parts.ingest.add("a note about something else entirely")
    with monkeypatch.context() as m:  # the separate read: the keyword statement's rows dropped
        read = parts.store.search.keyword_candidates
        m.setattr(parts.store.search, "keyword_candidates", lambda *a, **k: (read(*a, **k)[0], {}))
        want = [(h.memory.id, h.score) for h in parts.retrieval.search("invoice total euros", expand=True)]
    asked: dict[str, list[str]] = {"rank_fields": [], "stored": []}
    for part, name in ((parts.store.search, "rank_fields"), (parts.store.vectors, "stored")):
        real = getattr(part, name)
        monkeypatch.setattr(part, name,
                            lambda ids, *a, _n=name, _r=real, **k: asked[_n].extend(ids) or _r(ids, *a, **k))
    got = [(h.memory.id, h.score) for h in parts.retrieval.search("invoice total euros", expand=True)]
    assert [i for i, _ in got] == [i for i, _ in want] and len(got) == 10
    assert [s for _, s in got] == pytest.approx([s for _, s in want], rel=1e-6)  # recency's clock moves a little
    keyword = {i for i, _ in parts.store.search.keyword(["invoice", "total", "euros*"], Filters(), 50)}
    assert keyword and not keyword & set(asked["rank_fields"]) and asked["stored"] == []


def test_ingest_adds_and_dedupes_and_the_importer_imports_through_it(parts):
    first = parts.ingest.add("the deploy runs at noon", source="CLI", tags=["#Ops", "ops"])
    assert first.status == "added" and first.memory.source == "cli" and first.memory.tags == ["ops"]
    assert parts.ingest.add("the   deploy runs at noon").status == "duplicate"
    lines = [json.dumps({"content": "standup notes for monday"}), "not json", "",
             json.dumps({"content": "the deploy runs at noon"})]
    report = Importer(parts.ingest).import_records(lines)
    assert (report.added, report.duplicates, [n for n, _ in report.errors]) == (1, 1, [2])
    assert parts.store.count() == 2


def test_retrieval_finds_filters_and_builds_context(parts):
    a = parts.ingest.add("quarterly budget review with finance", tags=["work"]).memory
    b = parts.ingest.add("budget for the garden shed", tags=["home"]).memory
    assert {h.memory.id for h in parts.retrieval.search("budget")} == {a.id, b.id}
    assert [h.memory.id for h in parts.retrieval.search("budget", filters=Filters(tags=("home",)))] == [b.id]
    assert [h.memory.id for h in parts.retrieval.search("#work")] == [a.id]  # browse: no words
    ctx = parts.retrieval.context(ids=[b.id, a.id], budget=200)
    assert ctx.text.index("garden") < ctx.text.index("finance")
    with pytest.raises(InvalidInput):
        parts.retrieval.context("   ")


def test_the_rerank_step_sees_the_ranked_candidates_and_decides_the_order(parts):
    a = parts.ingest.add("apple orchard harvest notes").memory
    b = parts.ingest.add("apple pie recipe with cinnamon").memory
    seen: list[tuple[str, list[str]]] = []

    def backwards(query: str, hits: list[Hit]) -> list[Hit]:
        seen.append((query, [h.memory.id for h in hits]))
        return [replace(h, score=float(n)) for n, h in enumerate(reversed(hits))]

    before = [h.memory.id for h in parts.retrieval.search("apple", expand=True)]
    parts.retrieval.rerank = backwards
    after = [h.memory.id for h in parts.retrieval.search("apple", expand=True)]
    assert seen == [("apple", before)] and after == before[::-1] and set(after) == {a.id, b.id}


def test_lifecycle_edits_forgets_purges_and_counts(parts):
    m = parts.ingest.add("the wifi password hint is in the blue notebook").memory
    assert parts.lifecycle.tag(m.id, add=["#Home", "Notes"], remove=["notes"]).tags == ["home"]
    assert parts.lifecycle.set_pinned(m.id, True).pinned
    assert parts.lifecycle.set_forgotten(m.id, True).forgotten
    stats = parts.lifecycle.stats()
    assert (stats.memories, stats.forgotten, stats.pinned) == (0, 1, 0)
    assert parts.lifecycle.retention(older_than_days=0, dry_run=True) == []  # pinned are kept
    parts.lifecycle.set_pinned(m.id, False)
    assert parts.lifecycle.retention(older_than_days=0, include_forgotten_only=True) == [m.id]
    with pytest.raises(NotFound):
        parts.lifecycle.get(m.id)
    assert parts.lifecycle.stats().memories == 0 and parts.vectors.index.count() == 0


def test_lifecycle_doctor_checks_every_store(parts):
    parts.ingest.add("something to check")
    checks = parts.lifecycle.doctor()
    assert checks.ok is True and checks.sqlite_integrity is True and checks.vectors_match is True


def test_enrichment_control_queues_without_a_model(parts, tmp_path):
    parts.ingest.add("Priya meets the Acme team on Friday")
    control = EnrichmentControl(tmp_path / "data", parts.store, Settings(), Foreground())
    assert control.requeue() == 1 and control.retry_failed() == 0
    with pytest.raises(InvalidInput):
        control.enrich(0)
    control.stop()  # never started: nothing to stop


def test_ownership_locks_the_folder_until_released(tmp_path):
    own = Ownership.take(tmp_path / "data", lock_wait_s=0)
    try:
        with pytest.raises(DataDirLocked):
            Ownership.take(tmp_path / "data", lock_wait_s=0)
        assert own.reopen_store().count() == 0
    finally:
        own.release()
    Ownership.take(tmp_path / "data", lock_wait_s=0).release()
