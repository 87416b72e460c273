"""Deadlines on the engine socket: a peer that stops answering is hung up on, never waited for forever.

`multiprocessing.connection` reads block without a timeout. Shutting the socket down from another thread
wakes such a read (it sees the end of the connection), which is how a deadline is put on a handshake.
On Windows (named pipes) the server's end is disconnected instead (DisconnectNamedPipe), which ends a read
waiting on it; a client's end has no such call: there the deadline is not enforced.
"""

from __future__ import annotations

import contextlib
import os
import socket
import threading
from multiprocessing.connection import Connection

from . import address


def hang_up(conn: Connection) -> None:
    """Shut the connection's socket down (closing it under a reading thread is not safe)."""
    with contextlib.suppress(OSError, ValueError):
        if address.family() == "AF_UNIX":
            with socket.socket(fileno=os.dup(conn.fileno())) as sock:
                sock.shutdown(socket.SHUT_RDWR)
        else:  # a named pipe's server end: the client sees a broken pipe and the serving thread's read ends
            import ctypes

            kernel32 = ctypes.windll.kernel32  # type: ignore[attr-defined]  # Windows only
            kernel32.DisconnectNamedPipe(conn.fileno())  # a client's end: refused, harmless


class Watchdog:
    """`with Watchdog(conn, seconds) as dog:` hangs `conn` up unless the block ends in time; `dog.fired` says so."""

    def __init__(self, conn: Connection, seconds: float) -> None:
        self.conn = conn
        self.fired = False
        self._done = False
        self._lock = threading.Lock()
        self._timer = threading.Timer(seconds, self._fire)
        self._timer.daemon = True

    def _fire(self) -> None:
        with self._lock:
            if self._done:
                return
            self.fired = True
        hang_up(self.conn)

    def __enter__(self) -> Watchdog:
        self._timer.start()
        return self

    def __exit__(self, *exc: object) -> None:
        with self._lock:
            self._done = True
        self._timer.cancel()
