"""The search window, driven by the keyboard as a person would, over a real engine (fake embedder)."""

from __future__ import annotations

import threading

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QGuiApplication

from desktop_memory.core.capture import Snapshot
from desktop_memory.core.context import build_context
from desktop_memory.engine.settings import Settings
from desktop_memory.qt.search_window import SearchWindow
from tests.gui.query_typing import search

NOTES = [
    ("Decision: the beta ships on March 3rd; Priya owns the release notes.", "work"),
    ("To rotate the staging database password run make rotate-db ENV=staging.", "infra"),
    ("Pasta recipe: boil spaghetti 9 minutes, toss with garlic and olive oil.", "food"),
    ("The beta release checklist: changelog, screenshots, signed installers.", "work"),
]


@pytest.fixture
def window(qtbot, bridge, engine):
    for text, tag in NOTES:
        engine(bridge, lambda s, t=text, g=tag: s.add(t, tags=[g]))
    w = SearchWindow(bridge, Settings())
    qtbot.addWidget(w)
    with qtbot.waitSignal(w.search_finished, timeout=10_000):
        w.show_and_focus()
    return w


def contents(w: SearchWindow) -> list[str]:
    return [m.content for m in w.model.memories]


def test_first_view_lists_recent_memories_and_typing_searches(qtbot, window) -> None:
    assert len(window.model.memories) == len(NOTES)
    search(qtbot, window, "beta release")
    assert contents(window)[0].startswith(("Decision: the beta", "The beta release"))
    assert all("beta" in c for c in contents(window)[:2])
    assert window.list.currentIndex().row() == 0
    assert window.status.text().startswith("1 selected · ~")


def test_results_of_older_keystrokes_are_dropped(qtbot, window, bridge) -> None:
    shown: list[str] = []
    window.search_finished.connect(lambda q, n: shown.append(q))
    gate = threading.Event()
    bridge.submit(lambda s: gate.wait(10))  # the engine is busy while the person types
    window.query.setText("pasta")
    window.run_search()
    window.query.setText("staging password")
    window.run_search()
    gate.set()
    qtbot.waitUntil(lambda: shown == ["staging password"], timeout=10_000)
    assert "rotate" in contents(window)[0]
    qtbot.wait(50)
    assert shown == ["staging password"]


def test_enter_copies_the_context_of_the_selection_and_hides(qtbot, window) -> None:
    search(qtbot, window, "beta")
    qtbot.keyClick(window.query, Qt.Key.Key_Down)
    assert window.list.currentIndex().row() == 1
    chosen = window.model.memories[1]
    with qtbot.waitSignal(window.copied, timeout=10_000) as blocker:
        qtbot.keyClick(window.query, Qt.Key.Key_Return)
    text = QGuiApplication.clipboard().text()
    assert text.startswith('Context from my personal notes about')
    assert chosen.content in text and blocker.args[:2] == ["context", 1]
    assert not window.isVisible()


def test_ctrl_enter_copies_the_raw_text(qtbot, window) -> None:
    search(qtbot, window, "pasta")
    with qtbot.waitSignal(window.copied, timeout=10_000):
        qtbot.keyClick(window.query, Qt.Key.Key_Return, Qt.KeyboardModifier.ControlModifier)
    assert QGuiApplication.clipboard().text() == window.model.memories[0].content
    assert not window.isVisible()


def test_multi_select_builds_a_context_pack_with_a_live_token_count(qtbot, window) -> None:
    search(qtbot, window, "beta")
    qtbot.keyClick(window.query, Qt.Key.Key_Down, Qt.KeyboardModifier.ShiftModifier)
    chosen = window.list.selected_memories()
    assert len(chosen) == 2
    tokens = build_context(chosen, budget=1500).tokens
    assert window.status.text() == f"2 selected · ~{tokens} / 1500 tokens"
    window.apply_settings(Settings(context_budget=60))
    assert "/ 60 tokens" in window.status.text() and "left out" in window.status.text()
    with qtbot.waitSignal(window.copied, timeout=10_000) as blocker:
        qtbot.keyClick(window.list, Qt.Key.Key_Return)
    assert blocker.args[2] <= 60


def test_ctrl_p_pins_and_unpins(qtbot, window, bridge, engine) -> None:
    search(qtbot, window, "pasta")
    memory_id = window.model.memories[0].id
    qtbot.keyClick(window.query, Qt.Key.Key_P, Qt.KeyboardModifier.ControlModifier)
    qtbot.waitUntil(lambda: window.model.memories[0].pinned, timeout=10_000)
    assert engine(bridge, lambda s: s.get(memory_id).pinned)
    qtbot.keyClick(window.query, Qt.Key.Key_P, Qt.KeyboardModifier.ControlModifier)
    qtbot.waitUntil(lambda: not window.model.memories[0].pinned, timeout=10_000)
    assert not engine(bridge, lambda s: s.get(memory_id).pinned)


