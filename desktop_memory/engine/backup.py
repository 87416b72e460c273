"""Single-file backups: a consistent copy of the database plus its vectors, in one SQLite file.

An encrypted backup uses the SQLCipher 4 format (sqlite3mc's `sqlcipher` cipher: AES-256, HMAC-SHA512
per page, the passphrase stretched with PBKDF2-HMAC-SHA512, 256,000 rounds), so any SQLCipher tool can
open it with the passphrase. A plain backup is an ordinary SQLite file, made only by explicit choice.

Restore checks the whole backup (format and schema version, page integrity, a digest of every memory)
before it replaces anything; the replaced database is kept next to the new one.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import apsw
import numpy as np

from .. import __version__, paths
from ..core.errors import BackupInvalid, InvalidInput, StorageError
from ..core.models import to_iso
from . import encryption, outputs
from . import folder as folder_files
from .embed import DIMENSIONS
from .settings import FILENAME as SETTINGS_FILE
from .store import Store, migrations
from .store_sql import scalar
from .vectors import VectorIndex

FORMAT = 1
MIN_PASSPHRASE = 8
EMBEDDING_MODEL = "all-MiniLM-L6-v2"
_BACKUP_TABLES = ("backup_info", "backup_vectors")


def memory_digest(db: apsw.Connection) -> str:
    """SHA-256 over every memory row: catches damage that SQLite's own checks cannot see."""
    h = hashlib.sha256()
    for row in db.execute("SELECT * FROM memories ORDER BY id"):
        h.update(json.dumps(row, ensure_ascii=False, default=lambda b: b.hex()).encode())
    return h.hexdigest()


def check_passphrase(passphrase: str | None) -> None:
    if passphrase is not None and len(passphrase) < MIN_PASSPHRASE:
        raise InvalidInput(f"the backup passphrase must have at least {MIN_PASSPHRASE} characters")


VectorsOf = Callable[[Sequence[str]], dict[str, np.ndarray]]  # ids -> the vectors found for them


def check_target(folder: Path, target: Path, passphrase: str | None, *, overwrite: bool) -> Path:
    """The backup file to write, after checking the passphrase and where it goes."""
    check_passphrase(passphrase)
    target = outputs.check_outside(folder, paths.expand(target), "backup")
    if target.exists() and not overwrite:
        raise InvalidInput(f"{target} already exists: choose another file name or overwrite it explicitly")
    return target


def create(folder: Path, store: Store, vectors_of: VectorsOf, target: Path, passphrase: str | None, *,
           overwrite: bool = False) -> dict[str, Any]:
    """Write a backup of a data folder's store and vectors to `target` (encrypted unless passphrase is None).

    `vectors_of` gives the vectors of the memories (their queue drained first by the caller).
    """
    target = check_target(folder, target, passphrase, overwrite=overwrite)
    partial = outputs.scratch(target)
    partial.unlink(missing_ok=True)
    folder_files.create_private(partial).close()  # 0600 whatever the umask: VACUUM INTO fills an empty file
    ids = sorted(store.all_ids())
    try:
        store.db.execute("VACUUM INTO ?", (encryption.target_uri(partial, passphrase=passphrase),))
        bk = encryption.connect(partial, passphrase=passphrase)
    except (apsw.Error, OSError) as exc:
        partial.unlink(missing_ok=True)
        raise StorageError(f"cannot write the backup {target}: {exc}") from exc
    try:
        settings_path = folder / SETTINGS_FILE
        info = {
            "format": FORMAT,
            "app_version": __version__,
            "schema_version": store.schema_version,
            "created_at": to_iso(time.time()),
            "memories": len(ids),
            "embedding_model": EMBEDDING_MODEL,
            "memory_digest": memory_digest(bk),
            "settings": settings_path.read_text(encoding="utf-8") if settings_path.exists() else "",
        }
        with bk:
            bk.execute("CREATE TABLE backup_info(key TEXT PRIMARY KEY, value TEXT NOT NULL)")
            bk.executemany("INSERT INTO backup_info VALUES (?, ?)", [(k, json.dumps(v)) for k, v in info.items()])
            bk.execute("CREATE TABLE backup_vectors(id TEXT PRIMARY KEY, vector BLOB NOT NULL)")
            for start in range(0, len(ids), 1000):
                found = vectors_of(ids[start : start + 1000])
                bk.executemany("INSERT INTO backup_vectors VALUES (?, ?)",
                               [(i, np.asarray(v, dtype=np.float32).tobytes()) for i, v in found.items()])
    except BaseException:
        bk.close()
        partial.unlink(missing_ok=True)
        raise
    bk.close()
    try:
        inspect(partial, passphrase)
        folder_files.sync_file(partial)  # on disk before the name says it is a backup
        os.replace(partial, target)
    finally:
        partial.unlink(missing_ok=True)
    return {**{k: v for k, v in info.items() if k != "settings"}, "file": str(target),
            "encrypted": passphrase is not None, "bytes": target.stat().st_size}


