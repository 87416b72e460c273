"""The native messaging host (`desktop-memory native-host`): the browser extension's way to the engine.

The browser starts it on demand and speaks frames on its stdin/stdout (framing.py). Each request is answered in
order, by the folder's engine service, through the same access the MCP server uses (mcp/engine.EngineAccess:
one engine for every front end). A bad frame is answered with a one-line error and one log line, and the host
stays up; the end of stdin (also inside a frame: the browser closed us) ends it with 0.

When the engine cannot be reached or started (a locked keyring, the folder held by a restore, too slow), a
capture is kept encrypted in the spool (spool.py) and answered "spooled"; the engine drains it when it starts.
For a while after such a failure the engine is not asked again (each try may wait for the service's start).
Captured text is never logged above debug.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from concurrent.futures import Future
from concurrent.futures import TimeoutError as FutureTimeout
from pathlib import Path
from typing import Any, BinaryIO, Protocol, TypeVar

from .. import __version__
from ..core.capture import CaptureResult
from ..core.errors import DesktopMemoryError, InvalidInput, KeyringUnavailable, StorageError, error_line
from ..core.models import to_iso
from ..core.text import first_line
from ..core.web import WebCapture
from . import framing, spool

log = logging.getLogger(__name__)
T = TypeVar("T")
CALL_TIMEOUT_S = 45.0  # a call the engine has not answered by then: the engine counts as offline
OFFLINE_RETRY_S = 30.0  # after the engine could not be reached, it is not asked again for this long
SNIPPET_CHARS = 300
DEFAULT_LIMIT, MAX_LIMIT = 8, 50
IN_USE = "in use"


class Access(Protocol):
    """What the host needs of mcp/engine.EngineAccess (a fake in unit tests)."""

    def submit(self, fn: Callable[[Any], T]) -> Future[T]: ...

    def close(self) -> None: ...


class Offline(Exception):
    """The engine could not be reached or started (its one-line reason)."""


class Refused(ValueError):
    """A request answered with an error (one line), the host going on."""


def offline_error(exc: BaseException) -> bool:
    """Whether a failure means "no engine now" (spool the capture) rather than "this request is wrong"."""
    if isinstance(exc, StorageError | KeyringUnavailable | FutureTimeout | TimeoutError):
        return True
    return isinstance(exc, InvalidInput) and IN_USE in str(exc)


class Host:
    def __init__(self, folder: Path, access: Access) -> None:
        self.folder = Path(folder)
        self.access = access
        self._offline_until = 0.0
        self._spool_ready = False
        self._warmed = False

    # -- the engine ------------------------------------------------------------------------------
    def call(self, fn: Callable[[Any], T]) -> T:
        if time.monotonic() < self._offline_until:
            raise Offline("the desktop-memory engine is not available right now")
        if not self._spool_ready:  # reached again: the spool made ready, what it kept decided first
            fn = self._with_spool(fn)
        try:
            return self.access.submit(fn).result(timeout=CALL_TIMEOUT_S)
        except Exception as exc:
            if not offline_error(exc):
                raise
            self._spool_ready = False
            self._offline_until = time.monotonic() + OFFLINE_RETRY_S
            reason = error_line(exc) if isinstance(exc, DesktopMemoryError) else "it did not answer in time"
            log.warning("the engine is not available: %s", reason)
            raise Offline(f"the desktop-memory engine is not available: {reason}") from None

    def _with_spool(self, fn: Callable[[Any], T]) -> Callable[[Any], T]:
        def first(engine: Any) -> T:
            try:
                engine.open_spool(create=True)  # its key made once; what it kept while offline stored now
            except DesktopMemoryError as exc:  # a keyring that cannot be used: captures cannot be spooled
                log.warning("the capture spool cannot be used: %s", error_line(exc))
            self._spool_ready = True
            return fn(engine)

        return first

    # -- requests --------------------------------------------------------------------------------
    def handle(self, request: dict[str, Any]) -> dict[str, Any]:
        kind = request.get("type")
        handler = {"hello": self.hello, "status": self.hello, "capture": self.capture, "search": self.search,
                   "context": self.context}.get(kind if isinstance(kind, str) else "")
        if handler is None:
            raise Refused("unknown request type (expected hello, status, capture, search or context)")
        return handler(request)

    def hello(self, _: dict[str, Any]) -> dict[str, Any]:
        try:
            paused = self.call(_paused)
            engine = "ready"
        except Offline:
            paused, engine = False, "offline"
        except Exception:  # noqa: BLE001 - hello always answers; the reason in the log
            log.warning("the engine's state could not be read", exc_info=log.isEnabledFor(logging.DEBUG))
            paused, engine = False, "offline"
        if engine == "ready" and not self._warmed:  # the search model loaded now, not at the first capture
            self._warmed = True
            self.access.submit(_warm_up)
        return {"version": __version__, "engine": engine, "paused": paused}

    def capture(self, request: dict[str, Any]) -> dict[str, Any]:
        try:
            item = WebCapture.from_dict(request.get("capture"))
        except ValueError as exc:
            raise Refused(str(exc)) from None
        try:
            result: CaptureResult = self.call(lambda engine: engine.capture_web(item))
        except Offline:
            return self._spool(item)
        if not result.stored:
            return {"status": "skipped", "message": result.message, "memory_id": None}
        return {"status": result.status, "message": result.message, "memory_id": result.memory_id or None}

    def _spool(self, item: WebCapture) -> dict[str, Any]:
        if item.private:  # a private window's text is never written down, not even encrypted
            return {"status": "skipped", "message": CaptureResult.skipped("private window").message,
                    "memory_id": None}
        try:
            spool.put(self.folder, {"type": "capture", "capture": item.to_dict(), "spooled_at": time.time()})
        except spool.SpoolUnavailable as exc:
            raise Refused(str(exc)) from None
        except OSError as exc:
            raise Refused(f"the capture could not be kept for later: {exc.strerror or exc}") from None
        log.debug("capture spooled")
        return {"status": "spooled", "memory_id": None,
                "message": "Kept safely (encrypted) until desktop-memory can start; it is saved then"}

    def search(self, request: dict[str, Any]) -> dict[str, Any]:
        query, limit = request.get("query"), request.get("limit", DEFAULT_LIMIT)
        if not isinstance(query, str):
            raise Refused("search needs a query (text)")
        if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= MAX_LIMIT:
            raise Refused(f"limit must be a whole number from 1 to {MAX_LIMIT}")
        hits = self._engine(lambda engine: engine.search(query, limit=limit))
        return {"hits": [_hit(h) for h in hits]}

    def context(self, request: dict[str, Any]) -> dict[str, Any]:
        ids, query = request.get("ids", []), request.get("query")
        if not isinstance(ids, list) or not all(isinstance(i, str) for i in ids):
            raise Refused("ids must be a list of memory ids")
        if query is not None and not isinstance(query, str):
            raise Refused("query must be text or null")
        found = self._engine(lambda engine: engine.context(query or None, ids=ids))
        return {"text": found.text}

    def _engine(self, fn: Callable[[Any], T]) -> T:
        try:
            return self.call(fn)
        except Offline as exc:
            raise Refused(str(exc)) from None

    # -- one frame -------------------------------------------------------------------------------
    def answer(self, body: bytes) -> dict[str, Any]:
        try:
            request = framing.decode(body)
        except ValueError as exc:
            log.warning("refused a message: %s", exc)
            return {"id": None, "ok": False, "error": str(exc)}
        rid = request.get("id")
        rid = rid if rid is None or isinstance(rid, str | int | float | bool) else None
        try:
            return {"id": rid, "ok": True, **self.handle(request)}
        except Refused as exc:
            log.warning("refused a request: %s", exc)
            return {"id": rid, "ok": False, "error": str(exc)}
        except DesktopMemoryError as exc:
            return {"id": rid, "ok": False, "error": error_line(exc)}
        except Exception as exc:  # noqa: BLE001 - a bug answers this request, the host goes on
            log.warning("request failed: %s", error_line(exc), exc_info=log.isEnabledFor(logging.DEBUG))
            return {"id": rid, "ok": False, "error": error_line(exc)}


def _warm_up(engine: Any) -> None:
    """A search nobody waits for: the engine service loads its embedding model (seconds) while the person is
    still reading, so the first exchange or popup search does not wait for it."""
    try:
        engine.search("warm up", limit=1, record_access=False)
    except Exception:  # noqa: BLE001 - only a head start; the real request says what is wrong
        log.debug("warming the engine up failed", exc_info=True)


def _paused(engine: Any) -> bool:
    """Whether the engine would skip an exchange now: the app's pause, capture off or settings it cannot read."""
    if engine.capture_paused_until() is not None:
        return True
    settings = engine.settings
    return not settings.capture_enabled or settings.problem is not None


