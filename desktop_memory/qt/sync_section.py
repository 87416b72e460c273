"""Settings' Sync tab: sync between the person's machines through a folder they already sync (issue 35).

Every engine call goes through the bridge (the GUI thread never waits); an error is a readable line in the tab
(and a notice). The recovery phrase is shown in a dialog and copied marked as a secret, so neither this app's
clipboard watcher nor another clipboard manager keeps it.
"""

from __future__ import annotations

import html
from pathlib import Path
from typing import Any

from PySide6.QtCore import QByteArray, QMimeData, Qt, Signal
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import (
    QButtonGroup,
    QDialog,
    QDialogButtonBox,
    QFileDialog,
    QGridLayout,
    QHBoxLayout,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QMessageBox,
    QPlainTextEdit,
    QPushButton,
    QRadioButton,
    QVBoxLayout,
    QWidget,
)

from ..core.capture import KDE_HINT, OWN_MIME
from ..sync import wire
from ..sync.status import SyncStatus, ago
from .bridge import EngineBridge

ID_ROLE = Qt.ItemDataRole.UserRole


def copy_secret(text: str) -> None:
    """On the clipboard, marked as ours (not captured) and as a secret (KDE's password-manager hint)."""
    mime = QMimeData()
    mime.setText(text)
    mime.setData(OWN_MIME, QByteArray(b"secret"))
    mime.setData(KDE_HINT, QByteArray(b"secret"))
    QGuiApplication.clipboard().setMimeData(mime)


def holds_a_set(folder: Path) -> bool:
    """The folder already holds a sync set (another machine made it): joining is the likely choice."""
    try:
        return (wire.sync_dir(folder) / wire.SET_FILE).is_file()
    except OSError:
        return False


class SetupDialog(QDialog):
    """A new set, or join one with its recovery phrase (typed or pasted in any form)."""

    def __init__(self, folder: Path, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.folder = folder
        self.setWindowTitle("Set up sync")
        where = QLabel(f"Sync through <b>{html.escape(str(folder))}</b>")
        where.setWordWrap(True)
        self.new = QRadioButton("Start a &new sync set (this is the first of my machines)")
        self.join = QRadioButton("&Join the set of my other machine with its recovery phrase:")
        group = QButtonGroup(self)
        group.addButton(self.new)
        group.addButton(self.join)
        self.phrase = QPlainTextEdit()
        self.phrase.setPlaceholderText("the 24 words shown by “Show recovery phrase” on your other machine")
        self.phrase.setAccessibleName("Recovery phrase")
        self.phrase.setTabChangesFocus(True)
        self.phrase.setFixedHeight(self.phrase.fontMetrics().lineSpacing() * 4 + 12)
        self.join.toggled.connect(self.phrase.setEnabled)
        (self.join if holds_a_set(folder) else self.new).setChecked(True)
        self.phrase.setEnabled(self.join.isChecked())
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel)
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        for w in (where, self.new, self.join, self.phrase, buttons):
            layout.addWidget(w)

    def chosen_phrase(self) -> str | None:
        """The phrase to join with; None for a new set."""
        return self.phrase.toPlainText() if self.join.isChecked() else None


