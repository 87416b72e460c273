"""The list of search results: a model over Memory objects and a delegate that draws each one.

A result that stands for look-alike memories (a family, see docs/architecture.md "Searching") shows
"+N similar"; expanding it (Ctrl+Right, or a click on that link) inserts the members as rows of their own
under it, selectable like any other row; collapsing (Ctrl+Left) takes them out again."""

from __future__ import annotations

import html as html_
from collections import OrderedDict
from typing import Any

from PySide6.QtCore import (
    QAbstractListModel,
    QEvent,
    QModelIndex,
    QPersistentModelIndex,
    QPointF,
    QRectF,
    QSize,
    Qt,
    Signal,
)
from PySide6.QtGui import QAbstractTextDocumentLayout, QMouseEvent, QPalette, QTextDocument
from PySide6.QtWidgets import QApplication, QStyle, QStyledItemDelegate, QStyleOptionViewItem

from ..core.models import Memory
from . import display

MemoryRole = Qt.ItemDataRole.UserRole + 1
SimilarRole = Qt.ItemDataRole.UserRole + 2  # (look-alikes behind this row, expanded?) or None
MemberRole = Qt.ItemDataRole.UserRole + 3  # True for a look-alike shown under its result
SIMILAR_LINK = "similar"
AnyIndex = QModelIndex | QPersistentModelIndex


