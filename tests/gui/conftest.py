"""Qt widget tests run offscreen (set before any QApplication exists); the engine is real except the embedder.

The widgets reach the engine the way the app does: over the data folder's socket (a RemoteService), here to
an engine host run in this process (`SocketEngine`); `tests/gui/test_app.py` also runs the real host process.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

os.environ["QT_QPA_PLATFORM"] = "offscreen"


class SocketEngine:
    """What the app ships with, in this process: a MemoryService (fake embedder) on its own engine lane,
    served on the data folder's socket by IpcServer; front ends get a RemoteService connected to it."""

    def __init__(self, folder: Path) -> None:
        from desktop_memory.ipc.host import EngineLane
        from desktop_memory.ipc.server import IpcServer
        from desktop_memory.service import MemoryService
        from tests.fakes import FakeEmbedder

        self.folder = folder
        self.lane = EngineLane()
        try:
            self.service = self.lane.run(lambda: MemoryService(folder, embedder=FakeEmbedder(), lock_wait_s=0.2))
        except BaseException:
            self.lane.close()
            raise
        self.server = IpcServer(self.service, folder, run=self.lane.run)
        self.server.start()  # enrichment is not started: the app starts it when it uses an opener

    def connect(self) -> Any:
        from desktop_memory.ipc.client import connect

        remote = connect(self.folder)
        assert remote is not None, "the in-process engine host does not answer"
        return remote

    def run(self, fn: Callable[[Any], Any]) -> Any:
        """fn(the MemoryService behind the socket) on its engine lane (test setup only)."""
        return self.lane.run(lambda: fn(self.service))

    def close(self) -> None:
        self.server.close()
        self.lane.run(self.service.close)
        self.lane.close()


@pytest.fixture
def socket_engines() -> Iterator[dict[Path, SocketEngine]]:
    """Engines served on sockets, by data folder; closed after the test (after the bridges using them)."""
    engines: dict[Path, SocketEngine] = {}
    yield engines
    for engine in engines.values():
        engine.close()


@pytest.fixture
def remote_opener(socket_engines) -> Callable[[Path], Any]:
    """An opener for EngineBridge / DesktopApp: the folder's engine on a socket, reached as a RemoteService."""

    def open_remote(folder: Path) -> Any:
        if folder not in socket_engines:
            socket_engines[folder] = SocketEngine(folder)
        return socket_engines[folder].connect()

    return open_remote


@pytest.fixture
def make_bridge(qtbot, tmp_path: Path, remote_opener) -> Iterator[Callable[..., Any]]:
    """Start an EngineBridge over a RemoteService (the app's path) to an engine served in this process with the
    fake embedder; stopped after the test."""
    from desktop_memory.qt.bridge import EngineBridge

    started = []

    def make(folder: Path | None = None, *, start: bool = True) -> EngineBridge:
        where = folder or tmp_path / "data"
        bridge = EngineBridge(lambda: remote_opener(where))
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


@pytest.fixture
def start_app(qtbot, tmp_path: Path, monkeypatch, remote_opener) -> Iterator[Callable[..., Any]]:
    """Start the tray app (capture off, welcome seen) on a folder's engine served in this process; `prepare(app)`
    runs before it starts (e.g. a real hotkey backend). Quit after the test."""
    from desktop_memory.qt.app import DesktopApp

    monkeypatch.setattr("desktop_memory.qt.app.QApplication.exit", lambda *a: None)
    apps: list[Any] = []

    def start(prepare: Callable[[Any], None] | None = None) -> Any:
        data = tmp_path / "data"
        data.mkdir(parents=True, exist_ok=True)
        (data / "settings.json").write_text('{"capture_enabled": false, "welcome_shown": true}', encoding="utf-8")
        app = DesktopApp(data, opener=remote_opener)
        if prepare is not None:
            prepare(app)
        with qtbot.waitSignal(app.engine_ready, timeout=20_000):
            assert app.start()
        qtbot.addWidget(app.search)
        qtbot.addWidget(app.settings_window)
        apps.append(app)
        return app

    yield start
    for app in apps:
        app.quit()
