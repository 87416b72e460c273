"""The service over real SQLite and Chroma, with the fake embedder (fast)."""

import json
import math
import time

import pytest

from desktop_memory.core.capture import Snapshot
from desktop_memory.core.errors import DataDirLocked, InvalidInput, NotFound
from desktop_memory.core.query import Filters
from desktop_memory.service import MemoryService
from tests.fakes import FakeEmbedder


def ids(hits):
    return [h.memory.id for h in hits]


def captured(service, text, *, source="clipboard", app="", at=None):
    """A copy as the app sends it (`capture`): the one path where a text extending the previous one updates it."""
    result = service.capture(Snapshot(text, app=app, source=source, at=at))
    assert result.stored, result.reason
    return result


def test_add_then_find_by_keyword(fake_service):
    r = fake_service.add("The staging deploy uses blue green switching", source="cli", tags=["Infra", "#ops"])
    assert r.status == "added"
    m = fake_service.get(r.memory.id)
    assert m.tags == ["infra", "ops"] and m.source == "cli" and m.session_id
    assert ids(fake_service.search("deploy")) == [m.id]


def test_exact_duplicate_bumps_instead_of_adding(fake_service):
    first = fake_service.add("same text here")
    again = fake_service.add("same   text here\n")
    assert again.status == "duplicate" and again.memory.id == first.memory.id
    m = fake_service.get(first.memory.id)
    assert m.access_count == 1 and m.updated_at >= first.memory.updated_at
    assert fake_service.stats().memories == 1


def test_near_duplicate_is_kept_and_related_to_the_existing_memory(fake_service):
    text = " ".join(f"word{i}" for i in range(60))
    first = fake_service.add(text, source="clipboard")
    second = fake_service.add(text.replace("word30", "word99"), source="cli")  # another source: no extension
    assert second.status == "related" and second.memory.id != first.memory.id
    a, b = fake_service.get(first.memory.id), fake_service.get(second.memory.id)
    assert a.content == text and "word99" in b.content
    assert a.family_id == b.family_id == a.id
    assert fake_service.stats().memories == 2
    fake_service.sync_vectors()
    assert fake_service.vectors.count() == 2


def test_look_alikes_collapse_into_one_hit_with_the_others_attached(fake_service):
    base = " ".join(f"word{i}" for i in range(40))
    made = [fake_service.add(f"{base} invoice INV-{n}", source="import").memory for n in range(2000, 2004)]
    hits = fake_service.search("invoice INV-2002")
    assert hits[0].memory.id == made[2].id
    assert {m.id for m in hits[0].similar} == {m.id for m in made} - {made[2].id}
    assert hits[0].to_dict()["similar"] == [m.id for m in hits[0].similar]
    every = fake_service.search("invoice INV-2002", expand=True)
    assert {h.memory.id for h in every} == {m.id for m in made} and all(not h.similar for h in every)


def test_a_capture_extending_the_previous_one_updates_it_and_keeps_the_earlier_text(fake_service):
    first = captured(fake_service, "Meeting notes: budget", app="Editor")
    grown = captured(fake_service, "Meeting notes: budget approved for Q3", app="Editor")
    assert grown.status == "extended" and grown.memory_id == first.memory_id
    m = fake_service.get(first.memory_id)
    assert m.content == "Meeting notes: budget approved for Q3"
    assert [v.content for v in fake_service.versions(m.id)] == ["Meeting notes: budget"]
    assert ids(fake_service.search("approved")) == [m.id]
    restored = fake_service.restore_version(m.id, 1)
    assert restored.content == "Meeting notes: budget"
    assert [v.content for v in fake_service.versions(m.id)] == ["Meeting notes: budget approved for Q3"]
    (record,) = list(fake_service.export_records())
    assert record["content"] == "Meeting notes: budget"
    assert [v["content"] for v in record["versions"]] == ["Meeting notes: budget approved for Q3"]


