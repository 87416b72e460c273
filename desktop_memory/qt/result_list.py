"""The search panel's list of results: its cursor, its selection and the look-alike rows opened under a result."""

from __future__ import annotations

from PySide6.QtCore import QItemSelectionModel, Qt
from PySide6.QtGui import QColor
from PySide6.QtWidgets import QAbstractItemView, QFrame, QListView, QStyleOptionViewItem, QWidget

from ..core.models import Memory, Passage
from .results import MemoryRole, PassageRole, ResultDelegate, ResultsModel, SimilarRole


class ResultList(QListView):
    """A list view over a ResultsModel, drawn by a ResultDelegate; the memories under the cursor and selected."""

    def __init__(self, model: ResultsModel, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.results = model
        self.surface: QColor | None = None  # the colour behind the (transparent) list, set by the panel's look
        self.setModel(model)
        self.delegate = ResultDelegate(self)
        self.delegate.similar_clicked.connect(self.toggle_similar)
        self.setItemDelegate(self.delegate)
        self.setSelectionMode(QAbstractItemView.SelectionMode.ExtendedSelection)
        # a row is as high as its text and the fonts make it, never as the width makes it (see result_row.py)
        self.setUniformItemSizes(False)
        self.setFrameShape(QFrame.Shape.NoFrame)
        self.setMouseTracking(True)
        self.setAccessibleName("Results")
        self.setVerticalScrollMode(QAbstractItemView.ScrollMode.ScrollPerPixel)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)

    # -- cursor and selection -----------------------------------------------------------------
    def select_row(self, row: int, extend: bool = False) -> None:
        """Move the cursor to `row` (ignored when there is no such row): alone, or added to the selection."""
        if not 0 <= row < self.results.rowCount():
            return
        index = self.results.index(row)
        flags = QItemSelectionModel.SelectionFlag
        mode = flags.Select if extend else flags.ClearAndSelect
        self.selectionModel().setCurrentIndex(index, mode)
        self.scrollTo(index)

    def add_to_selection(self, row: int) -> None:
        """Select `row` too, leaving the cursor where it is."""
        self.selectionModel().select(self.results.index(row), QItemSelectionModel.SelectionFlag.Select)

    def current_memory(self) -> Memory | None:
        index = self.currentIndex()
        return index.data(MemoryRole) if index.isValid() else None

    def current_passage(self) -> Passage | None:
        """In the long memory under the cursor, the part that matched the query (None: short, or none)."""
        index = self.currentIndex()
        return index.data(PassageRole) if index.isValid() else None

    def selected_memories(self) -> list[Memory]:
        """The selected memories in list order, else the one under the cursor, else none."""
        rows = sorted(i.row() for i in self.selectionModel().selectedRows())
        memories = self.results.memories
        chosen = [memories[r] for r in rows if r < len(memories)]
        if not chosen and (m := self.current_memory()):
            chosen = [m]
        return chosen

    # -- look-alikes grouped under a result ------------------------------------------------------
    def toggle_similar(self, row: int | None = None) -> None:
        """Show (or hide) the look-alike memories of a result as rows under it."""
        model = self.results
        row = self.currentIndex().row() if row is None else row
        lead = model.leader_row(row)
        opened = model.memories[lead].id not in model.expanded if 0 <= lead < model.rowCount() else False
        model.toggle(row)
        self.select_row(lead + 1 if opened and model.memories[lead].id in model.expanded else lead)

    def expand_similar(self) -> bool:
        """Open the current result's look-alikes; False when it has none or they are open already."""
        index = self.currentIndex()
        if not index.isValid() or not index.data(SimilarRole) or index.data(SimilarRole)[1]:
            return False
        self.toggle_similar(index.row())
        return True

    def collapse_similar(self) -> bool:
        """Close the look-alikes around the cursor (it goes to their result); False when none are open."""
        index = self.currentIndex()
        if not index.isValid():
            return False
        lead = self.results.leader_row(index.row())
        if self.results.memories[lead].id not in self.results.expanded:
            return False
        self.select_row(self.results.collapse(lead))
        return True

    # -- height -----------------------------------------------------------------------------------
    def row_heights(self, count: int) -> list[int]:
        """The heights of the first `count` rows."""
        option = QStyleOptionViewItem()
        option.initFrom(self)
        return [self.delegate.sizeHint(option, self.results.index(r)).height()
                for r in range(min(count, self.results.rowCount()))]  # a weak line's band included

    def content_height(self, max_rows: int, full: bool = False) -> int:
        """The height that shows the first rows: as many as fit in what `max_rows` two-line rows take (one-line
        rows are shorter, so more of them show), at least one row; `full`: that whole height, however few rows."""
        option = QStyleOptionViewItem()
        option.initFrom(self)
        budget = max_rows * self.delegate.rows(option).row_height
        if full:
            return budget
        total = 0
        for h in self.row_heights(max_rows * 3):
            if total + h > budget:
                break
            total += h
        return max(total, self.delegate.rows(option).compact_height)
