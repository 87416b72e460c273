"""Serve one MemoryService to local clients over the data folder's socket.

Each connection is authenticated (HMAC challenge with a per-start token, finished within HANDSHAKE_S or
dropped), each request carries JSON and runs through the host's `run(fn)` so the engine stays on the
host's engine thread. `ping` is answered on the connection's own thread: it tells a busy host (its
engine thread working on someone's long request) from a hung one.
"""

from __future__ import annotations

import contextlib
import inspect
import logging
import os
import threading
import time
from collections.abc import Callable
from multiprocessing import AuthenticationError
from multiprocessing.connection import Client, Connection, Listener, answer_challenge, deliver_challenge
from pathlib import Path
from typing import Any, TypeVar

from .. import __version__
from ..core.errors import DesktopMemoryError, InvalidInput
from ..service import ImportReport
from ..service.protocol import MemoryOperations, Operation, operations
from . import address, codec
from .streaming import ImportStream
from .watchdog import Watchdog, hang_up

log = logging.getLogger(__name__)
T = TypeVar("T")
Runner = Callable[[Callable[[], T]], T]
HANDSHAKE_S = 5.0  # a client that has not passed the challenge by then is dropped (its thread ends)


Handler = Callable[[MemoryOperations, dict[str, Any]], Any]


def _arguments(op: Operation, params: dict[str, Any]) -> dict[str, Any]:
    """The call's keyword arguments, each decoded by the protocol's type hint (strict)."""
    sig = op.signature.parameters
    rest = next((n for n, p in sig.items() if p.kind is inspect.Parameter.VAR_KEYWORD), None)
    kwargs: dict[str, Any] = {}
    for key, value in params.items():
        declared = sig.get(key)
        if declared is not None and declared.kind is not inspect.Parameter.VAR_KEYWORD:
            kwargs[key] = codec.from_json(value, op.hints[key], where=key)
        elif rest is not None:
            kwargs[key] = value  # `**fields: Any`: JSON as sent; the service checks each field
        else:
            raise InvalidInput(f"unknown parameter {key!r}")
    op.signature.bind(**kwargs)  # a missing argument: TypeError
    return kwargs


def handler(op: Operation) -> Handler:
    """(service, params) -> the result as JSON data, for one operation of the protocol."""

    def call(service: MemoryOperations, params: dict[str, Any]) -> Any:
        if op.is_property:
            return codec.to_json(getattr(service, op.name), op.returns)
        return codec.to_json(getattr(service, op.name)(**_arguments(op, params)), op.returns)

    return call


def _ping(service: MemoryOperations, _params: dict[str, Any]) -> dict[str, Any]:
    return {"data_dir": str(service.folder), "pid": os.getpid(), "version": __version__}


# What clients may call: every operation of the service protocol (generated), and `ping`. Nothing else.
HOLD = b'{"method":"hold"'  # RemoteService.hold(): the app adopts a service (idle never, shutdown refused)
CALLS: dict[str, Handler] = {"ping": _ping, **{name: handler(op) for name, op in operations().items()}}


