"""What sync reports: plain data for every front end (CLI `sync status`, the tray, Settings)."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from ..core.models import relative_time as ago  # '5 min ago' as the app says it everywhere


@dataclass
class MachineState:
    """One machine of the sync set, as this machine knows it."""

    id: str
    name: str
    me: bool = False
    last_seq: int = 0  # the newest log segment seen from it (for this machine: the newest written)
    seen_seq: int = 0  # how far its log has been applied here (all segments up to it)
    last_change: float | None = None  # when it last wrote a change (its clock, epoch seconds)
    removed: bool = False  # removed from the set: its later changes are ignored

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class SyncStatus:
    """Whether this machine syncs, with whom, how far, and any problem in one line."""

    configured: bool = False
    folder: str | None = None
    machine_id: str = ""
    machine_name: str = ""
    machines: list[MachineState] = field(default_factory=list)
    last_sync: float | None = None  # when this machine last exchanged with the folder
    problem: str | None = None  # one line for a person, or None
    pending: int = 0  # local changes not yet written to the folder
    written_bytes: int = 0  # bytes this machine's log holds in the folder
    catching_up: bool = False  # the last exchange stopped with more of the other machines' changes to store

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["line"] = self.line()
        return data

    def line(self, now: float | None = None) -> str:
        """One sentence: "Synced 2 min ago with 2 other machines", "Sync: <problem>", "Sync is off"."""
        if not self.configured:
            return "Sync is off"
        if self.problem:
            return f"Sync: {self.problem}"
        if self.catching_up:
            return "Sync: catching up with the other machines' memories"
        others = sum(1 for m in self.machines if not m.me and not m.removed)
        if self.last_sync is None:
            return "Sync is set up; not synced yet"
        with_ = f"with {others} other machine{'s' if others != 1 else ''}" if others else "(no other machine yet)"
        return f"Synced {ago(self.last_sync, now)} {with_}"
