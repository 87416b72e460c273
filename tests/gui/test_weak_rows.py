"""A visible line between good and weak matches (issue 33, item 6): the first weak result has a "Weaker matches"
line above it (or, when no result is close, "No close matches · weaker ones" above the first row); people using
a screen reader hear "a weak match"."""

from __future__ import annotations

from PySide6.QtCore import QRect, Qt
from PySide6.QtGui import QImage, QPainter
from PySide6.QtWidgets import QListView, QStyleOptionViewItem

from desktop_memory.core.models import Memory
from desktop_memory.qt.results import ResultDelegate, ResultsModel, WeakStartRole


def memories(n: int) -> list[Memory]:
    return [Memory(id=f"m{i:02d}", content=f"Note number {i}: the parking permit renews in March", source="clipboard",
                   source_app="firefox", created_at=1_790_000_000.0 + i, content_hash=f"h{i}")
            for i in range(n)]


def heights(qtbot, model: ResultsModel) -> tuple[list[int], QListView]:
    view = QListView()
    qtbot.addWidget(view)
    view.setModel(model)
    delegate = ResultDelegate(view)
    view.setItemDelegate(delegate)
    option = QStyleOptionViewItem()
    option.initFrom(view)
    return [delegate.sizeHint(option, model.index(r)).height() for r in range(model.rowCount())], view


def test_the_first_weak_result_has_the_line_above_it(qtbot) -> None:
    ms = memories(5)
    model = ResultsModel()
    model.set_results("parking", ms, weak={ms[3].id, ms[4].id})
    labels = [model.index(r).data(WeakStartRole) for r in range(5)]
    assert labels == [None, None, None, "Weaker matches", None]
    hs, _view = heights(qtbot, model)
    assert hs[3] > hs[2] == hs[4]  # the line takes room of its own: the row under it is not squeezed
    text = [model.index(r).data(Qt.ItemDataRole.AccessibleTextRole) for r in range(5)]
    assert [("a weak match" in t) for t in text] == [False, False, False, True, True]


def test_only_weak_results_say_there_is_no_close_match(qtbot) -> None:
    ms = memories(3)
    model = ResultsModel()
    model.set_results("abcdefghij", ms, weak={m.id for m in ms})
    assert [model.index(r).data(WeakStartRole) for r in range(3)] == ["No close matches · weaker ones", None, None]


def test_no_line_without_weak_results(qtbot) -> None:
    ms = memories(3)
    model = ResultsModel()
    model.set_results("parking", ms)
    assert all(model.index(r).data(WeakStartRole) is None for r in range(3))
    hs, _view = heights(qtbot, model)
    assert len(set(hs)) == 1


def test_the_line_is_painted_in_its_band_above_the_row(qtbot) -> None:
    ms = memories(2)
    model = ResultsModel()
    model.set_results("parking", ms, weak={ms[1].id})
    hs, view = heights(qtbot, model)
    delegate = view.itemDelegate()
    option = QStyleOptionViewItem()
    option.initFrom(view)
    band = delegate.band(option, model.index(1))
    assert band > 0
    image = QImage(600, hs[1], QImage.Format.Format_ARGB32)
    image.fill(view.palette().base().color())
    p = QPainter(image)
    option.rect = QRect(0, 0, 600, hs[1])
    delegate.paint(p, option, model.index(1))
    p.end()
    base = view.palette().base().color().rgb()
    inked = [y for y in range(band) if any(image.pixel(x, y) != base for x in range(0, 600, 2))]
    assert inked, "nothing drawn in the band above the weak row"


def test_the_list_makes_room_for_the_line(qtbot) -> None:
    """The panel sizes its list from ResultList.content_height: the band is counted, so the weak row is not cut."""
    from desktop_memory.qt.result_list import ResultList

    ms = memories(2)
    model = ResultsModel()
    model.set_results("parking", ms, weak={ms[1].id})
    view = ResultList(model)
    qtbot.addWidget(view)
    assert view.content_height(7) >= sum(view.sizeHintForRow(r) for r in range(2))
