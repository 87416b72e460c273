"""The search panel's footer and its actions menu (Ctrl+K), as a person sees and drives them.

The footer: the status on the left (never clipped: shorter wording when space is short), one main action with
its key on the right, then "Actions Ctrl+K". Ctrl+K lists everything the selection can do, keyboard first."""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from PySide6.QtCore import QEvent, QPoint, Qt
from PySide6.QtGui import QFont, QKeyEvent
from PySide6.QtWidgets import QApplication, QLabel, QWidget

from desktop_memory.core.context import build_context
from desktop_memory.engine.settings import Settings
from desktop_memory.qt.footer_hints import FooterBar, status_wordings
from desktop_memory.qt.search_window import SearchWindow
from tests.gui.query_typing import search
from tests.gui.realistic import ARTICLE, REALISTIC

CTRL = Qt.KeyboardModifier.ControlModifier


@pytest.fixture
def larger_font(qapp) -> Iterator[None]:
    """The system font at 1.5 times its size (a person's accessibility setting), for the test's widgets."""
    old = QFont(qapp.font())
    big = QFont(old)
    big.setPointSizeF(old.pointSizeF() * 1.5)
    qapp.setFont(big)
    yield
    qapp.setFont(old)


def make_window(qtbot, bridge, engine, budget: int = 1500) -> SearchWindow:
    for record in REALISTIC:
        engine(bridge, lambda s, r=record: s.add(**r))
    w = SearchWindow(bridge, Settings(context_budget=budget))
    qtbot.addWidget(w)
    with qtbot.waitSignal(w.search_finished, timeout=10_000):
        w.show_and_focus()
    return w


@pytest.fixture
def window(qtbot, bridge, engine) -> SearchWindow:
    return make_window(qtbot, bridge, engine)


def shown_labels(w: QWidget) -> list[QLabel]:
    """The footer's labels a person sees, left to right."""
    labels = [lab for lab in w.findChildren(QLabel) if lab.isVisibleTo(w) and lab.text()]
    return sorted(labels, key=lambda lab: lab.mapTo(w, QPoint(0, 0)).x())


def footer_text(w: SearchWindow) -> str:
    return " ".join(lab.text() for lab in shown_labels(w.footer))


def assert_nothing_clipped(w: SearchWindow) -> None:
    """Every footer label's text fits its label, and every label lies inside the panel (as painted: after the
    layout ran)."""
    QApplication.processEvents()
    for lab in shown_labels(w.footer):
        need = lab.fontMetrics().horizontalAdvance(lab.text())
        assert need <= lab.contentsRect().width(), f"{lab.text()!r} needs {need} px, has {lab.contentsRect().width()}"
        left = lab.mapTo(w, QPoint(0, 0)).x()
        assert left >= 0 and left + lab.width() <= w.width(), f"{lab.text()!r} lies outside the panel"


def select_three(qtbot, w: SearchWindow) -> None:
    with qtbot.waitSignal(w.search_finished, timeout=10_000):
        w.run_search()
    w.list.select_row(0)
    w.list.select_row(1, extend=True)
    w.list.select_row(2, extend=True)


def popup() -> QWidget:
    menu = QApplication.activePopupWidget()
    assert menu is not None, "no actions menu open"
    return menu


def entries(menu: QWidget) -> list[tuple[str, str]]:
    return menu.entries()  # type: ignore[attr-defined]


def open_menu(qtbot, w: SearchWindow, at: QWidget | None = None) -> QWidget:
    qtbot.keyClick(at or w.query, Qt.Key.Key_K, CTRL)
    qtbot.waitUntil(lambda: QApplication.activePopupWidget() is not None, timeout=5_000)
    return popup()


def typed(qtbot, text: str) -> None:
    """Keys go where the keyboard focus is (the actions menu's filter while it is open)."""
    focus = QApplication.focusWidget()
    assert focus is not None
    qtbot.keyClicks(focus, text)