def test_extension_only_from_the_same_source_and_app_within_the_window(fake_service):
    t0 = time.time() - 3600  # copies taken an hour ago (a copy is never dated in the future)
    a = captured(fake_service, "Draft reply to Sam", app="Mail", at=t0)
    other_app = captured(fake_service, "Draft reply to Sam about lunch", app="Chat", at=t0 + 10)
    other_source = captured(fake_service, "Draft reply to Sam about dinner", source="hotkey", app="Mail", at=t0 + 20)
    late = captured(fake_service, "Draft reply to Sam, sent", app="Mail", at=t0 + 6 * 60)
    assert other_app.status != "extended" and other_source.status != "extended" and late.status != "extended"
    assert len({a.memory_id, other_app.memory_id, other_source.memory_id, late.memory_id}) == 4
    assert fake_service.versions(a.memory_id) == []
    # a chain of extensions: each within 5 minutes of the one before
    b = captured(fake_service, "Status", source="cli", at=t0)
    for i, text in enumerate(["Status: green", "Status: green, deploy at 5", "Status: green, deploy at 5 done"]):
        r = captured(fake_service, text, source="cli", at=t0 + 240 * (i + 1))
        assert r.status == "extended" and r.memory_id == b.memory_id
    assert [v.content for v in fake_service.versions(b.memory_id)] == [
        "Status", "Status: green", "Status: green, deploy at 5"]


def test_a_copy_is_stored_at_the_time_it_was_copied_however_late_the_engine_gets_it(fake_service):
    copied = time.time() - 3600  # the host was down for an hour; the app held the copy until Retry
    sent = Snapshot("Copied while the engine was stopped: the dentist is on Thursday at 4", at=copied,
                    source="clipboard", automatic=True)
    result = fake_service.capture(Snapshot.from_dict(json.loads(json.dumps(sent.to_dict()))))  # as on the socket
    assert result.stored and fake_service.get(result.memory_id).created_at == copied
    direct = fake_service.capture(Snapshot("Copied by the hotkey an hour ago: the plumber comes at 8", at=copied,
                                           source="hotkey"))  # in-process, no socket
    assert fake_service.get(direct.memory_id).created_at == copied


AHEAD = {"an hour ahead": 3600.0, "a moment ahead": 1.0}  # seconds after now (a moment ahead: kept, as now)


@pytest.mark.parametrize("at", [
    *AHEAD, 1e300, math.nan, math.inf, -math.inf, -5.0, "2020-01-01T00:00:00Z", "yesterday", True, [1], {"t": 1}, None,
])
def test_a_copy_time_that_cannot_be_trusted_is_stored_as_now(fake_service, at):
    """In the future (beyond a clock tolerance), not finite, before 1970 or not a number: the engine's own clock."""
    before = time.time()
    at = before + AHEAD[at] if isinstance(at, str) and at in AHEAD else at
    raw = {**Snapshot("Lunch order for Friday: two vegetarian, one vegan").to_dict(), "at": at}
    result = fake_service.capture(Snapshot.from_dict(json.loads(json.dumps(raw))))  # as on the socket: never a crash
    assert result.stored and before <= fake_service.get(result.memory_id).created_at <= time.time()
    if isinstance(at, float):  # numbers also in-process, where no socket decodes them
        again = fake_service.capture(Snapshot("Dinner order for Friday: three pizzas and a salad", at=at))
        assert again.stored and before <= fake_service.get(again.memory_id).created_at <= time.time()


def test_a_short_capture_quoted_inside_a_later_one_is_not_extended(fake_service):
    ok = captured(fake_service, "Thanks!", app="Chat")
    later = captured(fake_service, "Sam wrote Thanks! after the invoice INV-2291 was paid", app="Chat")
    assert later.status != "extended" and later.memory_id != ok.memory_id
    assert fake_service.get(ok.memory_id).content == "Thanks!" and fake_service.versions(ok.memory_id) == []


def test_a_forgotten_capture_is_not_extended(fake_service):
    a = captured(fake_service, "Address: 12 Elm")
    fake_service.set_forgotten(a.memory_id, True)
    b = captured(fake_service, "Address: 12 Elm Street, Leeds")
    assert b.status != "extended" and fake_service.get(a.memory_id).forgotten


def test_purge_removes_versions_too(fake_service):
    a = captured(fake_service, "todo: call", source="cli")
    captured(fake_service, "todo: call the bank", source="cli")
    assert fake_service.versions(a.memory_id)
    fake_service.purge([a.memory_id])
    assert fake_service.store.scalar("SELECT count(*) FROM memory_versions") == 0


