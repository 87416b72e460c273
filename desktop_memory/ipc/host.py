"""The engine host: a child process of the tray app that owns the data folder and serves its engine.

`desktop-memory --data-dir DIR engine-host` (hidden from --help) opens the MemoryService (taking the
folder's lock), serves it on the folder's socket with IpcServer (every request on one engine thread),
starts background enrichment and writes one line to stdout: `ready <pid>`, or `error: <message>` and
exit code 1 when the folder cannot be opened. It stops (closing the service, removing the socket and
token) when its stdin reaches EOF (the parent holds the other end of that pipe, so the parent's exit,
even a crash, ends the host) or on SIGTERM / SIGINT. Captured text is never logged.
"""

from __future__ import annotations

import logging
import os
import signal
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import IO, TYPE_CHECKING

from ..core.errors import DesktopMemoryError, error_line
from ..engine.pipes import read_raw
from .lane import ENGINE_NICE, EngineLane, lower_priority
from .server import IpcServer

if TYPE_CHECKING:
    from ..service import MemoryService

__all__ = ["ENGINE_NICE", "EngineLane", "lower_priority", "main", "serve"]

log = logging.getLogger(__name__)
READY, ERROR = "ready", "error:"
SYNC_EVERY_S = float(os.environ.get("DESKTOP_MEMORY_SYNC_EVERY_S", "60"))  # the shared folder, while sync is set up


def _watch_stdin(fd: int, stop: threading.Event) -> None:
    """Set `stop` when the parent's end of the pipe closes (EOF): the parent quit or died.

    Reads the raw descriptor: a thread blocked in sys.stdin's buffered reader aborts the interpreter's exit.
    """
    try:
        while read_raw(fd):
            pass
    except (OSError, ValueError):
        log.debug("reading stdin failed", exc_info=True)
    stop.set()


def serve(data_dir: Path, *, enrich: bool = True, stdin_fd: int = 0, out: IO[str] | None = None,
          stop: threading.Event | None = None, service_idle_s: float | None = None, lock_wait_s: float = 2.0) -> int:
    """Run the host until stdin closes or `stop` is set; returns the exit code.

    As a service (`service_idle_s`, ipc/service_start.py) it has no parent: stdin is not watched, and it ends
    when no client has been connected for `service_idle_s`, or when a client asks it to (`shutdown`)."""
    out = out or sys.stdout
    stop = stop or threading.Event()
    if service_idle_s is None:
        threading.Thread(target=_watch_stdin, args=(stdin_fd, stop), name="parent-watch", daemon=True).start()
    from ..service import MemoryService  # here: the app's GUI imports this module for READY and ERROR

    lane = EngineLane()
    try:
        give_up = _another_answers(Path(data_dir)) if service_idle_s is not None else None
        service = lane.run(lambda: MemoryService(Path(data_dir), lock_wait_s=lock_wait_s, lock_give_up=give_up))
    except Exception as exc:  # noqa: BLE001 - barrier: the app shows this line
        log.debug("opening the engine failed", exc_info=True)
        lane.close()
        print(f"{ERROR} {error_line(exc)}", file=out, flush=True)
        return 1
    if stop.is_set():  # the parent went away while the folder was opening
        lane.run(service.close)
        lane.close()
        return 0
    server = IpcServer(service, Path(data_dir), run=lane.run,
                       on_shutdown=stop.set if service_idle_s is not None else None)
    try:
        server.start()
        if enrich:
            lane.run(service.start_enrichment)
    except Exception as exc:  # noqa: BLE001 - barrier: the app shows this line
        log.debug("serving the engine failed", exc_info=True)
        server.close()
        lane.run(service.close)
        lane.close()
        print(f"{ERROR} {error_line(exc)}", file=out, flush=True)
        return 1
    log.info("serving the engine on the local socket (pid %d)", os.getpid())
    print(f"{READY} {os.getpid()}", file=out, flush=True)
    if service.web.spool_folder.is_dir():  # the browser's host has been used: its spool is drained now
        lane.put(lambda: _open_spool(service))  # after READY: the keyring may take a moment
    next_sync = time.monotonic() + 5.0  # soon after the start: what the other machines did meanwhile
    syncing, more = threading.Event(), threading.Event()  # a step queued; the last step left more to store
    try:
        while not stop.wait(0.25):  # short waits: the main thread runs the signal handlers in between
            if service_idle_s is not None and server.idle_for() >= service_idle_s:
                log.info("engine service idle for %.0f s: stopping", service_idle_s)
                break
            if (time.monotonic() >= next_sync or more.is_set()) and not syncing.is_set():
                next_sync = time.monotonic() + SYNC_EVERY_S
                more.clear()
                syncing.set()
                lane.put(lambda: _sync(service, syncing, more))  # behind others' requests: they go first
    finally:
        log.info("engine host stopping")
        server.close()
        lane.run(service.close)
        lane.close()
        log.info("engine host stopped")
    return 0


def _open_spool(service: MemoryService) -> None:
    """The browser host's spool (service/web.py): its key made, what it kept while no engine ran stored now.
    A keyring that cannot be used is one line in the log: the host then refuses captures it cannot seal."""
    try:
        service.web.open_spool()
    except Exception as exc:  # noqa: BLE001 - barrier: the engine serves without the spool
        log.warning("the browser capture spool cannot be used: %s", error_line(exc))
        log.debug("opening the spool failed", exc_info=True)


def _sync(service: MemoryService, running: threading.Event, more: threading.Event) -> None:
    """One step of the exchange with the sync folder when sync is set up (service/sync.py; `more` when it stopped
    with more to store: the next step follows at once, after what others asked meanwhile); a problem is the
    status's line (the tray and `sync status` show it) and one line in the log, never a stop of the engine."""
    try:
        if service.sync.configured:
            status = service.sync.sync_now()
            if status.catching_up:
                more.set()
            if status.problem:
                log.info("sync: %s", status.problem)
    except Exception as exc:  # noqa: BLE001 - barrier: the engine goes on serving without this round
        log.warning("sync failed: %s", error_line(exc))
        log.debug("sync failed", exc_info=True)
    finally:
        running.clear()


def _another_answers(folder: Path) -> Callable[[], bool]:
    """For a service waiting for the folder's lock: True once another host serves the folder (two front ends
    started one each at the same moment: this one ends and its front end uses the other). Asked twice a second."""
    from .client import connect

    last = [0.0]

    def answers() -> bool:
        if time.monotonic() - last[0] < 0.5:
            return False
        last[0] = time.monotonic()
        try:
            other = connect(folder, handshake_s=1.0)
        except DesktopMemoryError:
            return False
        if other is None:
            return False
        other.close()
        return True

    return answers


def main(data_dir: Path, *, enrich: bool = True, service_idle_s: float | None = None, lock_wait_s: float = 2.0) -> int:
    """The `engine-host` command: the protocol line on stdout, then stdout is pointed at stderr."""
    logging.getLogger(__name__).setLevel(logging.INFO)
    stop = threading.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: stop.set())
    out = os.fdopen(os.dup(sys.stdout.fileno()), "w", encoding="utf-8")
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())  # a library's print never mixes with the protocol
    with out:
        return serve(data_dir, enrich=enrich, out=out, stop=stop, service_idle_s=service_idle_s,
                     lock_wait_s=lock_wait_s)