def press(qtbot, key: Qt.Key) -> None:
    focus = QApplication.focusWidget()
    assert focus is not None
    qtbot.keyClick(focus, key)


# -- the footer ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("scale", ["normal", "larger"])
def test_the_footer_shows_the_whole_status_one_main_action_and_the_actions_key(
        qtbot, request, bridge, engine, scale) -> None:
    if scale == "larger":
        request.getfixturevalue("larger_font")
    w = make_window(qtbot, bridge, engine, budget=120)
    engine(bridge, lambda s: s.add(ARTICLE + " " + ARTICLE, source="clipboard"))
    select_three(qtbot, w)
    chosen = w.list.selected_memories()
    ctx = build_context(chosen, budget=120)
    shortened, left_out = len(ctx.summarised) + len(ctx.truncated), len(ctx.left_out)
    assert shortened + left_out, "the test needs a pack that shortens or leaves out"
    for width in (760, w.width()):
        w.resize(width, w.height())
        qtbot.wait(20)
        assert_nothing_clipped(w)
        status = w.status.text()
        assert status.startswith("3 ") and f"~{ctx.tokens}" in status
        if shortened:
            assert re.search(rf"\b{shortened} short", status), status
        if left_out:
            assert re.search(rf"\b{left_out} (left )?out", status), status
        text = footer_text(w)
        verb = "Paste" if w.paster.pastes else "Copy"
        assert f"{verb} context ↵" in text and text.endswith("Actions Ctrl+K")
        assert "Ctrl+P" not in text and "Del" not in text and "Ctrl+↵" not in text  # one main action only


def test_the_status_reads_in_full_when_there_is_room(qtbot, window) -> None:
    window.list.select_row(0)
    window.list.select_row(1, extend=True)
    tokens = build_context(window.list.selected_memories(), budget=1500).tokens
    assert window.status.text() == f"2 selected · ~{tokens} / 1500 tokens"
    assert "Copy context ↵" in footer_text(window) or "Paste context ↵" in footer_text(window)


def test_with_nothing_selected_the_footer_says_the_budget_and_its_main_action_hides(qtbot, window) -> None:
    search(qtbot, window, "zzzqqq no such words")
    assert window.status.text() == "Context budget 1500 tokens"
    assert footer_text(window).endswith("Hide Esc Actions Ctrl+K")
    assert_nothing_clipped(window)


def test_a_click_on_the_main_action_does_it(qtbot, window) -> None:
    search(qtbot, window, "invoice")
    main = next(lab for lab in shown_labels(window.footer) if lab.text().endswith("context"))
    with qtbot.waitSignal(window.copied, timeout=10_000) as copied:
        qtbot.mouseClick(main, Qt.MouseButton.LeftButton)
    assert copied.args[0] == "context" and not window.isVisible()


def test_a_click_on_actions_opens_the_menu(qtbot, window) -> None:
    actions = next(lab for lab in shown_labels(window.footer) if lab.text() == "Actions")
    qtbot.mouseClick(actions, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: QApplication.activePopupWidget() is not None, timeout=5_000)
    press(qtbot, Qt.Key.Key_Escape)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(selected=st.integers(0, 500), tokens=st.integers(0, 2_000_000), budget=st.integers(1, 2_000_000),
       shortened=st.integers(0, 60), left_out=st.integers(0, 60), width=st.integers(40, 900))
