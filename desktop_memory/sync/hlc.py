"""Hybrid logical clocks: a change's time that orders changes across machines whose clocks disagree.

A stamp is `<ms:015d>-<counter:06d>-<machine>` (compared as text: the same order as the tuple). `now()` is after
every stamp this machine made or saw (Kulkarni et al., 2014), so a change made after seeing another one wins over
it whatever the wall clocks say. A stamp from a machine whose clock runs more than MAX_AHEAD_S ahead is not taken
up (one wrong clock must not drag every machine's stamps years ahead); `ahead_of` says by how much it was.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

MAX_AHEAD_S = 24 * 3600.0
ZERO = "000000000000000-000000-"


def stamp(ms: int, counter: int, machine: str) -> str:
    return f"{ms:015d}-{counter:06d}-{machine}"


def parse(value: str) -> tuple[int, int, str]:
    """(ms, counter, machine); ValueError for anything else."""
    ms, counter, machine = value.split("-", 2)
    if len(ms) != 15 or len(counter) != 6 or not ms.isdigit() or not counter.isdigit():
        raise ValueError(f"not a clock stamp: {value[:40]!r}")
    return int(ms), int(counter), machine


def seconds(value: str) -> float:
    """The wall time a stamp carries, epoch seconds."""
    return parse(value)[0] / 1000.0


class Clock:
    """This machine's hybrid logical clock; `last` is persisted by the caller (it never goes back)."""

    def __init__(self, machine: str, last: str = ZERO, wall: Callable[[], float] = time.time) -> None:
        self.machine = machine
        self._wall = wall
        self._lock = threading.Lock()
        ms, counter, _ = parse(last) if last != ZERO else (0, 0, "")
        self._ms, self._counter = ms, counter

    @property
    def last(self) -> str:
        return stamp(self._ms, self._counter, self.machine)

    def now(self) -> str:
        """A new stamp, after every one made or seen here."""
        with self._lock:
            wall = int(self._wall() * 1000)
            if wall > self._ms:
                self._ms, self._counter = wall, 0
            else:
                self._counter += 1
            return stamp(self._ms, self._counter, self.machine)

    def see(self, value: str) -> float:
        """Take up a stamp from another machine; returns how many seconds it is ahead of this machine's wall clock
        when more than MAX_AHEAD_S (then it is not taken up), else 0."""
        ms, counter, _ = parse(value)
        with self._lock:
            ahead = ms / 1000.0 - self._wall()
            if ahead > MAX_AHEAD_S:
                return ahead
            if (ms, counter) > (self._ms, self._counter):
                self._ms, self._counter = ms, counter
            return 0.0
