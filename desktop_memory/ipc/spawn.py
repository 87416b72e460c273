"""Start and stop the engine host child process (the tray app's side of ipc/host.py).

The app holds the child's stdin pipe: closing it (or the app dying) ends the host. The child's first
stdout line says whether it serves (`ready <pid>`) or why it could not open the folder (`error: ...`).
One HostProcess can start its child again after it died or was killed (ipc/supervisor.py does that).

When the folder's engine service already runs (a CLI command or an AI app started it: ipc/service_start.py) and
is of this version, the app adopts it instead of starting a second engine: it holds it through one connection
(`RemoteService.hold`), so that the service neither ends for being idle nor hands the folder to anyone while
the app runs; the end of that connection tells the app the service died (then it starts its own host). When
the app quits it lets go, and the service ends once idle.
"""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from .. import __version__
from ..core.errors import StorageError
from ..core.exits import how_it_ended, illegal_instruction
from .client import RemoteService, connect
from .host import ERROR, READY

log = logging.getLogger(__name__)
START_TIMEOUT_S = 120.0  # a first start may encrypt or migrate the database
STOP_TIMEOUT_S = 40.0  # the host finishes the enrichment job in hand (bounded at 30 s) and closes


class HostFailed(StorageError):
    """The engine host could not start (its own one-line reason) or stopped."""


def command(data_dir: Path, *, enrich: bool = True, debug: bool = False, lock_wait_s: float | None = None
            ) -> list[str]:
    """The command line that starts a host for `data_dir`, from source or from the frozen app."""
    prefix = [sys.executable] if getattr(sys, "frozen", False) else [sys.executable, "-m", "desktop_memory"]
    return [*prefix, "--data-dir", str(data_dir), *(["--debug"] if debug else []), "engine-host",
            *([] if enrich else ["--no-enrichment"]),
            *([] if lock_wait_s is None else ["--lock-wait", f"{lock_wait_s:g}"])]


def child_env() -> dict[str, str]:
    """From source, the child imports the same desktop_memory as this process."""
    env = dict(os.environ)
    if not getattr(sys, "frozen", False):
        root = str(Path(__file__).resolve().parents[2])
        env["PYTHONPATH"] = os.pathsep.join(p for p in (root, env.get("PYTHONPATH", "")) if p)
    return env


@dataclass(eq=False)
class _Held:
    """An adopted service: the connection that holds it, its pid, and whether it is gone."""

    connection: RemoteService
    pid: int
    gone: threading.Event = field(default_factory=threading.Event)
    let_go: threading.Event = field(default_factory=threading.Event)  # the watcher then closes the connection