def test_the_status_is_never_cut_mid_word_at_any_width(qapp, selected, tokens, budget, shortened, left_out,
                                                        width) -> None:
    wordings = status_wordings(selected, tokens, budget, shortened, left_out)
    bar = FooterBar()
    try:
        bar.status.resize(width, 30)
        bar.show_status(wordings)
        shown = bar.status.text()
        metrics = bar.status.fontMetrics()
        assert metrics.horizontalAdvance(shown) <= bar.status.contentsRect().width()
        fitting = [t for t in wordings if metrics.horizontalAdvance(t) <= bar.status.contentsRect().width()]
        if fitting:
            assert shown == fitting[0]  # the fullest wording that fits
            if selected:
                assert shown.startswith((f"{selected} ", "~"))
                for n, word in ((shortened, "short"), (left_out, "out")):
                    if n:
                        assert re.search(rf"\b{n} \w*\s?{word}", shown), shown
        else:  # not even the shortest wording fits: whole words of it, never a part of one
            words = wordings[-1].split()
            kept = shown.removesuffix("…").split()
            assert kept == words[:len(kept)]
        assert bar.status.toolTip() == wordings[0]  # the whole status on hover
    finally:
        bar.deleteLater()


# -- the actions menu ----------------------------------------------------------------------------------


def test_ctrl_k_lists_everything_the_selection_can_do_with_its_keys(qtbot, window) -> None:
    search(qtbot, window, "invoice")
    menu = open_menu(qtbot, window)
    shown = entries(menu)
    verb = "Paste" if window.paster.pastes else "Copy"
    assert shown[0] == (f"{verb} context", "↵")
    for entry in [(f"{verb} text", "Ctrl+↵"), ("Preview", "Shift+Space"), ("Pin", "Ctrl+P"), ("Forget", "Del"),
                  ("Hide", "Esc")]:
        assert entry in shown
    assert ("Undo forget", "Ctrl+Z") not in shown
    footer = window.footer.geometry()
    right = window.mapToGlobal(QPoint(footer.right(), footer.top()))
    assert abs(menu.geometry().right() - right.x()) <= 16  # anchored at the footer's right
    assert menu.geometry().bottom() <= right.y() + 1 or menu.geometry().top() >= right.y()
    press(qtbot, Qt.Key.Key_Escape)
    qtbot.waitUntil(lambda: QApplication.activePopupWidget() is None, timeout=5_000)
    assert window.isVisible() and QApplication.focusWidget() is window.query
    assert window.query.text() == "invoice"


def test_typing_filters_the_menu_and_enter_runs_the_action_the_key_runs(qtbot, window, bridge, engine) -> None:
    search(qtbot, window, "invoice")
    memory_id = window.model.memories[0].id
    open_menu(qtbot, window)
    typed(qtbot, "pin")
    assert entries(popup()) == [("Pin", "Ctrl+P")]
    press(qtbot, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: window.model.memories[0].pinned, timeout=10_000)
    assert engine(bridge, lambda s: s.get(memory_id).pinned)
    assert QApplication.activePopupWidget() is None and QApplication.focusWidget() is window.query
    assert window.query.text() == "invoice"
    assert ("Unpin", "Ctrl+P") in entries(open_menu(qtbot, window))
    press(qtbot, Qt.Key.Key_Escape)


def test_arrows_move_in_the_menu_and_forget_then_undo_forget_from_it(qtbot, window, bridge, engine) -> None:
    search(qtbot, window, "invoice")
    memory_id = window.model.memories[0].id
    menu = open_menu(qtbot, window)
    rows = entries(menu)
    for _ in range(rows.index(("Forget", "Del"))):
        press(qtbot, Qt.Key.Key_Down)
    press(qtbot, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: window.undo_bar.isVisible(), timeout=10_000)
    assert engine(bridge, lambda s: s.get(memory_id).forgotten)
    menu = open_menu(qtbot, window)
    assert ("Undo forget", "Ctrl+Z") in entries(menu)
    typed(qtbot, "undo")
    with qtbot.waitSignal(window.search_finished, timeout=10_000):
        press(qtbot, Qt.Key.Key_Return)
    assert not engine(bridge, lambda s: s.get(memory_id).forgotten)


