"""Qt widget tests run offscreen (set before any QApplication exists); the engine is real except the embedder."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

os.environ["QT_QPA_PLATFORM"] = "offscreen"


@pytest.fixture
def make_bridge(qtbot, tmp_path: Path) -> Iterator[Callable[..., Any]]:
    """Start an EngineBridge over a MemoryService with the fake embedder; stopped after the test."""
    from desktop_memory.qt.bridge import EngineBridge
    from desktop_memory.service import MemoryService
    from tests.fakes import FakeEmbedder

    started = []

    def make(folder: Path | None = None, *, start: bool = True) -> EngineBridge:
        where = folder or tmp_path / "data"
        bridge = EngineBridge(lambda: MemoryService(where, embedder=FakeEmbedder(), lock_wait_s=0.2))
        started.append(bridge)
        if start:
            with qtbot.waitSignal(bridge.opened, timeout=20_000):
                bridge.start()
        return bridge

    yield make
    for bridge in started:
        bridge.stop()


@pytest.fixture
def bridge(make_bridge):
    return make_bridge()


@pytest.fixture
def engine(qtbot):
    """Run fn(service) on the bridge's engine thread and return its result, keeping the GUI loop running."""

    def run(bridge, fn: Callable[[Any], Any]) -> Any:
        box: list[tuple[bool, Any]] = []
        bridge.submit(fn, lambda v: box.append((True, v)), lambda m: box.append((False, m)))
        qtbot.waitUntil(lambda: bool(box), timeout=20_000)
        ok, value = box[0]
        if not ok:
            raise AssertionError(f"engine job failed: {value}")
        return value

    return run


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """Let Qt free the clipboard's data while Python still runs.

    A QMimeData handed to QClipboard.setMimeData belongs to Qt; with the offscreen platform Qt frees it
    from a C++ exit handler, after Python has finalised, and PySide's wrapper then segfaults the test
    process (exit 139) although every test passed.
    """
    from PySide6.QtGui import QGuiApplication

    if QGuiApplication.instance() is not None:
        QGuiApplication.clipboard().clear()
        QGuiApplication.processEvents()
