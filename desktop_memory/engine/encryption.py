"""Encryption at rest: the database is encrypted page by page with SQLite3 Multiple Ciphers.

The cipher is ChaCha20-Poly1305 (sqlite3mc's default, every page authenticated); the key is 32 random
bytes kept in the OS keyring (engine/keys.py), turned into the page key with PBKDF2-SHA256 and a per-file
salt (2 rounds: a random key needs no stretching). `encryption.json` in the data folder holds no secret: the
id of the keyring entry, and whether the person chose to keep the folder unencrypted.

Changing a database's key (plain to encrypted, encrypted to plain) always goes: copy with the new key
(`VACUUM INTO`), verify the copy, swap the files, verify again, and only then remove the old file.
"""

from __future__ import annotations

import json
import os
import tempfile
import urllib.parse
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import apsw

from ..core.errors import InvalidInput, StorageError, WrongKey
from . import keys
from .store_sql import scalar

CIPHER = "chacha20"
KDF_ITER = 2  # the key is 32 random bytes, not a password: stretching it would only slow every open (~0.2 s)
BACKUP_CIPHER = "sqlcipher"  # SQLCipher 4 format: the passphrase goes through PBKDF2-HMAC-SHA512, 256,000 rounds
ENV = "DESKTOP_MEMORY_ENCRYPTION"
STATE_FILE = "encryption.json"
PLAIN_HEADER = b"SQLite format 3\x00"
CONVERTING, PREVIOUS = ".converting", ".previous"
_OFF_WORDS = {"off", "0", "no", "false", "plain"}


@dataclass
class State:
    """What `encryption.json` records: the keyring entry's id and the person's explicit choice."""

    key_id: str | None = None
    plain_by_choice: bool = False

    @classmethod
    def load(cls, folder: Path) -> State:
        try:
            raw = json.loads((folder / STATE_FILE).read_text(encoding="utf-8"))
        except FileNotFoundError:
            return cls()
        except (OSError, ValueError) as exc:
            raise StorageError(f"{folder / STATE_FILE} cannot be read ({exc}); it names the database key") from exc
        key_id = raw.get("key_id") if isinstance(raw, dict) else None
        return cls(key_id=key_id if isinstance(key_id, str) and key_id else None,
                   plain_by_choice=bool(isinstance(raw, dict) and raw.get("plain_by_choice")))

    def save(self, folder: Path) -> None:
        folder.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=folder, prefix=".encryption-", suffix=".tmp")
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            json.dump({"format": 1, "cipher": CIPHER, **asdict(self)}, fh, indent=2)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, folder / STATE_FILE)


def env_off() -> bool:
    """True when DESKTOP_MEMORY_ENCRYPTION=off asks this process not to encrypt plain or new folders."""
    return os.environ.get(ENV, "").strip().lower() in _OFF_WORDS


def has_data(db: Path) -> bool:
    return db.is_file() and db.stat().st_size > 0


def is_plain(db: Path) -> bool:
    """True for an unencrypted SQLite file (its header is readable)."""
    with open(db, "rb") as fh:
        return fh.read(len(PLAIN_HEADER)) == PLAIN_HEADER


# -- connections ------------------------------------------------------------------------------
def _check_hexkey(hexkey: str) -> str:
    if len(hexkey) != 64 or any(c not in "0123456789abcdef" for c in hexkey):
        raise WrongKey("a database key must be 64 hexadecimal digits")
    return hexkey


def connect(path: Path, *, hexkey: str | None = None, passphrase: str | None = None,
            readonly: bool = False) -> apsw.Connection:
    """Open a database keyed with a raw key (data folders) or a passphrase (backups), or plain.

    Raises apsw.NotADBError when the key does not open the file (or it is not SQLite).
    """
    flags = (apsw.SQLITE_OPEN_READONLY if readonly else apsw.SQLITE_OPEN_READWRITE | apsw.SQLITE_OPEN_CREATE)
    db = apsw.Connection(str(path), flags=flags | apsw.SQLITE_OPEN_URI)
    try:
        if hexkey is not None:
            db.execute(f"PRAGMA cipher='{CIPHER}'")
            db.execute(f"PRAGMA kdf_iter={KDF_ITER}")
            db.execute(f"PRAGMA hexkey='{_check_hexkey(hexkey)}'")
        elif passphrase is not None:
            db.execute(f"PRAGMA cipher='{BACKUP_CIPHER}'")
            db.execute("PRAGMA legacy=4")
            db.execute("PRAGMA key=" + "'" + passphrase.replace("'", "''") + "'")
        db.execute("SELECT count(*) FROM sqlite_master").fetchone()
    except BaseException:
        db.close()
        raise
    return db