def test_a_forgotten_memory_offers_restore_and_an_open_preview_offers_close(qtbot, window, bridge, engine) -> None:
    search(qtbot, window, "invoice")
    memory_id = window.model.memories[0].id
    engine(bridge, lambda s: s.set_forgotten(memory_id, True))
    search(qtbot, window, "invoice is:forgotten")
    window.list.select_row([m.id for m in window.model.memories].index(memory_id))
    menu = open_menu(qtbot, window)
    assert ("Restore", "Del") in entries(menu) and ("Forget", "Del") not in entries(menu)
    typed(qtbot, "prev")
    press(qtbot, Qt.Key.Key_Return)  # the preview opens, as Shift+Space opens it
    assert window.preview.isVisible()
    shown = entries(open_menu(qtbot, window))
    assert ("Close preview", "Esc") in shown and ("Preview", "Shift+Space") not in shown
    press(qtbot, Qt.Key.Key_Escape)  # Esc closes the menu only
    qtbot.waitUntil(lambda: QApplication.activePopupWidget() is None, timeout=5_000)
    assert window.preview.isVisible() and window.isVisible()


def test_ctrl_k_from_the_list_and_never_the_query_boxs_delete_to_end(qtbot, window) -> None:
    search(qtbot, window, "invoice")
    window.query.setCursorPosition(2)
    override = QKeyEvent(QEvent.Type.ShortcutOverride, Qt.Key.Key_K, CTRL)
    override.ignore()
    QApplication.sendEvent(window.query, override)
    assert not override.isAccepted()  # the panel's Ctrl+K wins where a line edit would delete to the end
    open_menu(qtbot, window)
    press(qtbot, Qt.Key.Key_Escape)
    assert window.query.text() == "invoice"
    window.list.setFocus()
    open_menu(qtbot, window, at=window.list)
    press(qtbot, Qt.Key.Key_Escape)
    qtbot.waitUntil(lambda: QApplication.activePopupWidget() is None, timeout=5_000)


def test_the_menu_offers_settings_when_the_app_gives_a_way_there(qtbot, window) -> None:
    assert not any(label.startswith("Settings") for label, _ in entries(open_menu(qtbot, window)))
    press(qtbot, Qt.Key.Key_Escape)
    opened: list[bool] = []
    window.act.open_settings = lambda: opened.append(True)
    window.update_status()
    open_menu(qtbot, window)
    typed(qtbot, "settings")
    press(qtbot, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: opened == [True], timeout=5_000)
    assert not window.isVisible()


INVOICES = [f"Invoice INV-{n} for Calder & Finch: 14 units of part PX-204 shipped from the Leeds warehouse by "
            "ground freight, payment due within 30 days to the usual account, contact the accounts desk with "
            "questions" for n in (3101, 3102, 3103, 3104)]


def test_the_menu_shows_and_hides_look_alikes_as_ctrl_arrows_do(qtbot, window, bridge, engine) -> None:
    for text in INVOICES:
        engine(bridge, lambda s, t=text: s.add(t, source="import"))
    search(qtbot, window, "invoice INV-3103 Calder")
    row = [m.content for m in window.model.memories].index(INVOICES[2])
    window.list.select_row(row)
    open_menu(qtbot, window)
    typed(qtbot, "similar")
    assert entries(popup()) == [("Show similar", "Ctrl+→")]
    press(qtbot, Qt.Key.Key_Return)
    assert sum(m.content in INVOICES for m in window.model.memories) == 4  # the look-alikes are rows now
    assert window.list.currentIndex().row() == row + 1
    open_menu(qtbot, window)
    typed(qtbot, "similar")
    assert entries(popup()) == [("Hide similar", "Ctrl+←")]
    press(qtbot, Qt.Key.Key_Return)
    assert sum(m.content in INVOICES for m in window.model.memories) == 1
    assert window.list.currentIndex().row() == row
    search(qtbot, window, "shopping oat milk")
    assert not any("similar" in label for label, _ in entries(open_menu(qtbot, window)))
    press(qtbot, Qt.Key.Key_Escape)
