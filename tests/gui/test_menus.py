"""Every menu of the app: each entry has its own accelerator; Recent captures lists enough and opens the rest."""

from __future__ import annotations

import time

import pytest
from PySide6.QtGui import QKeySequence
from PySide6.QtWidgets import QApplication, QMenu

from desktop_memory.core.capture import CaptureEvent


@pytest.fixture
def desktop(start_app):
    return start_app()


def _events(n: int) -> list[CaptureEvent]:
    now = time.time()
    return [CaptureEvent(now - 60 * i, True, "saved", memory_id=f"m{i}", title=f"note number {i} about the garden")
            if i % 3 else CaptureEvent(now - 60 * i, False, "too short") for i in range(n)]


def _menus() -> list[QMenu]:
    return [w for w in QApplication.allWidgets() if isinstance(w, QMenu)]


def test_no_menu_of_the_app_has_two_entries_with_one_accelerator(qtbot, desktop) -> None:
    desktop.tray.set_recent(_events(25))
    desktop.tray.set_model_problem("the local model stopped; memories are enriched without it")
    desktop.open_settings()
    qtbot.waitUntil(desktop.settings_window.isVisible, timeout=10_000)
    menus = _menus()
    assert desktop.tray.menu in menus and desktop.tray.recent_menu in menus and desktop.tray.pause_menu in menus
    for menu in menus:
        keys: dict[str, str] = {}
        for action in menu.actions():  # hidden ones too: Retry and Resume show up while the others are there
            key = QKeySequence.mnemonic(action.text()).toString()
            if key:
                assert key not in keys, f"{action.text()!r} and {keys[key]!r} share {key} in {menu.title() or 'a menu'}"
                keys[key] = action.text()


def test_recent_captures_lists_the_last_twenty_and_opens_the_search_on_the_newest(
        qtbot, desktop, monkeypatch) -> None:
    opened: list[str | None] = []
    monkeypatch.setattr(desktop.search, "show_and_focus", lambda select_id=None: opened.append(select_id))
    events = _events(25)
    started = time.perf_counter()
    desktop.tray.set_recent(events)
    assert time.perf_counter() - started < 0.05  # built each time the menu opens: it stays instant
    labels = [a.text() for a in desktop.tray.recent_menu.actions() if not a.isSeparator()]
    assert len(labels) == 21 and labels[0].startswith("Skipped: too short") and "note number 19" in labels[19]
    show_all = desktop.tray.recent_menu.actions()[-1]
    assert show_all.text() == "&Show all in the search window…"
    show_all.trigger()
    assert opened == ["m1"]  # the newest saved one
    desktop.tray.set_recent([])
    desktop.tray.recent_menu.actions()[-1].trigger()
    assert opened[-1] is None
