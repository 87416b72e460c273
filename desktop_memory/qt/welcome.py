"""The first-start welcome: the hotkeys, what is captured and what never is, where the data lives.

Shown once (Settings.welcome_shown), centred on the screen, with a button that opens the search window.
"""

from __future__ import annotations

import html
from pathlib import Path

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QCursor, QGuiApplication, QKeySequence
from PySide6.QtWidgets import QDialog, QHBoxLayout, QLabel, QPushButton, QVBoxLayout

from ..engine.settings import Settings


def _key(combo: str) -> str:
    shown = QKeySequence(combo).toString(QKeySequence.SequenceFormat.NativeText) if combo else ""
    return f"<b>{html.escape(shown)}</b>" if shown else "<i>no hotkey set</i>"


def welcome_html(settings: Settings, data_dir: Path) -> str:
    """The welcome's text (plain facts; no memory content)."""
    capture = ("Everything you <b>copy</b> as text is remembered, quietly: no pop-up per copy (see "
               "<i>Recent captures</i> in the tray menu)." if settings.capture_enabled else
               "Clipboard capture is <b>off</b>: only what you capture with the hotkeys is remembered "
               "(turn it on in Settings).")
    return f"""
<h2>desktop-memory remembers what you copy, on this computer only</h2>
<table cellspacing="4">
<tr><td>{_key(settings.hotkey_search)}</td><td>open the search; type a few words, Enter copies the context</td></tr>
<tr><td>{_key(settings.hotkey_capture)}</td><td>save what is on the clipboard now</td></tr>
<tr><td>{_key(settings.hotkey_selection)}</td><td>save the text you have selected</td></tr>
</table>
<p><b>What is captured.</b> {capture}</p>
<p><b>What never is.</b> Copies a password manager marks as secret, anything copied from a password manager
app or a private browsing window, one-time codes, text that looks like a password; API keys, tokens and
passwords inside longer text are replaced by <code>[REDACTED]</code> before anything is stored. Pause capture
from the tray menu at any time.</p>
<p><b>Where it lives.</b> In <code>{html.escape(str(data_dir))}</code>, on this machine; nothing is sent
anywhere. The tray icon's menu has Settings, Pause and Quit.</p>
"""


class WelcomeWindow(QDialog):
    """A short welcome with "Open search" and "Got it"."""

    search_requested = Signal()

    def __init__(self, settings: Settings, data_dir: Path) -> None:
        super().__init__()
        self.setWindowTitle("Welcome to desktop-memory")
        self.text = QLabel(welcome_html(settings, data_dir))
        self.text.setWordWrap(True)
        self.text.setTextFormat(Qt.TextFormat.RichText)
        self.text.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.text.setMinimumWidth(520)
        self.open_search = QPushButton("Open the &search")
        self.open_search.setDefault(True)
        self.open_search.clicked.connect(self._search)
        done = QPushButton("&Got it")
        done.setAutoDefault(False)
        done.clicked.connect(self.accept)
        buttons = QHBoxLayout()
        buttons.addStretch(1)
        buttons.addWidget(done)
        buttons.addWidget(self.open_search)
        layout = QVBoxLayout(self)
        layout.addWidget(self.text)
        layout.addLayout(buttons)

    def _search(self) -> None:
        self.accept()
        self.search_requested.emit()

    def show_centred(self) -> None:
        """Show it in the middle of the screen the pointer is on."""
        self.adjustSize()
        screen = QGuiApplication.screenAt(QCursor.pos()) or QGuiApplication.primaryScreen()
        if screen is not None:
            area = screen.availableGeometry()
            self.move(area.x() + (area.width() - self.width()) // 2, area.y() + (area.height() - self.height()) // 2)
        self.show()
        self.raise_()
        self.activateWindow()
