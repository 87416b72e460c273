"""The engine an MCP session talks to: the folder's engine service (or the app's host), shared by every AI app.

Every call runs on one engine lane of ours (ipc/lane.py). The engine is the folder's service
(ipc/service_start.open_service: the app's host or a running service, else one started now), so two AI apps,
the CLI and the app write through one engine and nothing waits for a folder lock. The connection is closed
after a short idle time; a call whose engine went away (killed, replaced after an upgrade) is made once more
on a new one (an add made twice is an exact repeat: one memory).

Given an `embedder` (tests, and an engine in this very process), the engine is opened here instead, under
the folder's lock (ipc/client.host_or_local), and closed again after the idle time.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from concurrent.futures import Future
from pathlib import Path
from typing import Any, TypeVar

from ..ipc.client import HostGone, RemoteService, host_or_local
from ..ipc.lane import EngineLane
from ..ipc.service_start import open_service
from ..service.protocol import MemoryOperations

log = logging.getLogger(__name__)
T = TypeVar("T")
Engine = MemoryOperations
SERVICE_PATIENCE_S = 15.0  # a folder another process holds is waited for this long (the SDK's default timeout is 60 s)
IDLE_CLOSE_S = 1.0  # an idle MCP server lets go within 1 s: a CLI command (it waits 30 s a holder) barely waits


class EngineAccess:
    """Runs functions of the engine on one lane; see the module docstring."""

    def __init__(self, folder: Path, *, idle_close_s: float = IDLE_CLOSE_S, lock_wait_s: float = 2.0,
                 embedder: Any = None) -> None:
        self.folder = Path(folder)
        self.idle_close_s = idle_close_s
        self.lock_wait_s = lock_wait_s
        self._embedder = embedder
        self._engine: Engine | None = None
        self._lane = EngineLane("mcp-engine", nice=0, idle_s=idle_close_s, on_idle=self._close_quietly)

    @property
    def mode(self) -> str:
        """"host", "local" or "closed" (for status and tests)."""
        if self._engine is None:
            return "closed"
        return "host" if isinstance(self._engine, RemoteService) else "local"

    def submit(self, fn: Callable[[Engine], T]) -> Future[T]:
        return self._lane.submit(lambda: self._run(fn))

    def call(self, fn: Callable[[Engine], T]) -> T:
        return self.submit(fn).result()

    def close(self) -> None:
        self._lane.put(self._close_quietly)
        self._lane.close(timeout=30)

    # -- on the lane ------------------------------------------------------------------------
    def _run(self, fn: Callable[[Engine], T]) -> T:
        engine = self._open()
        try:
            return fn(engine)
        except HostGone:
            self._close_engine()  # the app quit or crashed: start over (its successor or our own) once
        return fn(self._open())

    def _open(self) -> Engine:
        if self._engine is None:
            if self._embedder is None:
                self._engine = open_service(self.folder, patience_s=SERVICE_PATIENCE_S)
            else:
                self._engine = host_or_local(self.folder, self._open_local)
            log.debug("MCP uses %s", "the running app's engine" if self.mode == "host" else "its own engine")
        return self._engine

    def _open_local(self) -> MemoryOperations:
        """The service loads the embedder on its first open; later opens reuse it (no model load per idle close).
        The engine is imported here: an MCP server that goes through the service (every one but the tests')
        starts without it (~0.25 s)."""
        from ..service import MemoryService

        engine = MemoryService(self.folder, embedder=self._embedder, lock_wait_s=self.lock_wait_s)
        self._embedder = engine.embedder
        return engine

    def _close_quietly(self) -> None:
        try:
            self._close_engine()
        except Exception:  # noqa: BLE001 - worker barrier: the next call opens afresh
            log.warning("could not close the engine cleanly", exc_info=log.isEnabledFor(logging.DEBUG))

    def _close_engine(self) -> None:
        engine = self._engine
        try:
            if engine is not None and not isinstance(engine, RemoteService):  # opened here (_open_local)
                engine.close(release_vector_cache=True)  # type: ignore[call-arg]  # the next open reads afresh
                log.debug("MCP closed the engine")
            elif engine is not None:
                engine.close()
        finally:
            self._engine = None  # "closed" only once the folder is free
