"""The list of search results: a model over Memory objects and a delegate that draws each one."""

from __future__ import annotations

import html as html_
from collections import OrderedDict
from typing import Any

from PySide6.QtCore import QAbstractListModel, QModelIndex, QPersistentModelIndex, QRectF, QSize, Qt
from PySide6.QtGui import QAbstractTextDocumentLayout, QPalette, QTextDocument
from PySide6.QtWidgets import QApplication, QStyle, QStyledItemDelegate, QStyleOptionViewItem

from ..core.models import Memory
from . import display

MemoryRole = Qt.ItemDataRole.UserRole + 1
AnyIndex = QModelIndex | QPersistentModelIndex


class ResultsModel(QAbstractListModel):
    """Search hits as rows; the query is kept to highlight its words."""

    def __init__(self) -> None:
        super().__init__()
        self.memories: list[Memory] = []
        self.query = ""

    def rowCount(self, parent: AnyIndex = QModelIndex()) -> int:  # noqa: B008 - Qt's signature
        return 0 if parent.isValid() else len(self.memories)

    def data(self, index: AnyIndex, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid() or index.row() >= len(self.memories):
            return None
        m = self.memories[index.row()]
        if role == MemoryRole:
            return m
        if role in (Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.AccessibleTextRole):
            return f"{display.title_of(m)} — {display.origin(m)}, {display.relative_time(m.created_at)}"
        if role == Qt.ItemDataRole.ToolTipRole:
            return m.id
        return None

    def set_results(self, query: str, memories: list[Memory]) -> None:
        self.beginResetModel()
        self.query, self.memories = query, list(memories)
        self.endResetModel()

    def replace(self, memory: Memory) -> None:
        """Show a changed memory (pinned, edited) in place."""
        for row, m in enumerate(self.memories):
            if m.id == memory.id:
                self.memories[row] = memory
                self.dataChanged.emit(self.index(row), self.index(row))

    def remove(self, ids: set[str]) -> None:
        for row in reversed(range(len(self.memories))):
            if self.memories[row].id in ids:
                self.beginRemoveRows(QModelIndex(), row, row)
                del self.memories[row]
                self.endRemoveRows()


class ResultDelegate(QStyledItemDelegate):
    """Draws a result: marks and title, a snippet with matched words in bold, source, app and date."""

    PADDING = 6
    CACHED = 128  # laid-out rows kept: sizeHint and paint of one row, and repaints, reuse one document

    def __init__(self, parent: Any = None) -> None:
        super().__init__(parent)
        self._docs: OrderedDict[tuple[str, str, int], QTextDocument] = OrderedDict()

    def _document(self, option: QStyleOptionViewItem, index: AnyIndex) -> QTextDocument:
        m: Memory = index.data(MemoryRole)
        query = index.model().query if isinstance(index.model(), ResultsModel) else ""
        selected = bool(option.state & QStyle.StateFlag.State_Selected)
        palette = option.palette
        text = palette.color(QPalette.ColorRole.HighlightedText if selected else QPalette.ColorRole.Text)
        dim = text if selected else palette.color(QPalette.ColorRole.PlaceholderText)
        tags = " ".join(f"#{t}" for t in m.tags)
        marks = display.marks(m)
        meta = " · ".join(p for p in (display.origin(m), display.relative_time(m.created_at), tags) if p)
        title = display.title_of(m)
        rest = m.content if m.title else display.after_title(m.content, title)
        body = f"{display.snippet_html(rest, query)}<br>" if rest.strip() else ""
        head = html_.escape(title)
        html = (
            f"<div style='color:{text.name()}'><b>{(marks + ' ') if marks else ''}{head}</b><br>{body}"
            f"<small style='color:{dim.name()}'>{html_.escape(meta)}</small></div>"
        )
        width = option.rect.width()
        if width <= 0 and option.widget is not None:
            width = option.widget.viewport().width()  # sizeHint gets no rect
        key = (html, option.font.key(), max(100, width - 2 * self.PADDING))
        doc = self._docs.get(key)
        if doc is not None:
            self._docs.move_to_end(key)
            return doc
        doc = QTextDocument()
        doc.setDefaultFont(option.font)
        doc.setDocumentMargin(0)
        doc.setHtml(html)
        doc.setTextWidth(key[2])
        self._docs[key] = doc
        if len(self._docs) > self.CACHED:
            self._docs.popitem(last=False)
        return doc

    def paint(self, painter: Any, option: QStyleOptionViewItem, index: AnyIndex) -> None:
        opt = QStyleOptionViewItem(option)
        self.initStyleOption(opt, index)
        opt.text = ""
        style = opt.widget.style() if opt.widget else QApplication.style()
        style.drawControl(QStyle.ControlElement.CE_ItemViewItem, opt, painter, opt.widget)
        doc = self._document(option, index)
        painter.save()
        painter.translate(option.rect.left() + self.PADDING, option.rect.top() + self.PADDING)
        ctx = QAbstractTextDocumentLayout.PaintContext()
        ctx.clip = QRectF(0, 0, option.rect.width(), option.rect.height())
        doc.documentLayout().draw(painter, ctx)
        painter.restore()

    def sizeHint(self, option: QStyleOptionViewItem, index: AnyIndex) -> QSize:
        doc = self._document(option, index)
        return QSize(int(doc.idealWidth()), int(doc.size().height()) + 2 * self.PADDING)
