"""Keep the tray app's engine host running: start it, start it again when it dies or hangs, give up clearly.

No Qt. The app's engine thread (qt/bridge.py) calls `open()` once, then `restart()` whenever the host's
process ended or a call timed out; it decides what happens to the jobs. Restarts back off
(RESTART_DELAYS) and are bounded: at most len(RESTART_DELAYS) attempts within WINDOW_S, counted over
incidents, so a host that dies again right after each start is given up on, with its last reason.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import deque
from collections.abc import Callable

from ..core.exits import how_it_ended
from .client import RemoteService
from .spawn import HostFailed, HostProcess

log = logging.getLogger(__name__)
RESTART_DELAYS = (0.0, 0.5, 1.0, 2.0, 4.0)  # seconds before each attempt of one incident
WINDOW_S = 600.0
STARTING, READY, RESTARTING, STOPPED = "starting", "ready", "restarting", "stopped"


class Supervisor:
    """Owns the restarts of one HostProcess; `state` is one of starting, ready, restarting, stopped."""

    def __init__(self, host: HostProcess, *, clock: Callable[[], float] = time.monotonic) -> None:
        self.host = host
        self.state = STARTING
        self._attempts: deque[float] = deque()
        self._quitting = threading.Event()
        self._clock = clock

    @property
    def alive(self) -> bool:
        """Whether the host's process is running (it may still be hung: calls time out for that)."""
        return self.host.alive

    def open(self) -> RemoteService:
        """The first start; its failure is the app's start-up error (shown, not retried)."""
        self.state = STARTING
        service = self.host.open()
        self.state = READY
        return service

    def restart(self, *, fresh: bool = False) -> RemoteService:
        """End what is left of the host (killed if hung) and start it again, backing off between attempts.

        Raises HostFailed with the last reason (state "stopped") when every attempt failed or the window's
        attempts are used up. `fresh` (the person's Retry) forgets earlier attempts.
        """
        if fresh:
            self._attempts.clear()
        self.state = RESTARTING
        self.host.kill()
        reason = ""
        for delay in RESTART_DELAYS:
            if not self._budget():
                reason = reason or f"it stopped {len(self._attempts)} times within {WINDOW_S / 60:.0f} minutes" + (
                    f"; the last time, {how_it_ended(self.host.last_exit)}" if self.host.last_exit else "")
                break
            if self._quitting.wait(delay):
                break
            self._attempts.append(self._clock())
            try:
                service = self.host.open()
            except HostFailed as exc:
                reason = str(exc)
                log.info("restarting the engine failed (attempt %d)", len(self._attempts))
                continue
            self.state = READY
            log.info("the engine restarted")
            return service
        if self._quitting.is_set():
            reason = "the app is quitting"
        self.state = STOPPED
        raise HostFailed(reason or "it did not start")

    def _budget(self) -> bool:
        now = self._clock()
        while self._attempts and now - self._attempts[0] > WINDOW_S:
            self._attempts.popleft()
        return len(self._attempts) < len(RESTART_DELAYS)

    def close(self) -> None:
        """The app quits: no more attempts; a host being started again is ended at once."""
        self._quitting.set()
        if self.state in (STARTING, RESTARTING):
            self.host.stop(timeout=5)
