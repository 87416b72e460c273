"""The data folder as a whole: check and repair it, back it up and restore it, encrypt or decrypt it.

`Maintenance` drives the service's parts (stop enrichment, close and reopen the store, reconcile the
vectors) around engine primitives that only take paths, a store and keys (engine/backup.py,
engine/encryption.py). What it changes for the whole service (a new database file, the settings a
restore brought back) it hands to the service's callbacks.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..engine import backup, encryption
from ..engine.settings import Settings
from ..engine.store import Store
from ..engine.vectors import VectorIndex
from .enrichment import EnrichmentControl
from .lifecycle import Lifecycle
from .reports import BackupInfo, DoctorReport, RestoreReport
from .vector_sync import VECTORS_DIR, VectorSync


class Maintenance:
    """Operations on the whole data folder of an open service."""

    def __init__(self, folder: Path, store: Callable[[], Store], vector_sync: VectorSync,
                 enrichment: EnrichmentControl, lifecycle: Lifecycle, *, reopen_store: Callable[[], None],
                 use_settings: Callable[[Settings], None]) -> None:
        self.folder = folder
        self._store = store  # the service's current store (replaced by a restore or an encryption change)
        self.vector_sync = vector_sync
        self.enrichment = enrichment
        self.lifecycle = lifecycle
        self._reopen_store = reopen_store
        self._use_settings = use_settings

    @property
    def store(self) -> Store:
        return self._store()

    def doctor(self) -> DoctorReport:
        """Check and repair the stores; whether the local model runs (its stop is no damage: ok is unchanged)."""
        checks, model = self.lifecycle.doctor(), self.enrichment.status().model
        return dataclasses.replace(checks, local_model="ok" if model.usable else str(model.error))

    def create_backup(self, target: Path, passphrase: str | None, *, overwrite: bool = False) -> BackupInfo:
        """Write a backup of the data folder to `target` (encrypted unless passphrase is None)."""
        backup.check_target(self.folder, Path(target), passphrase, overwrite=overwrite)
        self.vector_sync.sync()  # what `add` left queued goes to Chroma first: the backup copies its vectors
        index = self.vector_sync.index
        return _backup_info(backup.create(self.folder, self.store, index.vectors, Path(target), passphrase,
                                          overwrite=overwrite))

    def verify_backup(self, source: Path, passphrase: str | None) -> BackupInfo:
        """Check a backup file completely (format, integrity, digest) without touching any data folder."""
        return _backup_info(backup.inspect(Path(source), passphrase))

    def restore_backup(self, source: Path, passphrase: str | None) -> RestoreReport:
        """Replace every memory with a backup's, after checking the backup and a staged copy.

        The replaced database stays in the data folder as `memories.sqlite3.before-restore-<time>`.
        """
        folder, db_path = self.folder, self.store.path
        staged = backup.stage(Path(source), folder, db_path, passphrase)
        self.enrichment.stop()  # its own connection must not keep writing to the replaced file
        self._stop_backlog()
        backup.release(self.store)
        try:
            kept = backup.swap_in(folder, db_path, staged)
        finally:
            self._reopen_store()  # a swap that failed part-way is finished or undone here first
        self._use_settings(Settings.load(folder))
        ids = self.store.all_ids()
        index = self.vector_sync.opened or VectorIndex(folder / VECTORS_DIR)  # never two clients of one index
        try:
            reused = backup.reuse_vectors(index, staged, ids)
        finally:
            if index is not self.vector_sync.opened:
                index.close()  # the service opens (and reconciles) its own below
        self.vector_sync.reconcile(full=True)  # embeds what the backup had no vector for
        info = _backup_info(staged.info)
        return RestoreReport(**{k: v for k, v in dataclasses.asdict(info).items() if k != "bytes"},
                             restored=len(ids), vectors_reused=reused, vectors_embedded=len(ids) - reused,
                             previous_database=str(kept) if kept is not None and kept.exists() else None)

    def set_encryption(self, encrypted: bool) -> str:
        """Encrypt or decrypt the database in place (copy, verify, swap); its new state in a sentence."""
        self.enrichment.stop()  # the enrichment thread's connection must not hold the old file
        self._stop_backlog()
        store = self.store
        store.close()
        try:
            encryption.switch(self.folder, store.path, encrypted=encrypted)
        finally:
            self._reopen_store()
        return self.encryption_status()

    def _stop_backlog(self) -> None:
        """The passage backlog's connection must not hold the file being replaced (reopening resumes it)."""
        if self.vector_sync.backlog is not None:
            self.vector_sync.backlog.stop()

    def encryption_status(self) -> str:
        """Whether the database is encrypted, and with which key, in a sentence."""
        return encryption.describe(self.folder, self.store.path)


def _backup_info(info: dict[str, Any]) -> BackupInfo:
    """What engine/backup.py says a backup holds, as a BackupInfo (a key it does not know is left out)."""
    known = {f.name for f in dataclasses.fields(BackupInfo)}
    return BackupInfo(**{k: v for k, v in info.items() if k in known})
