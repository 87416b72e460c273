"""Importing through the engine lane in chunks, so searches and edits get their turn in between.

One long import job would hold the engine thread for minutes (10,000 memories), and every search
typed meanwhile would wait for it. Each chunk (256 memories, at most 8 MB of text) is its own job; the next is
queued only when the GUI has the previous one's result, so any job submitted in the meantime runs first. A file
is read in bounded pieces (engine/records.py): a line over the line limit is skipped unread and reported.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import IO

from ..core.errors import StorageFailure
from ..engine import failures, records
from ..service import IMPORT_BATCH_BYTES, ImportReport, MemoryService
from .bridge import EngineBridge

Line = str | bytes | records.Overlong
Lines = Iterable[Line]
IMPORT_CHUNK = 256  # the service's own batch; smaller chunks measured slower with no shorter stalls


class ChunkedImport:
    """Imports JSON Lines chunk by chunk; `progress(report)` after each, `done(report)` at the end."""

    def __init__(self, bridge: EngineBridge, open_lines: Callable[[], Lines | IO[bytes]], *,
                 done: Callable[[ImportReport], None], failed: Callable[[str], None],
                 progress: Callable[[ImportReport], None] | None = None, chunk: int = IMPORT_CHUNK) -> None:
        self.bridge, self.open_lines, self.chunk = bridge, open_lines, chunk
        self.done, self.failed, self.progress = done, failed, progress
        self.report = ImportReport()
        self._lines: Iterator[Line] | None = None
        self._handle: IO[bytes] | None = None
        self._consumed = 0

    def start(self) -> None:
        self._next()

    def _next(self) -> None:
        self.bridge.submit(self._step, self._stepped, self._failed, long=True)

    def _step(self, service: MemoryService) -> bool:
        """On the engine thread: import the next chunk; True when the input is exhausted."""
        if self._lines is None:
            source = self.open_lines()
            self._handle = source if hasattr(source, "close") else None  # type: ignore[assignment]
            if hasattr(source, "readline"):  # a file: never a whole over-long line in memory
                source = records.read_lines(source, records.line_limit(service.settings.max_bytes))
            self._lines = iter(source)
        batch, finished = self._take()
        if batch:
            try:
                part = service.import_records(batch)
            except StorageFailure as exc:  # a full disk...: counted from the start of the file, not the chunk
                self._close()
                raise failures.rebased(exc, self.report.stored, self._consumed) from exc
            r = self.report
            r.added += part.added
            r.duplicates += part.duplicates
            r.related += part.related
            r.redacted += part.redacted
            r.errors.extend((self._consumed + n, e) for n, e in part.errors)
            self._consumed += len(batch)
        if finished:
            self._close()
        return finished

    def _take(self) -> tuple[list[Line], bool]:
        """The next chunk: up to `chunk` lines and IMPORT_BATCH_BYTES characters; True when the input ended."""
        assert self._lines is not None
        batch: list[Line] = []
        size = 0
        for line in self._lines:
            batch.append(line)
            size += 0 if isinstance(line, records.Overlong) else len(line)  # an over-long line is not held
            if len(batch) >= self.chunk or size >= IMPORT_BATCH_BYTES:
                return batch, False
        return batch, True

    def _close(self) -> None:
        if self._handle is not None:
            self._handle.close()
            self._handle = None

    def _stepped(self, finished: bool) -> None:
        if self.progress:
            self.progress(self.report)
        if finished:
            self.done(self.report)
        else:
            self._next()

    def _failed(self, message: str) -> None:
        self.bridge.submit(lambda _s: self._close())
        self.failed(message)
