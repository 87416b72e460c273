"""One writer per data folder: an OS file lock held for the life of the engine."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path
from typing import IO

from ..core.errors import DataDirLocked


class DataDirLock:
    """Exclusive, process-wide lock on `<data dir>/.lock`; released on close or process death."""

    def __init__(self, folder: Path, wait_s: float = 2.0) -> None:
        self.path = folder / ".lock"
        self._fh: IO[str] | None = None
        deadline = time.monotonic() + wait_s
        fh = open(self.path, "a+", encoding="utf-8")  # noqa: SIM115 - held open as the lock
        while True:
            if self._try_lock(fh):
                break
            if time.monotonic() >= deadline:
                fh.seek(0)
                holder = fh.read().strip() or "unknown"
                fh.close()
                raise DataDirLocked(
                    f"the data folder {folder} is in use by another desktop-memory process (pid {holder}); "
                    "close it or use a different --data-dir"
                )
            time.sleep(0.05)
        fh.seek(0)
        fh.truncate()
        fh.write(str(os.getpid()))
        fh.flush()
        self._fh = fh

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