def _hit(hit: Any) -> dict[str, Any]:
    m = hit.memory
    text = hit.passage.of(m) if hit.passage is not None else m.content
    return {"id": m.id, "title": m.title.strip() or first_line(m.content), "snippet": " ".join(text.split())[
        :SNIPPET_CHARS], "when": to_iso(m.created_at), "source": m.source, "source_app": m.source_app,
            "url": m.source_url, "weak": bool(hit.weak)}


def fitted(reply: dict[str, Any]) -> bytes:
    """The frame of `reply`; one over the limit is never sent: search hits are cut until it fits, anything else
    becomes a short error."""
    try:
        return framing.encode(reply)
    except framing.FrameTooLarge as exc:
        hits = reply.get("hits")
        while isinstance(hits, list) and hits:
            hits = hits[: len(hits) // 2]
            try:
                return framing.encode({**reply, "hits": hits})
            except framing.FrameTooLarge:
                continue
        log.warning("a reply was too large to send (%d bytes)", exc.size)
        return framing.encode({"id": reply.get("id"), "ok": False,
                               "error": f"the reply would be too large ({exc.size} bytes; the limit is 1 MB)"})


def run(folder: Path, stdin: BinaryIO, stdout: BinaryIO, *, access: Access | None = None) -> int:
    """Serve frames from `stdin` until it ends; 0 then (also when the browser closes our stdout)."""
    if access is None:
        from ..mcp.engine import EngineAccess

        access = EngineAccess(folder, idle_close_s=5.0)
    host = Host(folder, access)
    try:
        while True:
            try:
                body = framing.read_frame(stdin)
            except framing.FrameTooLarge as exc:
                log.warning("refused a message: %s", exc)
                reply: dict[str, Any] = {"id": None, "ok": False, "error": str(exc)}
            else:
                if body is None:
                    return 0
                reply = host.answer(body)
            stdout.write(fitted(reply))
            stdout.flush()
    except (BrokenPipeError, ConnectionResetError):
        return 0
    finally:
        access.close()
