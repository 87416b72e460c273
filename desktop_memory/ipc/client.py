"""Reach the engine of a running host (the tray app) through the data folder's socket.

Nothing here waits forever: the handshake has a deadline (HANDSHAKE_S) and every call the patience its
operation declares (service/protocol.py): past its soft limit a call keeps waiting only while the host
still answers a ping on a second connection (busy, e.g. with another client's import), and never past
its hard limit. A host that does not answer in time is a HostTimeout; the connection is then closed.
"""

from __future__ import annotations

import inspect
import logging
import socket
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from multiprocessing import AuthenticationError
from multiprocessing.connection import Client, Connection, answer_challenge, deliver_challenge
from pathlib import Path
from typing import Any, TypeVar

from .. import paths
from ..core.errors import DataDirLocked, StorageError
from ..core.lines import Overlong
from ..core.text import decode
from ..service import IMPORT_BATCH, ImportReport
from ..service.protocol import LOCAL_PATH, QUICK, MemoryOperations, Operation, operations
from . import address, codec
from .watchdog import Watchdog

log = logging.getLogger(__name__)
T = TypeVar("T")
IMPORT_CHUNK_BYTES = 8 * 1024 * 1024
HANDSHAKE_S = 5.0  # connecting and the challenge both ways
PROBE_S = 2.0  # "are you alive?": a second connection and a ping, answered by the host off its engine thread
LOST = "lost the connection to the desktop-memory engine; try again"
NOT_ANSWERING = "the desktop-memory engine did not answer in time; try again"
PING_PATIENCE = (3.0, 3.0)  # (soft, hard) seconds; each operation declares its own (service/protocol.py)


class HostGone(StorageError):
    """The connection to the host broke (it quit or crashed)."""


class HostTimeout(HostGone):
    """The host did not answer in time (stopped, stuck, or far too slow); the connection is closed."""


