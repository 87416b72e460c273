"""The preview pane: a memory's full text (editable in place), summary, entities and metadata."""

from __future__ import annotations

import html
import json

from PySide6.QtCore import QEvent, QObject, Qt, Signal
from PySide6.QtGui import QKeyEvent, QKeySequence, QShortcut
from PySide6.QtWidgets import QHBoxLayout, QLabel, QPlainTextEdit, QPushButton, QVBoxLayout, QWidget

from ..core.models import Memory, to_iso
from . import display


class PreviewPane(QWidget):
    """Shows one memory; Ctrl+S (or Save) asks to store the edited text."""

    save_requested = Signal(str, str)  # memory id, new text
    closed = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.memory: Memory | None = None
        self.title = QLabel()
        self.title.setWordWrap(True)
        self.title.setTextFormat(Qt.TextFormat.PlainText)
        font = self.title.font()
        font.setBold(True)
        self.title.setFont(font)
        self.editor = QPlainTextEdit()
        self.editor.setAccessibleName("Memory text (editable)")
        self.editor.textChanged.connect(self._changed)
        self.details = QLabel()
        self.details.setWordWrap(True)
        self.details.setTextFormat(Qt.TextFormat.RichText)
        self.details.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.save_button = QPushButton("&Save edit")
        self.save_button.setToolTip("Save the edited text (Ctrl+S)")
        self.save_button.clicked.connect(self.save)
        self.save_button.setEnabled(False)
        hint = QLabel("Esc or Left: back to the results · Ctrl+S: save")
        hint.setEnabled(False)
        row = QHBoxLayout()
        row.addWidget(hint, 1)
        row.addWidget(self.save_button)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(6, 0, 0, 0)
        layout.addWidget(self.title)
        layout.addWidget(self.editor, 1)
        layout.addWidget(self.details)
        layout.addLayout(row)
        QShortcut(QKeySequence.StandardKey.Save, self, self.save, context=Qt.ShortcutContext.WidgetWithChildrenShortcut)
        self.editor.installEventFilter(self)

    def show_memory(self, m: Memory) -> None:
        self.memory = m
        self.title.setText(display.title_of(m))
        self.editor.blockSignals(True)
        self.editor.setPlainText(m.content)
        self.editor.blockSignals(False)
        self.save_button.setEnabled(False)
        entities = ", ".join(str(e.get("text") or e.get("name") or e) for e in m.entities) or "none yet"
        rows = [
            ("Summary", m.summary or "none yet"),
            ("Entities", entities),
            ("Source", display.origin(m) + (f" · {m.source_url}" if m.source_url else "")),
            ("Created", (to_iso(m.created_at) or "")[:19].replace("T", " ") + " UTC"),
            ("Tags", " ".join(f"#{t}" for t in m.tags) or "none"),
            ("Importance", f"{m.importance:.2f}" + (" · pinned" if m.pinned else "")),
            ("Id", m.id),
        ]
        if m.metadata:
            rows.append(("Metadata", json.dumps(m.metadata, ensure_ascii=False)[:400]))
        self.details.setText("<table>" + "".join(
            f"<tr><td><b>{html.escape(k)}</b>&nbsp;</td><td>{html.escape(v)}</td></tr>" for k, v in rows) + "</table>")

    def _changed(self) -> None:
        self.save_button.setEnabled(self.memory is not None and self.editor.toPlainText() != self.memory.content)

    def save(self) -> None:
        if self.memory is not None and self.save_button.isEnabled():
            self.save_requested.emit(self.memory.id, self.editor.toPlainText())

    def eventFilter(self, obj: QObject, event: QEvent) -> bool:  # noqa: N802 - Qt override
        if (obj is self.editor and isinstance(event, QKeyEvent) and event.type() == QEvent.Type.KeyPress
                and event.key() == Qt.Key.Key_Escape):
            self.closed.emit()
            return True
        return super().eventFilter(obj, event)
