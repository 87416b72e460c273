import json
import shutil
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from desktop_memory.core.errors import NotFound, StorageError
from desktop_memory.core.models import Memory
from desktop_memory.core.query import Filters
from desktop_memory.engine.store import Store, migrations
from desktop_memory.engine.store_sql import in_list
from desktop_memory.engine.store_vectors import vector_matrix

FIXTURE = Path(__file__).resolve().parent.parent / "data" / "schema_v1.sqlite3"


def fts_ids(store: Store, word: str) -> set[str]:
    return {i for i, _ in store.search.keyword([word], Filters(include_forgotten=True), 50)}


def _session_row(store: Store, session_id: str) -> tuple:
    return store.db.execute("SELECT count, started_at, ended_at FROM sessions WHERE id = ?", (session_id,)).fetchone()


def test_migrations_are_numbered_in_order_without_gaps():
    numbers = [n for n, _, _ in migrations()]
    assert numbers == list(range(1, len(numbers) + 1))


def test_a_database_of_the_oldest_schema_is_migrated_with_its_data(tmp_path):
    db = tmp_path / "old.sqlite3"
    shutil.copy(FIXTURE, db)
    store = Store(db)
    assert store.schema_version == len(migrations())
    assert store.count(include_forgotten=True) == 3 and store.count() == 2
    old = store.get("11111111-1111-4111-8111-111111111111")
    assert old.tags == ["work"] and old.metadata == {"k": [1, 2]} and old.pinned and old.session_id == "s1"
    assert fts_ids(store, "priya") == {old.id}
    # every old memory is queued for the vector index by the migration that added the queue
    assert store.vectors.queue_length() == 3
    store.close()


def test_a_newer_schema_is_refused(tmp_path):
    store = Store(tmp_path / "db")
    store.db.execute("PRAGMA user_version=999")
    store.close()
    with pytest.raises(StorageError, match="newer desktop-memory"):
        Store(tmp_path / "db")


def test_a_corrupt_file_gives_a_clear_error(tmp_path):
    bad = tmp_path / "bad.sqlite3"
    bad.write_bytes(b"this is not a database" * 500)
    with pytest.raises(StorageError, match="not a desktop-memory database"):
        Store(bad)


def test_wal_and_foreign_keys_are_on(tmp_path):
    store = Store(tmp_path / "db")
    assert store.scalar("PRAGMA journal_mode") == "wal"
    assert store.scalar("PRAGMA foreign_keys") == 1


def test_fts_follows_insert_update_and_delete(tmp_path):
    store = Store(tmp_path / "db")
    m = Memory(id="m1", content="apples and pears", tags=["fruit"], created_at=1, updated_at=1, content_hash="h",
               entities=[{"text": "Granny Smith", "type": "product"}])
    with store.transaction():
        store.insert(m)
    assert fts_ids(store, "apple") == {"m1"}  # porter stemming
    assert fts_ids(store, "fruit") == {"m1"} and fts_ids(store, "granny") == {"m1"}
    assert fts_ids(store, "product") == set()  # entity types and JSON syntax are not indexed
    with store.transaction():
        store.update("m1", content="bananas only", summary="yellow")
    assert fts_ids(store, "apple") == set() and fts_ids(store, "banana") == {"m1"} and fts_ids(store, "yellow")
    assert store.stats.fts_integrity()
    with store.transaction():
        store.delete(["m1"])
    assert fts_ids(store, "banana") == set() and store.stats.fts_count() == 0
    with pytest.raises(NotFound):
        store.get("m1")


def test_sessions_group_close_captures_from_the_same_source(tmp_path):
    store = Store(tmp_path / "db")
    with store.transaction():
        a = store.session_for("clipboard", "firefox", 1000.0, "first")
        b = store.session_for("clipboard", "firefox", 1200.0, "second")
        c = store.session_for("clipboard", "terminal", 1200.0, "other app")
        d = store.session_for("clipboard", "firefox", 1200.0 + 3600, "later")
    assert a == b and len({a, c, d}) == 3
    assert _session_row(store, a) == (2, 1000.0, 1200.0)


