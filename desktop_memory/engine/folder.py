"""The data folder before its database opens: private modes, interrupted restores, no silent empty memory.

`check_data_folder` runs first, before anything is made in the folder: a folder that holds files but none of
ours (`ours`: the names desktop-memory gives what it keeps there) is refused, untouched; an empty folder, or
one not there yet, may become a data folder. `open_folder` runs when the engine takes a folder (after its
lock, before `encryption.prepare` and the store): it makes the process's new files private (umask 077) and
tightens what of ours is already there (folders 0700, files 0600; the person's own files keep their modes),
finishes or undoes a restore that a crash interrupted, removes what a restore left half-made, and refuses a
folder whose database is missing or empty while its vector index, an old database or restore leftovers show
that memories were there, rather than creating an empty database.

A restore swaps its files through `swap_in_restore`: the checked copy (`memories.sqlite3.restoring`) and
the backup's settings are synced to disk, then a journal (`restore.json`) names the plan, then the files
are renamed. A crash before the journal leaves the old database in place; after it, the next open
finishes the restore (the copy checked again) or, if the copy does not check out, puts the old one back.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import shlex
import stat
import time
from collections.abc import Iterator
from dataclasses import fields
from pathlib import Path
from typing import IO

import apsw

from .. import paths
from ..core.errors import StorageError
from . import encryption
from .lock import FILENAME as LOCK_FILE
from .settings import FILENAME as SETTINGS_FILE
from .settings import Settings
from .store_sql import scalar

log = logging.getLogger(__name__)

DB_NAME = "memories.sqlite3"
VECTORS_DIR = "vectors"
RESTORING = ".restoring"  # a restore's checked copy (and the backup's settings) before the swap
KEPT = ".before-restore-"  # the database a restore replaced
SET_ASIDE = ".set-aside-"  # what `--start-fresh` moved out of the way
JOURNAL = "restore.json"
DIR_MODE, FILE_MODE = 0o700, 0o600
START_FRESH = "--start-fresh"
# What desktop-memory keeps in a data folder, by name, each also with a suffix after "." or "-" (memories.sqlite3-wal,
# settings.json.damaged-<time>, vectors.broken-<time>, ...); the engine's socket and token are ipc/address.py's.
OWN = (DB_NAME, VECTORS_DIR, SETTINGS_FILE, encryption.STATE_FILE, JOURNAL, LOCK_FILE, "engine.sock", "engine.token",
       "spool")  # spool: what the browser host keeps while no engine runs (browser/spool.py)
OWN_TEMP = (".settings-", ".encryption-")  # settings.json and encryption.json while they are written
NOT_CONTENT = frozenset({".DS_Store", "Thumbs.db", "desktop.ini"})  # what a file manager leaves in an empty folder


# -- which folder is ours -------------------------------------------------------------------------
def ours(name: str) -> bool:
    """True for a name desktop-memory gives to something it keeps in a data folder."""
    return name.startswith(OWN_TEMP) or any(name == own or name.startswith((own + ".", own + "-")) for own in OWN)


def _marks_ours(folder: Path, name: str) -> bool:
    """Whether `name` shows `folder` is a data folder. Names other programs use too count only by what they hold: a
    settings.json that names one of our settings (also when damaged, as the person may have edited it by hand),
    a vectors folder with Chroma's database in it, an encryption.json or restore.json that is a JSON object with
    our keys. A `.lock` never does (pytest, editors and build tools leave theirs; `_only_our_leftovers`)."""
    if not ours(name) or name == LOCK_FILE:
        return False
    if name == SETTINGS_FILE:
        return _names_our_keys(folder / name, {f.name for f in fields(Settings)})
    if name == VECTORS_DIR or name.startswith((VECTORS_DIR + ".", VECTORS_DIR + "-")):
        return (folder / name / "chroma.sqlite3").is_file()
    if name == encryption.STATE_FILE:
        return _names_our_keys(folder / name, {"key_id", "plain_by_choice", "cipher"})
    if name == JOURNAL:
        return _names_our_keys(folder / name, {"kept", "format"})
    return True


def _names_our_keys(path: Path, keys: set[str]) -> bool:
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return False
    try:
        data = json.loads(text)
    except ValueError:
        return any(f'"{key}"' in text for key in keys)
    return isinstance(data, dict) and bool(keys & set(data))


def _only_our_leftovers(folder: Path, names: list[str]) -> bool:
    """A folder that holds nothing but a lock file with a process id in it and/or an empty vectors folder: an
    engine stopped between taking the folder and making its database (what our lock holds, engine/lock.py)."""
    rest = [name for name in names if name not in NOT_CONTENT]
    if not rest or not set(rest) <= {LOCK_FILE, VECTORS_DIR}:
        return False
    try:
        if LOCK_FILE in rest:
            held = (folder / LOCK_FILE).read_text(encoding="ascii", errors="replace").strip()
            if held and not held.isdigit():
                return False
        return VECTORS_DIR not in rest or not any((folder / VECTORS_DIR).iterdir())
    except OSError:
        return False


def check_data_folder(folder: Path) -> None:
    """Raise StorageError (one line, nothing touched) unless `folder` is a data folder (it holds something of
    ours), an empty folder or none yet: the only folders the product writes in or changes modes in."""
    try:
        names = os.listdir(folder)
    except FileNotFoundError:
        return  # made by the opener (its parents too)
    except OSError as exc:  # a file, too long a name, not allowed
        raise StorageError(f"cannot open the data folder {paths.shown(folder)}: {exc.strerror or exc}") from None
    if any(_marks_ours(folder, name) for name in names) or all(name in NOT_CONTENT for name in names) \
            or _only_our_leftovers(folder, names):
        return
    raise StorageError(f"{paths.shown(folder)} is not a desktop-memory data folder and is not empty: nothing was "
                       "changed in it; choose a new or empty folder, or an existing data folder, with --data-dir")


# -- private at rest ------------------------------------------------------------------------------
def private_umask() -> None:
    """New files and folders of this process are for its user only (umask 077, kept stricter bits)."""
    if os.name == "posix":
        old = os.umask(0o077)
        os.umask(old | 0o077)


def tighten(folder: Path) -> int:
    """`folder` 0700, and what of ours is in it (`ours`, with everything inside our folders) 0700 for folders and
    0600 for files; the person's own files keep their modes, symlinks are untouched. Returns how many changed."""
    if os.name != "posix":
        return 0
    changed = 0
    for path, mode in _walk(folder, only_ours=True):
        want = DIR_MODE if stat.S_ISDIR(mode) else FILE_MODE
        if stat.S_IMODE(mode) != want:
            try:
                os.chmod(path, want)
                changed += 1
            except OSError as exc:  # not ours, or gone meanwhile: nothing to tighten
                log.debug("cannot tighten %s: %s", path, exc)
    if changed:
        log.info("tightened the permissions of %d file(s) in %s to this user only", changed, folder)
    return changed