def test_exact_duplicates_inside_one_batch_and_across_batches_import_completely(fake_service, monkeypatch):
    import desktop_memory.service.importing as service_module

    monkeypatch.setattr(service_module, "IMPORT_BATCH", 4)
    texts = ["Hey!", "Thanks!", "Hey!", "see you at 5", "Hey!", "Thanks!", "new line one", "Hey!",
             "Thanks!", "new line two", "new line two", "see you at 5", "Thanks!"]
    report = fake_service.import_records([json.dumps({"content": t}) for t in texts])
    assert not report.errors
    assert report.stored == len(texts)
    assert report.added + report.related == len(set(texts)) and report.duplicates == len(texts) - len(set(texts))
    assert sorted(r["content"] for r in fake_service.export_records()) == sorted(set(texts))


@pytest.mark.parametrize("batch", [2, 3, 256])
def test_an_external_id_repeated_in_one_import_is_one_memory_in_its_keyed_session(fake_service, monkeypatch, batch):
    import desktop_memory.service.importing as service_module

    monkeypatch.setattr(service_module, "IMPORT_BATCH", batch)

    def rec(eid: str, text: str, session: str = "x:conv") -> str:
        return json.dumps({"content": text, "external_id": eid, "session": session,
                           "created_at": f"2020-01-0{1 + len(text) % 8}T00:00:00Z"})

    lines = [rec("x:conv:1", "first text of one"), rec("x:conv:2", "two"), rec("x:conv:1", "newer text of one"),
             rec("x:conv:3", "three"), rec("x:conv:1", "newer text of one"), rec("x:other:1", "alone", "x:other"),
             rec("x:conv:1", "newest text of one")]
    report = fake_service.import_records(lines)
    assert not report.errors and report.added + report.related == 4
    assert report.updated == 2 and report.duplicates == 1
    store = fake_service.store
    by_eid = {m.metadata["external_id"]: m for m in store.iter_all()}
    assert store.count() == len(by_eid) == 4 and by_eid["x:conv:1"].content == "newest text of one"
    assert [v.content for v in store.versions(by_eid["x:conv:1"].id)] == ["first text of one", "newer text of one"]
    sessions = store.db.execute("SELECT id, count, started_at, ended_at FROM sessions").fetchall()
    assert sorted(c for _, c, _, _ in sessions) == [1, 3]  # one session per key, in the memory's transaction
    conv = {by_eid[e].session_id for e in ("x:conv:1", "x:conv:2", "x:conv:3")}
    assert len(conv) == 1 and by_eid["x:other:1"].session_id not in conv


def test_export_then_import_keeps_versions(fake_service, data_dir, tmp_path):
    captured(fake_service, "Plan: ship", source="cli")
    captured(fake_service, "Plan: ship v2 on Friday", source="cli")
    records = list(fake_service.export_records())
    with MemoryService(tmp_path / "other", embedder=FakeEmbedder()) as other:
        assert other.import_records([json.dumps(r) for r in records]).stored == 1
        (m,) = list(other.store.iter_all())
        assert [v.content for v in other.versions(m.id)] == ["Plan: ship"]
        assert list(other.export_records()) == records
        again = other.import_records([json.dumps(r) for r in records])  # into a store that has it
        assert again.duplicates == 1 and len(other.versions(m.id)) == 1


def test_secrets_are_redacted_before_storage(fake_service):
    r = fake_service.add("aws key AKIAIOSFODNN7EXAMPLQ in the config")
    m = fake_service.get(r.memory.id)
    assert "AKIAIOSFODNN7EXAMPLQ" not in m.content and "[REDACTED:aws_access_key]" in m.content
    assert r.redactions == {"aws_access_key": 1} and m.redactions == 1


@pytest.mark.parametrize("bad", ["", "   \n", b"\x00\x00"])
def test_empty_input_is_refused(fake_service, bad):
    with pytest.raises(InvalidInput):
        fake_service.add(bad)


