"""The Qt step of `desktop-memory --smoke-test` (desktop_memory/smoke.py): the tray icon shown for a moment."""

from __future__ import annotations

from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication, QSystemTrayIcon

from .tray import icon


def show_tray() -> str:
    """Start Qt, show the tray icon for 300 ms and say whether the desktop has a system tray."""
    app = QApplication.instance() or QApplication(["desktop-memory"])
    tray = QSystemTrayIcon(icon("ready"))
    tray.show()
    QTimer.singleShot(300, app.quit)
    app.exec()
    available = QSystemTrayIcon.isSystemTrayAvailable()
    tray.hide()
    return f"tray icon shown (system tray available: {available})"
