"""Bursts of copies become one memory (pure logic; the caller owns the clock and the timer).

Ten copies within a second are usually a person selecting, adjusting and copying again: only the
last one is meant. A copy is released after `quiet_s` without a newer one, or after `max_hold_s`
at the latest, so a long stream of copies cannot hold everything back forever. A copy identical
to the one released just before is dropped (the engine would only bump it anyway).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Generic, TypeVar

T = TypeVar("T")


@dataclass
class _Pending(Generic[T]):
    item: T
    key: str
    first_at: float
    last_at: float


class Coalescer(Generic[T]):
    def __init__(self, quiet_s: float = 0.8, max_hold_s: float = 3.0) -> None:
        self.quiet_s = quiet_s
        self.max_hold_s = max_hold_s
        self._pending: _Pending[T] | None = None
        self._last_released: str | None = None
        self.dropped = 0  # copies replaced by a newer one in the same burst

    def offer(self, item: T, key: str, now: float) -> None:
        """A new copy; `key` identifies its content (e.g. the text)."""
        if self._pending is None:
            self._pending = _Pending(item, key, now, now)
            return
        self.dropped += 1
        self._pending = _Pending(item, key, self._pending.first_at, now)

    def deadline(self) -> float | None:
        """When `release` should be called next (None: nothing pending)."""
        p = self._pending
        return None if p is None else min(p.last_at + self.quiet_s, p.first_at + self.max_hold_s)

    def release(self, now: float) -> T | None:
        """The settled copy, if its burst is over; None otherwise (or when it repeats the last one)."""
        due = self.deadline()
        if due is None or now < due:
            return None
        p, self._pending = self._pending, None
        assert p is not None
        if p.key == self._last_released:
            return None
        self._last_released = p.key
        return p.item

    def flush(self) -> T | None:
        """Release whatever is pending now (capture paused or the app quitting)."""
        p = self._pending
        return None if p is None else self.release(p.last_at + self.quiet_s)
