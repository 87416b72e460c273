"""Reading JSON Lines without holding an over-long line: what the CLI, the socket's client and the engine share.

Kept apart from engine/records.py (the fields' validation, pydantic): a front end that only reads lines and
passes them on does not pay for building the validators (~100 ms of every CLI command's start).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import IO, NamedTuple

LINE_LIMIT_FACTOR = 16  # a JSON line may be this many times settings.max_bytes (escapes, metadata, versions)
MIN_LINE_LIMIT = 1 << 20
_BOM = b"\xef\xbb\xbf"


class Overlong(NamedTuple):
    """A line longer than the limit, skipped unread (only its size is known)."""

    size: int
    limit: int

    def reason(self) -> str:
        return f"the line is too long ({self.size:,} bytes; a line may hold {self.limit:,} bytes)"


def line_limit(max_bytes: int) -> int:
    """The longest JSON line read whole, for a store that keeps texts of up to `max_bytes`."""
    return max(MIN_LINE_LIMIT, LINE_LIMIT_FACTOR * max_bytes)


def read_lines(stream: IO[bytes], limit: int) -> Iterator[bytes | Overlong]:
    """Lines of a binary stream; a line over `limit` bytes is skipped in pieces and comes as `Overlong`.

    At most `limit` + 1 bytes of one line are held, however long the line is.
    """
    first = True
    while line := stream.readline(limit + 1):
        if first:
            first = False
            if line.startswith(_BOM):
                line = line[len(_BOM):]
        if len(line) > limit and not line.endswith(b"\n"):
            size = len(line)
            while rest := stream.readline(1 << 20):
                size += len(rest)
                if rest.endswith(b"\n"):
                    break
            yield Overlong(size, limit)
        else:
            yield line