def _walk(folder: Path, only_ours: bool = False) -> Iterator[tuple[Path, int]]:
    try:
        yield folder, os.lstat(folder).st_mode
        entries = [entry for entry in os.scandir(folder) if not only_ours or ours(entry.name)]
    except OSError:
        return
    for entry in entries:
        try:
            mode = entry.stat(follow_symlinks=False).st_mode
        except OSError:
            continue
        if stat.S_ISDIR(mode):
            yield from _walk(Path(entry.path))
        elif not stat.S_ISLNK(mode):
            yield Path(entry.path), mode


def create_private(path: Path) -> IO[bytes]:
    """Create (or truncate) `path` for writing, readable by this user only whatever the umask; never through a
    symlink (O_NOFOLLOW: a link planted at a scratch name would have the write land on what it points to)."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_BINARY", 0) | getattr(os, "O_NOFOLLOW", 0)
    fd = os.open(path, flags, FILE_MODE)
    try:
        if os.name == "posix":
            os.fchmod(fd, FILE_MODE)  # an existing file keeps its mode through O_CREAT
        return os.fdopen(fd, "wb")
    except BaseException:
        os.close(fd)
        raise


def sync_file(path: Path) -> None:
    """Flush a closed file's data to disk (before it is renamed into place)."""
    with open(path, "rb+") as fh:
        os.fsync(fh.fileno())


# -- opening a folder -----------------------------------------------------------------------------
def open_folder(folder: Path, *, start_fresh: bool = False) -> list[str]:
    """Everything that must happen before the database opens; returns notes for the person (may be empty).

    Raises StorageError (touching nothing) for a missing or empty database next to data that shows
    memories were there, unless `start_fresh` sets that data aside.
    """
    private_umask()
    tighten(folder)
    db = folder / DB_NAME
    notes = [n for n in (recover_restore(folder, db),) if n]
    encryption.recover(db)  # an interrupted key change puts the original database back first
    if encryption.has_data(db):
        return notes
    found = evidence(folder, db)
    if not found:
        return notes
    if not start_fresh:
        raise StorageError(_refusal(folder, db, found))
    notes.append(set_aside(folder, db))
    return notes


