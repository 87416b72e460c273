"""Importing through the engine lane in chunks, so searches and edits get their turn in between.

One long import job would hold the engine thread for minutes (10,000 memories), and every search
typed meanwhile would wait for it. Each chunk (256 memories, at most 8 MB of text) is its own job; the next is
queued only when the GUI has the previous one's result, so any job submitted in the meantime runs first. The
chunks feed one import (ipc/streaming.py: over the socket to the engine host, or on a helper thread for an
engine in this process), so its pipeline runs across them: the next batch is embedded while the app reads
and sends the next chunk. A file is read in bounded pieces (engine/records.py): a line over the line limit is
skipped unread and reported.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Iterator
from typing import IO, Protocol, cast

from ..engine import records
from ..ipc.streaming import ImportFeed, open_import
from ..service import IMPORT_BATCH_BYTES, ImportReport
from ..service.protocol import MemoryOperations
from .bridge import EngineBridge

log = logging.getLogger(__name__)
Line = str | bytes | records.Overlong
Lines = Iterable[Line]
IMPORT_CHUNK = 256  # the service's own batch; smaller chunks measured slower with no shorter stalls


class _Closable(Protocol):
    def close(self) -> None: ...


class ChunkedImport:
    """Imports JSON Lines chunk by chunk; `progress(report)` after each, `done(report)` at the end."""

    def __init__(self, bridge: EngineBridge, open_lines: Callable[[], Lines | IO[bytes]], *,
                 done: Callable[[ImportReport], None], failed: Callable[[str], None],
                 progress: Callable[[ImportReport], None] | None = None, chunk: int = IMPORT_CHUNK) -> None:
        self.bridge, self.open_lines, self.chunk = bridge, open_lines, chunk
        self.done, self.failed, self.progress = done, failed, progress
        self.report = ImportReport()
        self._lines: Iterator[Line] | None = None
        self._handle: _Closable | None = None  # a file or a generator: closed at the end
        self._feed: ImportFeed | None = None

    def start(self) -> None:
        self._next()

    def _next(self) -> None:
        self.bridge.submit(self._step, self._stepped, self._failed, long=True)

    def _step(self, service: MemoryOperations) -> bool:
        """On the engine thread: feed the next chunk; True when the input is exhausted and the import done."""
        if self._lines is None:
            source = self.open_lines()
            self._handle = cast(_Closable, source) if hasattr(source, "close") else None
            lines: Lines = source
            if hasattr(source, "readline"):  # a file: never a whole over-long line in memory
                lines = records.read_lines(cast(IO[bytes], source), records.line_limit(service.settings.max_bytes))
            self._lines = iter(lines)
            self._feed = open_import(service)
        assert self._feed is not None
        batch, finished = self._take()
        try:  # counted from the start of the file by the import itself (a full disk too)
            self.report = self._feed.finish(batch) if finished else self._feed.feed(batch)
        except BaseException:
            self._close()
            raise
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
        """The file closed, and an import still open ended (what it was given is stored)."""
        if self._handle is not None:
            self._handle.close()
            self._handle = None
        feed, self._feed = self._feed, None
        if feed is not None and not feed.done:
            try:
                feed.finish()
            except Exception:  # noqa: BLE001 - the import already failed; its own message is shown
                log.debug("ending an interrupted import failed", exc_info=True)

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
