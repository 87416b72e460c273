"""Typing a query into the search window the way a person does, waiting for its results."""

from __future__ import annotations

from desktop_memory.qt.search_window import SearchWindow


def search(qtbot, w: SearchWindow, text: str) -> None:
    w.query.clear()
    with qtbot.waitSignal(w.search_finished, timeout=10_000, check_params_cb=lambda q, n: q == text):
        qtbot.keyClicks(w.query, text)
