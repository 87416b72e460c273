"""Wayland global shortcuts through the XDG GlobalShortcuts portal, on a real D-Bus session bus.

Each test starts its own `dbus-daemon --session` and the stand-in portal (tests/portal_standin.py, in
jeepney) on it; the backend talks to it exactly as it would to xdg-desktop-portal. A real KDE or
GNOME 48 portal cannot run here.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from jeepney import DBusAddress, new_method_call
from jeepney.io.blocking import open_dbus_connection

from desktop_memory.capture.hotkeys_portal import PortalHotkeys, PortalUnavailable

pytestmark = [pytest.mark.integration,
              pytest.mark.skipif(not shutil.which("dbus-daemon"), reason="needs dbus-daemon")]
if not os.environ.get("DISPLAY"):  # the Qt glue tests below; without a display Qt would abort
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
STANDIN = Path(__file__).resolve().parents[1] / "portal_standin.py"
COMBOS = {"search": "Ctrl+Alt+M", "capture": "Ctrl+Alt+C", "selection": "Ctrl+Alt+Shift+C"}


@pytest.fixture
def bus(monkeypatch) -> Iterator[str]:
    """A private session bus for this test; DBUS_SESSION_BUS_ADDRESS points at it."""
    proc = subprocess.Popen(["dbus-daemon", "--session", "--nofork", "--print-address=1"],
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    address = proc.stdout.readline().strip()
    monkeypatch.setenv("DBUS_SESSION_BUS_ADDRESS", address)
    try:
        yield address
    finally:
        proc.terminate()
        proc.wait(5)
        proc.stdout.close()


class Portal:
    """The stand-in portal process and a control connection to it."""

    def __init__(self, address: str, *flags: str) -> None:
        env = {**os.environ, "DBUS_SESSION_BUS_ADDRESS": address}
        self.proc = subprocess.Popen([sys.executable, str(STANDIN), *flags], stdout=subprocess.PIPE, text=True,
                                     env=env)
        assert self.proc.stdout.readline().strip() == "ready"
        self.conn = open_dbus_connection(bus="SESSION")
        self.addr = DBusAddress("/org/freedesktop/portal/desktop", bus_name="org.freedesktop.portal.Desktop",
                                interface="org.desktop_memory.Standin")

    def call(self, member: str, signature: str | None = None, body: tuple = ()):
        reply = self.conn.send_and_get_reply(new_method_call(self.addr, member, signature, body), timeout=5)
        return reply.body

    def calls(self) -> list[str]:
        return [c.split()[0] for c in self.call("Calls")[0]]

    def close(self) -> None:
        self.conn.close()
        self.proc.terminate()
        self.proc.wait(5)
        self.proc.stdout.close()


@pytest.fixture
def portal_factory(bus: str) -> Iterator:
    started: list[Portal] = []

    def start(*flags: str) -> Portal:
        started.append(Portal(bus, *flags))
        return started[-1]

    yield start
    for p in started:
        p.close()


class Receiver:
    def __init__(self) -> None:
        self.got: list[str] = []
        self.event = threading.Event()

    def __call__(self, action: str) -> None:
        self.got.append(action)
        self.event.set()


def test_registers_first_creates_a_session_binds_all_three_and_an_activation_reaches_the_callback(
        portal_factory) -> None:
    portal = portal_factory()
    receiver = Receiver()
    keys = PortalHotkeys(receiver)
    try:
        assert keys.bind(COMBOS) == {}
        assert portal.calls()[:3] == ["Register", "CreateSession", "BindShortcuts"]
        assert sorted(portal.call("Bound")[0]) == [
            ("capture", "CTRL+ALT+c"), ("search", "CTRL+ALT+m"), ("selection", "CTRL+ALT+SHIFT+c")]
        assert keys.triggers["search"] == "CTRL+ALT+m"
        portal.call("Activate", "s", ("selection",))
        assert receiver.event.wait(5)
        assert receiver.got == ["selection"]
    finally:
        keys.close()


def test_binding_again_binds_every_time_and_a_refused_shortcut_is_reported_by_name(portal_factory) -> None:
    portal = portal_factory("--refuse", "capture")
    receiver = Receiver()
    keys = PortalHotkeys(receiver)
    try:
        problems = keys.bind(COMBOS)
        assert list(problems) == ["capture"]
        assert "Ctrl+Alt+C" in problems["capture"]
        problems = keys.bind({**COMBOS, "search": "Ctrl+Alt+K", "selection": "Ctrl+Hyper+Q"})
        assert set(problems) == {"capture", "selection"}
        assert "Hyper" in problems["selection"]
        assert portal.calls().count("BindShortcuts") == 2
        assert ("search", "CTRL+ALT+k") in portal.call("Bound")[0]
        assert len(portal.call("Sessions")[0]) == 1  # the first session was closed
        portal.call("Activate", "s", ("search",))
        assert receiver.event.wait(5) and receiver.got == ["search"]
    finally:
        keys.close()


def test_a_missing_registry_is_tolerated(portal_factory) -> None:
    portal = portal_factory("--no-registry")
    keys = PortalHotkeys(Receiver())
    try:
        assert keys.bind(COMBOS) == {}
        assert "CreateSession" in portal.calls()
    finally:
        keys.close()


@pytest.mark.parametrize("flags", [("--no-shortcuts",), ("--no-shortcuts", "--no-registry")])
def test_a_portal_without_global_shortcuts_is_unavailable_with_a_reason(portal_factory, flags) -> None:
    portal_factory(*flags)
    with pytest.raises(PortalUnavailable, match="global shortcuts"):
        PortalHotkeys(Receiver())


def test_no_portal_on_the_bus_is_unavailable(bus: str) -> None:
    with pytest.raises(PortalUnavailable, match="portal"):
        PortalHotkeys(Receiver(), timeout=2)


def test_no_session_bus_is_unavailable(monkeypatch) -> None:
    monkeypatch.setenv("DBUS_SESSION_BUS_ADDRESS", "unix:path=/nonexistent/bus")
    with pytest.raises(PortalUnavailable):
        PortalHotkeys(Receiver(), timeout=2)


def test_a_portal_that_went_away_gives_problems_not_a_traceback(portal_factory) -> None:
    portal = portal_factory()
    keys = PortalHotkeys(Receiver(), timeout=2)
    try:
        assert keys.bind(COMBOS) == {}
        portal.proc.kill()
        portal.proc.wait(5)
        problems = keys.bind(COMBOS)
        assert set(problems) == set(COMBOS)
        assert all("stopped answering" in p for p in problems.values())
    finally:
        keys.close()


def test_a_declined_dialog_reports_every_shortcut(portal_factory) -> None:
    portal_factory("--bind-response", "1")
    keys = PortalHotkeys(Receiver())
    try:
        problems = keys.bind(COMBOS)
        assert set(problems) == set(COMBOS)
        assert all("declined" in p for p in problems.values())
    finally:
        keys.close()


def test_an_answer_after_the_wait_comes_later_through_on_late(portal_factory) -> None:
    portal_factory("--bind-delay", "1.5", "--refuse", "search")
    late: list[dict[str, str]] = []
    arrived = threading.Event()
    keys = PortalHotkeys(Receiver(), on_late=lambda p: (late.append(p), arrived.set()), answer_timeout=0.3)
    try:
        started = time.monotonic()
        assert keys.bind(COMBOS) == {}  # still waiting for the person to confirm: nothing known yet
        assert time.monotonic() - started < 1.2
        assert arrived.wait(5)
        assert list(late[0]) == ["search"]
    finally:
        keys.close()


def test_the_tray_app_glue_uses_the_portal_on_wayland(portal_factory, monkeypatch, qtbot) -> None:
    from desktop_memory.qt.hotkeys import GlobalHotkeys

    portal = portal_factory()
    monkeypatch.setattr(sys, "platform", "linux")
    monkeypatch.setenv("WAYLAND_DISPLAY", "wayland-0")
    hotkeys = GlobalHotkeys()
    try:
        assert hotkeys.active and hotkeys.note == ""
        assert hotkeys.bind(COMBOS) == {}
        with qtbot.waitSignal(hotkeys.pressed, timeout=5000) as blocker:
            portal.call("Activate", "s", ("capture",))
        assert blocker.args == ["capture"]
    finally:
        hotkeys.close()


def test_the_tray_app_glue_keeps_the_fallback_without_the_interface(portal_factory, monkeypatch, qtbot) -> None:
    from desktop_memory.qt.hotkeys import WAYLAND_HINT, GlobalHotkeys

    portal_factory("--no-shortcuts")
    monkeypatch.setattr(sys, "platform", "linux")
    monkeypatch.setenv("WAYLAND_DISPLAY", "wayland-0")
    hotkeys = GlobalHotkeys()
    assert not hotkeys.active
    assert hotkeys.note == WAYLAND_HINT
    assert hotkeys.bind(COMBOS) == {}
    hotkeys.close()


@pytest.mark.skipif(not (os.environ.get("DESKTOP_MEMORY_DESKTOP_SESSION") and os.environ.get("DISPLAY")),
                    reason="needs the X server of scripts/with-desktop.sh")
def test_on_x11_the_glue_keeps_x11_grabs_and_never_asks_the_portal(portal_factory, monkeypatch, qtbot) -> None:
    from desktop_memory.capture.hotkeys_x11 import X11Hotkeys
    from desktop_memory.qt.hotkeys import GlobalHotkeys

    portal = portal_factory()
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    monkeypatch.setenv("XDG_SESSION_TYPE", "x11")
    monkeypatch.setenv("QT_QPA_PLATFORM", "xcb")  # the app's platform there (tests/gui's conftest says offscreen)
    hotkeys = GlobalHotkeys()
    try:
        assert hotkeys.mode == "x11" and hotkeys.active, hotkeys.note
        assert isinstance(hotkeys._backend, X11Hotkeys)
        assert hotkeys.bind({"search": "Ctrl+Alt+J"}) == {}
        assert portal.call("Calls")[0] == []
    finally:
        hotkeys.close()
