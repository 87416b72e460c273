"""Owning a data folder: its lock, the files a restore left half-swapped, the settings and the database.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from ..core.errors import StorageError
from ..engine import encryption
from ..engine import folder as folder_files
from ..engine.lock import DataDirLock
from ..engine.settings import Settings
from ..engine.store import Store

DB_NAME = "memories.sqlite3"

def open_store(folder: Path) -> Store:
    """The folder's database, opened with its key (encrypted or decrypted first as the person chose)."""
    return Store(folder / DB_NAME, key=encryption.prepare(folder, folder / DB_NAME))


@dataclass
class Ownership:
    """What a service holds while it has a data folder open."""

    folder: Path
    lock: DataDirLock
    open_notes: list[str]  # what opening the folder repaired or set aside, for front ends
    settings: Settings
    store: Store

    @classmethod
    def take(cls, folder: Path, *, settings: Settings | None = None, lock_wait_s: float = 2.0,
             start_fresh: bool = False, on_lock_wait: Callable[[str], None] | None = None,
             lock_give_up: Callable[[], bool] | None = None) -> Ownership:
        """Refuse a folder that is not a data folder (engine/folder.py: check_data_folder; the one check of the
        CLI, the MCP server and the engine host), create the folder if needed, lock it (waiting up to
        `lock_wait_s` for each holder), finish or undo a restore, and open the settings and the database; the
        lock is released on failure."""
        folder_files.check_data_folder(folder)  # before anything is made or changed in it
        folder_files.private_umask()  # every file this process makes from now on is for its user only
        try:
            folder.mkdir(parents=True, exist_ok=True, mode=folder_files.DIR_MODE)
        except OSError as exc:
            raise StorageError(f"cannot create the data folder {folder}: {exc.strerror}") from exc
        lock = DataDirLock(folder, wait_s=lock_wait_s, on_wait=on_lock_wait, give_up=lock_give_up)
        try:
            # before the store: finish or undo a restore, refuse a database that vanished (engine/folder.py)
            notes = folder_files.open_folder(folder, start_fresh=start_fresh)
            return cls(folder, lock, notes, settings or Settings.load(folder), open_store(folder))
        except BaseException:
            lock.release()
            raise

    def reopen_store(self) -> Store:
        """Open the database again after its file was replaced (a swap a failure left half-done finished)."""
        self.store.close()
        self.open_notes += folder_files.open_folder(self.folder)
        self.store = open_store(self.folder)
        return self.store

    def release(self) -> None:
        """Close the database and let go of the folder."""
        try:
            self.store.close()
        finally:
            self.lock.release()
