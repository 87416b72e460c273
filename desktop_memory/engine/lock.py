"""One writer per data folder: an OS file lock held for the life of the engine."""

from __future__ import annotations

import logging
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import IO

from ..core.errors import DataDirLocked, StorageError
from . import failures

log = logging.getLogger(__name__)
POLL_S = 0.05
FILENAME = ".lock"


class DataDirLock:
    """Exclusive, process-wide lock on `<data dir>/.lock` (FILENAME); released on close or process death.

    When another process holds it, this one waits its turn: up to `wait_s` for each holder (a queue
    of short commands moves on, each taking the lock in turn), calling `on_wait(holder_pid)` once
    when it starts waiting, so that a front end can say so. `give_up()` (checked while waiting) ends
    the wait early, for example when a host process now answers for the folder.
    """

    def __init__(self, folder: Path, wait_s: float = 2.0, *, on_wait: Callable[[str], None] | None = None,
                 give_up: Callable[[], bool] | None = None) -> None:
        self.path = folder / FILENAME
        self._fh: IO[str] | None = None
        try:
            fh = open(self.path, "a+", encoding="utf-8")  # noqa: SIM115 - held open as the lock
        except OSError as exc:
            raise failures.storage_error(exc) or StorageError(
                f"cannot open the data folder's lock file {self.path}: {exc.strerror}") from exc
        try:
            self._wait(fh, folder, wait_s, on_wait, give_up)
        except BaseException:
            fh.close()
            raise
        try:  # who holds it, for the messages of the others (a full disk may refuse even these bytes)
            fh.seek(0)
            fh.truncate()
            fh.write(str(os.getpid()))
            fh.flush()
        except OSError:
            log.debug("could not write the pid into %s", self.path, exc_info=True)
        self._fh = fh

    def _wait(self, fh: IO[str], folder: Path, wait_s: float, on_wait: Callable[[str], None] | None,
              give_up: Callable[[], bool] | None) -> None:
        holder = None
        deadline = time.monotonic() + wait_s
        while not self._try_lock(fh):
            now_holding = _holder(fh)
            if now_holding != holder:  # a new holder (the one before finished): a full wait for this one
                if holder is None and on_wait is not None:
                    on_wait(now_holding)
                holder = now_holding
                deadline = time.monotonic() + wait_s
            if time.monotonic() >= deadline or (give_up is not None and give_up()):
                raise DataDirLocked(
                    f"the data folder {folder} is in use by another desktop-memory process (pid {holder}); "
                    "close it or use a different --data-dir"
                )
            time.sleep(POLL_S)

    @staticmethod
    def _try_lock(fh: IO[str]) -> bool:
        try:
            if sys.platform == "win32":
                import msvcrt

                fh.seek(0)
                msvcrt.locking(fh.fileno(), msvcrt.LK_NBLCK, 1)
            else:
                import fcntl

                fcntl.flock(fh.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            return False
        return True

    def release(self) -> None:
        if self._fh is not None:
            self._fh.close()  # closing the descriptor releases the OS lock
            self._fh = None


def _holder(fh: IO[str]) -> str:
    """The pid the holder wrote into the lock file ("unknown" while it has not yet)."""
    fh.seek(0)
    return fh.read().strip() or "unknown"
