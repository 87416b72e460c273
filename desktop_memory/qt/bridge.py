"""The engine lane: one thread owns the engine; results come back to the GUI through a signal.

The engine is a RemoteService connected to the engine host child process (the app), or a MemoryService
in this process (tests, benchmarks). Every engine call (search, add, context, pin, forget, import,
settings...) is a job run on that one thread, so the socket (or the APSW connection, Chroma and the
models) is only ever used from it. The GUI thread submits and never waits; a callback runs on the GUI
thread when the job is done. The job wrapper is an error barrier: a domain error becomes its message,
anything else a one-line "unexpected error".

With a Supervisor (the app's host process), a host that dies or stops answering is restarted on this
thread while new jobs wait in the queue, in order; the job that was running is run again when it is
safe to (`retry`, the default except for long jobs: reads, captures, pins...; an import chunk has
consumed its input and is not), else it fails with a message. When restarts
fail the engine is "stopped": captures (`hold`) keep waiting (up to HOLD_MAX) for the person's Retry,
other jobs fail at once. Every message about such an incident starts with ENGINE, so that the app can
show one notice for the incident instead of one per job.
"""

from __future__ import annotations

import contextlib
import functools
import itertools
import logging
import threading
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import Any

from PySide6.QtCore import QObject, Qt, QThread, Signal, Slot

from ..core.errors import StorageError, error_line
from ..ipc.client import HostGone, HostTimeout
from ..ipc.lane import EngineLane
from ..ipc.spawn import HostFailed
from ..ipc.supervisor import Supervisor
from ..service.protocol import MemoryOperations

log = logging.getLogger(__name__)

Done = Callable[[Any], None]
Failed = Callable[[str], None]
MAX_WAITING = 2000  # jobs waiting at most (a stuck engine never grows the queue without bound)
HOLD_MAX = 500  # captures kept while the engine is stopped, for the Retry
ENGINE = "The memory engine"
RESTARTED = f"{ENGINE} restarted; nothing was lost."
RESTARTED_INTERRUPTED = f"{ENGINE} restarted; what it was doing when it stopped did not finish (try that again)."
COULD_NOT_START = ENGINE + " could not start: {reason}. Click here or use Retry in the tray menu."
IS_STOPPED = ENGINE + " is stopped ({reason}). Use Retry in the tray menu."
HUNG = f"{ENGINE} did not answer in time, so it was restarted. Try again."
INTERRUPTED = f"{ENGINE} stopped while doing this and was restarted. Try again."
BUSY = f"{ENGINE} has too much waiting; try again in a moment."


def error_message(exc: BaseException) -> str:
    """What the person reads: a domain error's own message, else one line naming the bug (core/errors.py)."""
    return error_line(exc)


@dataclass
class Job:
    """One call to make on the engine thread."""

    id: int
    fn: Callable[[MemoryOperations], Any]
    done: Done | None = None
    failed: Failed | None = None
    lane: str = ""  # jobs sharing a lane are coalesced: only the newest one still waiting runs
    long: bool = False  # counts towards the "working" state
    future: Future[Any] | None = field(default=None, repr=False)
    retry: bool = True  # safe to run again when the host died under it (reads, idempotent writes, adds)
    hold: bool = False  # waits for the person's Retry while the engine is stopped (captures)
    tries: int = 0


