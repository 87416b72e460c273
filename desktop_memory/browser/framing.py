"""Native messaging frames: a 4-byte unsigned length in native byte order, then that many bytes of UTF-8 JSON
(one object). At most `LIMIT` bytes each way (the browsers' own limit toward a host is 1 MB too).

`read_frame` keeps the stream in step whatever comes: a frame over the limit is read and thrown away
(`FrameTooLarge` then says how long it was); the end of the stream, also inside a length or a body, is `None`
(the browser closed us). `decode` says in one line why a body is not a JSON object.
"""

from __future__ import annotations

import json
import os
import struct
import sys
from typing import Any, BinaryIO

LIMIT = 1_048_576  # bytes of one frame's body, each way
_LENGTH = struct.Struct("=I")  # native byte order, standard size (4 bytes)
_CHUNK = 65536


class FrameTooLarge(ValueError):
    """A frame (read and discarded, or about to be written) longer than LIMIT."""

    def __init__(self, size: int) -> None:
        super().__init__(f"message too large ({size} bytes; the limit is 1 MB)")
        self.size = size


def _read_exactly(stream: BinaryIO, n: int) -> bytes | None:
    """n bytes, or None at the end of the stream (also partway)."""
    parts, got = [], 0
    while got < n:
        chunk = stream.read(n - got)
        if not chunk:
            return None
        parts.append(chunk)
        got += len(chunk)
    return b"".join(parts)


def _discard(stream: BinaryIO, n: int) -> bool:
    """Read and drop n bytes; False when the stream ended first."""
    while n > 0:
        chunk = stream.read(min(n, _CHUNK))
        if not chunk:
            return False
        n -= len(chunk)
    return True


def read_frame(stream: BinaryIO) -> bytes | None:
    """The next frame's body; None at the end of the stream. Raises FrameTooLarge (the frame already skipped)."""
    head = _read_exactly(stream, _LENGTH.size)
    if head is None:
        return None
    (size,) = _LENGTH.unpack(head)
    if size > LIMIT:
        if not _discard(stream, size):
            return None
        raise FrameTooLarge(size)
    return _read_exactly(stream, size) if size else b""


def decode(body: bytes) -> dict[str, Any]:
    """The JSON object in a frame; ValueError (one line, none of the content) otherwise."""
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError:
        raise ValueError("the message is not valid UTF-8") from None
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(f"the message is not JSON ({exc.msg} at character {exc.pos})") from None
    except RecursionError:
        raise ValueError("the message is nested too deeply") from None
    if not isinstance(value, dict):
        raise ValueError("the message is not a JSON object")
    return value


def encode(message: dict[str, Any]) -> bytes:
    """A whole frame (length and body); FrameTooLarge when the body would pass the limit."""
    text = json.dumps(message, ensure_ascii=False, separators=(",", ":"))
    body = text.encode("utf-8", "replace")  # a lone surrogate (from a JSON escape) becomes "?"
    if len(body) > LIMIT:
        raise FrameTooLarge(len(body))
    return _LENGTH.pack(len(body)) + body


def write_frame(stream: BinaryIO, message: dict[str, Any]) -> None:
    stream.write(encode(message))
    stream.flush()


def binary_stdio() -> tuple[BinaryIO, BinaryIO]:
    """(stdin, stdout) as raw bytes for frames. Windows: both file descriptors in binary mode (no CR-LF
    translation, no end at a 0x1A byte). Whatever else this process prints (a library's stray line) goes to stderr
    from now on: file descriptor 1 becomes a copy of 2, the frames go to a private copy of the old 1."""
    out_fd = os.dup(1)
    try:
        os.dup2(2, 1)
    except OSError:  # no stderr at all (a browser may start us so): stray output goes nowhere
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, 1)
        os.close(null)
    if sys.platform == "win32":
        import msvcrt

        for fd in (0, out_fd):
            msvcrt.setmode(fd, os.O_BINARY)
    sys.stdout = sys.stderr
    return os.fdopen(0, "rb", buffering=0, closefd=False), os.fdopen(out_fd, "wb", buffering=0)
