"""Changes front ends wait for instead of polling: the enrichment queue's counts, and the local model's problem.

The enrichment thread publishes the queue's counts when they may have changed (after a job, after
`Enricher.wake()` from the ingest path); a front end asks `wait(since, wait_s)` and gets the next state as
soon as there is one (a long poll). The wait holds only the caller's thread (on the engine socket: the
connection's own thread, never the engine lane) and costs nothing while nothing changes.
"""

from __future__ import annotations

import threading
from typing import Any

MAX_WAIT_S = 60.0


class QueueEvents:
    """A versioned value threads can wait on; `version` grows by one at each change."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._version = 0
        self._counts: dict[str, Any] = {"queued": 0, "failed": 0, "model_problem": ""}

    def publish(self, counts: dict[str, Any]) -> None:
        """New counts and the model's problem ("" when none: enrichment.Enricher.model_error), from any thread;
        waiters wake only when they differ from the last ones."""
        fresh = {"queued": int(counts.get("queued", 0)), "failed": int(counts.get("failed", 0)),
                 "model_problem": str(counts.get("model_problem", ""))}
        with self._cond:
            if fresh == self._counts:
                return
            self._counts = fresh
            self._version += 1
            self._cond.notify_all()

    def wait(self, since: int = -1, wait_s: float = 25.0) -> dict[str, Any]:
        """The state once its version differs from `since` (at once for -1), or after `wait_s` as it is."""
        timeout = max(0.0, min(float(wait_s), MAX_WAIT_S))
        with self._cond:
            self._cond.wait_for(lambda: self._version != since, timeout)
            return {"version": self._version, **self._counts}