def test_captures_older_than_the_latest_session_join_their_own_time(tmp_path):
    store = Store(tmp_path / "db")
    with store.transaction():
        later = [store.session_for("import", "", 100_000.0 + 3600 * i, f"later {i}") for i in range(50)]
        old = store.session_for("import", "", 1000.0, "old")
        joined = store.session_for("import", "", 1300.0, "old again")
        between = store.session_for("import", "", 100_000.0 + 3600 * 10 + 120, "tenth")
        alone = store.session_for("import", "", 50_000.0, "alone")
    assert old == joined and between == later[10]
    assert len({old, alone, *later}) == 52
    assert _session_row(store, old) == (2, 1000.0, 1300.0)


def test_id_prefixes_resolve_when_unique(tmp_path):
    store = Store(tmp_path / "db")
    with store.transaction():
        for i in ("abcd1111", "abcd2222"):
            store.insert(Memory(id=i, content=i, created_at=1, updated_at=1, content_hash=i))
    assert store.get("abcd1").id == "abcd1111"
    with pytest.raises(NotFound, match="more than one"):
        store.get("abcd")


def _keyword_store(tmp_path: Path) -> Store:
    """Ten memories; "meeting" is in six of them (over half), "budget" in three, "zebra" in one."""
    store = Store(tmp_path / "db")
    texts = ["meeting notes budget", "meeting budget budget plan", "meeting about lunch", "meeting room booking",
             "meeting minutes", "meeting agenda and zebra", "budget for the offsite", "garden plans",
             "holiday photos", "tax forms"]
    with store.transaction():
        for n, text in enumerate(texts):
            store.insert(Memory(id=f"m{n}", content=text, created_at=n, updated_at=n, content_hash=f"h{n}"))
    return store


def test_common_words_score_but_do_not_select_rows_on_their_own(tmp_path, monkeypatch):
    import desktop_memory.engine.store_search as store_module

    monkeypatch.setattr(store_module, "SELECT_BUDGET", 4)
    store = _keyword_store(tmp_path)
    assert store.search.document_frequency("meetings") == 6  # stemmed like the index
    assert store.search._common_terms(["meeting", "budget", "zebra"]) == {"meeting"}
    assert store.search._common_terms(["meeting"]) == set()  # one term: nothing to leave out
    assert store.search._common_terms(["budget", "zebra"]) == set()  # 3 + 1 rows: within the budget
    # enough rows hold the rare word: only they are ranked, and they keep the full query's order
    pruned = store.search.keyword(["meeting", "budget"], Filters(), 3)
    full = store.search._match('"meeting" OR "budget"', Filters(), 3, None)[0]  # every matching row ranked
    assert [i for i, _ in pruned] == [i for i, _ in full] == ["m1", "m0", "m6"]
    # fewer rows than asked for: the whole query fills the list
    wide = store.search.keyword(["meeting", "zebra"], Filters(), 5)
    assert wide[0][0] == "m5" and len(wide) == 5
    assert store.search.keyword([], Filters(), 10) == []


def test_when_every_word_is_common_the_rarest_still_selects(tmp_path, monkeypatch):
    import desktop_memory.engine.store_search as store_module

    monkeypatch.setattr(store_module, "SELECT_BUDGET", 2)
    store = _keyword_store(tmp_path)
    assert store.search._common_terms(["meeting", "budget"]) == {"meeting"}  # budget (3 rows) is over 2 already
    assert {i for i, _ in store.search.keyword(["meeting", "budget"], Filters(), 2)} <= {"m0", "m1", "m6"}


