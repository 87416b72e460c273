"""Sync every minute while sync is set up, and the tray's sync line (issue 35).

The one place the app syncs by itself: a QTimer submits `sync_now` (or only `sync_status` while sync is off) to
the engine lane, coalesced (a tick still waiting is replaced by the next), so the GUI thread never waits. The
engine host may take this over later; then this keeps only the line.
"""

from __future__ import annotations

from PySide6.QtCore import QObject, QTimer, Signal

from ..service.protocol import MemoryOperations
from ..sync.status import SyncStatus
from .bridge import EngineBridge

INTERVAL_MS = 60_000
LANE = "sync-tick"


def sync_if_configured(service: MemoryOperations) -> SyncStatus:
    status = service.sync_status()
    return service.sync_now() if status.configured else status


class SyncTicker(QObject):
    """Emits `line(str)`: the status in one sentence while sync is set up, "" while it is off."""

    line = Signal(str)

    def __init__(self, bridge: EngineBridge, parent: QObject | None = None, interval_ms: int = INTERVAL_MS) -> None:
        super().__init__(parent)
        self.bridge = bridge
        self.status = SyncStatus()
        self.failure = ""  # the last tick's error while sync is set up
        self.timer = QTimer(self, interval=interval_ms)
        self.timer.timeout.connect(self.tick)

    def start(self) -> None:
        if not self.timer.isActive():
            self.timer.start()
            self.tick()

    def stop(self) -> None:
        self.timer.stop()

    def tick(self) -> None:
        self.bridge.submit(sync_if_configured, self.show, self._failed, lane=LANE)

    def show(self, status: SyncStatus) -> None:
        """A status from a tick or from the Settings window's Sync tab."""
        self.status, self.failure = status, ""
        self.line.emit(self.current_line())

    def current_line(self) -> str:
        """The line as of now ("Synced 3 min ago" stays true when the menu opens later)."""
        if not self.status.configured:
            return ""
        return f"Sync: {self.failure}" if self.failure else self.status.line()

    def _failed(self, message: str) -> None:
        if message == "superseded":  # a newer tick replaced it
            return
        self.failure = message.rstrip(".")
        self.line.emit(self.current_line())
