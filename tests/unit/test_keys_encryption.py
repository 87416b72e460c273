"""Key changes (plain <-> encrypted) when something fails half-way: the data is never lost."""

from __future__ import annotations

import os

import apsw
import pytest

from desktop_memory.core.errors import StorageError, WrongKey
from desktop_memory.engine import encryption


def _plain_db(path, rows: int = 50):
    db = apsw.Connection(str(path))
    db.execute("PRAGMA journal_mode=WAL")
    db.execute("CREATE TABLE memories(id TEXT PRIMARY KEY, content TEXT)")
    with db:
        db.executemany("INSERT INTO memories VALUES (?, ?)", [(f"id{i}", f"secret note {i}") for i in range(rows)])
    db.execute("PRAGMA user_version=3")
    db.close()


def _rows(path, key=None) -> int:
    db = encryption.connect(path, hexkey=key)
    try:
        return db.execute("SELECT count(*) FROM memories").fetchone()[0]
    finally:
        db.close()


def test_a_crash_between_the_renames_is_undone_on_the_next_open(ring, tmp_path, monkeypatch):
    monkeypatch.delenv(encryption.ENV, raising=False)
    db = tmp_path / "memories.sqlite3"
    _plain_db(db)
    real_replace = os.replace

    def crash_before_the_copy_takes_its_place(src, dst):
        if str(dst) == str(db):  # the original is already moved aside to memories.sqlite3.previous
            raise OSError("power cut")
        real_replace(src, dst)

    monkeypatch.setattr(encryption.os, "replace", crash_before_the_copy_takes_its_place)
    with pytest.raises(OSError, match="power cut"):
        encryption.prepare(tmp_path, db)
    monkeypatch.setattr(encryption.os, "replace", real_replace)
    assert not db.exists() and (tmp_path / "memories.sqlite3.previous").exists()
    key = encryption.prepare(tmp_path, db)  # puts the original back, then encrypts it properly
    assert key and not encryption.is_plain(db) and _rows(db, key) == 50
    assert sorted(p.name for p in tmp_path.glob("memories.sqlite3*")) == ["memories.sqlite3"]


def test_a_copy_that_does_not_verify_is_dropped_and_the_original_kept(ring, tmp_path, monkeypatch):
    db = tmp_path / "memories.sqlite3"
    _plain_db(db)
    before = db.read_bytes()
    monkeypatch.setattr(encryption, "fingerprint", lambda conn: {"rows": os.urandom(4)})  # never equal
    with pytest.raises(StorageError, match="does not match the original"):
        encryption.rekey(db, None, os.urandom(32).hex())
    assert db.read_bytes() == before and encryption.is_plain(db)
    assert sorted(p.name for p in tmp_path.glob("memories.sqlite3*")) == ["memories.sqlite3"]


def test_decrypting_by_choice_and_a_wrong_key(ring, tmp_path, monkeypatch):
    monkeypatch.delenv(encryption.ENV, raising=False)
    db = tmp_path / "memories.sqlite3"
    _plain_db(db)
    key = encryption.prepare(tmp_path, db)
    with pytest.raises(WrongKey, match="does not open"):
        encryption.verify_key(db, os.urandom(32).hex())
    with pytest.raises(WrongKey, match="64 hexadecimal digits"):
        encryption.connect(db, hexkey="'; DROP TABLE memories; --")
    encryption.choose(tmp_path, encrypted=False)
    assert encryption.prepare(tmp_path, db) is None
    assert encryption.is_plain(db) and _rows(db) == 50
    assert encryption.State.load(tmp_path).key_id is not None  # the key's name is kept for `encryption on`
    encryption.choose(tmp_path, encrypted=True)
    assert encryption.prepare(tmp_path, db) == key and _rows(db, key) == 50


def test_encryption_on_is_refused_while_the_environment_says_off(tmp_path, monkeypatch):
    from desktop_memory.core.errors import InvalidInput

    monkeypatch.setenv(encryption.ENV, "off")
    with pytest.raises(InvalidInput, match="DESKTOP_MEMORY_ENCRYPTION=off is set"):
        encryption.choose(tmp_path, encrypted=True)
    assert not (tmp_path / encryption.STATE_FILE).exists()
