"""The engine lane: one thread runs every call to the engine, in order.

The engine host serves socket requests on it (ipc/host.py), the tray app runs its jobs on it
(qt/bridge.py: the socket, or an in-process engine, is only used from that thread) and the MCP server
runs its tool calls on it (mcp/engine.py, which also closes an engine it opened after `idle_s` without
calls). So the APSW connection, Chroma and the models of an engine, or one connection to a host, are
never used from two threads at once. No Qt here.
"""

from __future__ import annotations

import logging
import os
import sys
import threading
from collections import deque
from collections.abc import Callable
from concurrent.futures import Future
from typing import Any, TypeVar

log = logging.getLogger(__name__)
T = TypeVar("T")
ENGINE_NICE = 5  # the engine thread yields the CPU to the GUI (enrichment runs at 19 anyway)
_STOP = object()


def lower_priority(nice: int = ENGINE_NICE) -> None:
    """Raise the calling thread's nice value (Linux: per thread; threads it starts inherit it)."""
    if nice and sys.platform.startswith("linux"):
        tid = threading.get_native_id()
        try:
            os.setpriority(os.PRIO_PROCESS, tid, min(19, os.getpriority(os.PRIO_PROCESS, tid) + nice))
        except OSError:
            log.debug("cannot lower the engine thread's priority", exc_info=True)


class EngineLane:
    """Runs submitted functions one at a time on its own thread, in order (`front=True` goes first).

    `idle_s` / `on_idle`: called on the lane's thread once no call came for that long (then not again
    until the next call). `close()` runs what is queued, then ends the thread.
    """

    def __init__(self, name: str = "engine", *, nice: int = ENGINE_NICE, idle_s: float | None = None,
                 on_idle: Callable[[], None] | None = None, start: bool = True) -> None:
        self._items: deque[Any] = deque()
        self._cond = threading.Condition()
        self._nice, self._idle_s, self._on_idle = nice, idle_s, on_idle
        self._thread = threading.Thread(target=self._loop, name=name, daemon=True)
        self._closed = False
        if start:
            self.start()

    def start(self) -> None:
        self._thread.start()

    @property
    def thread(self) -> threading.Thread:
        return self._thread

    def on_lane(self) -> bool:
        """Whether the caller runs on the lane's thread."""
        return threading.current_thread() is self._thread

    def submit(self, fn: Callable[[], T], *, front: bool = False) -> Future[T]:
        """Queue `fn()`; its result (or exception) comes back through the Future."""
        future: Future[T] = Future()
        self.put(lambda: _settle(future, fn), front=front)
        return future

    def put(self, fn: Callable[[], Any], *, front: bool = False) -> None:
        """Queue `fn()` with nothing to wait on: it handles its own result and errors."""
        with self._cond:
            if self._closed:
                raise RuntimeError("the engine lane is closed")
            (self._items.appendleft if front else self._items.append)(fn)
            self._cond.notify()

    def run(self, fn: Callable[[], T]) -> T:
        """Run `fn()` on the lane and wait for it (at once when already on the lane's thread)."""
        if self.on_lane():
            return fn()
        return self.submit(fn).result()

    def __len__(self) -> int:
        return len(self._items)

    def close(self, timeout: float | None = None) -> None:
        """Run what is queued, then end the thread (waits up to `timeout`)."""
        with self._cond:
            if not self._closed:
                self._closed = True
                self._items.append(_STOP)
                self._cond.notify()
        if self._thread.is_alive() and not self.on_lane():
            self._thread.join(timeout)

    # -- the lane's thread --------------------------------------------------------------------
    def _next(self, idle: bool) -> Any:
        """The next item; None when the lane has been idle for `idle_s` (once per idle period)."""
        with self._cond:
            while not self._items:
                wait = self._idle_s if idle and self._on_idle is not None else None
                if not self._cond.wait(wait) and wait is not None and not self._items:
                    return None
            return self._items.popleft()

    def _loop(self) -> None:
        lower_priority(self._nice)
        idle = False
        while True:
            item = self._next(idle)
            if item is None:
                idle = False
                try:
                    assert self._on_idle is not None
                    self._on_idle()
                except Exception:  # noqa: BLE001 - worker barrier: the next call starts afresh
                    log.warning("the engine lane's idle step failed", exc_info=log.isEnabledFor(logging.DEBUG))
                continue
            if item is _STOP:
                return
            idle = True
            try:
                item()
            except Exception:  # noqa: BLE001 - worker barrier: `put` callers handle their own errors
                log.warning("an engine lane job failed", exc_info=log.isEnabledFor(logging.DEBUG))


def _settle(future: Future[T], fn: Callable[[], T]) -> None:
    if not future.set_running_or_notify_cancel():
        return
    try:
        future.set_result(fn())
    except BaseException as exc:  # noqa: BLE001 - handed to the caller, who is the barrier
        future.set_exception(exc)
