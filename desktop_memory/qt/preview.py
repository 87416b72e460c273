"""The preview pane, made for people: a memory's title, when and where it comes from, its text with its lines
(editable in place; code in a fixed-pitch font, a long text opened at the passage that matched), its tags and
entities as chips, and the earlier versions of a capture that a longer one extended (each restorable). Ids,
importance and the raw metadata wait behind a "Details" disclosure, collapsed until asked for.

The pane never asks to be wider for what it shows: labels wrap or elide (preview_widgets.py)."""

from __future__ import annotations

import html
from dataclasses import replace

from PySide6.QtCore import QEvent, QObject, Qt, Signal
from PySide6.QtGui import QColor, QFontMetricsF, QKeyEvent, QKeySequence, QPalette, QShortcut, QTextCursor
from PySide6.QtWidgets import (
    QFrame,
    QHBoxLayout,
    QListWidget,
    QListWidgetItem,
    QPlainTextEdit,
    QPushButton,
    QScrollArea,
    QSizePolicy,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from ..core.headline import cut
from ..core.models import Memory, Passage, Version
from ..core.text import first_line
from . import display, kinds
from . import preview_text as words
from .preview_text import local_time
from .preview_widgets import Chip, ChipRow, ElidedLabel, WrapLabel, blend, readable, set_fg

__all__ = ["PreviewPane", "local_time"]
SUMMARY_CHARS = 220
DETAILS_HEIGHT = 170  # the open details scroll beyond this


class PreviewPane(QWidget):
    """Shows one memory; Ctrl+S (or Save) asks to store the edited text."""

    save_requested = Signal(str, str)  # memory id, new text
    restore_requested = Signal(str, int)  # memory id, version seq
    closed = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.memory: Memory | None = None
        self._details_of: str | None = None  # the memory whose details are filled in
        self._chips_key: object = None
        self._facts_key: object = None
        self._facts_value: tuple[bool, str, str] = (False, "", "")
        self.title = WrapLabel()
        self.title.setAccessibleName("Title")
        font = self.title.font()
        font.setBold(True)
        font.setPointSizeF(font.pointSizeF() * 1.12 if font.pointSizeF() > 0 else font.pointSizeF())
        self.title.setFont(font)
        self.when = WrapLabel()
        self.when.setAccessibleName("When")
        self.source = WrapLabel()
        self.source.setAccessibleName("Where from")
        self.window_line = ElidedLabel(Qt.TextElideMode.ElideRight)
        self.window_line.setAccessibleName("Window")
        self.url_line = ElidedLabel(Qt.TextElideMode.ElideMiddle)
        self.url_line.setAccessibleName("Web address")
        self.file_line = ElidedLabel(Qt.TextElideMode.ElideMiddle)
        self.file_line.setAccessibleName("Imported file")
        self.summary = WrapLabel()
        self.summary.setAccessibleName("Summary")
        italic = self.summary.font()
        italic.setItalic(True)
        self.summary.setFont(italic)
        self.editor = QPlainTextEdit()
        self.editor.setAccessibleName("Memory text (editable)")
        self.editor.textChanged.connect(self._changed)
        self.chips = ChipRow()
        self.chips.setAccessibleName("Tags and entities")
        self.chips.hide()

        self.details_button = QToolButton()
        self.details_button.setText("Details")
        self.details_button.setCheckable(True)
        self.details_button.setAutoRaise(True)
        self.details_button.setArrowType(Qt.ArrowType.RightArrow)
        self.details_button.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
        self.details_button.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
        self.details_button.setToolTip("Show the id, importance, times and raw metadata (Alt+D)")
        self.details_button.setAccessibleName("Details")
        self.details_button.toggled.connect(self._show_details)
        self.details = WrapLabel(rich=True)
        self.details.setAccessibleName("Details")
        self.details.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.details_area = QScrollArea()
        self.details_area.setWidget(self.details)
        self.details_area.setWidgetResizable(True)
        self.details_area.setFrameShape(QFrame.Shape.NoFrame)
        self.details_area.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.details_area.setMaximumHeight(DETAILS_HEIGHT)
        self.details_area.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Maximum)
        self.details_area.viewport().setAutoFillBackground(False)
        self.details.setAutoFillBackground(False)
        self.details_area.hide()

        self.save_button = QPushButton("&Save edit")
        self.save_button.setToolTip("Save the edited text (Ctrl+S)")
        self.save_button.clicked.connect(self.save)
        self.save_button.setEnabled(False)
        self.versions_label = WrapLabel(rich=True)
        self.versions = QListWidget()
        self.versions.setAccessibleName("Earlier versions")
        self.versions.setMaximumHeight(110)
        self.versions.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.versions.setTextElideMode(Qt.TextElideMode.ElideRight)
        self.versions.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
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
        self.hint = WrapLabel()
        self.hint.set_text("Esc or Left: back to the results · Ctrl+S: save")
        row = QHBoxLayout()
        row.addWidget(self.hint, 1)
        row.addWidget(self.save_button)

        header = QVBoxLayout()
        header.setSpacing(1)
        for w in (self.title, self.when, self.source, self.window_line, self.url_line, self.file_line):
            header.addWidget(w)
        header.addSpacing(3)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(8, 2, 2, 0)
        layout.setSpacing(5)
        layout.addLayout(header)
        layout.addWidget(self.summary)
        layout.addWidget(self.editor, 1)
        layout.addWidget(self.chips)
        layout.addWidget(self.details_button, 0, Qt.AlignmentFlag.AlignLeft)
        layout.addWidget(self.details_area)
        layout.addWidget(self.versions_row)
        layout.addLayout(row)
        QShortcut(QKeySequence.StandardKey.Save, self, self.save, context=Qt.ShortcutContext.WidgetWithChildrenShortcut)
        QShortcut(QKeySequence("Alt+D"), self, self.details_button.click)  # from the results too, while shown
        self.editor.installEventFilter(self)
        self._recolour()

    # -- showing a memory -------------------------------------------------------------------------
    def show_memory(self, m: Memory, passage: Passage | None = None) -> None:
        """Show a memory; the same text shown again (the next keystroke's results hold it too) is not laid out
        again, and keeps the cursor, the scroll position and an edit not saved yet. A long memory opens at the
        `passage` that matched the query, selected."""
        same = self.memory is not None and self.memory.id == m.id and self.memory.content == m.content
        if not same:
            self.show_versions(m.id, [])  # until the engine says which earlier texts it keeps
        self.memory = m
        code, title, summary = self._facts(m)
        self._header(m, title, summary)
        if not same:
            self.editor.blockSignals(True)
            font = kinds.monospace(self.font()) if code else self.font()
            self.editor.setFont(font)
            self.editor.setTabStopDistance(4 * QFontMetricsF(font).horizontalAdvance(" "))
            self.editor.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap if code
                                        else QPlainTextEdit.LineWrapMode.WidgetWidth)
            self.editor.setPlainText(m.content)
            if passage is not None and 0 <= passage.start < passage.end <= len(m.content):
                self._select(passage)
            self.editor.blockSignals(False)
            self.save_button.setEnabled(False)
        self._show_chips(m)
        self._details_of = None
        if self.details_button.isChecked():
            self._fill_details()

    def _facts(self, m: Memory) -> tuple[bool, str, str]:
        """(whether it is code, its title, its summary), read from at most SCAN_CHARS of its text, once per text:
        the next keystroke's results show the same memory again, and a 2 MB copy must not be read each time."""
        key = (m.id, m.content_hash, len(m.content), m.updated_at, m.title, m.summary)
        if key != self._facts_key:
            short = m if len(m.content) <= words.SCAN_CHARS else replace(m, content=m.content[: words.SCAN_CHARS])
            code = kinds.kind_of(short) in kinds.MONOSPACED
            self._facts_key, self._facts_value = key, (code, display.title_of(short), words.summary(short, code))
        return self._facts_value

    def _header(self, m: Memory, title: str, summary: str) -> None:
        self.title.set_text(title)
        rel, absolute = words.when(m.created_at)
        line = " · ".join(p for p in (rel, absolute) if p)
        self.when.set_text(line)
        self.when.setToolTip(local_time(m.created_at))
        self.source.set_text(words.source_line(m) + (" · Pinned" if m.pinned else ""))
        where = words.origin(m)
        self._line(self.window_line, f"Window: {where.window}" if where.window else "", tip=where.window)
        if where.url:
            shown = where.url.split("://", 1)[1] if where.url.lower().startswith(("http://", "https://")) else where.url
            self._line(self.url_line, shown, href=where.url if words.is_web_link(where.url) else "", tip=where.url)
        else:
            self._line(self.url_line, "")
        self._line(self.file_line, f"File: {where.file}" if where.file else "", tip=where.file)
        self.summary.set_text(cut(summary, SUMMARY_CHARS) if summary else "")
        self.summary.setVisible(bool(summary))

    @staticmethod
    def _line(label: ElidedLabel, text: str, href: str = "", tip: str = "") -> None:
        label.set_line(text, href, tip)
        label.setVisible(bool(text))

    def _show_chips(self, m: Memory) -> None:
        tags, entities, more = words.chip_texts(m)
        key = (tuple(tags), tuple(entities), more)
        if key == self._chips_key:
            return
        self._chips_key = key
        chips = [Chip(t, f"Tag {t}", "tag") for t in tags]
        chips += [Chip(text, f"{kind.capitalize()}: {text}" if kind else text, "entity") for text, kind in entities]
        if more:
            chips.append(Chip(f"+{more} more", f"{more} more tags and entities", "more"))
        self.chips.set_chips(chips, self.palette())

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

    # -- details ----------------------------------------------------------------------------------
    def _show_details(self, on: bool) -> None:
        """Open or close the details; they stay open (or closed) while the person moves in the results."""
        self.details_button.setArrowType(Qt.ArrowType.DownArrow if on else Qt.ArrowType.RightArrow)
        if on:
            self._fill_details()
        self.details_area.setVisible(on)

    def _fill_details(self) -> None:
        m = self.memory
        if m is None or self._details_of == m.id:
            return
        self._details_of = m.id
        cells = []
        for key, value in words.details(m):
            shown = html.escape(value if key == "Id" else words.breakable(value))
            if key == "Metadata":
                shown = "<br>".join(line.replace(" ", "&nbsp;", len(line) - len(line.lstrip(" ")))
                                    for line in shown.splitlines())
                shown = f'<span style="font-family: monospace;">{shown}</span>'
            cells.append(f'<tr><td style="padding-right: 8px;">{html.escape(key)}</td><td>{shown}</td></tr>')
        self.details.setText("<table>" + "".join(cells) + "</table>")

    # -- versions ---------------------------------------------------------------------------------
    def show_versions(self, memory_id: str, versions: list[Version]) -> None:
        """List the earlier texts of the memory shown (newest first); hidden when there are none."""
        if self.memory is not None and self.memory.id != memory_id:
            return
        self.versions.clear()
        for v in reversed(versions):
            when = " · ".join(p for p in words.when(v.created_at) if p)
            item = QListWidgetItem(f"{when}  {first_line(v.content, 80)}")
            item.setData(Qt.ItemDataRole.UserRole, v.seq)
            item.setToolTip(v.content[:2000])
            self.versions.addItem(item)
        n = len(versions)
        rows = self.versions.sizeHintForRow(0) if n else 0
        self.versions.setMaximumHeight(min(n, 4) * rows + 2 * self.versions.frameWidth() + 2)
        self.versions_label.setText(f"<b>Earlier version{'s' if n != 1 else ''}</b> ({n}), kept when a longer "
                                    "copy from the same place replaced it")
        self.restore_button.setEnabled(False)
        self.versions_row.setVisible(bool(versions))

    def restore(self) -> None:
        item = self.versions.currentItem()
        if self.memory is not None and item is not None:
            self.restore_requested.emit(self.memory.id, int(item.data(Qt.ItemDataRole.UserRole)))

    # -- editing ----------------------------------------------------------------------------------
    def _changed(self) -> None:
        self.save_button.setEnabled(self.memory is not None and self.editor.toPlainText() != self.memory.content)

    def save(self) -> None:
        if self.memory is not None and self.save_button.isEnabled():
            self.save_requested.emit(self.memory.id, self.editor.toPlainText())

    # -- colours and keys -------------------------------------------------------------------------
    def _recolour(self) -> None:
        """Text colours from the palette, each readable (≥ 4.5:1) on the panel's surface (Base) and on Window."""
        pal = self.palette()
        text = pal.color(QPalette.ColorRole.Text)
        grounds = [pal.color(QPalette.ColorRole.Base), pal.color(QPalette.ColorRole.Window)]
        main = readable(text, grounds, text)
        dim = readable(blend(text, grounds[0], 0.3), grounds, text)
        link = readable(pal.color(QPalette.ColorRole.Link), grounds, text)
        shades: list[tuple[QWidget, QColor]] = [
            *((w, main) for w in (self.title, self.summary, self.details, self.versions_label)),
            *((w, dim) for w in (self.when, self.source, self.window_line, self.file_line, self.hint))]
        for w, colour in shades:
            set_fg(w, colour)
        set_fg(self.url_line, dim, link)
        self.chips.recolour(pal)

    def changeEvent(self, event: QEvent) -> None:  # noqa: N802 - Qt override
        super().changeEvent(event)
        if event.type() == QEvent.Type.PaletteChange:
            self._recolour()

    def keyPressEvent(self, event: QKeyEvent) -> None:  # noqa: N802 - Qt override
        if event.key() == Qt.Key.Key_Escape:  # from the details button or a link: back to the results
            self.closed.emit()
            return
        super().keyPressEvent(event)

    def eventFilter(self, obj: QObject, event: QEvent) -> bool:  # noqa: N802 - Qt override
        if (obj is self.editor and isinstance(event, QKeyEvent) and event.type() == QEvent.Type.KeyPress
                and event.key() == Qt.Key.Key_Escape):
            self.closed.emit()
            return True
        return super().eventFilter(obj, event)
