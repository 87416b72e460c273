"""A child process's exit code in words: how the engine host or the model worker ended (one plain phrase)."""

from __future__ import annotations

import signal

STATUS_ILLEGAL_INSTRUCTION = 0xC000001D  # Windows' exit code for an illegal instruction
_SIGILL = -int(getattr(signal, "SIGILL", 4))
_SIGKILL = -int(getattr(signal, "SIGKILL", 9))


def illegal_instruction(code: int | None) -> bool:
    """The process met an instruction this CPU cannot run (POSIX SIGILL, or Windows' exception code)."""
    return code is not None and (code == _SIGILL or code & 0xFFFFFFFF == STATUS_ILLEGAL_INSTRUCTION)


def how_it_ended(code: int | None) -> str:
    """e.g. "this computer's CPU cannot run it", "the system stopped it (out of memory?)", "it crashed (SIGSEGV)"."""
    if illegal_instruction(code):
        return "this computer's CPU cannot run it"
    if code == _SIGKILL:
        return "the system stopped it (out of memory?)"
    if code is not None and code < 0:
        try:
            name = signal.Signals(-code).name
        except ValueError:
            name = f"signal {-code}"
        return f"it crashed ({name})"
    return f"it ended with exit code {code}"
