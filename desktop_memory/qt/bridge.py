"""The engine lane: one thread owns the engine; results come back to the GUI through a signal.

The engine is a RemoteService connected to the engine host child process (the app), or a MemoryService
in this process (tests, benchmarks). Every engine call (search, add, context, pin, forget, import,
settings...) is a job run on that one thread, so the socket (or the APSW connection, Chroma and the
models) is only ever used from it. The GUI thread submits and never waits; a callback runs on the GUI
thread when the job is done. The job wrapper is an error barrier: a domain error becomes its message,
anything else a one-line "unexpected error".
"""

from __future__ import annotations

import itertools
import logging
import queue
import threading
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import Any

from PySide6.QtCore import QObject, Qt, QThread, Signal, Slot

from ..core.errors import DesktopMemoryError
from ..ipc.client import RemoteService
from ..ipc.host import lower_priority
from ..service import MemoryService

log = logging.getLogger(__name__)

Done = Callable[[Any], None]
Failed = Callable[[str], None]


def error_message(exc: BaseException) -> str:
    """What the person reads: a domain error's own message, else one line naming the bug."""
    if isinstance(exc, DesktopMemoryError):
        return str(exc)
    return f"unexpected error: {type(exc).__name__}: {str(exc)[:200]}"


@dataclass
class Job:
    """One call to make on the engine thread."""

    id: int
    fn: Callable[[MemoryService], Any]
    done: Done | None = None
    failed: Failed | None = None
    lane: str = ""  # jobs sharing a lane are coalesced: only the newest one still waiting runs
    long: bool = False  # counts towards the "working" state
    future: Future[Any] | None = field(default=None, repr=False)


class EngineBridge(QObject):
    """Runs engine jobs on one thread and hands their results to the GUI thread."""

    opened = Signal()  # the service is open: jobs can run
    open_failed = Signal(str)  # the data folder could not be opened (message for the person)
    job_failed = Signal(str)  # a job without its own error handler failed
    busy_changed = Signal(bool)  # long jobs are running (or waiting)
    _finished = Signal(object, object, object)  # job, ok, value: emitted on the engine thread

    def __init__(self, opener: Callable[[], MemoryService | RemoteService], parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._opener = opener
        self._jobs: queue.SimpleQueue[Job | None] = queue.SimpleQueue()
        self._ids = itertools.count(1)
        self._newest: dict[str, int] = {}
        self._long = 0
        self._lock = threading.Lock()
        self.service: MemoryService | RemoteService | None = None
        self._thread = threading.Thread(target=self._loop, name="engine", daemon=True)
        self._finished.connect(self._deliver, Qt.ConnectionType.QueuedConnection)

    # -- GUI side ---------------------------------------------------------------------------
    def start(self) -> None:
        self._thread.start()

    def submit(self, fn: Callable[[MemoryService], Any], done: Done | None = None, failed: Failed | None = None,
               *, lane: str = "", long: bool = False) -> int:
        """Queue `fn(service)` on the engine thread; `done(result)` or `failed(message)` run on the GUI thread."""
        job = Job(next(self._ids), fn, done, failed, lane, long)
        with self._lock:
            if lane:
                self._newest[lane] = job.id
            if long:
                self._long += 1
                if self._long == 1:
                    self.busy_changed.emit(True)
        self._jobs.put(job)
        return job.id

    def call(self, fn: Callable[[MemoryService], Any], timeout: float | None = None) -> Any:
        """Run `fn(service)` on the engine thread and wait for it: for other threads, never the GUI thread."""
        if QThread.currentThread() is self.thread():
            raise RuntimeError("EngineBridge.call would block the GUI thread; use submit()")
        if threading.current_thread() is self._thread:
            return fn(self._service())
        future: Future[Any] = Future()
        self._jobs.put(Job(next(self._ids), fn, future=future))
        return future.result(timeout)

    def stop(self, timeout: float = 30.0) -> None:
        """Finish the queued jobs, close the service and end the thread."""
        if self._thread.is_alive():
            self._jobs.put(None)
            self._thread.join(timeout)

    @property
    def busy(self) -> bool:
        return self._long > 0

    @property
    def is_open(self) -> bool:
        return self.service is not None

    @Slot(object, object, object)
    def _deliver(self, job: Job, ok: bool, value: Any) -> None:
        """The Qt dispatcher barrier: callbacks run here, on the GUI thread."""
        if job.long:
            with self._lock:
                self._long -= 1
                idle = self._long == 0
            if idle:
                self.busy_changed.emit(False)
        if job.lane and self._newest.get(job.lane) != job.id:
            return  # a newer job of the same lane was submitted: this result is stale
        try:
            if ok and job.done:
                job.done(value)
            elif not ok:
                (job.failed or self.job_failed.emit)(value)
        except Exception as exc:  # noqa: BLE001 - barrier: a failing callback becomes a notice
            log.debug("callback failed", exc_info=True)
            self.job_failed.emit(error_message(exc))

    # -- engine thread ----------------------------------------------------------------------
    def _service(self) -> Any:
        if self.service is None:
            raise RuntimeError("the engine is not open")
        return self.service

    def _loop(self) -> None:
        lower_priority()
        try:
            self.service = self._opener()
        except Exception as exc:  # noqa: BLE001 - barrier: the GUI shows why the engine did not open
            log.debug("opening the engine failed", exc_info=True)
            self.open_failed.emit(error_message(exc))
            self._drain_unopened(error_message(exc))
            return
        self.opened.emit()
        try:
            while (job := self._jobs.get()) is not None:
                self._run(job)
        finally:
            self.service.close()

    def _drain_unopened(self, message: str) -> None:
        while (job := self._jobs.get()) is not None:
            if job.future is not None:
                job.future.set_exception(RuntimeError(message))
            else:
                self._finished.emit(job, False, message)

    def _run(self, job: Job) -> None:
        if job.lane and self._newest.get(job.lane) != job.id:
            self._finished.emit(job, False, "superseded")  # skipped: a newer one is queued
            return
        try:
            value = job.fn(self._service())
        except Exception as exc:  # noqa: BLE001 - the worker barrier
            log.info("engine job failed: %s", type(exc).__name__)  # the kind only: a message may quote content
            log.debug("engine job failed", exc_info=True)
            if job.future is not None:
                job.future.set_exception(exc)
            else:
                self._finished.emit(job, False, error_message(exc))
            return
        if job.future is not None:
            job.future.set_result(value)
        else:
            self._finished.emit(job, True, value)
