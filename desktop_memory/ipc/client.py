"""Reach the engine of a running host (the tray app) through the data folder's socket.

Nothing here waits forever: the handshake has a deadline (HANDSHAKE_S) and every call a patience per
kind (PATIENCE): past its soft limit a call keeps waiting only while the host still answers a ping on a
second connection (busy, e.g. with another client's import), and never past its hard limit. A host that
does not answer in time is a HostTimeout; the connection is then closed.
"""

from __future__ import annotations

import logging
import socket
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from multiprocessing import AuthenticationError
from multiprocessing.connection import Client, Connection, answer_challenge, deliver_challenge
from pathlib import Path
from typing import Any, TypeVar

from ..core.context import Context
from ..core.errors import DataDirLocked, StorageError, StorageFailure
from ..core.models import Hit, Memory, Version
from ..core.query import Filters
from ..core.text import decode
from ..engine.failures import rebased
from ..engine.records import Overlong
from ..engine.settings import Settings
from ..service import IMPORT_BATCH, AddResult, ImportReport
from . import address, codec
from .watchdog import Watchdog

log = logging.getLogger(__name__)
T = TypeVar("T")
IMPORT_CHUNK_BYTES = 8 * 1024 * 1024
HANDSHAKE_S = 5.0  # connecting and the challenge both ways
PROBE_S = 2.0  # "are you alive?": a second connection and a ping, answered by the host off its engine thread
LOST = "lost the connection to the desktop-memory engine; try again"
NOT_ANSWERING = "the desktop-memory engine did not answer in time; try again"
# method -> (soft, hard) seconds: after `soft` without a reply the host must answer a ping to be waited for
# longer; after `hard` the call fails whatever the ping says.
DEFAULT_PATIENCE = (5.0, 120.0)
PATIENCE: dict[str, tuple[float, float]] = {
    "ping": (3.0, 3.0),
    "search": (5.0, 60.0), "context": (5.0, 60.0),
    "import_records": (30.0, 900.0),
    **dict.fromkeys(("stats", "doctor", "export_records", "export_markdown", "purge", "retention",
                     "erase_everything"), (30.0, 3600.0)),
    **dict.fromkeys(("set_enrichment_model", "verify_enrichment_model"), (30.0, 600.0)),
}


class HostGone(StorageError):
    """The connection to the host broke (it quit or crashed)."""


class HostTimeout(HostGone):
    """The host did not answer in time (stopped, stuck, or far too slow); the connection is closed."""


