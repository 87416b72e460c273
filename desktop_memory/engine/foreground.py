"""The person's requests come first: background work runs in the quiet gaps between them.

On two cores, lowering the enrichment thread's OS priority is not enough: llama.cpp and the engine
share caches, memory bandwidth and the GIL. So the service marks each request it serves
(`with foreground.busy(): ...`), and the enrichment thread waits for a quiet moment before each job and
between generated tokens (`foreground.wait_quiet()`), releasing the GIL while it waits.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

QUIET_S = 0.5  # background work resumes this long after the last request ended
_CHECK_S = 0.25  # how often a waiting thread looks at its stop flag


class Foreground:
    def __init__(self, quiet_s: float = QUIET_S) -> None:
        self.quiet_s = quiet_s
        self._cond = threading.Condition()
        self._active = 0
        self._last_end = float("-inf")
        self.waited_s = 0.0  # total time background work spent waiting (for status and benchmarks)

    @contextmanager
    def busy(self) -> Iterator[None]:
        """Mark a request being served (nesting is fine)."""
        with self._cond:
            self._active += 1
        try:
            yield
        finally:
            with self._cond:
                self._active -= 1
                self._last_end = time.monotonic()
                self._cond.notify_all()

    @property
    def active(self) -> bool:
        return self._active > 0

    def wait_quiet(self, stopping: Callable[[], bool] = lambda: False) -> float:
        """Block until no request runs and none ended within `quiet_s` (or `stopping()`); the seconds waited."""
        started = time.monotonic()
        with self._cond:
            while not stopping():
                left = self._last_end + self.quiet_s - time.monotonic() if self._active == 0 else _CHECK_S
                if left <= 0:
                    break
                self._cond.wait(min(left, _CHECK_S))
        waited = time.monotonic() - started
        self.waited_s += waited
        return waited
