"""The clipboard watcher: every copy becomes a Snapshot; bursts settle into one (core/coalesce.py).

Runs on the GUI thread (QClipboard lives there) and only reads the clipboard: the decision and the
storing happen on the engine thread (capture_now.capture). macOS does not tell a background app about
clipboard changes (Qt's `dataChanged` is unreliable there), so a timer polls NSPasteboard's
`changeCount` every 500 ms instead (capture/pasteboard_macos.py; without pyobjc, Qt's view of it).
"""

from __future__ import annotations

import logging
import sys
import time

from PySide6.QtCore import QObject, QTimer, Signal
from PySide6.QtGui import QClipboard, QGuiApplication

from ..capture import pasteboard_macos
from ..capture.active_window import ActiveWindow
from ..core.capture import Snapshot
from ..core.coalesce import Coalescer
from . import capture_now

log = logging.getLogger(__name__)
POLL_MS = 500  # macOS: NSPasteboard has no change notification for background apps


class ClipboardWatcher(QObject):
    """Emits `copy_settled(Snapshot)` once per burst of copies (never for the same text twice in a row)."""

    copy_settled = Signal(object)

    def __init__(self, parent: QObject | None = None, *, quiet_s: float = 0.4, max_hold_s: float = 2.0) -> None:
        super().__init__(parent)
        self.clipboard = QGuiApplication.clipboard()
        self.windows = ActiveWindow()
        self.coalescer: Coalescer[Snapshot] = Coalescer(quiet_s=quiet_s, max_hold_s=max_hold_s)
        self._timer = QTimer(self, singleShot=True)
        self._timer.timeout.connect(self._release)
        self._poll = QTimer(self, interval=POLL_MS)
        self._poll.timeout.connect(self._poll_changed)
        self._last_seen = ""
        self._last_count: int | None = None
        self.pasteboard = _mac_pasteboard() if sys.platform == "darwin" else None
        self.running = False

    def start(self) -> None:
        if self.running:
            return
        self.running = True
        if self.pasteboard is not None:  # macOS: the change count, polled; no dataChanged (it would double)
            self._last_count = self.pasteboard.change_count()
        else:
            self.clipboard.dataChanged.connect(self._changed)
        if sys.platform == "darwin":
            self._poll.start()
        log.info("clipboard watcher started")

    def stop(self) -> None:
        if not self.running:
            return
        self.running = False
        if self.pasteboard is None:
            self.clipboard.dataChanged.disconnect(self._changed)
        self._poll.stop()
        self._timer.stop()
        self.coalescer.flush()  # a half-settled copy is dropped, not stored after capture was turned off
        log.info("clipboard watcher stopped")

    def _poll_changed(self) -> None:
        if self.pasteboard is not None:
            count = self.pasteboard.change_count()
            if count != self._last_count:
                self._last_count = count
                if not pasteboard_macos.is_own(count):  # not the restore after a selection capture
                    self._changed()
            return
        mime = self.clipboard.mimeData(QClipboard.Mode.Clipboard)
        key = "\0".join(mime.formats()) + (mime.text() if mime is not None and mime.hasText() else "")
        if key != self._last_seen:
            self._last_seen = key
            self._changed()

    def _changed(self) -> None:
        mime = self.clipboard.mimeData(QClipboard.Mode.Clipboard)
        if mime is None or not mime.formats():  # emptied (a password manager clearing it): not a copy
            log.debug("clipboard emptied")
            return
        app, window = self.windows.current()
        snap = capture_now.snapshot(mime, app=app, window=window)
        key = snap.text if snap.text is not None else f"\0{snap.kind}:{sorted(snap.formats)}"
        now = time.monotonic()
        self.coalescer.offer(snap, key, now)
        log.debug("clipboard changed")
        self._arm(now)

    def _arm(self, now: float) -> None:
        due = self.coalescer.deadline()
        if due is not None:
            self._timer.start(max(0, int((due - now) * 1000) + 1))

    def _release(self) -> None:
        now = time.monotonic()
        settled = self.coalescer.release(now)
        if settled is not None:
            self.copy_settled.emit(settled)
        else:
            self._arm(now)


def _mac_pasteboard() -> pasteboard_macos.Pasteboard | None:
    """macOS's general pasteboard, or None without pyobjc (then Qt's view of the clipboard is polled)."""
    try:
        return pasteboard_macos.Pasteboard()
    except Exception:  # noqa: BLE001 - pyobjc missing or broken: the Qt fallback still captures
        log.warning("cannot read NSPasteboard (pyobjc missing?): watching the clipboard through Qt")
        return None
