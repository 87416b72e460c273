"""Start and stop the engine host child process (the tray app's side of ipc/host.py).

The app holds the child's stdin pipe: closing it (or the app dying) ends the host. The child's first
stdout line says whether it serves (`ready <pid>`) or why it could not open the folder (`error: ...`).
"""

from __future__ import annotations

import contextlib
import logging
import os
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

from ..core.errors import StorageError
from .client import RemoteService, connect
from .host import ERROR, READY

log = logging.getLogger(__name__)
START_TIMEOUT_S = 120.0  # a first start may encrypt or migrate the database
STOP_TIMEOUT_S = 40.0  # the host finishes the enrichment job in hand (bounded at 30 s) and closes


class HostFailed(StorageError):
    """The engine host could not start (its own one-line reason) or stopped."""


def command(data_dir: Path, *, enrich: bool = True, debug: bool = False) -> list[str]:
    """The command line that starts a host for `data_dir`, from source or from the frozen app."""
    prefix = [sys.executable] if getattr(sys, "frozen", False) else [sys.executable, "-m", "desktop_memory"]
    return [*prefix, "--data-dir", str(data_dir), *(["--debug"] if debug else []), "engine-host",
            *([] if enrich else ["--no-enrichment"])]


def _child_env() -> dict[str, str]:
    """From source, the child imports the same desktop_memory as this process."""
    env = dict(os.environ)
    if not getattr(sys, "frozen", False):
        root = str(Path(__file__).resolve().parents[2])
        env["PYTHONPATH"] = os.pathsep.join(p for p in (root, env.get("PYTHONPATH", "")) if p)
    return env


class HostProcess:
    """One engine host child: `open()` starts it and connects; `stop()` ends it (bounded)."""

    def __init__(self, data_dir: Path, *, enrich: bool = True,
                 on_exit: Callable[[int], None] | None = None) -> None:
        self.data_dir = Path(data_dir)
        self.enrich = enrich
        self.on_exit = on_exit  # called (on a helper thread) when the host ends without being asked to
        self.proc: subprocess.Popen[bytes] | None = None
        self._stopping = threading.Event()

    @property
    def pid(self) -> int | None:
        return self.proc.pid if self.proc else None

    def open(self, timeout: float = START_TIMEOUT_S) -> RemoteService:
        """Start the host, wait (bounded) until it serves, and return a connection to it."""
        debug = logging.getLogger("desktop_memory").getEffectiveLevel() <= logging.DEBUG
        flags = {"start_new_session": True} if os.name == "posix" else {
            "creationflags": getattr(subprocess, "CREATE_NEW_PROCESS_GROUP", 0)}
        try:
            self.proc = subprocess.Popen(command(self.data_dir, enrich=self.enrich, debug=debug), env=_child_env(),
                                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, **flags)
        except OSError as exc:
            raise HostFailed(f"cannot start the engine: {exc.strerror or exc}") from exc
        line = self._first_line(timeout)
        if line is None:
            self.stop(timeout=2)
            raise HostFailed(f"the engine did not start within {timeout:.0f} s")
        if not line.startswith(READY):
            self.stop()
            message = line[len(ERROR):].strip() if line.startswith(ERROR) else ""
            raise HostFailed(message or f"the engine stopped while starting (exit code {self.proc.returncode})")
        threading.Thread(target=self._watch, name="engine-host-watch", daemon=True).start()
        service = connect(self.data_dir)
        if service is None:
            self.stop()
            raise HostFailed("the engine started but does not answer on its socket")
        log.info("engine host running (pid %d)", self.proc.pid)
        return service

    def _first_line(self, timeout: float) -> str | None:
        """The child's protocol line ("" when it ended first, None when it timed out)."""
        assert self.proc is not None and self.proc.stdout is not None
        box: list[str] = []
        reader = threading.Thread(target=lambda: box.append(self.proc.stdout.readline().decode(  # type: ignore
            "utf-8", "replace").strip()), daemon=True)
        reader.start()
        reader.join(timeout)
        if not box:
            log.info("the engine host did not start within %.0f s", timeout)
            return None
        with contextlib.suppress(OSError):
            self.proc.stdout.close()
        return box[0]

    def _watch(self) -> None:
        assert self.proc is not None
        code = self.proc.wait()
        if not self._stopping.is_set():
            log.info("engine host ended unexpectedly (exit code %d)", code)
            if self.on_exit:
                self.on_exit(code)

    def stop(self, timeout: float = STOP_TIMEOUT_S) -> int | None:
        """Close the host's stdin and wait; terminate, then kill, if it does not end in time."""
        self._stopping.set()
        proc = self.proc
        if proc is None:
            return None
        with contextlib.suppress(OSError):
            if proc.stdin:
                proc.stdin.close()
        deadline = time.monotonic() + timeout
        for signal_it in (lambda: None, proc.terminate, proc.kill):
            signal_it()
            try:
                code = proc.wait(max(1.0, deadline - time.monotonic()))
                break
            except subprocess.TimeoutExpired:
                log.info("the engine host did not stop in time")
                deadline = time.monotonic() + 5
        else:
            return None
        with contextlib.suppress(OSError):
            if proc.stdout:
                proc.stdout.close()
        log.info("engine host stopped (exit code %d)", code)
        return code
