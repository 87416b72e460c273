"""The engine as a per-user service per data folder, started by whichever front end needs it first.

`open_service(folder)` returns a connection to the folder's engine host: the running one when it answers
and is of this version; else it starts one (`engine-host --service`: detached, no parent, serving every
front end, ending after SERVICE_IDLE_S without a request or a connection) and connects. The tray app
starts its own host as a child (ipc/spawn.py) after asking a running service to hand the folder over.

The real cases:
- two front ends starting it at the same moment: both start a host, one takes the folder's lock and serves,
  the other's host says the folder is in use and ends; its front end connects to the winner;
- a stale socket or token (a host killed with -9): `connect` treats it as no host; the new host replaces it;
- a service of another version (after an upgrade): asked to stop, then replaced;
- a short command (or a restore) holding the folder itself: the start is tried again until it lets go
  (bounded by `patience_s`).
"""

from __future__ import annotations

import contextlib
import logging
import os
import subprocess
import threading
import time
from pathlib import Path
from typing import Any

from .. import __version__
from ..core.errors import InvalidInput, StorageError
from ..engine.lock import DataDirLock
from .client import RemoteService, connect
from .spawn import HostFailed, child_env, command

log = logging.getLogger(__name__)
SERVICE_IDLE_S = 300.0  # a service with no connection and no request for this long ends (the app's host never)
ENV_IDLE = "DESKTOP_MEMORY_SERVICE_IDLE_S"  # tests and people who want it shorter or longer
ENV_SERVICE = "DESKTOP_MEMORY_SERVICE"  # "off": no service started (service_wanted)
RETRY_S = 0.2
PATIENCE_S = 30.0  # as a CLI command waits for a holder (cli/commands.py: LOCK_WAIT_S)
IN_USE = "in use by another desktop-memory process"


def service_wanted() -> bool:
    """False when the person set DESKTOP_MEMORY_SERVICE=off: each CLI command then opens the folder itself
    (unless an engine already runs) and leaves no process behind, for scripts and containers that want that."""
    return os.environ.get(ENV_SERVICE, "").strip().lower() not in ("off", "0", "no", "false")


def idle_seconds() -> float:
    try:
        return max(1.0, float(os.environ.get(ENV_IDLE, SERVICE_IDLE_S)))
    except ValueError:
        return SERVICE_IDLE_S


def open_service(folder: Path, *, patience_s: float = PATIENCE_S) -> RemoteService:
    """A connection to the folder's engine service, started when none runs (see the module docstring).
    `patience_s` bounds the wait for a folder another process holds (a CLI command working on it alone, a
    restore); past it, that process is named in the one-line HostFailed."""
    folder = Path(folder)
    deadline = time.monotonic() + patience_s
    reason = ""
    while True:
        service = connect(folder)
        if service is not None:
            if _same_version(service):  # a call cut off by the service's end is sent again to its successor
                return service.reopening(lambda: open_service(folder, patience_s=patience_s))
            if not stop_service(folder, service):  # the app's host (of another version): used as it is
                again = connect(folder)
                if again is not None:
                    return again.reopening(lambda: open_service(folder, patience_s=patience_s))
            continue
        try:
            _start(folder, timeout=max(1.0, deadline - time.monotonic()))
        except HostFailed as exc:
            reason = str(exc)
            if IN_USE not in reason:  # a real reason (a locked keyring, a damaged folder): said at once
                raise
            log.debug("the data folder is held by another process; trying again")
        if time.monotonic() > deadline:
            raise HostFailed(reason or f"the desktop-memory engine did not start within {patience_s:.0f} s")
        if reason:
            time.sleep(RETRY_S)


def _same_version(service: RemoteService) -> bool:
    try:
        info = service.ping()
    except StorageError:
        service.close()
        return True  # gone meanwhile: the next call reconnects or starts one
    return str(info.get("version", __version__)) == __version__


def stop_service(folder: Path, service: RemoteService | None = None, timeout: float = 60.0) -> bool:
    """Ask the folder's service to end, and wait until it no longer answers; True if one ran. The app's own host,
    or a service the app adopted, is left alone (the app decides when its engine ends): False."""
    service = service or connect(folder)
    if service is None:
        return False
    with service:
        try:
            info = service.ping()
            if not info.get("service") or info.get("held"):
                return False
            service.shutdown()
        except InvalidInput:  # the app adopted it meanwhile
            return False
        except StorageError:  # gone meanwhile
            pass
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:  # it stops listening first, then closes the folder
        still = connect(folder, handshake_s=2.0)
        if still is None:
            _wait_until_let_go(folder, deadline)
            return True
        still.close()
        time.sleep(0.05)
    raise HostFailed("the running desktop-memory engine did not stop in time")


def _wait_until_let_go(folder: Path, deadline: float) -> None:
    """Until the stopped service has closed the folder (its lock free): the caller then opens it at once. Still
    held at the deadline (or by another process meanwhile): the caller's own wait for the lock says so."""
    with contextlib.suppress(StorageError):
        DataDirLock(folder, wait_s=max(0.5, deadline - time.monotonic())).release()


def _start(folder: Path, timeout: float) -> None:
    """Start a detached service and wait for its protocol line (the host's own one-line error, or ready)."""
    debug = logging.getLogger("desktop_memory").getEffectiveLevel() <= logging.DEBUG
    if os.name == "posix":
        flags: dict[str, Any] = {"start_new_session": True}
    else:  # no console window, not ended with the front end's console
        flags = {"creationflags": getattr(subprocess, "DETACHED_PROCESS", 0)
                 | getattr(subprocess, "CREATE_NEW_PROCESS_GROUP", 0) | getattr(subprocess, "CREATE_NO_WINDOW", 0)}
    try:
        wait = max(0.5, timeout - 1.0)  # a folder another process holds: waited for within the caller's patience
        proc = subprocess.Popen([*command(folder, debug=debug, lock_wait_s=wait), "--service", "--idle-exit",
                                 f"{idle_seconds():g}"],
                                env=child_env(), stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                stderr=subprocess.DEVNULL if not debug else None, close_fds=True, **flags)
    except OSError as exc:
        raise HostFailed(f"cannot start the desktop-memory engine: {exc.strerror or exc}") from exc
    assert proc.stdout is not None
    out, box = proc.stdout, []
    reader = threading.Thread(target=lambda: box.append(out.readline().decode("utf-8", "replace").strip()),
                              daemon=True)
    reader.start()
    reader.join(timeout + 30.0)  # the lock's wait, then opening the folder (a migration, a first encryption)
    if not box:
        raise HostFailed(f"the desktop-memory engine did not start within {timeout:.0f} s")
    with contextlib.suppress(OSError):
        proc.stdout.close()
    line = box[0]
    if line.startswith("ready"):
        threading.Thread(target=proc.wait, daemon=True).start()  # reaped when it ends (never a zombie)
        return
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.wait(10)
    message = line.split(":", 1)[1].strip() if line.startswith("error:") else ""
    raise HostFailed(message or f"the desktop-memory engine stopped while starting (exit code {proc.poll()})")