def test_delete_forgets_with_an_undo_bar(qtbot, window, bridge, engine) -> None:
    search(qtbot, window, "pasta")
    memory_id = window.model.memories[0].id
    window.list.setFocus()
    qtbot.keyClick(window.list, Qt.Key.Key_Delete)
    qtbot.waitUntil(lambda: window.undo_bar.isVisible(), timeout=10_000)
    assert memory_id not in [m.id for m in window.model.memories]
    assert "Forgot 1 memory" in window.undo_bar.label.text()
    assert engine(bridge, lambda s: s.get(memory_id).forgotten)
    with qtbot.waitSignal(window.search_finished, timeout=10_000):
        qtbot.keyClick(window.list, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)
    assert not engine(bridge, lambda s: s.get(memory_id).forgotten)
    assert memory_id in [m.id for m in window.model.memories] and not window.undo_bar.isVisible()


def test_preview_shows_details_and_edits_in_place(qtbot, window, bridge, engine) -> None:
    search(qtbot, window, "pasta")
    memory = window.model.memories[0]
    qtbot.keyClick(window.query, Qt.Key.Key_Right)  # the cursor is at the end: Right opens the preview
    assert window.preview.isVisible() and window.preview.editor.toPlainText() == memory.content
    from desktop_memory.qt.preview_widgets import Chip

    assert "#food" in [c.text() for c in window.preview.findChildren(Chip) if c.isVisible()]
    assert not window.preview.details.isVisible()  # the id waits behind "Details"
    window.preview.details_button.click()
    assert window.preview.details.isVisible() and memory.id in window.preview.details.text()
    window.preview.editor.setPlainText(memory.content + " Add parmesan.")
    with qtbot.waitSignal(window.notice, timeout=10_000, check_params_cb=lambda m: m == "Saved the edit"):
        qtbot.keyClick(window.preview.editor, Qt.Key.Key_S, Qt.KeyboardModifier.ControlModifier)
    assert engine(bridge, lambda s: s.get(memory.id).content).endswith("Add parmesan.")
    assert window.model.memories[0].content.endswith("Add parmesan.")
    qtbot.keyClick(window.preview.editor, Qt.Key.Key_Escape)
    assert not window.preview.isVisible() and window.isVisible()
    qtbot.keyClick(window.list, Qt.Key.Key_Space)  # Space in the list toggles it too
    assert window.preview.isVisible()
    qtbot.keyClick(window.list, Qt.Key.Key_Escape)
    assert not window.preview.isVisible()
    qtbot.keyClick(window.list, Qt.Key.Key_Escape)
    assert not window.isVisible()


def test_typing_in_the_list_goes_back_to_the_query(qtbot, window) -> None:
    window.list.setFocus()
    with qtbot.waitSignal(window.search_finished, timeout=10_000, check_params_cb=lambda q, n: q == "p"):
        qtbot.keyClicks(window.list, "p")
    assert window.query.text() == "p"


def test_filter_chips_and_query_syntax(qtbot, window) -> None:
    search(qtbot, window, "#work")
    assert {m.tags[0] for m in window.model.memories} == {"work"} and len(window.model.memories) == 2
    chips = [window.chips.itemAt(i).widget() for i in range(window.chips.count()) if window.chips.itemAt(i).widget()]
    assert chips[0].text().startswith("#work")
    with qtbot.waitSignal(window.search_finished, timeout=10_000):
        next(c for c in chips if c.text() == "+ Pinned").click()
    assert "is:pinned" in window.query.text() and window.model.memories == []
    assert "Try removing a filter" in window.empty.text() and "is:pinned" in window.empty.text()
    chips = [window.chips.itemAt(i).widget() for i in range(window.chips.count()) if window.chips.itemAt(i).widget()]
    with qtbot.waitSignal(window.search_finished, timeout=10_000):
        next(c for c in chips if c.text().startswith("is:pinned")).click()
    assert "is:pinned" not in window.query.text() and len(window.model.memories) == 2


def test_empty_states(qtbot, make_bridge, tmp_path) -> None:
    w = SearchWindow(make_bridge(tmp_path / "empty"), Settings())
    qtbot.addWidget(w)
    with qtbot.waitSignal(w.search_finished, timeout=10_000):
        w.show_and_focus()
    assert "Nothing remembered yet" in w.empty.text() and "Ctrl+Alt+M" in w.empty.text()
    assert w.stack.currentWidget() is w.empty
    search(qtbot, w, "anything")
    assert "Nothing matches these words" in w.empty.text()


INVOICES = [f"Invoice INV-{n} for Calder & Finch: 14 units of part PX-204 shipped from the Leeds warehouse by "
            "ground freight, payment due within 30 days to the usual account, contact the accounts desk with "
            "questions" for n in (3101, 3102, 3103, 3104)]


