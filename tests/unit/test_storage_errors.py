"""Storage failures become one-line StorageErrors that say what to do, and keep the real cause.

SQLite's `max_page_count` makes a real database report SQLITE_FULL exactly as a full disk does.
"""

from __future__ import annotations

import errno
import json
import re
import shutil

import apsw
import pytest

from desktop_memory.core.errors import DataDirLocked, StorageError
from desktop_memory.engine import failures
from desktop_memory.engine.lock import DataDirLock
from desktop_memory.engine.store import Store


def _fill(store: Store) -> None:
    """Let the database grow by a few pages at most from now on."""
    pages = store.scalar("PRAGMA page_count")
    store.db.execute(f"PRAGMA max_page_count={pages + 2}")


def test_a_full_database_inside_a_transaction_keeps_the_real_error(tmp_path):
    store = Store(tmp_path / "db.sqlite3")
    _fill(store)
    with pytest.raises(StorageError) as info, store.transaction():
        store.db.execute("INSERT INTO meta(key, value) VALUES ('big', randomblob(200000))")
    message = str(info.value)
    assert "disk is full" in message and "free some space" in message
    assert "rollback" not in message.lower() and "\n" not in message
    assert isinstance(failures.root_cause(info.value), apsw.FullError)
    assert not store.db.in_transaction
    store.db.execute("PRAGMA max_page_count=1000000")
    with store.transaction():  # usable again once there is room
        store.set_meta("after", "ok")
    assert store.get_meta("after") == "ok"


def test_an_error_of_the_caller_inside_a_transaction_is_not_replaced(tmp_path):
    store = Store(tmp_path / "db.sqlite3")
    with pytest.raises(KeyError, match="mine"), store.transaction():
        store.set_meta("x", "1")
        raise KeyError("mine")
    assert store.get_meta("x") is None and not store.db.in_transaction


@pytest.mark.parametrize(("exc", "words"), [
    (apsw.FullError("database or disk is full"), "disk is full"),
    (OSError(errno.ENOSPC, "No space left on device"), "disk is full"),
    (RuntimeError("Error executing plan: Internal error: database or disk is full"), "disk is full"),
    (apsw.ReadOnlyError("attempt to write a readonly database"), "read-only"),
    (OSError(errno.EROFS, "Read-only file system"), "read-only"),
    (PermissionError(errno.EACCES, "Permission denied"), "permission"),
    (apsw.CorruptError("database disk image is malformed"), "damaged"),
    (apsw.NotADBError("file is not a database"), "damaged"),
])
def test_failures_are_recognised(exc, words):
    err = failures.storage_error(exc)
    assert err is not None and words in str(err) and "\n" not in str(err)


def test_a_database_that_cannot_grow_its_wal_index_is_on_a_full_disk():
    """Opening a database on a full disk fails as SQLITE_IOERR_SHMSIZE, before any connection can give an errno."""
    shm = apsw.IOError("disk I/O error")
    shm.extendedresult = apsw.SQLITE_IOERR_SHMSIZE
    assert str(failures.storage_error(shm)) == failures.DISK_FULL
    other = apsw.IOError("disk I/O error")
    other.extendedresult = apsw.SQLITE_IOERR_READ
    assert str(failures.storage_error(other)) == failures.DISK_ERROR


def test_other_errors_are_left_alone():
    assert failures.storage_error(ValueError("a bug")) is None
    assert failures.storage_error(apsw.SQLError("no such column")) is None


def test_an_import_that_fills_the_disk_says_how_far_it_got_and_keeps_what_it_acknowledged(fake_service,
                                                                                         monkeypatch):
    import desktop_memory.service.importing as service_module

    monkeypatch.setattr(service_module, "IMPORT_BATCH", 4)
    lines = [json.dumps({"content": f"ledger entry {i}: paid invoice {1000 + i} " + "detail " * 300})
             for i in range(40)]
    acknowledged: list[int] = []
    fake_service.import_records(lines[:4])
    pages = fake_service.store.scalar("PRAGMA page_count")
    fake_service.store.db.execute(f"PRAGMA max_page_count={pages + 40}")
    with pytest.raises(StorageError) as info:
        fake_service.import_records(lines[4:], progress=lambda r: acknowledged.append(r.stored))
    message = str(info.value)
    assert "disk is full" in message and "\n" not in message, message
    found = re.search(r"; ([\d,]+) record\(s\) were stored, nothing after line ([\d,]+) was imported$", message)
    assert found, message
    stored, last = (int(g.replace(",", "")) for g in found.groups())
    assert acknowledged and stored >= acknowledged[-1] > 0 and last >= acknowledged[-1]
    fake_service.store.db.execute("PRAGMA max_page_count=1000000000")
    kept = {m.content for m in fake_service.store.iter_all()}
    assert all(json.loads(x)["content"].strip() in kept for x in lines[4 : 4 + last])  # every line it counted
    assert json.loads(lines[4 + last])["content"].strip() not in kept  # and nothing after
    assert fake_service.add("after freeing space").status == "added"


def test_the_lock_waits_its_turn_and_says_so_once(tmp_path):
    import threading
    import time

    (tmp_path / "d").mkdir()
    first = DataDirLock(tmp_path / "d")
    calls: list[float] = []
    threading.Timer(0.6, first.release).start()
    started = time.monotonic()
    second = DataDirLock(tmp_path / "d", wait_s=5, on_wait=lambda holder: calls.append(time.monotonic()))
    assert 0.5 < time.monotonic() - started < 3
    assert len(calls) == 1
    second.release()