class IpcServer:
    """The host side: `start()` serves on background threads, `close()` stops and cleans up."""

    def __init__(self, service: MemoryOperations, data_dir: Path, run: Runner | None = None, *,
                 on_shutdown: Callable[[], None] | None = None) -> None:
        self.service = service
        self._on_shutdown = on_shutdown  # a service (ipc/service_start.py) ends when a client asks; the app's host not
        self._last_activity = time.monotonic()
        self._busy = 0  # requests being answered
        self._held: set[Connection] = set()  # connections of an app that adopted this service: it stays while held
        self.data_dir = Path(data_dir)
        self.address = address.socket_address(self.data_dir)
        self._lock = threading.Lock()
        self._run: Runner = run or self._run_locked
        self._listener: Listener | None = None
        self._acceptor: threading.Thread | None = None
        self._token: bytes | None = None
        self._conns: set[Connection] = set()
        self._conns_lock = threading.Lock()
        self._closed = threading.Event()

    def _run_locked(self, fn: Callable[[], T]) -> T:
        with self._lock:
            return fn()

    # -- lifecycle ----------------------------------------------------------------------------
    def start(self) -> None:
        """Listen on the data folder's socket (a stale one left by a crash is replaced)."""
        if address.family() == "AF_UNIX":
            Path(self.address).unlink(missing_ok=True)  # we hold the data folder's lock: it is stale
        self._token = address.store_token(self.data_dir)
        old_umask = os.umask(0o077) if hasattr(os, "umask") else None
        try:
            if address.family() == "AF_PIPE":  # Windows: CPython's default pipe is readable by Everyone
                from . import pipe_windows

                self._listener = pipe_windows.listener(self.address, backlog=16)
            else:
                self._listener = Listener(self.address, family=address.family(), backlog=16)
                os.chmod(self.address, address.SOCKET_MODE)  # no execute bit; never more than its owner's
        finally:
            if old_umask is not None:
                os.umask(old_umask)
        self._acceptor = threading.Thread(target=self._accept_loop, name="ipc-accept", daemon=True)
        self._acceptor.start()
        log.debug("engine socket listening at %s", self.address)

    def close(self) -> None:
        """Stop serving; remove the socket and the token."""
        if self._closed.is_set():
            return
        self._closed.set()
        if self._listener is not None:
            with contextlib.suppress(OSError):  # wake accept(): closing a socket does not, on Linux
                Client(self.address, family=address.family()).close()
            if self._acceptor is not None:
                self._acceptor.join(timeout=5)
            self._listener.close()  # also unlinks a Unix socket
        with self._conns_lock:
            conns = list(self._conns)
        for conn in conns:  # wake each client thread; it closes its own connection
            hang_up(conn)
        if self._token is not None:
            address.discard_token(self.data_dir, self._token)

    def idle_for(self) -> float:
        """Seconds since the last request ended, 0 while one is being answered (a service ends when idle). A ping
        (a probe: "are you there?") is not use, and neither is a connection that asks nothing; while the tray app
        holds the service (`hold`) it is never idle."""
        with self._conns_lock:
            return 0.0 if self._busy or self._held else time.monotonic() - self._last_activity

    def __enter__(self) -> IpcServer:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- serving ------------------------------------------------------------------------------
    def _accept_loop(self) -> None:
        assert self._listener is not None
        while not self._closed.is_set():
            try:
                conn = self._listener.accept()  # no authkey here: authentication runs on the client's thread
            except OSError:
                if self._closed.is_set():
                    return
                log.debug("engine socket accept failed", exc_info=True)
                continue
            if self._closed.is_set():
                conn.close()
                return
            threading.Thread(target=self._serve, args=(conn,), name="ipc-client", daemon=True).start()

    def _serve(self, conn: Connection) -> None:
        with self._conns_lock:
            self._conns.add(conn)
        imports = _Imports(self._run)
        try:
            if not self._authenticate(conn):
                return
            while not self._closed.is_set():
                try:
                    raw = conn.recv_bytes(codec.MAX_MESSAGE)
                except (EOFError, OSError):
                    return
                if raw.startswith(HOLD):  # the tray app adopting this service (ipc/spawn.py): kept while connected
                    with self._conns_lock:
                        self._held.add(conn)
                    conn.send_bytes(codec.dumps({"result": None}))
                    continue
                conn.send_bytes(codec.dumps(self._answer_counted(raw, imports)))
        except (OSError, EOFError):
            log.debug("engine socket client went away", exc_info=True)
        finally:
            imports.end()
            with self._conns_lock:
                self._conns.discard(conn)
                if conn in self._held:  # the app let go (or ended): idle from now on
                    self._held.discard(conn)
                    self._last_activity = time.monotonic()
            conn.close()

    def _authenticate(self, conn: Connection) -> bool:
        """HMAC challenge both ways within HANDSHAKE_S; a client without the token, or silent, is dropped."""
        assert self._token is not None
        with Watchdog(conn, HANDSHAKE_S) as dog:
            try:
                deliver_challenge(conn, self._token)
                answer_challenge(conn, self._token)
            except (AuthenticationError, AssertionError, EOFError, OSError):
                if dog.fired:
                    log.info("engine socket: dropped a client that did not answer within %.0f s", HANDSHAKE_S)
                else:
                    log.info("engine socket: refused a client without the right token")
                return False
        return True

    def _answer_counted(self, raw: bytes, imports: _Imports) -> dict[str, Any]:
        """`_answer`, counted as use unless it is a ping (for `idle_for`)."""
        probe = raw.startswith(b'{"method":"ping"')
        if not probe:
            with self._conns_lock:
                self._busy += 1
        try:
            return self._answer(raw, imports)
        finally:
            if not probe:
                with self._conns_lock:
                    self._busy -= 1
                    self._last_activity = time.monotonic()

    def _answer(self, raw: bytes, imports: _Imports | None = None) -> dict[str, Any]:
        """One request -> {"result": ...} or {"error": {...}}; the barrier for each request."""
        try:
            request = codec.loads(raw)
            method, params = request["method"], request.get("params") or {}
            call = CALLS.get(method) if isinstance(method, str) else None
            if call is None and method == "shutdown":
                call = _ping  # answered below
            if call is None:
                raise InvalidInput(f"unknown method {method!r}")
            if not isinstance(params, dict):
                raise InvalidInput("params must be an object")
        except (ValueError, KeyError, TypeError) as exc:
            return {"error": codec.error_to(InvalidInput(f"bad request: {type(exc).__name__}"))}
        except InvalidInput as exc:
            return {"error": codec.error_to(exc)}
        if method == "ping":  # answered here, not behind the engine thread's queue: "alive?", not "idle?"
            return {"result": {**call(self.service, params), "service": self._on_shutdown is not None,
                               "held": bool(self._held)}}
        if method == "shutdown":  # after the calls in hand; the host closes the folder and ends
            if self._on_shutdown is None or self._held:
                return {"error": codec.error_to(InvalidInput("this engine belongs to the desktop-memory app; quit "
                                                             "the app to stop it"))}
            self._on_shutdown()
            return {"result": None}
        if method == "import_records" and imports is not None:
            call = imports.call  # streamed: pipelined across this connection's chunks
        try:
            if (op := operations().get(method)) is not None and op.off_lane:  # waits here, never on the engine lane
                return {"result": self._call(call, params)}
            return {"result": self._run(lambda: self._call(call, params))}
        except DesktopMemoryError as exc:
            return {"error": codec.error_to(exc)}
        except Exception as exc:  # noqa: BLE001 - barrier: the client gets a one-line error
            log.debug("engine socket request %s failed", method, exc_info=True)
            return {"error": codec.error_to(exc)}

    def _call(self, call: Handler, params: dict[str, Any]) -> Any:
        try:
            return call(self.service, params)
        except codec.WrongShape as exc:
            raise InvalidInput(f"bad request parameters: {exc}") from exc
        except (KeyError, TypeError, ValueError) as exc:
            if isinstance(exc, DesktopMemoryError):
                raise
            raise InvalidInput(f"bad request parameters ({type(exc).__name__}: {str(exc)[:120]})") from exc