def target_uri(path: Path, *, hexkey: str | None = None, passphrase: str | None = None) -> str:
    """A `VACUUM INTO` target: the copy is encrypted with this key or passphrase, or plain."""
    base = "file:" + urllib.parse.quote(str(path.absolute()))
    if hexkey is not None:
        return f"{base}?cipher={CIPHER}&kdf_iter={KDF_ITER}&hexkey={_check_hexkey(hexkey)}"
    if passphrase is not None:
        return f"{base}?cipher={BACKUP_CIPHER}&legacy=4&key=" + urllib.parse.quote(passphrase, safe="")
    return base + "?key="


def fingerprint(db: apsw.Connection) -> dict[str, Any]:
    """What a faithful copy must keep: the schema version and the row counts."""
    tables = [r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'table' AND name IN "
                                       "('memories', 'sessions', 'vector_queue') ORDER BY name")]
    out: dict[str, Any] = {"user_version": scalar(db, "PRAGMA user_version")}
    for t in tables:
        out[t] = scalar(db, f"SELECT count(*) FROM {t}")
    return out


def verify(path: Path, hexkey: str | None, expected: dict[str, Any] | None = None) -> None:
    """Open a database with its key and check it page by page (and against the expected counts)."""
    try:
        db = connect(path, hexkey=hexkey)  # read-write, so that a WAL file is handled and removed on close
    except apsw.NotADBError:
        raise WrongKey(f"the key in your OS keyring does not open {path} (a different key, or the file is "
                       "damaged); nothing was changed") from None
    try:
        problems = [r[0] for r in db.execute("PRAGMA integrity_check")]
        if problems != ["ok"]:
            raise StorageError(f"{path} failed its integrity check: {problems[0]}")
        if expected is not None and (got := fingerprint(db)) != expected:
            raise StorageError(f"the copy {path} does not match the original ({got} != {expected})")
    except apsw.Error as exc:
        raise StorageError(f"{path} cannot be read: {exc}") from exc
    finally:
        db.close()


def _sibling(db: Path, suffix: str) -> Path:
    return db.with_name(db.name + suffix)


def remove_files(path: Path, *, overwrite: bool = False) -> None:
    """Delete a file; with `overwrite`, zero it first (best effort: SSDs and journals may keep old blocks)."""
    for p in (path, _sibling(path, "-wal"), _sibling(path, "-shm"), _sibling(path, "-journal")):
        if not p.exists():
            continue
        if overwrite:
            size = p.stat().st_size
            with open(p, "r+b") as fh:
                for start in range(0, size, 1 << 20):
                    fh.write(b"\0" * min(1 << 20, size - start))
                fh.flush()
                os.fsync(fh.fileno())
        p.unlink()


def sync_dir(folder: Path) -> None:
    """Make renames and deletions in a folder durable (a no-op where folders cannot be opened)."""
    if hasattr(os, "O_DIRECTORY"):
        fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def rekey(db: Path, old_key: str | None, new_key: str | None) -> None:
    """Rewrite the database with a new key (None: plain): copy, verify, swap, verify, remove the old file."""
    tmp, old = _sibling(db, CONVERTING), _sibling(db, PREVIOUS)
    remove_files(tmp)
    try:
        src = connect(db, hexkey=old_key)
    except apsw.NotADBError:
        raise WrongKey(f"the key in your OS keyring does not open {db}; nothing was changed") from None
    try:
        expected = fingerprint(src)
        src.execute("VACUUM INTO ?", (target_uri(tmp, hexkey=new_key),))
        src.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    except apsw.Error as exc:
        remove_files(tmp)
        raise StorageError(f"cannot copy {db} to change its encryption: {exc}") from exc
    finally:
        src.close()
    try:
        verify(tmp, new_key, expected)
    except BaseException:
        remove_files(tmp)
        raise
    remove_files(old)
    os.replace(db, old)
    for suffix in ("-wal", "-shm"):
        _sibling(db, suffix).unlink(missing_ok=True)  # emptied by the checkpoint above
    os.replace(tmp, db)
    sync_dir(db.parent)
    verify(db, new_key, expected)
    remove_files(old, overwrite=old_key is None)


