"""The list of search results: a model over Memory objects and a delegate that draws each one.

A result that stands for look-alike memories (a family, see docs/internals.md "Searching") shows
"+N similar"; expanding it (Ctrl+Right, or a click on that label) inserts the members as rows of their own
under it, selectable like any other row; collapsing (Ctrl+Left) takes them out again."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import (
    QAbstractListModel,
    QEvent,
    QModelIndex,
    QPersistentModelIndex,
    QRectF,
    QSize,
    Qt,
    Signal,
)
from PySide6.QtGui import QColor, QMouseEvent, QPalette
from PySide6.QtWidgets import QAbstractItemView, QStyle, QStyledItemDelegate, QStyleOptionViewItem

from ..core.models import Memory, Passage
from . import display, kinds
from .result_row import RowPainter, secondary

MemoryRole = Qt.ItemDataRole.UserRole + 1
SimilarRole = Qt.ItemDataRole.UserRole + 2  # (look-alikes behind this row, expanded?) or None
MemberRole = Qt.ItemDataRole.UserRole + 3  # True for a look-alike shown under its result
PassageRole = Qt.ItemDataRole.UserRole + 4  # in a long memory, the Passage that matched the query, or None
WeakStartRole = Qt.ItemDataRole.UserRole + 5  # the first weak match (a "weaker matches" line above it): its label
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
        self.passages: dict[str, Passage] = {}  # result id -> the part of its long text that matched
        self.weak: set[str] = set()  # results that match weakly (far in meaning, little of the query); last

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
        if role == PassageRole:
            return self.passages.get(m.id)
        if role == WeakStartRole:
            return self._weak_label(index.row())
        if role in (Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.AccessibleTextRole):
            more = f", {len(self.similar[m.id])} similar" if self.similar.get(m.id) and m.id not in self.members else ""
            state = ", forgotten (Delete restores it)" if m.forgotten else ", pinned" if m.pinned else ""
            state += ", a weak match" if m.id in self.weak else ""
            return (f"{kinds.label(kinds.kind_info(m))}: {display.title_of(m)} — {display.origin(m)}, "
                    f"{display.relative_time(m.created_at)}{state}{more}")
        if role == Qt.ItemDataRole.ToolTipRole:
            return m.id
        return None

    def _weak_label(self, row: int) -> str | None:
        """Above the first weak result: what the line between good and weak matches says (None elsewhere)."""
        first = next((r for r, o in enumerate(self.memories) if o.id in self.weak and o.id not in self.members), None)
        if row != first:
            return None
        return "No close matches · weaker ones" if row == 0 else "Weaker matches"

    def set_results(self, query: str, memories: list[Memory], similar: dict[str, list[Memory]] | None = None,
                    passages: dict[str, Passage] | None = None, weak: set[str] | None = None) -> None:
        self.beginResetModel()
        self.weak = set(weak or ())
        self.query, self.memories = query, list(memories)
        self.similar = {k: list(v) for k, v in (similar or {}).items() if v}
        self.passages = dict(passages or {})
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


def _query(index: AnyIndex) -> str:
    """The query whose words a row highlights."""
    model = index.model()
    return model.query if isinstance(model, ResultsModel) else ""


class ResultDelegate(QStyledItemDelegate):
    """Draws a result (see result_row.py): one line for a memory with nothing more to show, else its title and
    one or two lines under it (the height from the text and the fonts, never from the width).
    A click on "+N similar" expands (or collapses) the row's look-alikes."""

    INDENT = 22  # a look-alike shown under its result
    similar_clicked = Signal(int)  # the row whose "+N similar" was clicked

    def __init__(self, parent: Any = None) -> None:
        super().__init__(parent)
        self._rows: RowPainter | None = None
        self._heights: dict[tuple[Any, ...], int] = {}

    def rows(self, option: QStyleOptionViewItem) -> RowPainter:
        if self._rows is None or self._rows.font != option.font:
            self._rows = RowPainter(option.font)
        return self._rows

    def band(self, option: QStyleOptionViewItem, index: AnyIndex) -> int:
        """The height of the "weaker matches" line above a row (0 for all but the first weak match)."""
        return round(option.fontMetrics.height() * 1.6) if index.data(WeakStartRole) else 0

    def _row_rect(self, option: QStyleOptionViewItem, index: AnyIndex) -> Any:
        return option.rect.adjusted(0, self.band(option, index), 0, 0)

    def _paint_band(self, painter: Any, option: QStyleOptionViewItem, index: AnyIndex, palette: QPalette) -> None:
        """A thin rule and the label, in the secondary text colour (readable on the panel's surface)."""
        height = self.band(option, index)
        if not height:
            return
        rect = option.rect
        painter.save()
        colour = secondary(palette)
        font = option.font
        font.setPointSizeF(font.pointSizeF() * 0.9)
        painter.setFont(font)
        painter.setPen(colour)
        label = index.data(WeakStartRole)
        text_rect = rect.adjusted(14, 0, -14, -(rect.height() - height))
        painter.drawText(text_rect, int(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter), label)
        advance = painter.fontMetrics().horizontalAdvance(label)
        y = text_rect.center().y()
        line = QColor(colour)
        line.setAlpha(90)
        painter.setPen(line)
        painter.drawLine(text_rect.left() + advance + 10, y, text_rect.right(), y)
        painter.restore()

    def paint(self, painter: Any, option: QStyleOptionViewItem, index: AnyIndex) -> None:
        m: Memory = index.data(MemoryRole)
        view = option.widget
        query = _query(index)
        state = option.state
        current = isinstance(view, QAbstractItemView) and view.currentIndex() == index
        dpr = view.devicePixelRatioF() if view is not None else 1.0
        palette = option.palette
        if (surface := getattr(view, "surface", None)) is not None:  # what shows through a transparent list
            palette = QPalette(palette)
            palette.setColor(QPalette.ColorRole.Base, surface)
        self._paint_band(painter, option, index, palette)
        self.rows(option).paint(
            painter, self._row_rect(option, index), palette, m, query,
            selected=bool(state & QStyle.StateFlag.State_Selected), current=current,
            hovered=bool(state & QStyle.StateFlag.State_MouseOver), indent=self._indent(index),
            similar=index.data(SimilarRole), dpr=dpr, passage=index.data(PassageRole))

    def sizeHint(self, option: QStyleOptionViewItem, index: AnyIndex) -> QSize:
        """A row's height; the list asks for every row's on each new result (rows differ in height), so each
        memory's is kept (by its text, passage, line above and font)."""
        m = index.data(MemoryRole)
        if m is None:
            return QSize(200, self.rows(option).compact_height)
        passage, band = index.data(PassageRole), self.band(option, index)
        key = (m.id, m.content_hash, m.title, m.updated_at, passage and (passage.start, passage.end), band,
               option.font.key())
        if (height := self._heights.get(key)) is None:
            height = self.rows(option).height_of(m, passage) + band
            if len(self._heights) > 2048:
                self._heights.clear()
            self._heights[key] = height
        return QSize(200, height)

    def similar_rect(self, option: QStyleOptionViewItem, index: AnyIndex) -> QRectF:
        """Where a row's "+N similar" is (empty when it has none)."""
        query = _query(index)
        return self.rows(option).similar_rect(self._row_rect(option, index), index.data(MemoryRole),
                                              index.data(SimilarRole), query, index.data(PassageRole))

    def _indent(self, index: AnyIndex) -> int:
        return self.INDENT if index.data(MemberRole) else 0

    def editorEvent(self, event: QEvent, model: Any, option: QStyleOptionViewItem,  # noqa: N802 - Qt override
                    index: AnyIndex) -> bool:
        """A click on "+N similar" expands (or collapses) the row instead of only selecting it."""
        if (event.type() == QEvent.Type.MouseButtonRelease and isinstance(event, QMouseEvent)
                and index.data(SimilarRole) and self.similar_rect(option, index).contains(event.position())):
            self.similar_clicked.emit(index.row())
            return True
        return super().editorEvent(event, model, option, index)