def test_document_frequencies_are_kept_while_the_store_grows_a_little(tmp_path, monkeypatch):
    import desktop_memory.engine.store_search as store_module

    monkeypatch.setattr(store_module, "SELECT_BUDGET", 4)
    store = _keyword_store(tmp_path)
    assert store.search._common_terms(["meeting", "zebra"]) == {"meeting"} and store.search._df["meeting"] == 6
    with store.transaction():
        store.insert(Memory(id="m10", content="meeting again", created_at=10, updated_at=10, content_hash="h10"))
    store.search._common_terms(["meeting", "zebra"])
    assert store.search._df["meeting"] == 6  # one more row: the count walked before is still good enough
    monkeypatch.setattr(store_module, "DF_CACHE", 1)  # the cache is bounded: when full it starts again
    store.search._common_terms(["meeting", "zebra"])
    assert store.search.document_frequency("meeting") == 7


def test_small_stores_rank_every_match(tmp_path):
    store = _keyword_store(tmp_path)  # 10 memories, under SELECT_BUDGET
    assert store.search._common_terms(["meeting", "zebra"]) == set()


def test_session_neighbours_are_the_memories_just_before_and_after(tmp_path):
    store = Store(tmp_path / "db")
    with store.transaction():
        sid = store.session_for("clipboard", "", 1000.0, "a session")
        for n, t in enumerate((1000.0, 1010.0, 1020.0)):
            m = Memory(id=f"s{n}", content=f"note {n}", created_at=t, updated_at=t, content_hash=f"h{n}")
            m.session_id = store.session_for("clipboard", "", t, "a session")
            assert m.session_id == sid
            store.insert(m)
        store.insert(Memory(id="alone", content="no session", created_at=5.0, updated_at=5.0, content_hash="hx"))
    got = store.search.session_neighbourhood(["s1", "s0", "s2", "alone", "unknown"])[0]
    assert got == {"s1": ["s0", "s2"], "s0": ["s1"], "s2": ["s1"]}
    assert store.search.session_neighbourhood([]) == ({}, {})


def _sessions_store(tmp_path) -> Store:
    """Two sessions of five and two memories (one forgotten), a lone memory and one with no session."""
    store = Store(tmp_path / "db")
    with store.transaction():
        for sess, times in (("a", (1000.0, 1010.0, 1020.0, 1030.0, 1040.0)), ("b", (9000.0, 9005.0))):
            for n, t in enumerate(times):
                m = Memory(id=f"{sess}{n}", content=f"note {sess} {n}", created_at=t, updated_at=t,
                           content_hash=f"h{sess}{n}", source_app=sess)
                m.session_id = store.session_for("clipboard", sess, t, f"session {sess}")
                store.insert(m)
        store.insert(Memory(id="alone", content="no session", created_at=5.0, updated_at=5.0, content_hash="hx"))
        store.update("a3", forgotten=True)
    return store


def _neighbours(store: Store, ids: list[str]) -> dict[str, list[str]]:
    """For each id in a session, the memories just before and after it there (forgotten ones included)."""
    order: dict[str, list[str]] = {}
    for m in store.iter_all():
        if m.session_id:
            order.setdefault(m.session_id, []).append(m.id)
    out = {}
    for members in order.values():
        for n, mid in enumerate(members):
            if mid in ids:
                out[mid] = members[max(0, n - 1) : n] + members[n + 1 : n + 2]
    return out


@pytest.mark.parametrize("ids", [["a2"], ["a0", "a4"], ["a1", "a2", "a3"], ["b0", "a4", "alone", "gone"], []])
def test_a_session_neighbourhood_is_the_neighbours_and_theirs_in_one_statement(tmp_path, ids):
    store = _sessions_store(tmp_path)
    near = _neighbours(store, ids)
    of_near = _neighbours(store, list({n for ns in near.values() for n in ns}))
    before = store.db.totalchanges()
    got_near, got_of_near = store.search.session_neighbourhood(ids)
    assert got_near == near
    assert {k: sorted(v) for k, v in got_of_near.items()} == {k: sorted(v) for k, v in of_near.items()}
    assert store.db.totalchanges() == before