def test_filters(fake_service):
    a = fake_service.add("release notes draft", source="clipboard", tags=["work"]).memory
    b = fake_service.add("release party invitation", source="cli").memory
    assert ids(fake_service.search("release", filters=Filters(sources=("clipboard",)))) == [a.id]
    assert ids(fake_service.search("release #work")) == [a.id]
    fake_service.set_pinned(b.id, True)
    assert ids(fake_service.search("release is:pinned")) == [b.id]
    fake_service.set_forgotten(b.id, True)
    assert ids(fake_service.search("release")) == [a.id]
    assert set(ids(fake_service.search("release", filters=Filters(include_forgotten=True)))) == {a.id, b.id}
    fake_service.set_forgotten(b.id, False)
    assert set(ids(fake_service.search("release"))) == {a.id, b.id}


def test_search_records_access(fake_service):
    m = fake_service.add("quarterly budget spreadsheet").memory
    fake_service.search("budget")
    got = fake_service.get(m.id)
    assert got.access_count == 1 and got.accessed_at


def test_empty_query_browses_newest_first(fake_service):
    a = fake_service.add("first one").memory
    b = fake_service.add("second one").memory
    assert ids(fake_service.search("")) == [b.id, a.id]


@pytest.mark.parametrize("query", ['"', "?", "AND", "NEAR(", "*", "-", "🙂", "東京", "x" * 10_000, "a:b c:d"])
def test_odd_queries_never_fail(fake_service, query):
    """Query syntax typed by a person is text: it neither fails, nor matches everything, nor hides a real word."""
    for note in ("unrelated grocery list eggs", "dentist on tuesday", "the beta ships in march",
                 "rotate the staging password", "pasta with garlic"):
        fake_service.add(note)
    wanted = fake_service.add("some text").memory
    alone = fake_service.search(query)
    assert isinstance(alone, list) and len(alone) < 6
    assert all(h.explain["keyword_bm25"] == 0 for h in alone)  # no note holds these characters as words
    for around in (f"{query} text", f"text {query}"):
        hits = fake_service.search(around)
        assert hits and hits[0].memory.id == wanted.id, around[:40]
        assert hits[0].explain["keyword_bm25"] > 0  # found by its word, not only by meaning


def test_lifecycle_tag_edit_forget_restore_purge(fake_service):
    m = fake_service.add("call the dentist on monday").memory
    assert fake_service.tag(m.id, add=["health"]).tags == ["health"]
    assert fake_service.tag(m.id, remove=["health"]).tags == []
    fake_service.edit(m.id, content="call the dentist on tuesday", title="Dentist")
    assert ids(fake_service.search("tuesday")) == [m.id] and ids(fake_service.search("monday")) == []
    fake_service.purge([m.id])
    with pytest.raises(NotFound):
        fake_service.get(m.id)
    assert fake_service.vectors.count() == 0 and fake_service.store.stats.fts_count() == 0


def test_retention_never_touches_pinned(fake_service):
    old = fake_service.add("old note", created_at=1_000_000.0).memory
    pinned = fake_service.add("old pinned note", created_at=1_000_000.0, pinned=True).memory
    new = fake_service.add("new note").memory
    assert fake_service.retention(older_than_days=30, dry_run=True) == [old.id]
    fake_service.retention(older_than_days=30)
    assert {m.id for m in fake_service.store.iter_all()} == {pinned.id, new.id}


def test_context_for_query_and_for_ids(fake_service):
    a = fake_service.add("the wifi password hint is the cat's name").memory
    ctx = fake_service.context("wifi hint", budget=200)
    assert a.id in ctx.included and "wifi" in ctx.text
    ctx = fake_service.context(ids=[a.id], fmt="markdown")
    assert ctx.text.startswith("## ")
    with pytest.raises(InvalidInput):
        fake_service.context("")


def test_import_reports_bad_lines_and_keeps_good_ones(fake_service):
    lines = [
        json.dumps({"content": "good one", "created_at": "2024-01-02T03:04:05", "metadata": {"k": [1, {"z": None}]}}),
        "{not json",
        json.dumps({"content": ""}),
        json.dumps(["a list"]),
        json.dumps({"content": "bad date", "created_at": "yesterday"}),
        json.dumps({"content": "good two", "tags": ["a"], "pinned": True, "source": "chat", "title": "T"}),
        "",
    ]
    report = fake_service.import_records(lines)
    assert report.added == 2
    assert [n for n, _ in report.errors] == [2, 3, 4, 5]
    first = fake_service.search("good one")[0].memory
    assert first.metadata == {"k": [1, {"z": None}]} and first.created_at == pytest.approx(1704164645.0, abs=86400)


