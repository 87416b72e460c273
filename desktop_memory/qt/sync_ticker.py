"""The tray's sync line (issue 35), read every minute.

The engine host exchanges with the sync folder by itself (ipc/host.py, every minute); a QTimer here asks it for
`sync_status` through the engine lane, coalesced (a tick still waiting is replaced by the next), so the GUI thread
never waits, and the line says what the status says.
"""

from __future__ import annotations

from PySide6.QtCore import QObject, QTimer, Signal

from ..service.protocol import MemoryOperations
from ..sync.status import SyncStatus
from .bridge import EngineBridge

INTERVAL_MS = 60_000
LANE = "sync-tick"


def read_status(service: MemoryOperations) -> SyncStatus:
    return service.sync_status()


class SyncTicker(QObject):
    """Emits `line(str)`: the status in one sentence while sync is set up, "" while it is off."""

    line = Signal(str)

    def __init__(self, bridge: EngineBridge, parent: QObject | None = None, interval_ms: int = INTERVAL_MS) -> None:
        super().__init__(parent)
        self.bridge = bridge
        self.status = SyncStatus()
        self.failure = ""  # the last tick's error while sync is set up
        self._stopped = False
        self.timer = QTimer(self, interval=interval_ms)
        self.timer.timeout.connect(self.tick)

    def start(self) -> None:
        if not self.timer.isActive() and not self._stopped:
            self.timer.start()
            self.tick()

    def stop(self) -> None:
        """For good (the app quits): a start asked for later (the model loaded meanwhile) does nothing."""
        self._stopped = True
        self.timer.stop()

    def tick(self) -> None:
        if self._stopped:
            return
        try:
            self.bridge.submit(read_status, self.show, self._failed, lane=LANE)
        except RuntimeError:  # the engine lane closed (the bridge stopped without the app quitting): no more ticks
            self.stop()

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