class ResultsModel(QAbstractListModel):
    """Search hits as rows; the query is kept to highlight its words."""

    def __init__(self) -> None:
        super().__init__()
        self.memories: list[Memory] = []
        self.query = ""
        self.similar: dict[str, list[Memory]] = {}  # result id -> its look-alikes
        self.expanded: set[str] = set()  # results whose look-alikes are shown as rows
        self.members: dict[str, str] = {}  # look-alike shown as a row -> its result's id

    def rowCount(self, parent: AnyIndex = QModelIndex()) -> int:  # noqa: B008 - Qt's signature
        return 0 if parent.isValid() else len(self.memories)

    def data(self, index: AnyIndex, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid() or index.row() >= len(self.memories):
            return None
        m = self.memories[index.row()]
        if role == MemoryRole:
            return m
        if role == SimilarRole:
            others = self.similar.get(m.id)
            return (others, m.id in self.expanded) if others and m.id not in self.members else None
        if role == MemberRole:
            return m.id in self.members
        if role in (Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.AccessibleTextRole):
            more = f", {len(self.similar[m.id])} similar" if self.similar.get(m.id) and m.id not in self.members else ""
            return f"{display.title_of(m)} — {display.origin(m)}, {display.relative_time(m.created_at)}{more}"
        if role == Qt.ItemDataRole.ToolTipRole:
            return m.id
        return None

    def set_results(self, query: str, memories: list[Memory], similar: dict[str, list[Memory]] | None = None) -> None:
        self.beginResetModel()
        self.query, self.memories = query, list(memories)
        self.similar = {k: list(v) for k, v in (similar or {}).items() if v}
        self.expanded, self.members = set(), {}
        self.endResetModel()

    def leader_row(self, row: int) -> int:
        """The row of the result a look-alike row belongs to (the row itself for a result)."""
        lead = self.members.get(self.memories[row].id) if 0 <= row < len(self.memories) else None
        if lead is None:
            return row
        return next((r for r, m in enumerate(self.memories) if m.id == lead), row)

    def expand(self, row: int) -> bool:
        """Show a result's look-alikes as rows under it; False when it has none or they are shown."""
        if not 0 <= row < len(self.memories):
            return False
        m = self.memories[row]
        others = [o for o in self.similar.get(m.id, []) if o.id not in {x.id for x in self.memories}]
        if m.id in self.expanded or m.id in self.members or not others:
            return False
        self.beginInsertRows(QModelIndex(), row + 1, row + len(others))
        self.memories[row + 1 : row + 1] = others
        self.members.update((o.id, m.id) for o in others)
        self.expanded.add(m.id)
        self.endInsertRows()
        self.dataChanged.emit(self.index(row), self.index(row))
        return True

    def collapse(self, row: int) -> int:
        """Hide the look-alike rows of the result at (or above) `row`; returns the result's row."""
        row = self.leader_row(row)
        if not 0 <= row < len(self.memories) or self.memories[row].id not in self.expanded:
            return row
        lead = self.memories[row].id
        last = row
        while last + 1 < len(self.memories) and self.members.get(self.memories[last + 1].id) == lead:
            last += 1
        if last > row:
            self.beginRemoveRows(QModelIndex(), row + 1, last)
            for m in self.memories[row + 1 : last + 1]:
                self.members.pop(m.id, None)
            del self.memories[row + 1 : last + 1]
            self.endRemoveRows()
        self.expanded.discard(lead)
        self.dataChanged.emit(self.index(row), self.index(row))
        return row

    def toggle(self, row: int) -> None:
        row = self.leader_row(row)
        if 0 <= row < len(self.memories) and self.memories[row].id in self.expanded:
            self.collapse(row)
        else:
            self.expand(row)

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
    """Draws a result: marks and title, a snippet with matched words in bold, source, app and date;
    "+N similar" (a link that expands the row) when look-alikes are grouped under it."""

    PADDING = 6
    INDENT = 22  # a look-alike shown under its result
    similar_clicked = Signal(int)  # the row whose "+N similar" link was clicked
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
        similar = index.data(SimilarRole)
        link = ""
        if similar:
            others, open_ = similar
            label = f"− {len(others)} similar (Ctrl+←)" if open_ else f"+{len(others)} similar (Ctrl+→)"
            link = f" · <a href='{SIMILAR_LINK}' style='color:{text.name()}'>{html_.escape(label)}</a>"
        title = display.title_of(m)
        rest = m.content if m.title else display.after_title(m.content, title)
        body = f"{display.snippet_html(rest, query)}<br>" if rest.strip() else ""
        head = html_.escape(title)
        html = (
            f"<div style='color:{text.name()}'><b>{(marks + ' ') if marks else ''}{head}</b><br>{body}"
            f"<small style='color:{dim.name()}'>{html_.escape(meta)}{link}</small></div>"
        )
        width = option.rect.width()
        if width <= 0 and option.widget is not None:
            width = option.widget.viewport().width()  # sizeHint gets no rect
        key = (html, option.font.key(), max(100, width - 2 * self.PADDING - self._indent(index)))
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
        painter.translate(option.rect.left() + self.PADDING + self._indent(index), option.rect.top() + self.PADDING)
        ctx = QAbstractTextDocumentLayout.PaintContext()
        ctx.clip = QRectF(0, 0, option.rect.width(), option.rect.height())
        doc.documentLayout().draw(painter, ctx)
        painter.restore()

    def sizeHint(self, option: QStyleOptionViewItem, index: AnyIndex) -> QSize:
        doc = self._document(option, index)
        return QSize(int(doc.idealWidth()), int(doc.size().height()) + 2 * self.PADDING)

    def _indent(self, index: AnyIndex) -> int:
        return self.INDENT if index.data(MemberRole) else 0

    def editorEvent(self, event: QEvent, model: Any, option: QStyleOptionViewItem,  # noqa: N802 - Qt override
                    index: AnyIndex) -> bool:
        """A click on "+N similar" expands (or collapses) the row instead of only selecting it."""
        if (event.type() == QEvent.Type.MouseButtonRelease and isinstance(event, QMouseEvent)
                and index.data(SimilarRole)):
            doc = self._document(option, index)
            at = event.position() - QPointF(option.rect.left() + self.PADDING + self._indent(index),
                                            option.rect.top() + self.PADDING)
            if doc.documentLayout().anchorAt(at) == SIMILAR_LINK:
                self.similar_clicked.emit(index.row())
                return True
        return super().editorEvent(event, model, option, index)
