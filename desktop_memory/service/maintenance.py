"""Operations that replace or re-key the database of an open service: backup and restore, encryption on/off.

They drive the service (stop enrichment, close and reopen the store, reconcile the vectors) around
engine primitives that only take paths, a store and keys (engine/backup.py, engine/encryption.py).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..engine import backup, encryption
from ..engine.settings import Settings
from ..engine.vectors import VectorIndex
from .vector_sync import VECTORS_DIR

if TYPE_CHECKING:
    from .facade import MemoryService


def create_backup(service: MemoryService, target: Path, passphrase: str | None, *,
                  overwrite: bool = False) -> dict[str, Any]:
    """Write a backup of the service's data folder to `target` (encrypted unless passphrase is None)."""
    backup.check_target(service.folder, Path(target), passphrase, overwrite=overwrite)
    service.sync_vectors()  # what `add` left queued goes to Chroma first: the backup copies its vectors
    index = service.vectors
    return backup.create(service.folder, service.store, index.vectors, Path(target), passphrase,
                         overwrite=overwrite)


def verify_backup(source: Path, passphrase: str | None) -> dict[str, Any]:
    """Check a backup file completely (format, integrity, digest) without touching any data folder."""
    return backup.inspect(Path(source), passphrase)


def restore_backup(service: MemoryService, source: Path, passphrase: str | None) -> dict[str, Any]:
    """Replace the service's memories with a backup's, after checking the backup and a staged copy.

    The replaced database stays in the data folder as `memories.sqlite3.before-restore-<time>`.
    """
    folder, db_path = service.folder, service.store.path
    staged = backup.stage(Path(source), folder, db_path, passphrase)
    service.stop_enrichment()  # its own connection must not keep writing to the replaced file
    backup.release(service.store)
    try:
        kept = backup.swap_in(folder, db_path, staged)
    finally:
        service.reopen_store()  # a swap that failed part-way is finished or undone here first
    service.settings = Settings.load(folder)
    ids = service.store.all_ids()
    index = service.vector_sync.opened or VectorIndex(folder / VECTORS_DIR)  # never two clients of one index
    try:
        reused = backup.reuse_vectors(index, staged, ids)
    finally:
        if index is not service.vector_sync.opened:
            index.close()  # the service opens (and reconciles) its own below
    service.reconcile(full=True)  # embeds what the backup had no vector for
    return {**staged.info, "restored": len(ids), "vectors_reused": reused, "vectors_embedded": len(ids) - reused,
            "previous_database": str(kept) if kept is not None and kept.exists() else None}


def set_encryption(service: MemoryService, *, encrypted: bool) -> str:
    """Encrypt or decrypt the open service's database in place (copy, verify, swap); returns its new state."""
    service.stop_enrichment()  # the enrichment thread's connection must not hold the old file
    service.store.close()
    try:
        encryption.switch(service.folder, service.store.path, encrypted=encrypted)
    finally:
        service.reopen_store()
    return encryption_status(service)


def encryption_status(service: MemoryService) -> str:
    """Whether the database is encrypted, and with which key, in a sentence."""
    return encryption.describe(service.folder, service.store.path)