def test_export_import_export_round_trip(fake_service, tmp_path):
    fake_service.import_records([
        json.dumps({"content": f"note {i} about topic {i % 3}", "created_at": f"2024-01-0{i + 1}T10:00:00+00:00",
                    "tags": [f"t{i}"], "pinned": i == 1, "metadata": {"i": i}, "title": f"N{i}"})
        for i in range(5)
    ])
    first = [json.dumps(r, sort_keys=True) for r in fake_service.export_records()]
    with MemoryService(tmp_path / "other", embedder=FakeEmbedder()) as other:
        other.import_records(first)
        second = [json.dumps(r, sort_keys=True) for r in other.export_records()]
    assert first == second and len(first) == 5


def test_second_writer_gets_a_clear_message(fake_service):
    with pytest.raises(DataDirLocked, match="in use by another desktop-memory process"):
        MemoryService(fake_service.folder, embedder=FakeEmbedder(), lock_wait_s=0.1)


def test_reconcile_embeds_missing_and_drops_orphans(fake_service):
    m = fake_service.add("a memory").memory
    fake_service.vectors.delete([m.id])
    fake_service.vectors.upsert(["orphan"], FakeEmbedder().encode(["x"]))
    report = fake_service.reconcile(full=True)
    assert report["missing"] == 1 and report["orphans"] == 1
    assert fake_service.vectors.all_ids() == {m.id}


class OtherModel(FakeEmbedder):
    """The same words in another direction: vectors of a different model."""

    vectors_id = "another-model"

    def encode(self, texts, batch_size=64):
        return -super().encode(texts, batch_size)


def test_a_store_embedded_by_another_model_is_re_embedded_once(tmp_path):
    folder = tmp_path / "data"
    with MemoryService(folder, embedder=OtherModel()) as old:
        mid = old.add("the beta ships on March 3rd").memory.id
        assert old.store.get_meta("embedding_model") == "another-model"
    with MemoryService(folder, embedder=FakeEmbedder()) as svc:
        assert svc.store.get_meta("embedding_model") == "another-model"  # nothing re-embedded before use
        hits = svc.search("beta ships", limit=3)  # opens the index: re-embeds with this model
        assert [h.memory.id for h in hits] == [mid]
        assert svc.store.get_meta("embedding_model") == FakeEmbedder.vectors_id
        assert svc.store.vectors.queue_length() == 0
        stored = svc.vectors.vectors([mid])[mid]
        assert float(stored @ FakeEmbedder().encode(["the beta ships on March 3rd"])[0]) > 0.999
    with MemoryService(folder, embedder=FakeEmbedder()) as again:
        assert again.vector_sync._adopt_embedding_model() == 0  # once only


class UnloadedModel(FakeEmbedder):
    """Fails the test if anything asks for its model: stands in for a model that was never loaded."""

    @property
    def vectors_id(self):
        raise AssertionError("the embedding model was loaded")

    def encode(self, texts, batch_size=64):
        raise AssertionError("the embedding model was loaded")


def test_work_without_embedding_never_loads_the_model(tmp_path):
    folder = tmp_path / "data"
    with MemoryService(folder, embedder=OtherModel()) as old:
        keep = old.add("the beta ships on March 3rd").memory.id
        gone = old.add("an old note about the cafeteria menu").memory.id
    with MemoryService(folder, embedder=UnloadedModel()) as svc:
        svc.set_pinned(keep, True)
        svc.retention(older_than_days=0, below_importance=0.0)
        svc.purge([gone])
        assert svc.stats().memories == 1
        assert svc.vectors.count() == 1  # the index opened and reconciled without the model
        assert svc.store.get_meta("embedding_model") == "another-model"


def test_doctor_reports_ok(fake_service):
    fake_service.add("hello")
    assert fake_service.doctor().ok is True