def test_previous_vectors_are_those_of_the_memory_before_in_the_session(tmp_path):
    """a0..a4 and b0..b1 are sessions (a3 forgotten): a4's previous memory is a2; a session's first and a
    memory without a session have none; a memory without a vector copy gives none."""
    store = _sessions_store(tmp_path)
    ids = ["a0", "a1", "a2", "a3", "a4", "b0", "b1"]
    vecs = {mid: np.full(4, n + 1, dtype=np.float32) for n, mid in enumerate(ids)}
    with store.transaction():
        store.vectors.put((mid, v) for mid, v in vecs.items() if mid != "a0")
    got = store.vectors.previous(ids + ["alone", "gone"])
    assert set(got) == {"a2", "a3", "a4", "b1"}  # a1's previous (a0) has no copy
    assert got["a4"].tolist() == vecs["a2"].tolist() and got["b1"].tolist() == vecs["b0"].tolist()
    assert got["a2"].tolist() == vecs["a1"].tolist()
    assert store.vectors.previous([]) == {}


@pytest.mark.parametrize("include_forgotten", [False, True])
def test_rank_fields_read_the_previous_vectors_in_the_same_statement(tmp_path, include_forgotten):
    """search.rank_fields(previous=True) gives each row the vector copy `vectors.previous` gives (or None), so a
    search reads the previous turns without a second id lookup; the other fields are unchanged."""
    store = _sessions_store(tmp_path)
    ids = ["a0", "a1", "a2", "a3", "a4", "b0", "b1", "alone", "gone"]
    with store.transaction():
        store.vectors.put((mid, np.full(4, n + 1, dtype=np.float32)) for n, mid in enumerate(ids) if mid != "a0")
    plain = store.search.rank_fields(ids, include_forgotten=include_forgotten)
    rows = store.search.rank_fields(ids, include_forgotten=include_forgotten, previous=True)
    assert {i: r[:5] for i, r in rows.items()} == {i: r[:5] for i, r in plain.items()}
    assert all(r.previous is None for r in plain.values())
    want = store.vectors.previous(list(rows))
    got = {i: r.previous for i, r in rows.items() if r.previous is not None}
    assert set(got) == set(want) and set(want) <= {"a2", "a3", "a4", "b1"}
    assert all(vector_matrix([got[i]]).tolist() == [want[i].tolist()] for i in got)
    assert store.search.rank_fields([], previous=True) == {}


def test_stored_vectors_are_read_as_stored_whatever_their_sizes(tmp_path):
    """Copies are converted a chunk at a time; copies of different sizes (never kept together) still come back."""
    store = _sessions_store(tmp_path)
    vecs = {"a0": np.arange(4, dtype=np.float32), "a1": np.full(4, 0.5, dtype=np.float32),
            "b0": np.arange(8, dtype=np.float32)}
    with store.transaction():
        store.vectors.put(vecs.items())
    for ids in (["a0", "a1"], ["a0", "a1", "b0", "alone"]):
        got = store.vectors.stored(ids)
        assert {k: v.tolist() for k, v in got.items()} == {k: vecs[k].tolist() for k in ids if k in vecs}
        assert all(v.dtype == np.float32 for v in got.values())
    assert store.vectors.stored([]) == {}


