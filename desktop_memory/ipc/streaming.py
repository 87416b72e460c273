"""One import fed in chunks and pipelined across them, so that other calls still run between chunks.

`service.import_records` pipelines its batches (the next one is read and embedded while the current one
is committed), but only within one call; chunks imported one call each never overlapped. An
`ImportStream` runs one `import_records` for the whole input on a helper thread that works only while
the caller of `feed` waits for it (a strict hand-off at chunk boundaries, where the import holds no
transaction), so the engine is still used by one thread at a time, other jobs of the engine lane run
between chunks, and the embedding of the last batch goes on meanwhile.

Used by the engine socket (ipc/server.py, one stream per connection) and by the app's import for an
engine in its own process (`open_import`, qt/importing.py); `RemoteImport` (ipc/client.py) is the same
interface over the socket.
"""

from __future__ import annotations

import copy
import queue
import threading
from collections.abc import Iterator, Sequence
from typing import Any, Protocol

from ..core.lines import Overlong
from ..service import ImportReport
from ..service.protocol import MemoryOperations
from .lane import lower_priority

Line = str | bytes | Overlong


class ImportFeed(Protocol):
    """An import fed chunk by chunk; each answer is what is committed so far (counted from line 1)."""

    def feed(self, lines: Sequence[Line]) -> ImportReport: ...

    def finish(self, lines: Sequence[Line] = ()) -> ImportReport: ...

    @property
    def done(self) -> bool: ...


def open_import(service: MemoryOperations) -> ImportFeed:
    """An import fed chunk by chunk into `service`: over the socket to a host, or on a helper thread here."""
    from .client import RemoteImport, RemoteService

    return RemoteImport(service) if isinstance(service, RemoteService) else ImportStream(service)


class ImportStream:
    """`feed(lines)` returns once the import has taken every line (the acknowledged report so far);
    `finish()` ends the input and returns the final report, or raises what the import raised."""

    def __init__(self, service: MemoryOperations) -> None:
        self._service = service
        self._chunks: queue.Queue[Sequence[Line] | None] = queue.Queue()
        self._turns: queue.Queue[tuple[str, Any]] = queue.Queue()
        self._acked = ImportReport()
        self._thread: threading.Thread | None = None
        self.done = False

    def feed(self, lines: Sequence[Line]) -> ImportReport:
        return self._hand(list(lines))

    def finish(self, lines: Sequence[Line] = ()) -> ImportReport:
        """The last lines (if any), then the end of the input: the final report."""
        if lines:
            self._hand(list(lines))
        return self._hand(None)

    def _hand(self, chunk: Sequence[Line] | None) -> ImportReport:
        if self.done:
            raise RuntimeError("this import has ended")
        if self._thread is None:
            self._thread = threading.Thread(target=self._work, name="engine-import", daemon=True)
            self._thread.start()
        self._chunks.put(chunk)
        kind, value = self._turns.get()  # the import works meanwhile; nothing else touches the engine
        if kind == "more":
            return copy.deepcopy(self._acked)
        self.done = True
        self._thread.join()
        if kind == "error":
            raise value
        return value

    # -- the import's thread --------------------------------------------------------------------
    def _work(self) -> None:
        lower_priority()  # like the engine lane it stands in for
        try:
            report = self._service.import_records(self._lines(), progress=self._progress)
        except BaseException as exc:  # noqa: BLE001 - handed to the caller of feed/finish, the barrier
            self._drain()
            self._turns.put(("error", exc))
            return
        self._drain()
        self._turns.put(("done", report))

    def _lines(self) -> Iterator[Line]:
        while (chunk := self._chunks.get()) is not None:
            yield from chunk
            self._turns.put(("more", None))  # between chunks: the caller's turn

    def _drain(self) -> None:
        """Lines sent after the import stopped (an error) are dropped: the caller learns why from it."""
        while not self._chunks.empty():
            self._chunks.get_nowait()

    def _progress(self, report: ImportReport) -> None:
        self._acked = copy.deepcopy(report)
