"""Reading a child's or a parent's pipe without the C runtime's lock (the engine host's stdin, the model worker's
answers)."""

from __future__ import annotations

import os
from collections.abc import Iterator


def read_raw(fd: int) -> bytes:
    """One read of the descriptor `fd`, below the C runtime on Windows.

    The C runtime's read() holds fd's lock until data comes; a DLL loaded meanwhile (numpy's, on the engine's
    first import) waits for that lock, so the host hung at start (found under Wine). ReadFile takes no lock.
    """
    if os.name == "nt":
        import _winapi  # noqa: PLC0415 - Windows only
        import msvcrt  # noqa: PLC0415 - Windows only

        try:
            data, _ = _winapi.ReadFile(msvcrt.get_osfhandle(fd), 65536)  # type: ignore[attr-defined]
        except BrokenPipeError:  # the writer closed its end: EOF
            return b""
        return bytes(data)
    return os.read(fd, 65536)


def read_lines(fd: int) -> Iterator[bytes]:
    """The lines written to `fd` (each with its newline; a last one without), until EOF."""
    pending = b""
    while chunk := read_raw(fd):
        pending += chunk
        *lines, pending = pending.split(b"\n")
        for line in lines:
            yield line + b"\n"
    if pending:
        yield pending