def _open(path: Path, passphrase: str | None) -> apsw.Connection:
    if not path.is_file():
        raise BackupInvalid(f"no backup file at {path}; nothing was changed")
    plain = encryption.is_plain(path)
    if not plain and passphrase is None:
        raise BackupInvalid(f"{path} is an encrypted backup (or not a backup at all): give its passphrase; "
                            "nothing was changed")
    try:
        return encryption.connect(path, passphrase=None if plain else passphrase, readonly=True)
    except apsw.Error:
        raise BackupInvalid(f"cannot open {path}: wrong passphrase, or the file is damaged or not a "
                            "desktop-memory backup; nothing was changed") from None


def inspect(path: Path, passphrase: str | None) -> dict[str, Any]:
    """Check a backup completely without touching any data folder; returns what it holds."""
    path = paths.expand(path)
    db = _open(path, passphrase)
    try:
        try:
            info = {k: json.loads(v) for k, v in db.execute("SELECT key, value FROM backup_info")}
        except apsw.SQLError:
            raise BackupInvalid(f"{path} is not a desktop-memory backup; nothing was changed") from None
        newest_schema = migrations()[-1][0]
        if int(info.get("format", 0)) > FORMAT or int(info.get("schema_version", 0)) > newest_schema:
            raise BackupInvalid(
                f"{path} was made by a newer desktop-memory ({info.get('app_version', '?')}, backup format "
                f"{info.get('format')}, schema {info.get('schema_version')}); upgrade desktop-memory to restore "
                "it; nothing was changed")
        problems = [r[0] for r in db.execute("PRAGMA integrity_check")]
        if problems != ["ok"]:
            raise BackupInvalid(f"{path} is damaged ({problems[0]}); nothing was changed")
        count = scalar(db, "SELECT count(*) FROM memories")
        if count != info.get("memories") or memory_digest(db) != info.get("memory_digest"):
            raise BackupInvalid(f"{path} is damaged (its memories do not match its own record); "
                                "nothing was changed")
    except apsw.Error as exc:
        raise BackupInvalid(f"{path} is damaged ({exc}); nothing was changed") from None
    finally:
        db.close()
    return {k: v for k, v in info.items() if k != "settings"} | {
        "file": str(path), "encrypted": not encryption.is_plain(path)}


@dataclass
class Staged:
    """A backup checked and copied next to the database, ready to be swapped in."""

    info: dict[str, Any]
    path: Path  # the staged database, encrypted with the folder's key
    settings_text: str
    vectors: dict[str, np.ndarray]


def stage(source: Path, folder: Path, db_path: Path, passphrase: str | None) -> Staged:
    """Check a backup and copy it next to the folder's database (its key), checked again; nothing replaced."""
    source = paths.expand(source)
    info = inspect(source, passphrase)
    key = encryption.current_key(folder, db_path)
    staged = db_path.with_name(db_path.name + ".restoring")
    encryption.remove_files(staged)
    folder_files.create_private(staged).close()
    bk = _open(source, passphrase)
    try:
        bk.execute("VACUUM INTO ?", (encryption.target_uri(staged, hexkey=key),))
        settings_text = json.loads(scalar(bk, "SELECT value FROM backup_info WHERE key = 'settings'"))
        rows = bk.execute("SELECT id, vector FROM backup_vectors")
        vectors = {i: np.frombuffer(v, dtype=np.float32) for i, v in rows}
    except apsw.Error as exc:
        encryption.remove_files(staged)
        raise BackupInvalid(f"{source} cannot be read ({exc}); nothing was changed") from None
    finally:
        bk.close()
    try:
        _check_staged(staged, key, info)
    except BaseException:
        encryption.remove_files(staged)
        raise
    return Staged(info, staged, settings_text, vectors)


def _check_staged(staged: Path, key: str | None, info: dict[str, Any]) -> None:
    staged_store = Store(staged, key=key)  # applies newer migrations to an older backup
    try:
        with staged_store.transaction():
            for table in _BACKUP_TABLES:
                staged_store.db.execute(f"DROP TABLE {table}")
        if staged_store.count(include_forgotten=True) != info["memories"] or not staged_store.stats.fts_integrity():
            raise StorageError("the restored copy does not match the backup")
        staged_store.db.execute("PRAGMA journal_mode=DELETE")  # no -wal file left behind by the rename
    finally:
        staged_store.close()
    encryption.verify(staged, key)


def release(store: Store) -> None:
    """Checkpoint and close the store before its file is replaced."""
    store.db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    store.close()


def swap_in(folder: Path, db_path: Path, staged: Staged) -> Path | None:
    """Put the staged database (and the backup's settings) in place; returns where the old database is kept.

    Every connection to `db_path` is closed (`release`); the caller opens it again even on failure.
    """
    if staged.settings_text:
        folder_files.write_staged_settings(folder, staged.settings_text)
    return folder_files.swap_in_restore(folder, db_path, staged.path)


def reuse_vectors(index: VectorIndex, staged: Staged, ids: set[str]) -> int:
    """Write the backup's vectors of the restored memories to the vector index (its other entries
    dropped); returns how many."""
    index.delete(sorted(index.all_ids() - ids))
    vectors = staged.vectors
    known = [i for i in vectors if i in ids and vectors[i].shape == (DIMENSIONS,)]
    if known and staged.info.get("embedding_model") == EMBEDDING_MODEL:
        index.upsert(known, np.stack([vectors[i] for i in known]))
    return len(known)