def recover(db: Path) -> None:
    """Finish or undo a key change that a crash interrupted (the original is never lost)."""
    tmp, old = _sibling(db, CONVERTING), _sibling(db, PREVIOUS)
    if old.exists() and not has_data(db):
        os.replace(old, db)  # interrupted between the two renames: put the original back
    remove_files(tmp)


# -- the data folder's database ---------------------------------------------------------------
def prepare(folder: Path, db: Path) -> str | None:
    """The key to open the folder's database with (None: plain), after carrying out the folder's choice.

    Encrypted by default: a new database gets a new key in the OS keyring; an existing plain database is
    encrypted (copy, verify, swap). A plain database stays plain when DESKTOP_MEMORY_ENCRYPTION=off or
    when the person chose it (`encryption off`, which also decrypts).
    """
    recover(db)
    state = State.load(folder)
    encrypted_now = has_data(db) and not is_plain(db)
    wanted = not state.plain_by_choice and not env_off()
    if not encrypted_now and not wanted:
        return None
    if encrypted_now and state.key_id is None:
        raise WrongKey(f"{db} is not a desktop-memory database this folder can open: it is damaged, or it is "
                       f"encrypted and {STATE_FILE}, which names its key in the OS keyring, is missing; "
                       "nothing was changed")
    if state.key_id is None:
        state.key_id = keys.new_key_id()
        state.save(folder)
    stored = keys.database_key(state.key_id, create=not encrypted_now)
    key: str | None = stored  # the key the database has when this returns (None: plain)
    if encrypted_now:
        verify_key(db, stored)
        if state.plain_by_choice:
            rekey(db, stored, None)
            key = None
    elif has_data(db):
        rekey(db, None, stored)
    previous = _sibling(db, PREVIOUS)
    if previous.exists():  # left by a swap that completed just before a crash
        verify(db, key)
        remove_files(previous, overwrite=True)
    return key


def verify_key(db: Path, hexkey: str) -> None:
    """Raise WrongKey (touching nothing) when the key does not open the database."""
    try:
        connect(db, hexkey=hexkey).close()
    except apsw.NotADBError:
        raise WrongKey(f"the key in your OS keyring does not open {db} (a different key, or the file is damaged); "
                       "nothing was changed. A backup restores into a new data folder: "
                       "desktop-memory --data-dir NEW backup restore FILE") from None


def current_key(folder: Path, db: Path) -> str | None:
    """The key of a database that `prepare` has already opened (None when it is plain)."""
    if not has_data(db) or is_plain(db):
        return None
    key_id = State.load(folder).key_id
    if key_id is None:
        raise WrongKey(f"{folder / STATE_FILE} is missing: the key of {db} cannot be found")
    return keys.database_key(key_id)


def choose(folder: Path, *, encrypted: bool) -> State:
    """Record the person's choice for this folder; returns the choice it replaced."""
    if encrypted and env_off():
        raise InvalidInput(f"{ENV}=off is set in this environment: unset it to turn encryption on")
    before = State.load(folder)
    State(key_id=before.key_id, plain_by_choice=not encrypted).save(folder)
    return before


def describe(folder: Path, db: Path) -> str:
    """One line for `doctor` and `encryption status`."""
    state = State.load(folder)
    if has_data(db) and not is_plain(db):
        return f"on ({CIPHER}, key in the OS keyring: {keys.SERVICE} / {keys.DATABASE_KEY_PREFIX}{state.key_id})"
    if state.plain_by_choice:
        return "off (chosen for this data folder with `desktop-memory encryption off`)"
    if env_off():
        return f"off ({ENV}=off in this environment)"
    return "off"


def switch(folder: Path, db: Path, *, encrypted: bool) -> None:
    """Encrypt or decrypt a closed database in place (copy, verify, swap), as the person chose.

    The caller closes every connection to `db` first and opens it again afterwards (service/maintenance.py).
    """
    before = choose(folder, encrypted=encrypted)
    try:
        prepare(folder, db)
    except BaseException:
        before.save(folder)  # the database was not swapped: keep the earlier choice
        raise
