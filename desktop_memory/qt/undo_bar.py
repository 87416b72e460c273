"""The search panel's undo bar: "Forgot N memories", an Undo button, gone after UNDO_MS."""

from __future__ import annotations

from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QPushButton, QWidget

UNDO_MS = 10_000


class UndoBar(QFrame):
    """Shown after a forget; `undo` is its button (Ctrl+Z does the same), `timer` ends the offer after UNDO_MS."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.label = QLabel()
        self.undo = QPushButton("&Undo")
        self.undo.setToolTip("Bring the forgotten memories back (Ctrl+Z)")
        bar = QHBoxLayout(self)
        bar.setContentsMargins(14, 2, 14, 2)
        bar.addWidget(self.label, 1)
        bar.addWidget(self.undo)
        self.timer = QTimer(self, singleShot=True, interval=UNDO_MS)
        self.hide()

    def offer(self, forgotten: int) -> None:
        """Say how many memories were forgotten and offer them back until the timer ends."""
        n = forgotten
        self.label.setText(f"Forgot {n} memor{'y' if n == 1 else 'ies'}. Ctrl+Z brings "
                           f"{'it' if n == 1 else 'them'} back.")
        self.show()
        self.timer.start()

    def withdraw(self) -> None:
        self.hide()
        self.timer.stop()
