"""Single-file backups with the real parts: encrypted and plain, restore, and every way a restore is refused."""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
import sys
from pathlib import Path

import apsw
import pytest

from desktop_memory.core.errors import BackupInvalid, InvalidInput
from desktop_memory.engine import backup, encryption
from desktop_memory.engine.store import migrations
from desktop_memory.service import DB_NAME, MemoryService
from desktop_memory.service.reports import BackupInfo
from tests.integration.test_keyring_session import secret_service

PASS = "correct horse battery staple"
CLI = [sys.executable, "-m", "desktop_memory"]
TEXTS = [
    "Zanzibar the violet heron recites Portuguese sonnets at midnight",
    "The staging database password rotates on the first Monday of each month",
    "Maya's flight lands at 18:40 at Terminal 2; she prefers the window seat",
    "Recipe: simmer the lentils 25 minutes with cumin, then add lemon juice",
]


@pytest.fixture(scope="module")
def keyring_env(tmp_path_factory):
    with secret_service(tmp_path_factory.mktemp("keyring")) as env:
        yield env


@pytest.fixture
def source(keyring_env, tmp_path, real_embedder, monkeypatch):
    """An encrypted data folder with a few memories (one pinned and tagged, one forgotten)."""
    monkeypatch.delenv(encryption.ENV, raising=False)
    folder = tmp_path / "source"
    with MemoryService(folder, embedder=real_embedder) as service:
        ids = [service.add(t, tags=["trip"] if "flight" in t else []).memory.id for t in TEXTS]
        service.set_pinned(ids[0], True)
        service.set_forgotten(ids[3], True)
    return folder


def _digest(folder: Path) -> dict[str, str]:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(folder.glob(DB_NAME + "*"))}


def _make(folder: Path, target: Path, passphrase: str | None, embedder) -> BackupInfo:
    with MemoryService(folder, embedder=embedder) as service:
        return service.create_backup(target, passphrase)


def test_an_encrypted_backup_restores_into_a_new_folder_with_its_own_key(source, tmp_path, real_embedder):
    file = tmp_path / "memories.dmbackup"
    info = _make(source, file, PASS, real_embedder)
    assert info.encrypted and info.memories == 4
    raw = file.read_bytes()
    assert not raw.startswith(encryption.PLAIN_HEADER) and b"Zanzibar" not in raw and b"lentils" not in raw
    assert backup.inspect(file, PASS)["memories"] == 4
    target = tmp_path / "restored"
    with MemoryService(target, embedder=real_embedder) as service:
        report = service.restore_backup(file, PASS)
        assert report.restored == 4 and report.vectors_reused == 4 and report.vectors_embedded == 0
        assert service.vectors.count() == 4
        hit = service.search("a bird reading poems", limit=1)[0].memory
        assert hit.content == TEXTS[0] and hit.pinned
        assert service.search("flight", limit=1)[0].memory.tags == ["trip"]
        assert service.store.count() == 3 and service.store.count(include_forgotten=True) == 4
        assert service.doctor().ok
    src_key = json.loads((source / encryption.STATE_FILE).read_text())["key_id"]
    assert json.loads((target / encryption.STATE_FILE).read_text())["key_id"] != src_key
    assert not encryption.is_plain(target / DB_NAME)
    assert not any(b"Zanzibar" in p.read_bytes() for p in target.rglob("*") if p.is_file())


def test_restore_keeps_the_replaced_database_and_replaces_every_memory(source, tmp_path, real_embedder):
    file = tmp_path / "b.dmbackup"
    _make(source, file, PASS, real_embedder)
    with MemoryService(source, embedder=real_embedder) as service:
        extra = service.add("Written after the backup: the garage code is on the fridge").memory.id
        report = service.restore_backup(file, PASS)
        assert service.store.count(include_forgotten=True) == 4 and extra not in service.store.all_ids()
        assert extra not in service.vectors.all_ids()  # its vector went with it
        kept = Path(report.previous_database)
    assert kept.exists() and kept.parent == source
    old = encryption.connect(kept, hexkey=encryption.current_key(source, source / DB_NAME))
    assert old.execute("SELECT count(*) FROM memories WHERE id = ?", (extra,)).fetchone()[0] == 1
    old.close()


