"""The tray app on Wayland with the GlobalShortcuts portal (tests/portal_standin.py on a private D-Bus session
bus): what the desktop answers later reaches the tray menu, one notice and the settings window."""

from __future__ import annotations

import shutil
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from desktop_memory.qt.app import DesktopApp
from tests.portal_standin import Portal, SessionBus

pytestmark = pytest.mark.skipif(not shutil.which("dbus-daemon"), reason="needs dbus-daemon")


@pytest.fixture
def bus(monkeypatch) -> Iterator[str]:
    session = SessionBus()
    monkeypatch.setenv("DBUS_SESSION_BUS_ADDRESS", session.address)
    monkeypatch.setattr(sys, "platform", "linux")
    monkeypatch.setenv("WAYLAND_DISPLAY", "wayland-0")
    yield session.address
    session.stop()


@pytest.fixture
def wayland_app(qtbot, tmp_path: Path, monkeypatch, remote_opener, bus) -> Iterator:
    """Start the app with the stand-in portal started by `portal(*flags)`; (app, notices, portal)."""
    monkeypatch.setattr("desktop_memory.qt.app.QApplication.exit", lambda *a: None)
    started: list = []

    def start(*flags: str) -> tuple[DesktopApp, list[str], Portal]:
        portal = Portal(bus, *flags)
        started.append(portal)
        folder = tmp_path / "data"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "settings.json").write_text('{"capture_enabled": false, "welcome_shown": true}', encoding="utf-8")
        app = DesktopApp(folder, opener=remote_opener)
        notices: list[str] = []
        app.tray.notify = notices.append
        started.append(app)
        with qtbot.waitSignal(app.engine_ready, timeout=20_000):
            assert app.start()
        qtbot.addWidget(app.search)
        return app, notices, portal

    yield start
    for thing in reversed(started):  # the app first, then its portal
        if isinstance(thing, DesktopApp):
            thing.quit()
        else:
            thing.close()


def press_search(qtbot, app: DesktopApp, portal: Portal) -> None:
    """The desktop's Activated for "search" opens the search window (hidden first: without a tray the app
    shows it at start), and the press is handled before the test ends."""
    app.search.hide()
    with qtbot.waitSignal(app.hotkeys.pressed, timeout=5000):
        portal.call("Activate", "s", ("search",))
    qtbot.waitUntil(app.search.isVisible, timeout=5000)


def menu_shortcuts(app: DesktopApp) -> dict[str, str]:
    return {a.text().replace("&", ""): a.shortcut().toString() for a in app.tray.menu.actions()
            if a.isVisible() and a.text()}


def test_the_desktops_later_answer_and_its_own_combos_reach_the_menu_a_notice_and_settings(qtbot,
                                                                                          wayland_app) -> None:
    app, notices, portal = wayland_app("--bind-delay", "1.5", "--refuse", "capture")
    window = app.settings_window
    qtbot.addWidget(window)
    assert "Waiting for your desktop" in window.hotkeys_note.text()  # asked, not answered yet
    qtbot.waitUntil(lambda: any(n.startswith("Hotkey not set") for n in notices), timeout=10_000)
    told = [n for n in notices if n.startswith("Hotkey not set")]
    assert len(told) == 1 and "Ctrl+Alt+C" in told[0] and "Traceback" not in told[0]
    shown = menu_shortcuts(app)
    assert shown["Search…"] == "Ctrl+Alt+M" and shown["Capture selected text"] == "Ctrl+Alt+Shift+C"
    assert shown["Capture clipboard now"] == ""  # not bound by the desktop: not promised in the menu
    assert "Ctrl+Alt+C" in window.hotkey_notes["capture"].text() and not window.hotkey_notes["capture"].isHidden()
    assert window.hotkey_notes["search"].isHidden() and window.hotkeys_note.isHidden()

    portal.call("ChangeShortcuts", "a(ss)", ([("search", "Meta+Shift+K")],))  # changed in the desktop's settings
    qtbot.waitUntil(lambda: menu_shortcuts(app)["Search…"] == "Meta+Shift+K", timeout=5000)
    assert "Meta+Shift+K" in window.hotkey_notes["search"].text()
    assert portal.calls().count("BindShortcuts") == 1  # shown, not fought
    time.sleep(0.2)
    assert len([n for n in notices if n.startswith("Hotkey not set")]) == 1

    press_search(qtbot, app, portal)


def test_without_global_shortcuts_the_fallback_is_shown_in_settings_without_a_balloon(qtbot, wayland_app) -> None:
    from desktop_memory.qt.hotkeys import WAYLAND_HINT

    app, notices, _portal = wayland_app("--no-shortcuts")
    qtbot.waitUntil(lambda: not app.hotkeys.active, timeout=10_000)
    qtbot.wait(100)
    assert not any(menu_shortcuts(app).values())
    window = app.settings_window
    qtbot.addWidget(window)
    assert window.hotkeys_note.text() == WAYLAND_HINT
    assert not any(n.startswith("Hotkey not set") for n in notices)


def test_a_session_the_desktop_ends_is_told_once_and_the_combos_come_back_when_it_is_open_again(
        qtbot, wayland_app) -> None:
    app, notices, portal = wayland_app()
    qtbot.waitUntil(lambda: menu_shortcuts(app)["Search…"] == "Ctrl+Alt+M" and not app.hotkeys.pending,
                    timeout=10_000)
    portal.call("FailSessions", "u", (1,))  # the first try again is refused too (retried after 1, then 3 s)
    portal.call("CloseSession")
    qtbot.waitUntil(lambda: not any(menu_shortcuts(app).values()), timeout=5000)
    told = [n for n in notices if n.startswith("Hotkey not set")]
    assert len(told) == 1 and "ended" in told[0]
    qtbot.waitUntil(lambda: menu_shortcuts(app)["Search…"] == "Ctrl+Alt+M", timeout=15_000)
    assert len([n for n in notices if n.startswith("Hotkey not set")]) == 1
    press_search(qtbot, app, portal)