def evidence(folder: Path, db: Path) -> list[str]:
    """What shows that this folder held memories, although its database is missing or empty."""
    found: list[str] = []
    entries = vector_entries(folder / VECTORS_DIR)
    if entries is None:
        found.append(f"a vector index ({VECTORS_DIR}/) that could not be counted")
    elif entries:
        found.append(f"{entries:,} entries in the vector index ({VECTORS_DIR}/)")
    wal = db.with_name(db.name + "-wal")
    if wal.is_file() and wal.stat().st_size > 0:
        found.append(f"a write-ahead log without its database ({wal.name})")
    if kept := kept_databases(db):
        found.append(f"the database before a restore ({kept[-1].name})")
    return found


def vector_entries(vectors: Path) -> int | None:
    """Entries in a Chroma folder, read from its SQLite file without opening Chroma (None: unknown)."""
    if not vectors.is_dir():
        return 0
    meta = vectors / "chroma.sqlite3"
    if not meta.is_file():
        return None if any(vectors.iterdir()) else 0
    try:
        db = apsw.Connection(str(meta), flags=apsw.SQLITE_OPEN_READONLY)
    except apsw.Error:
        return None
    try:
        return int(scalar(db, "SELECT count(*) FROM embeddings"))  # Chroma's own record of ids
    except apsw.Error:
        return None
    finally:
        db.close()


def kept_databases(db: Path) -> list[Path]:
    """Databases earlier restores replaced (oldest first; the names carry the time)."""
    return sorted(p for p in db.parent.glob(db.name + KEPT + "*")
                  if encryption.has_data(p) and not p.name.endswith(("-wal", "-shm", "-journal")))


def _refusal(folder: Path, db: Path, found: list[str]) -> str:
    where = "empty" if db.exists() else "missing"
    dm = f"desktop-memory --data-dir {shlex.quote(str(folder))}"
    kept = kept_databases(db)
    back = (f"; or go back to the database before the last restore by renaming {kept[-1].name} to {db.name}"
            if kept else "")
    return (f"the database {db.name} in {folder} is {where}, but {' and '.join(found)} show that it held "
            f"memories: nothing was changed. Restore a backup with `{dm} backup restore FILE {START_FRESH}`, "
            f"or start with an empty memory (the old files are kept aside) with `{dm} doctor {START_FRESH}`{back}")


def set_aside(folder: Path, db: Path) -> str:
    """Move the vector index and what is left of the database out of the way (`--start-fresh`)."""
    stamp = time.strftime("%Y%m%dT%H%M%S")
    moved = []
    for path in (folder / VECTORS_DIR, *(db.with_name(db.name + s) for s in ("", "-wal", "-shm", "-journal"))):
        if path.exists():
            target = _unique(path.with_name(path.name + SET_ASIDE + stamp))
            os.replace(path, target)
            moved.append(target.name)
    encryption.sync_dir(folder)
    note = f"started with an empty memory in {folder}; kept aside: {', '.join(moved)}"
    log.warning("%s", note)
    return note


def _unique(path: Path) -> Path:
    n, candidate = 1, path
    while candidate.exists():
        n += 1
        candidate = path.with_name(f"{path.name}-{n}")
    return candidate


# -- restores -------------------------------------------------------------------------------------
def kept_name(db: Path) -> Path:
    """Where a restore keeps the database it replaces (a new name each time)."""
    return _unique(db.with_name(f"{db.name}{KEPT}{time.strftime('%Y%m%dT%H%M%S')}"))


def staged_settings(folder: Path) -> Path:
    return folder / (SETTINGS_FILE + RESTORING)


def write_staged_settings(folder: Path, text: str) -> None:
    """The backup's settings, synced to disk, waiting for the swap."""
    with create_private(staged_settings(folder)) as fh:
        fh.write(text.encode("utf-8"))
        fh.flush()
        os.fsync(fh.fileno())


def swap_in_restore(folder: Path, db: Path, staged: Path) -> Path | None:
    """Put a checked, closed restore copy in place of the (closed) database; returns where the old one went.

    The journal is written (and synced) before the first rename, so a crash at any point is finished or
    undone by the next `open_folder`.
    """
    sync_file(staged)
    kept = kept_name(db) if encryption.has_data(db) else None
    tmp = folder / (JOURNAL + ".tmp")
    with create_private(tmp) as fh:
        fh.write(json.dumps({"format": 1, "kept": kept.name if kept else None,
                             "staged_bytes": staged.stat().st_size}).encode())
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, folder / JOURNAL)
    encryption.sync_dir(folder)
    _finish(folder, db, staged, kept)
    return kept