class RemoteService(MemoryOperations):
    """Every operation of the service protocol (`MemoryOperations`), answered by the engine over its socket.

    Each operation is performed as a call (`_perform`): arguments encoded by the declaration's type hints,
    the result decoded by them (ipc/codec.py), waited for as patiently as it declares.
    """

    def __init__(self, conn: Connection, folder: Path, *, where: str | None = None,
                 token: bytes | None = None) -> None:
        self._conn = conn
        self._lock = threading.Lock()
        self.folder = folder
        self._where, self._token = where, token  # to ask "alive?" on a second connection
        self._reopen: Callable[[], RemoteService] | None = None

    def reopening(self, reopen: Callable[[], RemoteService]) -> RemoteService:
        """This connection, which sends a `retry_safe` call (service/protocol.py) once more on `reopen()`'s
        connection when the engine went away during it (killed, crashed): nothing lost, nothing doubled."""
        self._reopen = reopen
        return self

    def _perform(self, op: Operation[..., Any], /, *args: Any, **kwargs: Any) -> Any:
        """The client side of one operation: encode the arguments by their hints, call, decode the result."""
        params_of = op.signature.parameters
        params: dict[str, Any] = {}
        for name, value in op.signature.bind(*args, **kwargs).arguments.items():
            if params_of[name].kind is inspect.Parameter.VAR_KEYWORD:
                params.update({k: codec.to_json(v, Any) for k, v in value.items()})
            else:
                params[name] = codec.to_json(_made_local(value, op.hints[name]), op.hints[name])
        try:
            return codec.from_json(self._call(op.name, **params), op.returns, strict=False,
                                   where=f"the result of {op.name}")
        except codec.WrongShape as exc:
            raise codec.RemoteBug(f"the desktop-memory app answered {op.name} unexpectedly: {exc}") from exc

    def _call(self, method: str, /, **params: Any) -> Any:
        try:
            return self._call_once(method, params)
        except HostTimeout:  # it may still be working on it: not sent twice
            raise
        except HostGone:
            op = operations().get(method)
            if self._reopen is None or op is None or not op.retry_safe:
                raise
            log.info("the engine went away during a %s call: calling once more", method)
            fresh = self._reopen()
            with self._lock:
                self._conn.close()
                self._conn, self._where, self._token = fresh._conn, fresh._where, fresh._token
            return self._call_once(method, params)

    def _call_once(self, method: str, params: dict[str, Any]) -> Any:
        with self._lock:
            if self._conn.closed:
                raise HostGone(LOST)
            try:
                self._conn.send_bytes(codec.dumps({"method": method, "params": params}))
                reply = codec.loads(self._reply(method))
            except (EOFError, OSError) as exc:
                raise HostGone(LOST) from exc
        if "error" in reply:
            raise codec.error_from(reply["error"])
        return reply["result"]

    def _reply(self, method: str) -> bytes:
        """The answer, waited for past the soft limit only while the host answers pings, never past the hard one."""
        op = operations().get(method)
        soft, hard = op.patience if op is not None else PING_PATIENCE if method == "ping" else QUICK
        deadline = time.monotonic() + hard
        while not self._conn.poll(max(0.0, min(soft, deadline - time.monotonic()))):
            if method == "ping" or time.monotonic() >= deadline or not self._alive():
                log.info("the engine did not answer a %s call in time", method)
                self._conn.close()
                raise HostTimeout(NOT_ANSWERING)
            log.debug("the engine is busy; still waiting for a %s call", method)
        return self._conn.recv_bytes()

    def _alive(self) -> bool:
        """Whether the host answers a ping on a new connection (a busy host does; a stopped or gone one not)."""
        if self._where is None or self._token is None:
            return True  # cannot ask: wait up to the hard limit
        try:
            probe = _dial(self._where, self._token, self.folder, PROBE_S)
        except (HostGone, AuthenticationError, AssertionError, OSError, EOFError):
            return False
        with probe:
            try:
                probe.ping()
            except HostGone:
                return False
        return True

    # -- lifecycle ----------------------------------------------------------------------------
    def close(self) -> None:
        self._conn.close()

    def __enter__(self) -> RemoteService:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def ping(self) -> dict[str, Any]:
        return self._call("ping")

    def hold(self) -> None:
        """The tray app adopting a service: while this connection stays open the service never ends for being idle
        and refuses `shutdown`. Nothing else is sent on it afterwards (`wait_until_gone`)."""
        self._call("hold")

    def wait_until_gone(self, let_go: threading.Event) -> bool:
        """Watch a held connection (on its own thread, which closes it at the end): True when the other end went
        away (the service ended), False once `let_go` is set here."""
        try:
            while not let_go.is_set():
                if self._conn.poll(0.25):  # nothing is sent on a held connection: this is its end
                    self._conn.recv_bytes()
        except (EOFError, OSError):
            return True
        finally:
            self.close()
        return False

    def shutdown(self) -> None:
        """Ask a service (ipc/service_start.py) to end once the calls in hand are answered; the app's host refuses."""
        self._call("shutdown")

    # -- the operations of the protocol are generated below; importing is streamed ------------------
    def import_records(
        self, lines: Iterable[str | bytes | Overlong], *, progress: Callable[[ImportReport], None] | None = None
    ) -> ImportReport:
        """Streamed to the host in chunks of at most IMPORT_BATCH lines and IMPORT_CHUNK_BYTES characters: one
        import there, pipelined across the chunks (ipc/streaming.py); other clients' calls run in between.
        `progress` whenever more records are committed."""
        stream = RemoteImport(self)
        chunk: list[str | bytes | Overlong] = []
        size = stored = 0
        for raw in lines:
            chunk.append(raw)
            size += 0 if isinstance(raw, Overlong) else len(raw)
            if len(chunk) >= IMPORT_BATCH or size >= IMPORT_CHUNK_BYTES:
                report = stream.feed(chunk)
                chunk, size = [], 0
                if progress and report.stored > stored:
                    stored = report.stored
                    progress(report)
        report = stream.finish(chunk)
        if progress:
            progress(report)
        return report