def test_a_plain_backup_is_an_explicit_choice_and_restores_too(source, tmp_path, real_embedder):
    file = tmp_path / "plain.sqlite3"
    info = _make(source, file, None, real_embedder)
    assert not info.encrypted and file.read_bytes().startswith(encryption.PLAIN_HEADER)
    assert b"Zanzibar" in file.read_bytes()
    with MemoryService(tmp_path / "r", embedder=real_embedder) as service:
        assert service.restore_backup(file, None).restored == 4


def test_wrong_passphrase_corrupt_truncated_and_newer_backups_are_refused_and_touch_nothing(
        source, tmp_path, real_embedder):
    good = tmp_path / "good.dmbackup"
    _make(source, good, PASS, real_embedder)
    plain = tmp_path / "plain.sqlite3"
    _make(source, plain, None, real_embedder)
    bad: dict[str, tuple[Path, str | None]] = {}
    flipped = bytearray(good.read_bytes())
    for i in range(len(flipped) // 2, len(flipped) // 2 + 64):
        flipped[i] ^= 0xFF
    (tmp_path / "flipped").write_bytes(bytes(flipped))
    bad["damaged"] = (tmp_path / "flipped", PASS)
    (tmp_path / "short").write_bytes(good.read_bytes()[: len(flipped) // 3])
    bad["truncated"] = (tmp_path / "short", PASS)
    (tmp_path / "notes.txt").write_text("not a backup at all\n" * 100)
    bad["not a backup"] = (tmp_path / "notes.txt", PASS)
    bad["wrong passphrase"] = (good, "tr0ub4dor&3 wrong")
    bad["no passphrase"] = (good, None)
    text = bytearray(plain.read_bytes())  # a plain backup whose text was altered: caught by the digest
    at = bytes(text).index(b"lentils")
    text[at : at + 7] = b"LENTILS"
    (tmp_path / "altered").write_bytes(bytes(text))
    bad["altered text"] = (tmp_path / "altered", None)
    newer = tmp_path / "newer.dmbackup"
    newer.write_bytes(good.read_bytes())
    db = encryption.connect(newer, passphrase=PASS)
    db.execute("UPDATE backup_info SET value = '999' WHERE key = 'schema_version'")
    db.close()
    bad["newer"] = (newer, PASS)

    before = _digest(source)
    with MemoryService(source, embedder=real_embedder) as service:
        messages = {}
        for name, (path, passphrase) in bad.items():
            with pytest.raises(BackupInvalid) as caught:
                service.restore_backup(path, passphrase)
            messages[name] = str(caught.value)
        assert service.store.count(include_forgotten=True) == 4
    assert _digest(source) == before
    assert sorted(p.name for p in source.iterdir() if p.name.startswith(DB_NAME)) == [DB_NAME]
    assert "wrong passphrase, or the file is damaged" in messages["wrong passphrase"]
    assert "give its passphrase" in messages["no passphrase"]
    assert "newer desktop-memory" in messages["newer"] and "upgrade" in messages["newer"]
    assert "damaged" in messages["altered text"]
    for name in ("damaged", "truncated", "not a backup"):
        assert "damaged" in messages[name] or "not a desktop-memory backup" in messages[name], messages[name]
    assert all("nothing was changed" in m for m in messages.values()), messages


def test_a_backup_never_lands_in_the_data_folder_or_over_a_file(source, tmp_path, real_embedder):
    (tmp_path / "exists").write_text("keep me")
    with MemoryService(source, embedder=real_embedder) as service:
        with pytest.raises(InvalidInput, match="already exists"):
            service.create_backup(tmp_path / "exists", PASS)
        with pytest.raises(InvalidInput, match="outside the data folder"):
            service.create_backup(source / "inside.dmbackup", PASS)
        with pytest.raises(InvalidInput, match="at least 8 characters"):
            service.create_backup(tmp_path / "short-pass", "abc")
    assert (tmp_path / "exists").read_text() == "keep me"
    assert not (tmp_path / "short-pass").exists()


def test_backup_from_the_cli(source, tmp_path):
    def dm(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
        return subprocess.run([*CLI, *args], capture_output=True, text=True, input=stdin, timeout=300)

    file = tmp_path / "cli.dmbackup"
    made = dm("--data-dir", str(source), "backup", "create", str(file), "--passphrase-file", "-", stdin=PASS + "\n")
    assert made.returncode == 0, made.stderr
    refused = dm("--data-dir", str(source), "backup", "create", str(tmp_path / "x"))
    assert refused.returncode == 1 and "--passphrase-file FILE, or --no-passphrase" in refused.stderr
    plain = dm("--data-dir", str(source), "backup", "create", str(tmp_path / "p"), "--no-passphrase")
    assert plain.returncode == 0 and "NOT encrypted" in plain.stderr
    wrong = dm("--data-dir", str(tmp_path / "new"), "backup", "restore", str(file), "--passphrase-file", "-",
               "--yes", stdin="not the passphrase\n")
    assert wrong.returncode == 1 and wrong.stderr.count("\n") == 1 and "wrong passphrase" in wrong.stderr
    unconfirmed = dm("--data-dir", str(tmp_path / "new"), "backup", "restore", str(file), "--passphrase-file",
                     "-", stdin=PASS + "\n")
    assert unconfirmed.returncode == 1 and "--yes" in unconfirmed.stderr
    verified = dm("backup", "verify", str(file), "--passphrase-file", "-", "--json", stdin=PASS + "\n")
    assert json.loads(verified.stdout)["memories"] == 4
    restored = dm("--data-dir", str(tmp_path / "new"), "backup", "restore", str(file), "--passphrase-file", "-",
                  "--yes", "--json", stdin=PASS + "\n")
    assert restored.returncode == 0, restored.stderr
    assert json.loads(restored.stdout)["restored"] == 4
    found = dm("--data-dir", str(tmp_path / "new"), "search", "heron sonnets", "--json")
    assert json.loads(found.stdout)[0]["content"] == TEXTS[0]


def test_an_older_backup_is_migrated_on_restore(keyring_env, tmp_path, real_embedder, monkeypatch):
    monkeypatch.delenv(encryption.ENV, raising=False)
    file = tmp_path / "v1.sqlite3"  # a backup of a schema-1 database (kept as a fixture), without vectors
    shutil.copy(Path(__file__).parents[1] / "data" / "schema_v1.sqlite3", file)
    db = apsw.Connection(str(file))
    assert db.execute("PRAGMA user_version").fetchone()[0] == 1
    count = db.execute("SELECT count(*) FROM memories").fetchone()[0]
    info = {"format": 1, "app_version": "0.0.1", "schema_version": 1, "memories": count,
            "embedding_model": backup.EMBEDDING_MODEL, "memory_digest": backup.memory_digest(db), "settings": ""}
    with db:
        db.execute("CREATE TABLE backup_info(key TEXT PRIMARY KEY, value TEXT NOT NULL)")
        db.executemany("INSERT INTO backup_info VALUES (?, ?)", [(k, json.dumps(v)) for k, v in info.items()])
        db.execute("CREATE TABLE backup_vectors(id TEXT PRIMARY KEY, vector BLOB NOT NULL)")
    db.close()
    with MemoryService(tmp_path / "r", embedder=real_embedder) as service:
        report = service.restore_backup(file, None)
        assert report.restored == count and report.vectors_embedded == count
        assert service.vectors.count() == count
        assert service.store.schema_version == migrations()[-1][0] > 1
        assert "Priya" in service.search("who writes the release notes", limit=1)[0].memory.content
    assert not encryption.is_plain(tmp_path / "r" / DB_NAME)