class EngineBridge(QObject):
    """Runs engine jobs on one thread and hands their results to the GUI thread."""

    opened = Signal()  # the service is open: jobs can run
    open_failed = Signal(str)  # the data folder could not be opened (message for the person)
    job_failed = Signal(str)  # a job without its own error handler failed
    busy_changed = Signal(bool)  # long jobs are running (or waiting)
    engine_state = Signal(str, str)  # restarting / ready / stopped after an incident, and a notice ("" for none)
    _finished = Signal(object, object, object)  # job, ok, value: emitted on the engine thread

    def __init__(self, opener: Callable[[], MemoryOperations], parent: QObject | None = None, *,
                 supervisor: Supervisor | None = None) -> None:
        super().__init__(parent)
        self._opener = opener
        self._supervisor = supervisor
        self._interrupted = 0  # jobs of the current incident that did not run to the end
        self._lane = EngineLane("engine", start=False)  # the one thread that uses the engine (ipc/lane.py)
        self._ids = itertools.count(1)
        self._newest: dict[str, int] = {}
        self._long = 0
        self._lock = threading.Lock()
        self._open_error: str | None = None  # the engine did not open: every job fails with this
        self._stopped_reason: str | None = None  # restarts failed: captures wait for Retry, the rest fail
        self._held: list[Job] = []
        self.service: MemoryOperations | None = None
        self._finished.connect(self._deliver, Qt.ConnectionType.QueuedConnection)

    # -- GUI side ---------------------------------------------------------------------------
    def start(self) -> None:
        self._lane.put(self._open)
        self._lane.start()

    def submit(self, fn: Callable[[MemoryOperations], Any], done: Done | None = None, failed: Failed | None = None,
               *, lane: str = "", long: bool = False, retry: bool | None = None, hold: bool = False) -> int:
        """Queue `fn(service)` on the engine thread; `done(result)` or `failed(message)` run on the GUI thread.

        `retry`: run again if the host dies under it; by default yes, except for long jobs (an import chunk
        has consumed its input: run again it would skip that chunk). `hold=True`: kept while the engine
        is stopped, until it runs again (captures).
        """
        job = Job(next(self._ids), fn, done, failed, lane, long, retry=not long if retry is None else retry,
                  hold=hold)
        with self._lock:
            if lane:
                self._newest[lane] = job.id
            if long:
                self._long += 1
                if self._long == 1:
                    self.busy_changed.emit(True)
        if len(self._lane) >= MAX_WAITING:
            log.info("engine queue full: a job was refused")
            self._finished.emit(job, False, BUSY)
        else:
            self._lane.put(lambda: self._run(job))
        return job.id

    def host_exited(self, _code: int = 0) -> None:
        """The host process ended by itself (any thread): restart it before the next job."""
        self._lane.put(self._restart_if_dead, front=True)

    def retry(self) -> None:
        """The person asks to start the stopped engine again."""
        self._lane.put(self._retry)

    def call(self, fn: Callable[[MemoryOperations], Any], timeout: float | None = None) -> Any:
        """Run `fn(service)` on the engine thread and wait for it: for other threads, never the GUI thread."""
        if QThread.currentThread() is self.thread():
            raise RuntimeError("EngineBridge.call would block the GUI thread; use submit()")
        if self._lane.on_lane():
            return fn(self._service())
        future: Future[Any] = Future()
        job = Job(next(self._ids), fn, future=future)
        self._lane.put(lambda: self._run(job))
        return future.result(timeout)

    def stop(self, timeout: float = 30.0) -> None:
        """Finish the queued jobs, close the service and end the thread (no restarts from now on)."""
        if self._supervisor is not None:
            self._supervisor.close()
        if self._lane.thread.is_alive():
            self._lane.put(self._close_service)
        self._lane.close(timeout)

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

    def _open(self) -> None:
        try:
            self.service = self._opener()
        except Exception as exc:  # noqa: BLE001 - barrier: the GUI shows why the engine did not open
            log.debug("opening the engine failed", exc_info=True)
            self._open_error = error_message(exc)
            self.open_failed.emit(self._open_error)
            return
        self.opened.emit()

    def _close_service(self) -> None:
        if self._held:
            log.info("%d captures waiting for the engine were not stored (the app quit)", len(self._held))
        if self.service is not None:
            self.service.close()

    def _fail(self, job: Job, message: str) -> None:
        if job.future is not None:
            job.future.set_exception(StorageError(message))
        else:
            self._finished.emit(job, False, message)

    def _run(self, job: Job) -> None:
        if self._open_error is not None:
            self._fail(job, self._open_error)
            return
        if self._stopped_reason is not None:
            self._while_stopped(job)
            return
        if job.lane and self._newest.get(job.lane) != job.id:
            self._finished.emit(job, False, "superseded")  # skipped: a newer one is queued
            return
        try:
            value = job.fn(self._service())
        except HostGone as exc:
            if self._supervisor is None:
                self._failed(job, exc)
            else:
                self._host_lost(job, exc)
            return
        except Exception as exc:  # noqa: BLE001 - the worker barrier
            self._failed(job, exc)
            return
        if job.future is not None:
            job.future.set_result(value)
        else:
            self._finished.emit(job, True, value)

    def _failed(self, job: Job, exc: Exception) -> None:
        log.info("engine job failed: %s", type(exc).__name__)  # the kind only: a message may quote content
        log.debug("engine job failed", exc_info=True)
        if job.future is not None:
            job.future.set_exception(exc)
        else:
            self._finished.emit(job, False, error_message(exc))

    # -- supervised: the host died or hung ----------------------------------------------------
    def _host_lost(self, job: Job, exc: HostGone) -> None:
        """Run the job again after the restart when that is safe; else it fails with a message."""
        hung = isinstance(exc, HostTimeout)
        log.info("the engine host %s during a job", "did not answer" if hung else "went away")
        if job.retry and not hung and job.tries == 0:
            job.tries += 1
            self._lane.put(lambda: self._run(job), front=True)
        else:
            self._interrupted += 1
            self._fail(job, HUNG if hung else INTERRUPTED)
        self._recover()

    def _restart_if_dead(self) -> None:
        if self._supervisor is not None and not self._supervisor.alive and self._stopped_reason is None:
            self._recover()

    def _recover(self) -> None:
        """Restart the host (jobs wait meanwhile); if it cannot start, the engine is stopped."""
        assert self._supervisor is not None
        if self.service is not None:
            with contextlib.suppress(Exception):
                self.service.close()
            self.service = None
        self.engine_state.emit("restarting", "")
        try:
            self.service = self._supervisor.restart()
        except HostFailed as exc:
            self._stopped_reason = str(exc).rstrip(".")
            self.engine_state.emit("stopped", COULD_NOT_START.format(reason=self._stopped_reason))
            return
        self._restarted()

    def _restarted(self) -> None:
        self.engine_state.emit("ready", RESTARTED if self._interrupted == 0 else RESTARTED_INTERRUPTED)
        self._interrupted = 0

    def _while_stopped(self, job: Job) -> None:
        """No engine: captures wait for a successful Retry, other jobs fail at once."""
        if job.hold and len(self._held) < HOLD_MAX:
            self._held.append(job)
        else:
            self._interrupted += job.hold  # a capture that could not be kept
            self._fail(job, IS_STOPPED.format(reason=self._stopped_reason))

    def _retry(self) -> None:
        """The person's Retry: start the engine again; the held captures then run first, in their order."""
        if self._stopped_reason is None or self._supervisor is None:
            return  # a Retry only means something while stopped
        self.engine_state.emit("restarting", "")
        try:
            self.service = self._supervisor.restart(fresh=True)
        except HostFailed as exc:
            self._stopped_reason = str(exc).rstrip(".")
            self.engine_state.emit("stopped", COULD_NOT_START.format(reason=self._stopped_reason))
            return
        self._stopped_reason = None
        held, self._held = self._held, []
        for job in reversed(held):
            self._lane.put(functools.partial(self._run, job), front=True)
        self._restarted()
