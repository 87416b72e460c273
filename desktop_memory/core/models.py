"""Plain data passed between the engine and the front ends."""

from __future__ import annotations

import datetime as dt
from dataclasses import asdict, dataclass, field
from typing import Any

SOURCES = ("clipboard", "hotkey", "manual", "cli", "import", "mcp", "chat", "app")

# The times a memory may carry, in epoch seconds: EARLIEST <= t < LATEST. Every reader handles them, in UTC and
# in any local zone: Windows' gmtime/localtime refuse times before 1970 and after 3000 (Python's datetime, years
# 1 to 9999, would allow more, but not a year-1 time shown at UTC-1 or a 9999-12-31 one at UTC+1).
EARLIEST = 0.0  # 1970-01-01T00:00:00Z
LATEST = 32503680000.0  # 3000-01-01T00:00:00Z, the first time refused


def in_range(ts: float) -> bool:
    """Whether epoch seconds are a time a memory may carry (NaN and the infinities are not)."""
    return EARLIEST <= ts < LATEST


def readable(ts: float) -> float:
    """A stored time every reader can show: one out of range (stored before times were checked) becomes the
    nearest end of the range (NaN: the earliest)."""
    if in_range(ts):
        return ts
    return LATEST - 1 if ts >= LATEST else EARLIEST


def to_iso(ts: float | None) -> str | None:
    """Epoch seconds -> ISO 8601 in UTC (None stays None; a time out of range is shown as `readable` makes it)."""
    if ts is None:
        return None
    return dt.datetime.fromtimestamp(readable(ts), dt.UTC).isoformat()


def local(ts: float) -> dt.datetime:
    """Epoch seconds as the person's local time (zone-aware), as context and the app show it. Windows' localtime
    refuses a moment whose local time falls before 1970 (1970-01-01 in a zone west of UTC): shown in UTC then."""
    ts = readable(ts)
    try:
        return _in_local_zone(ts)
    except (OSError, OverflowError, ValueError):
        return dt.datetime.fromtimestamp(ts, dt.UTC)


def relative_time(ts: float, now: float | None = None) -> str:
    """'just now', '5 min ago', '3 h ago', 'yesterday', '4 days ago', else the date."""
    now = dt.datetime.now().timestamp() if now is None else now
    seconds = now - ts
    if seconds < 60:
        return "just now"
    if seconds < 3600:
        return f"{int(seconds // 60)} min ago"
    if seconds < 86400:
        return f"{int(seconds // 3600)} h ago"
    days = int(seconds // 86400)
    if days == 1:
        return "yesterday"
    if days < 7:
        return f"{days} days ago"
    when = local(ts)  # "%-d" is glibc's: Windows' strftime refuses it
    return f"{when.day} {when:%b}" + ("" if when.year == local(now).year else f" {when.year}")


def _in_local_zone(ts: float) -> dt.datetime:
    return dt.datetime.fromtimestamp(ts).astimezone()


def from_iso(value: str) -> float:
    """ISO 8601 -> epoch seconds; a time without a zone is taken as local time (as UTC where the platform cannot
    place it: `local`)."""
    moment = dt.datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
    if moment.tzinfo is None:
        try:
            moment = moment.astimezone()
        except (OSError, OverflowError, ValueError):
            moment = moment.replace(tzinfo=dt.UTC)
    return moment.timestamp()


@dataclass
class Memory:
    """One remembered piece of text and everything known about it."""

    id: str
    content: str
    source: str = "manual"
    summary: str = ""
    title: str = ""
    source_app: str = ""
    source_url: str = ""
    session_id: str | None = None
    tags: list[str] = field(default_factory=list)
    entities: list[dict[str, Any]] = field(default_factory=list)
    importance: float = 0.5
    pinned: bool = False
    forgotten: bool = False
    created_at: float = 0.0
    updated_at: float = 0.0
    accessed_at: float | None = None
    access_count: int = 0
    content_hash: str = ""
    metadata: dict[str, Any] = field(default_factory=dict)
    enrichment_state: str = "pending"
    redactions: int = 0
    family_id: str | None = None  # shared by look-alike memories (the first member's id); None if alone

    def __post_init__(self) -> None:  # a row stored before times were checked must not break any reader
        self.created_at, self.updated_at = readable(self.created_at), readable(self.updated_at)
        if self.accessed_at is not None:
            self.accessed_at = readable(self.accessed_at)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready record with ISO 8601 times."""
        data = asdict(self)
        for key in ("created_at", "updated_at", "accessed_at"):
            data[key] = to_iso(data[key])
        return data


@dataclass(frozen=True)
class Passage:
    """The part of a long memory that answers a query: character offsets into its content."""

    start: int
    end: int

    def of(self, memory: Memory) -> str:
        return self.of_text(memory.content)

    def of_text(self, content: str) -> str:
        return content[self.start : self.end]


@dataclass
class Hit:
    """A memory found by a search, with its final score and per-channel explanation."""

    memory: Memory
    score: float
    explain: dict[str, Any] = field(default_factory=dict)
    similar: list[Memory] = field(default_factory=list)  # look-alikes collapsed into this hit, best first
    passage: Passage | None = None  # in a long memory, the part that best matches the query (None: short)
    weak: bool = False  # a weak match: far in meaning and holding little of the query (after every good one)

    def to_dict(self, *, explain: bool = False) -> dict[str, Any]:
        data = self.memory.to_dict()
        data["score"] = round(self.score, 6)
        data["similar"] = [m.id for m in self.similar]
        data["weak"] = self.weak
        if self.passage is not None:
            data["passage"] = {"start": self.passage.start, "end": self.passage.end,
                               "text": self.passage.of(self.memory)}
        if explain:
            data["explain"] = self.explain
        return data


@dataclass
class Version:
    """An earlier text of a memory, kept when a longer capture from the same source replaced it."""

    seq: int
    content: str
    content_hash: str
    created_at: float  # when this text was captured
    replaced_at: float  # when a longer capture (or a restore) replaced it
    redactions: int = 0

    def __post_init__(self) -> None:
        self.created_at, self.replaced_at = readable(self.created_at), readable(self.replaced_at)

    def to_dict(self) -> dict[str, Any]:
        return {"seq": self.seq, "content": self.content, "created_at": to_iso(self.created_at),
                "replaced_at": to_iso(self.replaced_at)}
