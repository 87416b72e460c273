"""Storage failures (a full disk, a read-only folder, a damaged database) as one line saying what to do.

SQLite (APSW), Chroma (its Rust core reports SQLite's text inside its own errors) and the OS each name
these differently; `storage_error` recognises them anywhere in an exception's chain and returns the
`StorageError` to raise instead, or None for anything else (a bug stays a bug). Where a library hides
the cause (Chroma's "Failed to apply logs to the hnsw segment writer" on a full disk), `disk_full`
looks at the free space itself.
"""

from __future__ import annotations

import errno
import shutil
from collections.abc import Iterator
from pathlib import Path

import apsw

from ..core.errors import DesktopMemoryError, DiskFull, StorageError, StorageFailure

__all__ = ["DiskFull", "StorageFailure", "chain", "disk_error", "disk_full", "not_damage", "root_cause",
           "storage_error"]

DISK_FULL = "the disk is full: free some space and try again"
READ_ONLY = "the data folder is read-only (a read-only disk or mount): make it writable or use another --data-dir"
NO_PERMISSION = "no permission to write to the data folder: fix its permissions or use another --data-dir"
DAMAGED_ADVICE = ("restore a backup (`desktop-memory backup restore FILE`), or move the data folder away "
                  "to start again")
DAMAGED = f"the database is damaged: {DAMAGED_ADVICE}"
DISK_ERROR = "the disk could not be written (a disk error, or the disk is full): check it and try again"

_FULL_TEXT = ("database or disk is full", "no space left on device", "disk quota exceeded", "fullerror")
_READ_ONLY_TEXT = ("readonly database", "read-only file system", "read-only database")
_DAMAGED_TEXT = ("database disk image is malformed", "file is not a database", "corrupterror")
LOW_SPACE = 1 << 20  # bytes: less free than this and a failed write that does not say why is taken for a full disk


def chain(exc: BaseException) -> Iterator[BaseException]:
    """The exception, its cause and its context, and theirs (each once)."""
    seen: set[int] = set()
    todo = [exc]
    while todo:
        e = todo.pop(0)
        if id(e) in seen:
            continue
        seen.add(id(e))
        yield e
        todo += [x for x in (e.__cause__, e.__context__) if x is not None]


def root_cause(exc: BaseException) -> BaseException:
    """The first storage failure in the chain (else the exception itself)."""
    for e in chain(exc):
        if _kind(e) is not None:
            return e
    return exc


def _kind(e: BaseException) -> str | None:
    if isinstance(e, apsw.FullError):
        return "full"
    if isinstance(e, apsw.ReadOnlyError):
        return "read-only"
    if isinstance(e, apsw.CorruptError | apsw.NotADBError):
        return "damaged"
    if isinstance(e, OSError) and e.errno is not None:
        if e.errno in (errno.ENOSPC, errno.EDQUOT):
            return "full"
        if e.errno == errno.EROFS:
            return "read-only"
        if e.errno in (errno.EACCES, errno.EPERM):
            return "permission"
    if isinstance(e, apsw.IOError):
        # SQLite could not enlarge its WAL index (the -shm file, "may indicate that the underlying filesystem
        # volume is out of space"): all it says when a database opens on a full disk, with no connection to ask
        return "full" if getattr(e, "extendedresult", None) == apsw.SQLITE_IOERR_SHMSIZE else "io"
    text = f"{type(e).__name__} {e}".lower()
    if any(t in text for t in _FULL_TEXT):
        return "full"
    if any(t in text for t in _READ_ONLY_TEXT):
        return "read-only"
    if any(t in text for t in _DAMAGED_TEXT):
        return "damaged"
    return None


_MESSAGES = {"full": DISK_FULL, "read-only": READ_ONLY, "permission": NO_PERMISSION, "damaged": DAMAGED,
             "io": DISK_ERROR}
_KINDS = {advice: kind for kind, advice in _MESSAGES.items()}
_NOT_DAMAGE = ("full", "read-only", "permission", "io")


def _failure(kind: str, detail: str = "") -> StorageFailure:
    return (DiskFull if kind == "full" else StorageFailure)(_MESSAGES[kind], detail)


def _told_kind(e: BaseException) -> str | None:
    """`_kind`, and that of a StorageFailure told already (a full disk found by `disk_full`, say)."""
    if isinstance(e, StorageFailure):
        return "full" if isinstance(e, DiskFull) else _KINDS.get(e.advice)
    return _kind(e)


def not_damage(exc: BaseException) -> bool:
    """A full disk, a read-only folder, no permission or a disk error: the files are fine, the disk is not."""
    return any(_told_kind(e) in _NOT_DAMAGE for e in chain(exc))


def disk_error(exc: BaseException) -> StorageFailure | None:
    """The one-line error for the full disk, read-only folder, missing permission or disk error anywhere in the
    chain, even inside a message of ours ("cannot open the vector index: ..."); None when there is none."""
    for e in chain(exc):
        if (kind := _told_kind(e)) in _NOT_DAMAGE:
            return _failure(kind)
    return None


def disk_full(path: Path) -> bool:
    """Whether the filesystem holding `path` (or its nearest existing parent) has less than LOW_SPACE free.

    For a library that hides the errno of a failed write: Chroma's compaction says only "Failed to apply
    logs to the hnsw segment writer" when hnswlib cannot write its files on a full disk.
    """
    for where in (path, *path.parents):
        try:
            free = shutil.disk_usage(where).free  # statvfs's f_bavail on POSIX; also on Windows
        except FileNotFoundError:
            continue
        except OSError:
            return False
        return free < LOW_SPACE
    return False


def storage_error(exc: BaseException, *, detail: str = "", os_errno: int | None = None) -> StorageError | None:
    """The StorageError a person should see for this failure, or None when it is not a storage failure.

    `detail` is appended after the advice ("; nothing after line 40 was imported"). `os_errno` is the
    OS error behind an SQLite I/O error (`Connection.system_errno`): ENOSPC there means a full disk.
    """
    for e in chain(exc):
        if isinstance(e, StorageFailure):  # told already: keep its advice, add the detail
            return type(e)(e.advice, detail)
        if isinstance(e, DesktopMemoryError):  # a message of its own (not found, invalid input...)
            return None
        kind = _kind(e)
        if kind == "io" and os_errno:
            kind = _kind(OSError(os_errno, "")) or kind
        if kind is not None:
            return _failure(kind, detail)
    return None