class RemoteImport:
    """An import fed chunk by chunk over the socket (`streaming.ImportFeed`): the host runs one import for
    the whole stream; each answer is what it has committed so far, counted from the stream's first line."""

    def __init__(self, remote: RemoteService) -> None:
        self._remote = remote
        self._sent = 0
        self._overlong: list[tuple[int, str]] = []  # lines skipped unread here (engine/records.py)
        self.done = False

    def feed(self, lines: Sequence[str | bytes | Overlong]) -> ImportReport:
        return self._send(lines, more=True)

    def finish(self, lines: Sequence[str | bytes | Overlong] = ()) -> ImportReport:
        return self._send(lines, more=False)

    def _send(self, lines: Sequence[str | bytes | Overlong], *, more: bool) -> ImportReport:
        chunk: list[str] = []
        for raw in lines:
            if isinstance(raw, Overlong):  # a blank line keeps the numbering
                self._overlong.append((self._sent + len(chunk) + 1, raw.reason()))
                raw = ""
            chunk.append(raw if isinstance(raw, str) else decode(raw))
        self._sent += len(chunk)
        try:
            data = self._remote._call("import_records", lines=chunk, more=more)
        except BaseException:
            self.done = True  # the host ended the stream (an error) or lost it (the connection)
            raise
        self.done = not more
        report = codec.from_json(data, ImportReport, strict=False)
        report.errors = sorted(report.errors + self._overlong)
        return report


def _made_local(value: Any, hint: Any) -> Any:
    """A path the caller gave (relative to its own working folder) made absolute before it leaves."""
    if isinstance(value, str | Path) and str(value) and LOCAL_PATH in getattr(hint, "__metadata__", ()):
        where = paths.expand(value).resolve()
        return where if isinstance(value, Path) else str(where)
    return value


def _dial(where: str, token: bytes, folder: Path, handshake_s: float) -> RemoteService:
    """Connect and pass the challenge both ways within `handshake_s` (else HostTimeout)."""
    if address.family() == "AF_UNIX":
        with socket.socket(socket.AF_UNIX) as sock:
            sock.settimeout(handshake_s)
            try:
                sock.connect(where)  # waits only when a stuck host's queue of connections is full
            except TimeoutError as exc:
                raise HostTimeout(NOT_ANSWERING) from exc
            sock.setblocking(True)
            conn = Connection(sock.detach())
    else:
        conn = Client(where, family=address.family())
    try:
        with Watchdog(conn, handshake_s) as dog:
            try:
                answer_challenge(conn, token)
                deliver_challenge(conn, token)
            except (EOFError, OSError) as exc:
                if dog.fired:
                    raise HostTimeout(NOT_ANSWERING) from exc
                raise
    except BaseException:
        conn.close()
        raise
    return RemoteService(conn, folder, where=where, token=token)


def connect(data_dir: Path, *, handshake_s: float = HANDSHAKE_S) -> RemoteService | None:
    """The running host's engine for this data folder, or None when no host runs.

    A socket or token left behind by a crashed host counts as no host; a host that does not finish the
    handshake within `handshake_s` is a HostTimeout.
    """
    folder = Path(data_dir)
    where = address.socket_address(folder)
    if address.family() == "AF_UNIX" and not Path(where).exists():
        return None  # no host: the keyring is not even asked
    token = address.load_token(folder)
    if token is None:
        return None
    try:
        return _dial(where, token, folder, handshake_s)
    except AuthenticationError as exc:
        raise StorageError("the desktop-memory app refused this connection (its token changed); try again") from exc
    except (OSError, EOFError, AssertionError):  # AssertionError: not our protocol at that address
        log.debug("no host answers at %s", where, exc_info=True)
        return None


def host_or_local(data_dir: Path, open_local: Callable[[], T]) -> RemoteService | T:
    """The running app's engine when a host runs; else `open_local()` (which opens the folder itself).

    When the folder turns out to be locked (a host that is just starting), the host is tried once more.
    The MCP server's opener when an embedder is given (mcp/engine.py: tests).
    """
    service = connect(data_dir)
    if service is not None:
        return service
    try:
        return open_local()
    except DataDirLocked:
        service = connect(data_dir)
        if service is None:
            raise
        return service