def test_look_alikes_show_as_one_row_with_similar_that_expands_and_can_be_picked(qtbot, window, bridge, engine):
    made = [engine(bridge, lambda s, t=t: s.add(t, source="import")).memory for t in INVOICES]
    assert len({m.id for m in made}) == 4  # every invoice kept
    search(qtbot, window, "invoice INV-3103 Calder")
    assert contents(window).count(INVOICES[2]) == 1 and sum(c in INVOICES for c in contents(window)) == 1
    row = contents(window).index(INVOICES[2])
    window.list.select_row(row)
    assert "3 similar" in window.model.index(row).data(Qt.ItemDataRole.AccessibleTextRole)
    window.list.setFocus()
    qtbot.keyClick(window.list, Qt.Key.Key_Right, Qt.KeyboardModifier.ControlModifier)
    assert sorted(c for c in contents(window) if c in INVOICES) == INVOICES  # members are rows of their own
    assert window.list.currentIndex().row() == row + 1  # the first member is selected
    window.list.select_row(row + 2, extend=True)
    picked = {m.content for m in window.list.selected_memories()}
    assert len(picked) == 2 and picked <= set(INVOICES) - {INVOICES[2]}
    with qtbot.waitSignal(window.copied, timeout=10_000):
        qtbot.keyClick(window.list, Qt.Key.Key_Return)  # the context holds exactly the picked look-alikes
    text = QGuiApplication.clipboard().text()
    assert all(p in text for p in picked) and INVOICES[2] not in text
    window.show_and_focus()
    search(qtbot, window, "invoice INV-3103 Calder")
    row = contents(window).index(INVOICES[2])
    window.list.select_row(row)
    window.list.setFocus()
    qtbot.keyClick(window.list, Qt.Key.Key_Right, Qt.KeyboardModifier.ControlModifier)
    qtbot.keyClick(window.list, Qt.Key.Key_Left, Qt.KeyboardModifier.ControlModifier)
    assert sum(c in INVOICES for c in contents(window)) == 1 and window.list.currentIndex().row() == row


def test_preview_lists_earlier_versions_and_restores_one(qtbot, window, bridge, engine) -> None:
    first = engine(bridge, lambda s: s.capture(Snapshot("Packing list: passport", app="Notes")))  # only captures
    grown = engine(bridge, lambda s: s.capture(Snapshot("Packing list: passport, charger, rain jacket", app="Notes")))
    assert grown.status == "extended" and grown.memory_id == first.memory_id
    search(qtbot, window, "packing list charger")
    window.list.select_row(contents(window).index("Packing list: passport, charger, rain jacket"))
    window.preview_control.open()
    qtbot.waitUntil(lambda: window.preview.versions.count() == 1, timeout=10_000)
    assert window.preview.versions_row.isVisible()
    assert "Packing list: passport" in window.preview.versions.item(0).text()
    window.preview.versions.setCurrentRow(0)
    with qtbot.waitSignal(window.notice, timeout=10_000):
        window.preview.restore_button.click()
    qtbot.waitUntil(lambda: window.preview.editor.toPlainText() == "Packing list: passport", timeout=10_000)
    qtbot.waitUntil(lambda: window.preview.versions.count() == 1
                    and "rain jacket" in window.preview.versions.item(0).text(), timeout=10_000)
    assert engine(bridge, lambda s: s.get(first.memory_id).content) == "Packing list: passport"


def test_a_click_on_similar_expands_the_row(qtbot, window, bridge, engine) -> None:
    from PySide6.QtWidgets import QStyleOptionViewItem

    for t in INVOICES:
        engine(bridge, lambda s, t=t: s.add(t, source="import"))
    search(qtbot, window, "invoice INV-3102 Calder")
    row = contents(window).index(INVOICES[1])
    index = window.model.index(row)
    option = QStyleOptionViewItem()
    option.initFrom(window.list)
    option.rect = window.list.visualRect(index)
    spot = window.list.itemDelegate().similar_rect(option, index).center().toPoint()
    qtbot.mouseClick(window.list.viewport(), Qt.MouseButton.LeftButton, pos=spot)
    assert sorted(c for c in contents(window) if c in INVOICES) == INVOICES


def test_reopened_quickly_the_window_stays_open_and_active(qtbot, window) -> None:
    """Hidden and shown again (the hotkey twice, a paste that failed): Qt may not call the shown window active
    (offscreen here; xcb after a hide while active); only on X11, where the server says where the focus is, may
    the panel hide for want of it (bench/search_typing.py at 100k found every keystroke unpainted: the panel had
    hidden itself)."""
    for _ in range(3):
        window.hide()
        qtbot.wait(150)
        window.toggle()
        qtbot.wait(200)
    qtbot.wait(1500)
    assert window.isVisible()
    qtbot.keyClicks(window.query, "beta")
    qtbot.waitUntil(lambda: window.model.query == "beta", timeout=10_000)
