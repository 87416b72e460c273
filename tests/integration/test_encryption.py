"""Encryption at rest with the real parts: sqlite3mc, Chroma, MiniLM and gnome-keyring on a private bus."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from desktop_memory.core.errors import KeyringUnavailable, WrongKey
from desktop_memory.engine import encryption, keys
from desktop_memory.service import DB_NAME, MemoryService
from tests.integration.test_keyring_session import secret_service

PHRASE = "Zanzibar the violet heron recites Portuguese sonnets at midnight"
CLI = [sys.executable, "-m", "desktop_memory"]


@pytest.fixture(scope="module")
def keyring_env(tmp_path_factory):
    with secret_service(tmp_path_factory.mktemp("keyring")) as env:
        yield env


@pytest.fixture
def encrypted_by_default(keyring_env, monkeypatch):
    monkeypatch.delenv(encryption.ENV, raising=False)
    return keyring_env


def _files(folder: Path) -> list[Path]:
    return [p for p in folder.rglob("*") if p.is_file()]


def _phrase_bytes(folder: Path) -> list[Path]:
    """Files whose raw bytes contain any distinctive word of the phrase."""
    words = [w.encode() for w in ("Zanzibar", "heron", "Portuguese", "sonnets")]
    return [p for p in _files(folder) if any(w in p.read_bytes() for w in words)]


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_a_new_folder_is_encrypted_and_no_file_holds_the_text(encrypted_by_default, data_dir, real_embedder):
    with MemoryService(data_dir, embedder=real_embedder) as service:
        added = service.add(PHRASE, title="Zanzibar heron", tags=["poetry"])
        service.add("Grocery list: oat milk, lentils, lemons", source="clipboard")
        assert [h.memory.id for h in service.search("Portuguese sonnets", limit=1)] == [added.memory.id]
        assert service.search("a bird reading poems aloud at night", limit=1)[0].memory.id == added.memory.id
        assert service.doctor().encryption.startswith("on (chacha20")
        service.store.db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        assert _phrase_bytes(data_dir) == []  # while open, after a checkpoint
    assert _phrase_bytes(data_dir) == []  # and after closing
    db = data_dir / DB_NAME
    assert not encryption.is_plain(db)
    state = json.loads((data_dir / encryption.STATE_FILE).read_text())
    key = keys.database_key(state["key_id"])
    assert key not in (data_dir / encryption.STATE_FILE).read_text()  # the key lives only in the keyring
    assert not any(key.encode() in p.read_bytes() for p in _files(data_dir))
    with MemoryService(data_dir, embedder=real_embedder) as service:  # and it opens again with that key
        assert service.get(added.memory.id).content == PHRASE


def test_the_chroma_folder_holds_no_text_even_when_the_database_is_plain(keyring_env, data_dir, real_embedder):
    assert os.environ[encryption.ENV] == "off"
    with MemoryService(data_dir, embedder=real_embedder) as service:
        service.add(PHRASE)
        assert service.search("violet heron", limit=1)
        assert service.doctor().encryption == "off (DESKTOP_MEMORY_ENCRYPTION=off in this environment)"
    assert encryption.is_plain(data_dir / DB_NAME)
    assert [p.relative_to(data_dir).parts[0] for p in _phrase_bytes(data_dir)] == [DB_NAME]


def test_an_existing_plain_database_is_migrated_safely(encrypted_by_default, data_dir, real_embedder, monkeypatch):
    monkeypatch.setenv(encryption.ENV, "off")
    with MemoryService(data_dir, embedder=real_embedder) as service:
        texts = [PHRASE, "Green tea steeps for two minutes at 80 degrees", "The boiler service is due in May",
                 "Invoice 4471 was paid by bank transfer", "Maya prefers the window seat on trains"]
        ids = [service.add(t).memory.id for t in texts]
    assert encryption.is_plain(data_dir / DB_NAME)
    monkeypatch.delenv(encryption.ENV)
    with MemoryService(data_dir, embedder=real_embedder) as service:  # encryption is the default: migrated
        assert service.store.count() == 5
        assert service.search("violet heron sonnets", limit=1)[0].memory.id == ids[0]
        assert service.doctor().ok
    assert not encryption.is_plain(data_dir / DB_NAME)
    assert sorted(p.name for p in data_dir.iterdir() if p.name.startswith(DB_NAME)) == [DB_NAME]
    assert _phrase_bytes(data_dir) == []


def test_a_migration_interrupted_between_the_renames_loses_nothing(encrypted_by_default, data_dir, real_embedder,
                                                                     monkeypatch):
    monkeypatch.setenv(encryption.ENV, "off")
    with MemoryService(data_dir, embedder=real_embedder) as service:
        mid = service.add(PHRASE).memory.id
    db = data_dir / DB_NAME
    # the state a crash leaves after `memories.sqlite3` was moved aside and before the copy took its place
    os.replace(db, data_dir / (DB_NAME + encryption.PREVIOUS))
    (data_dir / (DB_NAME + encryption.CONVERTING)).write_bytes(b"half a copy")
    monkeypatch.delenv(encryption.ENV)
    with MemoryService(data_dir, embedder=real_embedder) as service:
        assert service.get(mid).content == PHRASE
    assert not encryption.is_plain(db)
    assert sorted(p.name for p in data_dir.iterdir() if p.name.startswith(DB_NAME)) == [DB_NAME]


def test_a_wrong_or_missing_key_is_a_clear_error_and_touches_nothing(encrypted_by_default, data_dir, real_embedder):
    with MemoryService(data_dir, embedder=real_embedder) as service:
        service.add(PHRASE)
    db = data_dir / DB_NAME
    before = _digest(db)
    name = keys.DATABASE_KEY_PREFIX + json.loads((data_dir / encryption.STATE_FILE).read_text())["key_id"]
    right = keys.get_secret(name)
    keys.set_secret(name, os.urandom(32).hex())
    with pytest.raises(WrongKey, match="does not open .*nothing was changed"):
        MemoryService(data_dir, embedder=real_embedder)
    proc = subprocess.run([*CLI, "--data-dir", str(data_dir), "search", "heron"], capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 1 and proc.stdout == ""
    assert proc.stderr.count("\n") == 1 and "does not open" in proc.stderr
    keys.delete_secret(name)
    with pytest.raises(WrongKey, match="not in your OS keyring"):
        MemoryService(data_dir, embedder=real_embedder)
    assert _digest(db) == before
    assert sorted(p.name for p in data_dir.iterdir() if p.name.startswith(DB_NAME)) == [DB_NAME]
    keys.set_secret(name, right)
    with MemoryService(data_dir, embedder=real_embedder) as service:
        assert service.search("heron", limit=1)[0].memory.content == PHRASE


def test_a_locked_keyring_stops_the_engine_with_a_message_and_loses_nothing(data_dir, real_embedder, tmp_path,
                                                                           monkeypatch):
    import secretstorage

    monkeypatch.delenv(encryption.ENV, raising=False)
    with secret_service(tmp_path / "own-keyring"):  # its own keyring: it stays locked after this test
        with MemoryService(data_dir, embedder=real_embedder) as service:
            service.add(PHRASE)
        before = _digest(data_dir / DB_NAME)
        connection = secretstorage.dbus_init()
        secretstorage.get_default_collection(connection).lock()
        connection.close()
        with pytest.raises(KeyringUnavailable, match="keyring is locked"):
            MemoryService(data_dir, embedder=real_embedder)
        assert _digest(data_dir / DB_NAME) == before


def test_a_locked_keyring_is_one_line_from_the_cli_and_no_service_is_left(data_dir, real_embedder, tmp_path,
                                                                           monkeypatch):
    """The CLI starts the folder's engine service; a locked keyring stops that start with its own reason, at once
    (not after the wait for a folder in use), in one line, and nothing keeps running."""
    import secretstorage

    from desktop_memory.ipc.client import connect

    monkeypatch.delenv(encryption.ENV, raising=False)
    with secret_service(tmp_path / "own-keyring"):
        with MemoryService(data_dir, embedder=real_embedder) as service:
            service.add(PHRASE)
        connection = secretstorage.dbus_init()
        secretstorage.get_default_collection(connection).lock()
        connection.close()
        started = time.monotonic()
        proc = subprocess.run([*CLI, "--data-dir", str(data_dir), "search", "heron"], capture_output=True,
                              text=True, timeout=300)
        took = time.monotonic() - started
    assert proc.returncode == 1 and proc.stdout == "", proc.stderr
    assert proc.stderr.count("\n") == 1 and "keyring is locked" in proc.stderr, proc.stderr
    assert took < 20, took
    assert connect(data_dir) is None


def test_no_keyring_and_no_choice_refuses_a_new_folder(data_dir, real_embedder, tmp_path, monkeypatch):
    monkeypatch.delenv(encryption.ENV, raising=False)
    env = {**os.environ, "DBUS_SESSION_BUS_ADDRESS": f"unix:path={tmp_path}/no-bus"}
    proc = subprocess.run([*CLI, "--data-dir", str(data_dir), "add", PHRASE], capture_output=True, text=True,
                          env=env, timeout=300)
    assert proc.returncode == 1
    assert "no usable OS keyring" in proc.stderr and "DESKTOP_MEMORY_ENCRYPTION=off" in proc.stderr
    assert not (data_dir / DB_NAME).exists()
    proc = subprocess.run([*CLI, "--data-dir", str(data_dir), "add", PHRASE], capture_output=True, text=True,
                          env={**env, encryption.ENV: "off"}, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert encryption.is_plain(data_dir / DB_NAME)


def test_encryption_off_and_on_from_the_cli(encrypted_by_default, data_dir):
    def dm(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([*CLI, "--data-dir", str(data_dir), *args], capture_output=True, text=True,
                              timeout=300)

    assert dm("add", PHRASE).returncode == 0
    db = data_dir / DB_NAME
    assert not encryption.is_plain(db)
    refused = dm("encryption", "off")  # no terminal to ask: refused, nothing changed
    assert refused.returncode == 1 and "--yes" in refused.stderr and not encryption.is_plain(db)
    off = dm("encryption", "off", "--yes")
    assert off.returncode == 0 and "off (chosen for this data folder" in off.stdout
    assert encryption.is_plain(db)
    assert "Zanzibar" in dm("search", "violet heron").stdout
    assert dm("add", "Second memory, written while unencrypted").returncode == 0
    assert encryption.is_plain(db)  # the choice sticks
    on = dm("encryption", "on")
    assert on.returncode == 0 and "on (chacha20" in on.stdout
    assert not encryption.is_plain(db) and _phrase_bytes(data_dir) == []
    assert "Zanzibar" in dm("search", "violet heron").stdout
    assert dm("stats", "--json").stdout and json.loads(dm("stats", "--json").stdout)["memories"] == 2


def test_fts5_and_the_schema_survive_a_key_change(encrypted_by_default, data_dir, real_embedder):
    with MemoryService(data_dir, embedder=real_embedder) as service:
        for i in range(30):
            service.add(f"Note {i}: the {['amber', 'cobalt', 'jade'][i % 3]} lantern of house {i}")
        version = service.store.schema_version
        service.set_encryption(False)
        assert service.store.stats.fts_integrity() and service.store.schema_version == version
        assert len(service.search("cobalt lantern", limit=50)) >= 10
        service.set_encryption(True)
        assert service.store.stats.fts_integrity() and service.store.count() == 30
        assert {h.memory.content.split(":")[0] for h in service.search("jade", limit=10)} >= {"Note 2", "Note 5"}
    copy = data_dir.parent / "copy"
    shutil.copytree(data_dir, copy, ignore=shutil.ignore_patterns(".lock"))
    with MemoryService(copy, embedder=real_embedder) as service:  # a copied folder opens with the same key
        assert service.store.count() == 30