def test_the_lock_gives_up_after_its_wait(tmp_path):
    (tmp_path / "d").mkdir()
    first = DataDirLock(tmp_path / "d")
    with pytest.raises(DataDirLocked, match="in use by another desktop-memory process"):
        DataDirLock(tmp_path / "d", wait_s=0.2)
    first.release()


def test_storage_failures_cross_the_engine_socket_as_themselves():
    from desktop_memory.core.errors import DiskFull
    from desktop_memory.ipc import codec

    told = failures.storage_error(apsw.FullError("database or disk is full"), detail="3 record(s) were stored")
    back = codec.error_from(codec.error_to(told))
    assert isinstance(back, DiskFull) and str(back) == str(told)
    raw = codec.error_from(codec.error_to(RuntimeError("Query error: database or disk is full")))
    assert isinstance(raw, DiskFull) and str(raw) == failures.DISK_FULL  # never "a bug in the app" (exit 70)
    read_only = codec.error_from(codec.error_to(OSError(errno.EROFS, "Read-only file system")))
    assert isinstance(read_only, StorageError) and "read-only" in str(read_only)


# -- the vector index on a full disk (issue 29, item 5) ----------------------------------------------------------
def _free_space(free: int):
    """shutil.disk_usage (failures.disk_full's source, on every OS) answering `free` bytes free."""
    real = shutil.disk_usage

    def fake(path):
        usage = real(path)
        return type(usage)(usage.total, usage.total - free, free)

    return fake


def test_a_nearly_full_disk_is_found_from_the_nearest_existing_folder(tmp_path, monkeypatch):
    monkeypatch.setattr(shutil, "disk_usage", _free_space(64 * 1024))
    assert failures.disk_full(tmp_path / "not" / "made" / "yet")
    monkeypatch.setattr(shutil, "disk_usage", _free_space(50 << 20))
    assert not failures.disk_full(tmp_path)


def test_a_full_disk_told_already_is_still_no_damage():
    from desktop_memory.core.errors import DiskFull

    told = DiskFull(failures.DISK_FULL, "3 record(s) were stored")
    assert failures.not_damage(told) and isinstance(failures.disk_error(told), DiskFull)
    try:
        try:
            raise RuntimeError("Error in compaction: database or disk is full")
        except RuntimeError as exc:
            raise StorageError(f"cannot open the vector index at /x: {exc}") from exc
    except StorageError as wrapped:
        assert str(failures.disk_error(wrapped)) == failures.DISK_FULL  # found inside a message of ours
    assert failures.disk_error(apsw.CorruptError("database disk image is malformed")) is None  # damage is damage


def _failing_upsert(index, message: str):
    from chromadb.errors import InternalError

    def upsert(*a, **kw):
        raise InternalError(message)

    index._col.upsert = upsert


def test_chroma_failing_to_apply_its_log_on_a_full_disk_is_disk_full_not_damage(tmp_path, monkeypatch):
    """Chroma says only "Failed to apply logs to the hnsw segment writer" when hnswlib cannot write its files on a
    full disk: with almost no space left that is a full disk, and the index stays where it is."""
    import numpy as np

    from desktop_memory.core.errors import DiskFull
    from desktop_memory.engine import index_health
    from desktop_memory.engine.vectors import VectorIndex

    path = tmp_path / "vectors"
    index = VectorIndex(path)
    index.upsert(["a"], np.ones((1, 384), np.float32))
    _failing_upsert(index, "Error in compaction: Failed to apply logs to the hnsw segment writer")
    monkeypatch.setattr(shutil, "disk_usage", _free_space(16 * 1024))
    with pytest.raises(DiskFull) as info:
        index.upsert(["b"], np.ones((1, 384), np.float32))
    assert str(info.value) == failures.DISK_FULL
    assert index.damage is None and not list(tmp_path.glob("vectors.broken-*"))
    index.close()
    assert index_health.was_left_open(path)  # Chroma may have left half-written files: checked in full next time
    monkeypatch.undo()
    again = VectorIndex(path)
    assert again.damage is None and again.count() == 1
    _failing_upsert(again, "Error in compaction: Failed to apply logs to the hnsw segment writer")
    again.upsert(["b"], np.ones((1, 384), np.float32))  # with room on the disk the same words are damage
    assert again.damage and list(tmp_path.glob("vectors.broken-*"))
    again.close()


def test_chroma_failing_to_start_on_a_full_disk_leaves_no_broken_client_behind(tmp_path, monkeypatch):
    """Chroma caches a path's client before starting it and kept it when the start failed: every later open of the
    path in the process failed with "'RustBindingsAPI' object has no attribute 'bindings'" (CLI exit 70)."""
    import chromadb.api.rust as rust
    from chromadb.errors import InternalError

    from desktop_memory.core.errors import DiskFull
    from desktop_memory.engine.vectors import VectorIndex

    real = rust.chromadb_rust_bindings.Bindings

    def full(*a, **kw):
        raise InternalError("error returned from database: (code: 13) database or disk is full")

    monkeypatch.setattr(rust.chromadb_rust_bindings, "Bindings", full)
    with pytest.raises(DiskFull):
        VectorIndex(tmp_path / "vectors")
    assert not list(tmp_path.glob("vectors.broken-*"))
    monkeypatch.setattr(rust.chromadb_rust_bindings, "Bindings", real)
    index = VectorIndex(tmp_path / "vectors")  # space freed: the same process opens it
    assert index.count() == 0 and index.damage is None
    index.close()
