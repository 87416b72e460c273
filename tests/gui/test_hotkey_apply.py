"""Changing a hotkey in Settings against real X11 grabs: a combo another program holds is never saved and the old
one keeps working (xdotool presses it on the X server of scripts/with-desktop.sh)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QKeySequence

from desktop_memory.qt.app import DesktopApp

IN_DESKTOP = bool(os.environ.get("DESKTOP_MEMORY_DESKTOP_SESSION")) and bool(os.environ.get("DISPLAY"))
pytestmark = pytest.mark.skipif(not IN_DESKTOP or not shutil.which("xdotool"),
                                reason="needs the X server of scripts/with-desktop.sh and xdotool")


@pytest.fixture
def desktop(start_app):
    """The app with real X11 grabs (its widgets are offscreen; the grabs are on the session's X server)."""
    from desktop_memory.capture.hotkeys_x11 import X11Hotkeys

    def real_grabs(app: DesktopApp) -> None:  # offscreen Qt has none: the real X11 one
        app.hotkeys._backend = X11Hotkeys(app.hotkeys.pressed.emit)

    return start_app(real_grabs)


@pytest.fixture
def other_program():
    """Another X client that holds Ctrl+Alt+K."""
    from desktop_memory.capture.hotkeys_x11 import X11Hotkeys

    other = X11Hotkeys(lambda _a: None)
    assert other.bind({"theirs": "Ctrl+Alt+K"}) == {}
    yield other
    other.close()


def _pressed(qtbot, desktop, keys: str) -> list[str]:
    got: list[str] = []
    desktop.hotkeys.pressed.connect(got.append)
    subprocess.run(["xdotool", "key", keys], check=True, timeout=30)
    qtbot.waitUntil(lambda: bool(got), timeout=10_000)
    desktop.hotkeys.pressed.disconnect(got.append)
    return got


def test_a_taken_combo_is_not_saved_and_the_old_one_still_opens_the_search(
        qtbot, desktop, other_program, tmp_path, monkeypatch) -> None:
    notices: list[str] = []
    monkeypatch.setattr(desktop.tray, "notify", notices.append)
    monkeypatch.setattr(desktop.search, "toggle", lambda: None)  # the press is what is checked here
    assert desktop.hotkeys.active and _pressed(qtbot, desktop, "ctrl+alt+m") == ["search"]
    desktop.open_settings()
    window = desktop.settings_window
    qtbot.waitUntil(window.isVisible, timeout=10_000)
    window.tabs.setCurrentIndex(2)
    edit = window.hotkey_search
    qtbot.mouseClick(edit, Qt.MouseButton.LeftButton)
    edit.setFocus()
    qtbot.keyClick(edit, Qt.Key.Key_A, Qt.KeyboardModifier.ControlModifier)
    qtbot.keyClick(edit, Qt.Key.Key_K, Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.AltModifier)
    assert edit.keySequence().toString(QKeySequence.SequenceFormat.PortableText) == "Ctrl+Alt+K"
    with qtbot.waitSignal(window.saved, timeout=10_000):
        window.save()
    assert json.loads((tmp_path / "data" / "settings.json").read_text())["hotkey_search"] == "Ctrl+Alt+M"
    assert notices == ["Settings saved, but the hotkey was not changed: Ctrl+Alt+K is already taken by another "
                       "program; Ctrl+Alt+M still opens the search window"]
    assert _pressed(qtbot, desktop, "ctrl+alt+m") == ["search"]  # the old combo still works
    search = next(a for a in desktop.tray.menu.actions() if a.text().replace("&", "") == "Search…")
    assert search.shortcut().toString() == "Ctrl+Alt+M"
    other_program.bind({})  # released: now it can be had
    edit.setKeySequence(QKeySequence("Ctrl+Alt+K"))
    with qtbot.waitSignal(window.saved, timeout=10_000):
        window.save()
    assert json.loads((tmp_path / "data" / "settings.json").read_text())["hotkey_search"] == "Ctrl+Alt+K"
    assert notices[-1] == "Settings saved" and _pressed(qtbot, desktop, "ctrl+alt+k") == ["search"]


def test_settings_changed_elsewhere_to_a_taken_combo_keep_the_old_one_working(
        qtbot, desktop, other_program, monkeypatch) -> None:
    import dataclasses

    from desktop_memory.engine.settings import Settings

    notices: list[str] = []
    monkeypatch.setattr(desktop.tray, "notify", notices.append)
    monkeypatch.setattr(desktop.search, "toggle", lambda: None)
    desktop._settings_loaded(dataclasses.replace(Settings(), hotkey_search="Ctrl+Alt+K"))
    assert notices == ["Hotkey not changed: Ctrl+Alt+K is already taken by another program; Ctrl+Alt+M still works"]
    assert _pressed(qtbot, desktop, "ctrl+alt+m") == ["search"]