def test_in_lists_are_padded_to_a_few_sizes_with_nulls_that_match_nothing(tmp_path):
    """A search's IN lists of any length use one of a few statement texts (kept prepared), same rows."""
    assert [len(in_list(list(range(n)))[1]) for n in (0, 1, 8, 9, 200, 500)] == [8, 8, 8, 16, 256, 512]
    assert len({in_list(list(range(n)))[0] for n in range(501)}) == 7
    store = Store(tmp_path / "db")
    with store.transaction():
        for n in range(600):
            store.insert(Memory(id=f"m{n:03}", content=f"note {n}", created_at=n, updated_at=n, content_hash=f"h{n}"))
            store.vectors.put([(f"m{n:03}", np.full(4, n, dtype=np.float32))])
    for n in (0, 1, 7, 9, 130, 500, 600):
        ids = [f"m{i:03}" for i in range(0, 2 * n, 2)] + ["gone"]
        want = {i for i in ids if i != "gone" and int(i[1:]) < 600}
        assert set(store.get_many(ids)) == want == set(store.search.rank_fields(ids)) == set(store.vectors.stored(ids))
        rowids = [r[0] for r in store.db.execute("SELECT rowid FROM memories WHERE id IN (SELECT value FROM "
                                                 "json_each(?))", (json.dumps(ids),))]
        assert set(store.search._ids_for_rowids(rowids, "1", [])) == set(rowids)


def test_get_many_with_filters_returns_only_the_memories_that_pass(tmp_path):
    store = _sessions_store(tmp_path)
    ids = ["a0", "a3", "b1", "alone", "gone"]
    assert set(store.get_many(ids)) == {"a0", "a3", "b1", "alone"}
    assert set(store.get_many(ids, Filters())) == {"a0", "b1", "alone"} == store.search.filter_ids(ids, Filters())
    assert set(store.get_many(ids, Filters(include_forgotten=True))) == {"a0", "a3", "b1", "alone"}
    b_only = Filters(apps=("b",))
    assert set(store.get_many(ids, b_only)) == {"b1"} == store.search.filter_ids(ids, b_only)
    assert store.get_many([], Filters()) == {}


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(notes=st.lists(st.tuples(st.sampled_from(["a", "b", None]), st.lists(st.sampled_from(
           ["invoice", "invoices", "total", "due", "march", "april", "paid", "7", "8"]), min_size=1, max_size=6),
           st.booleans(), st.booleans()), min_size=1, max_size=40),
       query=st.lists(st.sampled_from(["invoice", "total", "due", "march", "paid", "7", "inv*", "zebra"]),
                      min_size=1, max_size=4),
       limit=st.integers(1, 30), previous=st.booleans())
def test_keyword_candidates_read_the_ranking_rows_in_the_keyword_statement(tmp_path_factory, notes, query, limit,
                                                                           previous):
    """Look-alike notes in sessions (some forgotten, some without a vector copy): the candidates come with
    exactly what `search.rank_fields` and `vectors.stored` would read for them, without a second lookup by id."""
    store = Store(tmp_path_factory.mktemp("kc") / "db")
    with store.transaction():
        for n, (sess, words, gone, copy) in enumerate(notes):
            mid = f"m{n:02}"
            m = Memory(id=mid, content=" ".join(words), created_at=float(n), updated_at=float(n), content_hash=mid,
                       importance=(n % 10) / 10, pinned=n % 3 == 0)
            m.session_id = store.session_for("clipboard", sess, float(n), sess) if sess else None
            store.insert(m)
            if copy:
                store.vectors.put([(mid, np.full(4, n + 1, dtype=np.float32))])
            if gone:
                store.update(mid, forgotten=True)
    found, rows = store.search.keyword_candidates(query, Filters(), limit, previous=previous)
    assert found == store.search.keyword(query, Filters(), limit)
    assert set(rows) <= {i for i, _ in found}
    if not any(gone for _, _, gone, _ in notes):  # only a filtered-out row sends the search to the slower join
        assert set(rows) == {i for i, _ in found}
    want = store.search.rank_fields(list(rows), previous=previous)
    copies = store.vectors.stored(list(rows))
    assert {i: r[:6] for i, r in rows.items()} == {i: r[:6] for i, r in want.items()}
    assert {i: r.vector for i, r in rows.items() if r.vector is not None} == \
        {i: v.astype(np.float16).tobytes() for i, v in copies.items()}
    store.close()