class HostProcess:
    """One engine host child: `open()` starts it and connects; `kill()` ends a dead or hung one so that
    `open()` can start it again; `stop()` ends it for good (bounded)."""

    def __init__(self, data_dir: Path, *, enrich: bool = True,
                 on_exit: Callable[[int], None] | None = None) -> None:
        self.data_dir = Path(data_dir)
        self.enrich = enrich
        self.on_exit = on_exit  # called (on a helper thread) when the host ends without being asked to
        self.proc: subprocess.Popen[bytes] | None = None
        self.last_exit: int | None = None  # how the last host that ended by itself ended (its exit code)
        self._closed = threading.Event()  # stop() was called: nothing starts any more
        self._asked: set[int] = set()  # pids we ended ourselves: their exit is no news
        self._lock = threading.Lock()
        self._held: _Held | None = None  # the folder's service, adopted instead of a child of our own

    @property
    def pid(self) -> int | None:
        if self._held is not None:
            return self._held.pid
        return self.proc.pid if self.proc else None

    @property
    def alive(self) -> bool:
        if self._held is not None:
            return not self._held.gone.is_set()
        return self.proc is not None and self.proc.poll() is None

    @property
    def adopted(self) -> bool:
        """Whether the engine is a service another front end started (held by us), not our child."""
        return self._held is not None

    def open(self, timeout: float = START_TIMEOUT_S) -> RemoteService:
        """Adopt the folder's running service (same version), else start the host; wait (bounded) until it
        serves, and return a connection to it."""
        from .service_start import stop_service  # (it starts services with this module's command)

        if self._closed.is_set():
            raise HostFailed("the app is quitting")
        adopted = self._adopt()
        if adopted is not None:
            return adopted
        debug = logging.getLogger("desktop_memory").getEffectiveLevel() <= logging.DEBUG
        try:  # a service of another version hands the folder to the app, whose host then waits for it
            took_over = stop_service(self.data_dir)
        except StorageError:
            took_over = True
        flags = {"start_new_session": True} if os.name == "posix" else {
            "creationflags": getattr(subprocess, "CREATE_NEW_PROCESS_GROUP", 0)}
        with self._lock:
            if self._closed.is_set():
                raise HostFailed("the app is quitting")
            try:
                self.proc = subprocess.Popen(command(self.data_dir, enrich=self.enrich, debug=debug,
                                                     lock_wait_s=45.0 if took_over else None),
                                             env=child_env(), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                             **flags)
            except OSError as exc:
                raise HostFailed(f"cannot start the engine: {exc.strerror or exc}") from exc
        proc = self.proc
        line = self._first_line(proc, timeout)
        if line is None:
            self._end(proc, timeout=2)
            raise HostFailed(f"the engine did not start within {timeout:.0f} s")
        if not line.startswith(READY):
            code = self._end(proc, timeout=STOP_TIMEOUT_S)
            log.info("the engine host ended while starting (exit code %s)", code)
            message = line[len(ERROR):].strip() if line.startswith(ERROR) else ""
            if not message and code is not None and (code < 0 or illegal_instruction(code)):  # a crash
                self.last_exit = code
                message = f"the engine stopped while starting: {how_it_ended(code)}"
            raise HostFailed(message or "the engine stopped while starting; `desktop-memory doctor` checks the "
                             "data folder")
        threading.Thread(target=self._watch, args=(proc,), name="engine-host-watch", daemon=True).start()
        try:
            service = connect(self.data_dir)
        except StorageError as exc:  # it started but does not finish the handshake in time
            self._end(proc, timeout=2)
            raise HostFailed("the engine started but does not answer on its socket") from exc
        if service is None:
            self._end(proc, timeout=STOP_TIMEOUT_S)
            raise HostFailed("the engine started but does not answer on its socket")
        log.info("engine host running (pid %d)", proc.pid)
        return service

    def _adopt(self) -> RemoteService | None:
        """The folder's service (a CLI command or an AI app started it), held so that it stays while the app runs;
        None when none runs, or it is of another version, or the app's own host of an earlier start."""
        try:
            holder = connect(self.data_dir)
        except StorageError:
            return None
        if holder is None:
            return None
        try:
            info = holder.ping()
            if not info.get("service") or str(info.get("version")) != __version__:
                holder.close()
                return None
            holder.hold()
            service = connect(self.data_dir)
        except StorageError:
            holder.close()
            return None
        if service is None:
            holder.close()
            return None
        held = _Held(holder, int(info.get("pid") or 0))
        self._held = held
        threading.Thread(target=self._watch_held, args=(held,), name="engine-service-watch", daemon=True).start()
        log.info("adopted the running engine service (pid %d)", held.pid)
        return service

    def _watch_held(self, held: _Held) -> None:
        ended = held.connection.wait_until_gone(held.let_go)
        held.gone.set()
        if not ended or self._closed.is_set() or held is not self._held:
            return
        log.info("the adopted engine service ended unexpectedly")
        if self.on_exit:
            self.on_exit(-1)

    def _let_go(self, *, end_it: bool) -> None:
        """Stop holding the adopted service; `end_it` (it is hung) also ends its process."""
        held, self._held = self._held, None
        if held is None:
            return
        held.let_go.set()
        if end_it and held.pid and not held.gone.wait(0.1):
            with contextlib.suppress(OSError):
                os.kill(held.pid, signal.SIGKILL if os.name == "posix" else signal.SIGTERM)

    @staticmethod
    def _first_line(proc: subprocess.Popen[bytes], timeout: float) -> str | None:
        """The child's protocol line ("" when it ended first, None when it timed out)."""
        assert proc.stdout is not None
        out = proc.stdout
        box: list[str] = []
        reader = threading.Thread(target=lambda: box.append(out.readline().decode("utf-8", "replace").strip()),
                                  daemon=True)
        reader.start()
        reader.join(timeout)
        if not box:
            log.info("the engine host did not start within %.0f s", timeout)
            return None
        with contextlib.suppress(OSError):
            out.close()
        return box[0]

    def _watch(self, proc: subprocess.Popen[bytes]) -> None:
        code = proc.wait()
        if self._closed.is_set() or proc.pid in self._asked or proc is not self.proc:
            return
        log.info("engine host ended unexpectedly (exit code %d)", code)
        self.last_exit = code
        if self.on_exit:
            self.on_exit(code)

    def kill(self, timeout: float = 10.0) -> None:
        """End the current child at once (SIGKILL: it is dead or hung), so that `open()` can start another."""
        self._let_go(end_it=True)
        proc = self.proc
        if proc is None:
            return
        self._asked.add(proc.pid)
        if proc.poll() is None:
            log.info("killing the engine host (pid %d)", proc.pid)
            with contextlib.suppress(OSError):
                proc.kill()
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(timeout)
        for pipe in (proc.stdin, proc.stdout):
            with contextlib.suppress(OSError):
                if pipe:
                    pipe.close()

    def stop(self, timeout: float = STOP_TIMEOUT_S) -> int | None:
        """End the host for good: close its stdin and wait; terminate, then kill, if it does not end in time."""
        with self._lock:
            self._closed.set()
        self._let_go(end_it=False)  # an adopted service goes on for the other front ends, then ends when idle
        proc = self.proc
        if proc is None:
            return None
        return self._end(proc, timeout)

    def _end(self, proc: subprocess.Popen[bytes], timeout: float) -> int | None:
        self._asked.add(proc.pid)
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