def test_filtered_meaning_search_exact_and_deep_paths(fake_service, monkeypatch):
    import desktop_memory.service.retrieval as service_module

    # every note gets its own words, so no two vectors (and no two similarities) tie: HNSW degrades on
    # exact ties, and that is not what this test is about
    lines = [json.dumps({"content": "note about gardening tomatoes and basil " + " ".join(
                             f"bed{i}row{j}" for j in range(1 + i % 6)), "source": "import",
                         "tags": ["garden"] if i % 4 == 0 else []}) for i in range(40)]
    fake_service.import_records(lines)
    tagged = {m for m in fake_service.store.search.filtered_ids(Filters(tags=("garden",)), 1000)}
    assert len(tagged) == 10
    exact = fake_service.search("tomatoes basil", limit=20, filters=Filters(tags=("garden",)))
    assert set(ids(exact)) == tagged
    monkeypatch.setattr(service_module, "EXACT_SEMANTIC_CAP", 2)  # force the HNSW + filter path
    deep = fake_service.retrieval._semantic_filtered(fake_service.embedder.encode_query("tomatoes basil"),
                                                     Filters(tags=("garden",)), 30)
    # HNSW is approximate (more so on the fake embedder's sparse vectors): only tagged ones, most of them
    assert set(deep) <= tagged and len(deep) >= len(tagged) // 2


def test_keyword_search_skips_forgotten_top_hits_without_losing_the_rest(fake_service):
    # shorter texts rank higher on bm25: memory 0 is the best match, memory 29 the weakest
    made = [fake_service.add("invoice " + " ".join(f"w{i}n{j}" for j in range(5 + i))).memory for i in range(30)]
    for m in made[:20]:  # the best keyword matches are all forgotten
        fake_service.set_forgotten(m.id, True)
    found = fake_service.store.search.keyword(["invoice"], Filters(), 5)
    assert [i for i, _ in found] == [m.id for m in made[20:25]]


def test_exact_similarities_and_an_empty_index(fake_service):
    assert fake_service.vectors.query(FakeEmbedder().encode(["x"])[0], 10) == []
    a = fake_service.add("alpha beta gamma").memory
    vec = fake_service.embedder.encode_query("alpha beta gamma")
    sims = fake_service.vector_sync.similarities(vec, [a.id, "unknown-id", a.id])
    assert list(sims) == [a.id] and sims[a.id] == pytest.approx(1.0, abs=1e-3)  # float16 copy


def test_vector_copies_follow_the_memory_and_fall_back_to_chroma(fake_service):
    a = fake_service.add("alpha beta gamma").memory
    b = fake_service.add("delta epsilon zeta").memory
    store = fake_service.store
    assert set(store.vectors.stored([a.id, b.id])) == {a.id, b.id}
    copy, indexed = store.vectors.stored([a.id])[a.id], fake_service.vectors.vectors([a.id])[a.id]
    assert float(copy @ indexed) == pytest.approx(1.0, abs=1e-3)
    fake_service.edit(a.id, content="omega psi chi")  # new content: the old copy goes at once
    assert fake_service.store.vectors.queue_length() == 0 and a.id in store.vectors.stored([a.id])
    again = fake_service.embedder.encode(["omega psi chi"])[0]
    assert float(store.vectors.stored([a.id])[a.id] @ again) == pytest.approx(1.0, abs=1e-3)
    with store.transaction():
        store.db.execute("DELETE FROM memory_vectors")  # a store from before the copies
    vec = fake_service.embedder.encode_query("delta epsilon zeta")
    found = fake_service.vector_sync.similarities(vec, [b.id])  # Chroma, fed from the copy
    assert found[b.id] == pytest.approx(1.0, abs=1e-3)
    fake_service.purge([b.id])
    assert store.db.execute("SELECT count(*) FROM memory_vectors").fetchone()[0] == 0


def test_a_store_from_before_the_copies_gets_them_once(tmp_path):
    folder = tmp_path / "data"
    with MemoryService(folder, embedder=FakeEmbedder()) as old:
        old.import_records([json.dumps({"content": f"note {i} about topic{i}"}) for i in range(30)])
        ids = sorted(old.store.all_ids())
        assert len(ids) == 30
        with old.store.transaction():
            old.store.db.execute("DELETE FROM memory_vectors")
            old.store.db.execute("DELETE FROM meta WHERE key = 'vector_copies'")
    with MemoryService(folder, embedder=UnloadedModel()) as svc:
        assert svc.reconcile()["copied"] == 0  # opening the index copied them (without the model)
        assert set(svc.store.vectors.stored(ids)) == set(ids)
        assert svc.store.get_meta("vector_copies") == "complete"