class _Imports:
    """A connection's import, streamed (ipc/streaming.py): `import_records` with `more: true` feeds a chunk
    and answers what is committed so far (counted from the stream's first line); without `more` it ends
    the stream and answers the final report. A stream left open when the connection ends is finished
    (what it received is stored, as when chunks were imported one call each)."""

    def __init__(self, run: Runner) -> None:
        self._run = run
        self._stream: ImportStream | None = None

    def call(self, service: MemoryOperations, params: dict[str, Any]) -> Any:
        """On the engine lane."""
        params = dict(params)
        more = codec.from_json(params.pop("more", False), bool, where="more")
        lines = codec.from_json(params.pop("lines", None), list[str], where="lines")
        if params:
            raise InvalidInput(f"unknown parameter {next(iter(params))!r}")
        stream = self._stream = self._stream or ImportStream(service)
        try:
            report = stream.feed(lines) if more else (stream.feed(lines), stream.finish())[1]
        finally:
            if stream.done:
                self._stream = None
        return codec.to_json(report, ImportReport)

    def end(self) -> None:
        stream, self._stream = self._stream, None
        if stream is not None and not stream.done:
            try:
                self._run(stream.finish)
            except Exception:  # noqa: BLE001 - the client is gone: nobody to tell but the log
                log.info("an import its client left unfinished ended with an error",
                         exc_info=log.isEnabledFor(logging.DEBUG))
