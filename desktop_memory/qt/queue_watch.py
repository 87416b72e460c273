"""The enrichment queue's length, pushed to the tray instead of polled.

One thread of the app keeps its own connection to the engine and waits on `enrichment_changes` (a long
poll the host answers on the connection's own thread, never its engine lane: service/events.py). Each
answer is a change (or the state after at most WAIT_S when nothing changed); the count reaches the GUI
thread through a queued signal. The engine lane is never used, so a busy engine does not delay it and
the watch never delays the person's searches. A host that goes away (restarting, quitting) is dialled
again after a pause.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QObject, Signal

from ..core.errors import DesktopMemoryError

log = logging.getLogger(__name__)
WAIT_S = 25.0  # the longest a call waits for a change (the host answers sooner when there is one)
REDIAL_S = 1.0  # a pause before dialling again after the host went away or was not there


class QueueWatch(QObject):
    """Emits `queued(int)` when the number of memories waiting for enrichment changes, and `model_problem(str)`
    when the local model's problem does ("" once it runs again)."""

    queued = Signal(int)
    model_problem = Signal(str)

    def __init__(self, connect: Callable[[], Any | None], parent: QObject | None = None) -> None:
        """`connect()` gives a fresh connection to the engine (None: no engine answers yet)."""
        super().__init__(parent)
        self._connect = connect
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.calls = 0  # long polls made (tests count them)

    def start(self) -> None:
        if self._thread is None:
            self._stop = threading.Event()  # each thread its own: one stopped earlier may still be ending
            self._thread = threading.Thread(target=self._run, args=(self._stop,), name="queue-watch", daemon=True)
            self._thread.start()

    def stop(self) -> None:
        """Stop watching; never waits. A call in progress ends with its answer (at most WAIT_S) or when the
        host goes (the app stops it right after), and the thread then ends without emitting."""
        self._stop.set()
        self._thread = None

    def _run(self, stop: threading.Event) -> None:
        while not stop.is_set():
            try:
                conn = self._connect()
            except (DesktopMemoryError, OSError, EOFError):
                log.debug("queue watch: cannot reach the engine", exc_info=True)
                conn = None
            if conn is None:
                stop.wait(REDIAL_S)
                continue
            try:
                self._follow(conn, stop)
            except (DesktopMemoryError, OSError, EOFError, ValueError):  # the host went away or restarts
                log.debug("queue watch: the connection ended", exc_info=True)
            finally:
                conn.close()
            stop.wait(REDIAL_S)

    def _follow(self, conn: Any, stop: threading.Event) -> None:
        since, last, problem = -1, None, None  # -1: the current state at once (a new host counts from 0 again)
        while not stop.is_set():
            self.calls += 1
            state = conn.enrichment_changes(since=since, wait_s=WAIT_S)
            since = state.version
            if state.queued != last and not stop.is_set():
                last = state.queued
                self.queued.emit(last)
            if state.model_problem != problem and not stop.is_set():
                problem = state.model_problem
                self.model_problem.emit(problem)