def test_a_pending_vector_write_cannot_outlive_a_purge_or_an_edit(fake_service):
    a = fake_service.add("alpha kiwi mango").memory
    fake_service.purge([a.id])
    assert a.id not in fake_service.vectors.all_ids()
    b = fake_service.add("bravo plum cherry").memory
    fake_service.edit(b.id, content="charlie lemon lime")
    stored = fake_service.vectors.vectors([b.id])[b.id]
    assert float(stored @ FakeEmbedder().encode(["charlie lemon lime"])[0]) == pytest.approx(1.0, abs=1e-5)
    assert fake_service.store.vectors.queue_length() == 0



def test_a_pipelined_import_dedupes_across_batches_and_acknowledges_committed_work(fake_service, monkeypatch):
    import desktop_memory.service.importing as service_module

    monkeypatch.setattr(service_module, "IMPORT_BATCH", 3)
    words = ["apple", "banana", "cherry", "damson", "elder", "fig", "grape", "hazel"]
    texts = [f"{w} {w}{i} orchard note" for i, w in enumerate(words)]
    # batch 2 repeats a text of batch 1 (still being committed), batch 3 repeats one of batch 1 again
    order = texts[:3] + [texts[4], texts[0], texts[3]] + [texts[0], *texts[5:]]
    seen: list[tuple[int, int]] = []
    report = fake_service.import_records(
        [json.dumps({"content": t}) for t in order],
        progress=lambda r: seen.append((r.added, fake_service.store.count())))
    assert (report.added, report.duplicates) == (8, 2)
    assert all(added == stored for added, stored in seen) and len(seen) == 4  # acknowledged = committed
    apple = [m for m in fake_service.store.iter_all() if m.content == texts[0]]
    assert len(apple) == 1 and apple[0].access_count == 2
    assert fake_service.store.vectors.queue_length() == 0 and fake_service.vectors.count() == 8


class FailsOnSecondBatch(FakeEmbedder):
    calls = 0

    def encode(self, texts, batch_size=64):
        FailsOnSecondBatch.calls += 1
        if FailsOnSecondBatch.calls == 2:
            raise RuntimeError("the model broke")
        return super().encode(texts, batch_size)


def test_an_import_that_fails_keeps_the_batches_committed_before(tmp_path, monkeypatch):
    import desktop_memory.service.importing as service_module

    monkeypatch.setattr(service_module, "IMPORT_BATCH", 2)
    with MemoryService(tmp_path / "data", embedder=FailsOnSecondBatch()) as svc:
        with pytest.raises(RuntimeError, match="model broke"):
            svc.import_records([json.dumps({"content": f"note number {i} word{i}"}) for i in range(6)])
        assert svc.store.count() == 2  # the first batch, committed before the failure
        assert svc.add("after the failure").status == "added"  # the engine is usable again


def test_an_add_is_found_by_meaning_before_its_vector_reaches_chroma(tmp_path, monkeypatch):
    import desktop_memory.service.vector_sync as service_module

    monkeypatch.setattr(service_module, "PENDING_FLUSH", 3)
    folder = tmp_path / "data"
    with MemoryService(folder, embedder=FakeEmbedder()) as svc:
        assert svc.vectors.count() == 0
        note = svc.add("quarterly budget review with the finance team").memory
        assert svc.store.vectors.queued_upserts(10) == [note.id] and svc.vectors.count() == 0
        hit = svc.search("budget review finance", limit=1)[0]
        assert hit.memory.id == note.id and hit.explain["semantic_cosine"] > 0.5  # scored from its copy
        svc.add("a second note about gardening")
        svc.add("a third note about sailing")  # the third waiting vector: all three go to Chroma together
        assert svc.store.vectors.queue_length() == 0 and svc.vectors.count() == 3
        last = svc.add("a fourth note about cooking").memory
    with MemoryService(folder, embedder=FakeEmbedder()) as again:  # closing wrote the waiting one
        assert again.store.vectors.queue_length() == 0
        assert last.id in again.vectors.all_ids() and again.vectors.count() == 4