class PhraseDialog(QDialog):
    """The recovery phrase, numbered, with Copy."""

    def __init__(self, phrase: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.phrase = phrase
        self.setWindowTitle("Recovery phrase")
        intro = QLabel("Another machine joins this sync set with these 24 words (Settings › Sync › Set up…, or "
                       "<code>desktop-memory sync setup FOLDER --phrase -</code>). Keep them private: they open "
                       "your memories.")
        intro.setWordWrap(True)
        grid = QGridLayout()
        words = phrase.split()
        rows = (len(words) + 3) // 4
        for i, word in enumerate(words):
            label = QLabel(f"{i + 1:>2}. {word}")
            label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
            grid.addWidget(label, i % rows, i // rows)
        copy = QPushButton("&Copy")
        copy.clicked.connect(lambda: copy_secret(self.phrase))
        close = QPushButton("Close")
        close.setDefault(True)
        close.clicked.connect(self.accept)
        row = QHBoxLayout()
        row.addStretch(1)
        row.addWidget(copy)
        row.addWidget(close)
        layout = QVBoxLayout(self)
        layout.addWidget(intro)
        layout.addLayout(grid)
        layout.addLayout(row)


class SyncSection(QWidget):
    """The status line, the machines, and Set up…, Sync now, Show recovery phrase, Stop syncing, Remove machine…"""

    notice = Signal(str)
    status_changed = Signal(object)  # the SyncStatus after each call (the tray shows its line)

    def __init__(self, bridge: EngineBridge | None, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.bridge = bridge
        self.status = SyncStatus()
        self.setup_dialog: SetupDialog | None = None  # the last ones shown (tests drive them)
        self.phrase_dialog: PhraseDialog | None = None
        self.line = QLabel("Sync is off")
        self.line.setWordWrap(True)
        self.line.setTextFormat(Qt.TextFormat.PlainText)
        self.folder = QLabel()
        self.folder.setWordWrap(True)
        self.folder.setTextFormat(Qt.TextFormat.PlainText)
        self.folder.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.machines = QListWidget()
        self.machines.setAccessibleName("Machines of the sync set")
        self.machines.setFixedHeight(self.machines.fontMetrics().lineSpacing() * 5 + 12)
        self.error = QLabel()
        self.error.setWordWrap(True)
        self.error.setTextFormat(Qt.TextFormat.PlainText)
        self.error.setStyleSheet("color: #c0392b")
        self.error.hide()
        self.setup_button = QPushButton("Set &up…")
        self.setup_button.clicked.connect(self.choose_setup)
        self.now_button = QPushButton("Sync no&w")
        self.now_button.clicked.connect(self.sync_now)
        self.phrase_button = QPushButton("Show recovery p&hrase")
        self.phrase_button.clicked.connect(self.show_phrase)
        self.leave_button = QPushButton("Stop syncing on this compute&r")
        self.leave_button.clicked.connect(self.confirm_leave)
        self.remove_button = QPushButton("Remo&ve machine…")
        self.remove_button.clicked.connect(self.confirm_remove)
        explain = QLabel("Keep your memories the same on all your machines through a folder you already sync "
                         "(Syncthing, Dropbox, iCloud Drive, OneDrive, Nextcloud, a USB stick). Only encrypted logs "
                         "go there, never the database.")
        explain.setWordWrap(True)
        row1, row2 = QHBoxLayout(), QHBoxLayout()
        for b in (self.setup_button, self.now_button, self.phrase_button):
            row1.addWidget(b)
        for b in (self.remove_button, self.leave_button):
            row2.addWidget(b)
        row1.addStretch(1)
        row2.addStretch(1)
        layout = QVBoxLayout(self)
        for w in (explain, self.line, self.folder, self.machines):
            layout.addWidget(w)
        layout.addLayout(row1)
        layout.addLayout(row2)
        layout.addWidget(self.error)
        layout.addStretch(1)
        self.show_status(SyncStatus())

    # -- the engine ---------------------------------------------------------------------------
    def _submit(self, fn: Any, done: Any, *, long: bool = False) -> None:
        if self.bridge is None:  # a layout probe without an engine
            return
        self.error.hide()
        self.bridge.submit(fn, done, self.show_error, long=long, retry=not long)

    def refresh(self) -> None:
        if self.bridge is not None:
            self.bridge.submit(lambda s: s.sync_status(), self.show_status, self.show_error, lane="sync-status")

    def setup(self, folder: Path, phrase: str | None = None) -> None:
        """Sync through `folder`: a new set (no phrase) or the set the phrase opens."""
        def done(status: SyncStatus) -> None:
            self.show_status(status)
            self.notice.emit(f"Sync set up: {status.line()}")
            if phrase is None and not any(not m.me for m in status.machines):
                self.show_phrase()  # a new set: the phrase the next machine needs

        self._submit(lambda s: s.sync_setup(folder, phrase), done, long=True)

    def sync_now(self) -> None:
        self._submit(lambda s: s.sync_now(), self.show_status, long=True)

    def show_phrase(self) -> None:
        self._submit(lambda s: s.sync_phrase(), self._phrase_shown)

    def leave(self) -> None:
        self._submit(lambda s: s.sync_leave(), self._left)

    def remove(self, machine: str) -> None:
        def done(status: SyncStatus) -> None:
            self.show_status(status)
            self.notice.emit("Machine removed from the sync set")

        self._submit(lambda s: s.sync_remove(machine), done, long=True)

    # -- what the person sees ---------------------------------------------------------------------
    def show_status(self, status: SyncStatus) -> None:
        self.status = status
        self.line.setText(status.line())
        self.folder.setText(f"Folder: {status.folder}" if status.configured and status.folder else "")
        self.folder.setVisible(status.configured)
        self.machines.clear()
        for m in status.machines:
            when = f"last change {ago(m.last_change)}" if m.last_change is not None else "no change yet"
            text = f"{m.name} (this computer)" if m.me else f"{m.name}: {when}, {m.seen_seq} of {m.last_seq} seen"
            if m.removed:
                text += " (removed)"
            item = QListWidgetItem(text)
            item.setData(ID_ROLE, "" if m.me or m.removed else m.id)
            self.machines.addItem(item)
        self.machines.setVisible(status.configured)
        for b in (self.now_button, self.phrase_button, self.leave_button, self.remove_button):
            b.setEnabled(status.configured)
        self.setup_button.setEnabled(not status.configured)
        self.status_changed.emit(status)

    def show_error(self, message: str) -> None:
        if message == "superseded":
            return
        self.error.setText(message)
        self.error.show()
        self.notice.emit(message)

    def _phrase_shown(self, phrase: str) -> None:
        self.phrase_dialog = PhraseDialog(phrase, self)
        self.phrase_dialog.open()

    def _left(self, status: SyncStatus) -> None:
        self.show_status(status)
        self.notice.emit("Sync stopped on this computer (its memories stay)")

    # -- choices ------------------------------------------------------------------------------------
    def choose_setup(self) -> None:
        path = QFileDialog.getExistingDirectory(self, "Choose the folder your sync app keeps on every machine",
                                                str(Path.home()))
        if not path:
            return
        self.setup_dialog = SetupDialog(Path(path), self)
        dialog = self.setup_dialog
        dialog.accepted.connect(lambda: self.setup(dialog.folder, dialog.chosen_phrase()))
        dialog.open()

    def confirm_leave(self) -> None:
        answer = QMessageBox.question(
            self, "Stop syncing?", "Stop syncing on this computer? Its memories stay here; the other machines "
            "keep theirs. To sync again, set it up again with the recovery phrase.")
        if answer == QMessageBox.StandardButton.Yes:
            self.leave()

    def chosen_machine(self) -> str:
        item = self.machines.currentItem()
        return str(item.data(ID_ROLE) or "") if item is not None else ""

    def confirm_remove(self) -> None:
        machine = self.chosen_machine()
        if not machine:
            self.show_error("Choose another machine in the list first")
            return
        name = self.machines.currentItem().text().split(":")[0]
        answer = QMessageBox.question(
            self, "Remove this machine?", f"Remove {name} from the sync set? It gets none of the later changes "
            "(the set moves to a new key it does not have); what it already has stays on it.")
        if answer == QMessageBox.StandardButton.Yes:
            self.remove(machine)
