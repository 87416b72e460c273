"""The preview pane: a memory's full text (editable in place), summary, entities, metadata, and the earlier
versions of a capture that a longer one extended (each restorable)."""

from __future__ import annotations

import html
import json

from PySide6.QtCore import QEvent, QObject, Qt, Signal
from PySide6.QtGui import QKeyEvent, QKeySequence, QShortcut, QTextCursor
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QPlainTextEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from ..core import models
from ..core.models import Memory, Passage, Version
from ..core.text import first_line
from . import display, kinds
from .result_row import secondary


def local_time(ts: float | None) -> str:
    """A moment in the person's own time zone: 'Tue 24 Nov 2026, 06:05 CET' (never UTC unless they live there)."""
    if not ts:
        return ""
    when = models.local(ts)
    return f"{when.strftime('%a')} {when.day} {when.strftime('%b %Y, %H:%M')} {when.tzname() or ''}".rstrip()


class PreviewPane(QWidget):
    """Shows one memory; Ctrl+S (or Save) asks to store the edited text."""

    save_requested = Signal(str, str)  # memory id, new text
    restore_requested = Signal(str, int)  # memory id, version seq
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
        self.versions_label = QLabel()
        self.versions = QListWidget()
        self.versions.setAccessibleName("Earlier versions")
        self.versions.setMaximumHeight(110)
        self.restore_button = QPushButton("&Restore version")
        self.restore_button.setToolTip("Make the chosen earlier text current again (the current text is kept "
                                       "as a version)")
        self.versions.currentRowChanged.connect(lambda _: self.restore_button.setEnabled(
            self.versions.currentItem() is not None))
        self.restore_button.clicked.connect(self.restore)
        self.restore_button.setEnabled(False)
        self.versions_row = QWidget()
        vrow = QVBoxLayout(self.versions_row)
        vrow.setContentsMargins(0, 0, 0, 0)
        vrow.addWidget(self.versions_label)
        vrow.addWidget(self.versions)
        vrow.addWidget(self.restore_button, 0, Qt.AlignmentFlag.AlignRight)
        self.versions_row.hide()
        hint = QLabel("Esc or Left: back to the results · Ctrl+S: save")
        hint.setStyleSheet(f"color: {secondary(hint.palette()).name()};")
        row = QHBoxLayout()
        row.addWidget(hint, 1)
        row.addWidget(self.save_button)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(6, 0, 0, 0)
        layout.addWidget(self.title)
        layout.addWidget(self.editor, 1)
        layout.addWidget(self.details)
        layout.addWidget(self.versions_row)
        layout.addLayout(row)
        QShortcut(QKeySequence.StandardKey.Save, self, self.save, context=Qt.ShortcutContext.WidgetWithChildrenShortcut)
        self.editor.installEventFilter(self)

    def show_memory(self, m: Memory, passage: Passage | None = None) -> None:
        """Show a memory; the same text shown again (the next keystroke's results hold it too) is not laid out
        again, and keeps the cursor, the scroll position and an edit not saved yet. A long memory opens at the
        `passage` that matched the query, selected."""
        same = self.memory is not None and self.memory.id == m.id and self.memory.content == m.content
        if not same:
            self.show_versions(m.id, [])  # until the engine says which earlier texts it keeps
        self.memory = m
        self.title.setText(display.title_of(m))
        if not same:
            self.editor.blockSignals(True)
            code = kinds.kind_of(m) == "code"
            self.editor.setFont(kinds.monospace(self.font()) if code else self.font())
            self.editor.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap if code
                                        else QPlainTextEdit.LineWrapMode.WidgetWidth)
            self.editor.setPlainText(m.content)
            if passage is not None and 0 <= passage.start < passage.end <= len(m.content):
                self._select(passage)
            self.editor.blockSignals(False)
            self.save_button.setEnabled(False)
        entities = ", ".join(str(e.get("text") or e.get("name") or e) for e in m.entities) or "none yet"
        rows = [
            ("Summary", m.summary or "none yet"),
            ("Entities", entities),
            ("Source", display.origin(m) + (f" · {m.source_url}" if m.source_url else "")),
            ("Created", local_time(m.created_at)),
            *([("Changed", local_time(m.updated_at))] if m.updated_at and m.updated_at - m.created_at > 60 else []),
            *([("Last used", local_time(m.accessed_at))] if m.accessed_at else []),
            ("Tags", " ".join(f"#{t}" for t in m.tags) or "none"),
            ("Importance", f"{m.importance:.2f}" + (" · pinned" if m.pinned else "")),
            ("Id", m.id),
        ]
        if m.metadata:
            rows.append(("Metadata", json.dumps(m.metadata, ensure_ascii=False)[:400]))
        self.details.setText("<table>" + "".join(
            f"<tr><td><b>{html.escape(k)}</b>&nbsp;</td><td>{html.escape(v)}</td></tr>" for k, v in rows) + "</table>")

    def _select(self, passage: Passage) -> None:
        """Select the passage and scroll it into the middle of the view (positions in UTF-16 units, as Qt counts)."""
        text = self.editor.toPlainText()
        start = len(text[: passage.start].encode("utf-16-le")) // 2
        end = start + len(text[passage.start : passage.end].encode("utf-16-le")) // 2
        cursor = self.editor.textCursor()
        cursor.setPosition(end)
        cursor.setPosition(start, QTextCursor.MoveMode.KeepAnchor)
        self.editor.setTextCursor(cursor)
        self.editor.centerCursor()

    def show_versions(self, memory_id: str, versions: list[Version]) -> None:
        """List the earlier texts of the memory shown (newest first); hidden when there are none."""
        if self.memory is not None and self.memory.id != memory_id:
            return
        self.versions.clear()
        for v in reversed(versions):
            when = local_time(v.created_at)
            item = QListWidgetItem(f"{when}  {first_line(v.content, 80)}")
            item.setData(Qt.ItemDataRole.UserRole, v.seq)
            item.setToolTip(v.content[:2000])
            self.versions.addItem(item)
        n = len(versions)
        self.versions_label.setText(f"<b>Earlier version{'s' if n != 1 else ''}</b> ({n}), kept when a longer "
                                    "copy from the same place replaced it")
        self.restore_button.setEnabled(False)
        self.versions_row.setVisible(bool(versions))

    def restore(self) -> None:
        item = self.versions.currentItem()
        if self.memory is not None and item is not None:
            self.restore_requested.emit(self.memory.id, int(item.data(Qt.ItemDataRole.UserRole)))

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