def _finish(folder: Path, db: Path, staged: Path, kept: Path | None) -> None:
    if staged.exists():
        if encryption.has_data(db):
            _move_database(db, kept if kept is not None and not kept.exists() else kept_name(db))
        for suffix in ("-wal", "-shm", "-journal"):  # an empty database's: nothing to keep
            db.with_name(db.name + suffix).unlink(missing_ok=True)
        encryption.sync_dir(folder)
        os.replace(staged, db)
        encryption.sync_dir(folder)
    if staged_settings(folder).exists():
        os.replace(staged_settings(folder), folder / SETTINGS_FILE)
    (folder / JOURNAL).unlink(missing_ok=True)
    encryption.sync_dir(folder)


def _move_database(src: Path, dst: Path) -> None:
    """Rename a closed database with its journal files (a -wal or -journal of `dst` is dropped: not its own)."""
    for suffix in ("-wal", "-shm", "-journal"):
        dst.with_name(dst.name + suffix).unlink(missing_ok=True)
    os.replace(src, dst)
    for suffix in ("-wal", "-journal"):
        if (old := src.with_name(src.name + suffix)).exists():
            os.replace(old, dst.with_name(dst.name + suffix))
    src.with_name(src.name + "-shm").unlink(missing_ok=True)


def recover_restore(folder: Path, db: Path) -> str | None:
    """Finish or undo a restore a crash interrupted, and clean what it left; returns what was done."""
    staged = db.with_name(db.name + RESTORING)
    journal = folder / JOURNAL
    (folder / (JOURNAL + ".tmp")).unlink(missing_ok=True)
    if journal.exists():
        return _recover_journal(folder, db, staged, journal)
    if not staged.exists() and not staged_settings(folder).exists():
        return None
    note = None
    kept = kept_databases(db)
    if not encryption.has_data(db) and kept and staged.exists():  # a swap of an older version, interrupted
        _move_database(kept[-1], db)
        note = (f"a restore was interrupted before it finished: the database it replaced ({kept[-1].name}) "
                "is back in place; run the restore again")
    encryption.remove_files(staged)
    staged_settings(folder).unlink(missing_ok=True)
    encryption.sync_dir(folder)
    if note:
        log.warning("%s", note)
    return note


def _recover_journal(folder: Path, db: Path, staged: Path, journal: Path) -> str:
    try:
        plan = json.loads(journal.read_text(encoding="utf-8"))
        kept = db.with_name(Path(plan["kept"]).name) if plan.get("kept") else None
        size = int(plan["staged_bytes"])
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise StorageError(f"{journal} (left by an interrupted restore) cannot be read ({exc}); nothing was "
                           "changed: move it away to open this folder") from None
    if not staged.exists() or _checks_out(folder, staged, size):
        _finish(folder, db, staged, kept)
        note = "a restore was interrupted after its copy was checked: it is finished now"
    else:
        if not encryption.has_data(db) and kept is not None and kept.exists():
            _move_database(kept, db)
        encryption.remove_files(staged)
        staged_settings(folder).unlink(missing_ok=True)
        journal.unlink()
        encryption.sync_dir(folder)
        note = "a restore was interrupted and its copy is damaged: the previous database is back; run it again"
    log.warning("%s", note)
    return note


def _checks_out(folder: Path, staged: Path, size: int) -> bool:
    if staged.stat().st_size != size:
        return False
    try:
        encryption.verify(staged, encryption.current_key(folder, staged))
    except StorageError as exc:  # WrongKey included; a missing keyring (KeyringUnavailable) propagates
        log.warning("the restore copy %s does not check out: %s", staged.name, exc)
        return False
    return True


@contextlib.contextmanager
def private_output(target: Path) -> Iterator[IO[bytes]]:
    """Write `target` through `<target>.partial` (0600 whatever the umask), moved into place at the end; a file or
    link already at that scratch name is removed first, never written through."""
    tmp = target.with_name(target.name + ".partial")
    tmp.unlink(missing_ok=True)
    try:
        with create_private(tmp) as fh:
            yield fh  # a wrapper around it may close it first
        sync_file(tmp)
        os.replace(tmp, target)
    finally:
        tmp.unlink(missing_ok=True)