class RemoteService:
    """The methods of MemoryService that the CLI and MCP use, answered by the host's engine."""

    def __init__(self, conn: Connection, folder: Path, *, where: str | None = None,
                 token: bytes | None = None) -> None:
        self._conn = conn
        self._lock = threading.Lock()
        self.folder = folder
        self._where, self._token = where, token  # to ask "alive?" on a second connection

    def _call(self, method: str, **params: Any) -> Any:
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
        soft, hard = PATIENCE.get(method, DEFAULT_PATIENCE)
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

    # -- adding -------------------------------------------------------------------------------
    def add(self, content: str | bytes, *, source: str = "manual", **fields: Any) -> AddResult:
        text = content if isinstance(content, str) else content.decode("utf-8", "replace")
        r = self._call("add", content=text, fields={"source": source, **fields})
        return AddResult(codec.memory_from(r["memory"]), r["status"], r["redactions"])

    def import_records(
        self, lines: Iterable[str | bytes | Overlong], *, progress: Callable[[ImportReport], None] | None = None
    ) -> ImportReport:
        """Sent in chunks of at most IMPORT_BATCH lines and IMPORT_CHUNK_BYTES characters; each chunk is
        committed by the host before the next is read."""
        total = ImportReport()
        chunk: list[str] = []
        size = offset = 0

        def flush() -> None:
            nonlocal size, offset
            try:
                r = self._call("import_records", lines=chunk)
            except StorageFailure as exc:  # the host counted within this chunk: count from the file's start
                raise rebased(exc, total.stored, offset) from exc
            total.added += r["added"]
            total.duplicates += r["duplicates"]
            total.related += r["related"]
            total.redacted += r["redacted"]
            total.errors.extend((offset + e["line"], e["error"]) for e in r["errors"])
            offset += len(chunk)
            chunk.clear()
            size = 0
            if progress:
                progress(total)

        for raw in lines:
            if isinstance(raw, Overlong):  # skipped unread (engine/records.py): a blank line keeps the numbering
                total.errors.append((offset + len(chunk) + 1, raw.reason()))
                raw = ""
            line = raw if isinstance(raw, str) else decode(raw)
            chunk.append(line)
            size += len(line)
            if len(chunk) >= IMPORT_BATCH or size >= IMPORT_CHUNK_BYTES:
                flush()
        if chunk:
            flush()
        total.errors.sort()
        return total

    # -- searching and context ----------------------------------------------------------------
    def search(self, query: str, *, limit: int = 10, filters: Filters | None = None,
               record_access: bool = True, expand: bool = False) -> list[Hit]:
        hits = self._call("search", query=query, limit=limit, filters=codec.filters_to(filters),
                          record_access=record_access, expand=expand)
        return [codec.hit_from(h) for h in hits]

    def context(self, query: str | None = None, *, ids: Sequence[str] = (), budget: int | None = None,
                fmt: str | None = None, limit: int = 20, filters: Filters | None = None) -> Context:
        return codec.context_from(self._call("context", query=query, ids=list(ids), budget=budget, fmt=fmt,
                                             limit=limit, filters=codec.filters_to(filters)))

    # -- lifecycle of memories ----------------------------------------------------------------
    def get(self, memory_id: str) -> Memory:
        return codec.memory_from(self._call("get", id=memory_id))

    def versions(self, memory_id: str) -> list[Version]:
        return [Version(**v) for v in self._call("versions", id=memory_id)]

    def restore_version(self, memory_id: str, seq: int) -> Memory:
        return codec.memory_from(self._call("restore_version", id=memory_id, seq=seq))

    def set_pinned(self, memory_id: str, pinned: bool) -> Memory:
        return codec.memory_from(self._call("set_pinned", id=memory_id, pinned=pinned))

    def set_forgotten(self, memory_id: str, forgotten: bool) -> Memory:
        return codec.memory_from(self._call("set_forgotten", id=memory_id, forgotten=forgotten))

    def tag(self, memory_id: str, add: Iterable[str] = (), remove: Iterable[str] = ()) -> Memory:
        return codec.memory_from(self._call("tag", id=memory_id, add=list(add), remove=list(remove)))

    def edit(self, memory_id: str, *, content: str | None = None, title: str | None = None) -> Memory:
        return codec.memory_from(self._call("edit", id=memory_id, content=content, title=title))

    def purge(self, ids: Sequence[str]) -> int:
        return int(self._call("purge", ids=list(ids)))

    def retention(self, *, older_than_days: float, below_importance: float = 1.0,
                  include_forgotten_only: bool = False, dry_run: bool = False) -> list[str]:
        return list(self._call("retention", older_than_days=older_than_days, below_importance=below_importance,
                               include_forgotten_only=include_forgotten_only, dry_run=dry_run))

    def erase_everything(self) -> int:
        return int(self._call("erase_everything"))

    # -- settings -----------------------------------------------------------------------------
    @property
    def settings(self) -> Settings:
        """The host's current settings (each read asks the host)."""
        return codec.settings_from(self._call("settings"))

    def save_settings(self, new: Settings) -> Settings:
        return codec.settings_from(self._call("save_settings", settings=codec.settings_to(new)))

    def stats(self) -> dict[str, Any]:
        return self._call("stats")

    def doctor(self) -> dict[str, Any]:
        return self._call("doctor")

    def index_status(self) -> dict[str, Any]:
        return self._call("index_status")

    def export_records(self, *, include_forgotten: bool = False) -> Iterator[dict[str, Any]]:
        yield from self._call("export_records", include_forgotten=include_forgotten)

    def export_markdown(self, *, include_forgotten: bool = False) -> Iterator[str]:
        yield from self._call("export_markdown", include_forgotten=include_forgotten)

    # -- enrichment (the app runs it in the background) -----------------------------------------
    def enrichment_status(self) -> dict[str, Any]:
        return self._call("enrichment_status")

    def start_enrichment(self) -> None:
        self._call("start_enrichment")

    def stop_enrichment(self) -> None:
        self._call("stop_enrichment")

    def set_enrichment_model(self, path: str | None) -> dict[str, Any]:
        """A relative path means relative to here, not to the app's working folder."""
        return self._call("set_enrichment_model", path=str(Path(path).expanduser().resolve()) if path else None)

    def verify_enrichment_model(self) -> dict[str, Any]:
        return self._call("verify_enrichment_model")


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


def via_host(data_dir: Path, remote: Callable[[RemoteService], T], local: Callable[[], T]) -> T:
    """Run through the host when one runs; else `local()` (which opens the engine itself).

    When the folder turns out to be locked (a host that is just starting), the host is tried once more.
    """
    service = connect(data_dir)
    if service is None:
        try:
            return local()
        except DataDirLocked:
            service = connect(data_dir)
            if service is None:
                raise
    with service:
        return remote(service)
