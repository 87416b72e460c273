"""The engine an MCP session talks to: the host's when one runs, else one opened here for a while.

Every call runs on one thread of ours. Without a host, the engine is opened on demand under the
data folder's lock and closed again after a short idle time, so the MCP server never keeps the
folder from the tray app or the CLI for long (and never touches it while someone else holds it).
"""

from __future__ import annotations

import logging
import queue
import threading
from collections.abc import Callable
from concurrent.futures import Future
from pathlib import Path
from typing import Any, TypeVar

from ..core.errors import DataDirLocked
from ..engine.embed import Embedder
from ..ipc.client import HostGone, RemoteService, connect
from ..service import MemoryService

log = logging.getLogger(__name__)
T = TypeVar("T")
Engine = MemoryService | RemoteService
IDLE_CLOSE_S = 1.0  # an idle MCP server lets go within 1 s: a CLI command (it waits 30 s a holder) barely waits


def release_vector_index() -> None:
    """Drop Chroma's per-process cache so the next open reads the folder afresh."""
    import sys

    if "chromadb" not in sys.modules:
        return
    from chromadb.api.shared_system_client import SharedSystemClient

    for system in list(SharedSystemClient._identifier_to_system.values()):
        system.stop()
    SharedSystemClient.clear_system_cache()


class EngineAccess:
    """Runs functions of the engine on one worker thread; see the module docstring."""

    def __init__(self, folder: Path, *, idle_close_s: float = IDLE_CLOSE_S, lock_wait_s: float = 2.0,
                 embedder: Any = None) -> None:
        self.folder = Path(folder)
        self.idle_close_s = idle_close_s
        self.lock_wait_s = lock_wait_s
        self._embedder = embedder
        self._engine: Engine | None = None
        self._jobs: queue.Queue[tuple[Callable[[Engine], Any], Future[Any]] | None] = queue.Queue()
        self._thread = threading.Thread(target=self._work, name="mcp-engine", daemon=True)
        self._thread.start()

    @property
    def mode(self) -> str:
        """"host", "local" or "closed" (for status and tests)."""
        if self._engine is None:
            return "closed"
        return "host" if isinstance(self._engine, RemoteService) else "local"

    def submit(self, fn: Callable[[Engine], T]) -> Future[T]:
        fut: Future[T] = Future()
        self._jobs.put((fn, fut))
        return fut

    def call(self, fn: Callable[[Engine], T]) -> T:
        return self.submit(fn).result()

    def close(self) -> None:
        self._jobs.put(None)
        self._thread.join(timeout=30)

    # -- the worker thread --------------------------------------------------------------------
    def _work(self) -> None:
        while True:
            try:
                job = self._jobs.get(timeout=self.idle_close_s if self._engine is not None else None)
            except queue.Empty:
                try:
                    self._close_engine()
                except Exception:  # noqa: BLE001 - worker barrier: the next call opens afresh
                    log.warning("could not close the engine cleanly", exc_info=log.isEnabledFor(logging.DEBUG))
                continue
            if job is None:
                self._close_engine()
                return
            fn, fut = job
            if not fut.set_running_or_notify_cancel():
                continue
            try:
                fut.set_result(self._run(fn))
            except BaseException as exc:  # noqa: BLE001 - handed to the caller, who is the barrier
                fut.set_exception(exc)

    def _run(self, fn: Callable[[Engine], T]) -> T:
        engine = self._open()
        try:
            return fn(engine)
        except HostGone:
            self._close_engine()  # the app quit or crashed: start over (its successor or our own) once
        return fn(self._open())

    def _open(self) -> Engine:
        if self._engine is not None:
            return self._engine
        remote = connect(self.folder)
        if remote is None:
            try:
                self._engine = MemoryService(self.folder, embedder=self._get_embedder(),
                                             lock_wait_s=self.lock_wait_s)
                log.debug("MCP opened the engine itself")
                return self._engine
            except DataDirLocked:
                remote = connect(self.folder)
                if remote is None:
                    raise
        self._engine = remote
        log.debug("MCP uses the running app's engine")
        return remote

    def _get_embedder(self) -> Embedder:
        if self._embedder is None:
            self._embedder = Embedder()
        return self._embedder

    def _close_engine(self) -> None:
        engine = self._engine
        if engine is None:
            return
        try:
            engine.close()
            if isinstance(engine, MemoryService):
                release_vector_index()
                log.debug("MCP closed the engine")
        finally:
            self._engine = None
