"""Wayland global shortcuts through the XDG GlobalShortcuts portal, on a real D-Bus session bus.

Each test starts its own `dbus-daemon --session` and the stand-in portal (tests/portal_standin.py, in
jeepney) on it; the backend talks to it exactly as it would to xdg-desktop-portal. A real KDE or
GNOME 48 portal cannot run here. Nothing the backend does may hold up its caller (the GUI thread):
every answer comes later through its callbacks, which these tests wait for.
"""

from __future__ import annotations

import os
import shutil
import sys
import threading
import time
from collections.abc import Iterator

import pytest

from desktop_memory.capture.hotkeys_portal import PortalHotkeys
from tests.portal_standin import Portal, SessionBus

pytestmark = [pytest.mark.integration,
              pytest.mark.skipif(not shutil.which("dbus-daemon"), reason="needs dbus-daemon")]
if not os.environ.get("DISPLAY"):  # the Qt glue tests below; without a display Qt would abort
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
COMBOS = {"search": "Ctrl+Alt+M", "capture": "Ctrl+Alt+C", "selection": "Ctrl+Alt+Shift+C"}
QUICK = (0.2, 0.3, 0.5, 0.8)  # retry delays for the tests (the app waits 1, 3, 10, 30 s)


@pytest.fixture
def session_bus(monkeypatch) -> Iterator[SessionBus]:
    """A private session bus for this test; DBUS_SESSION_BUS_ADDRESS points at it."""
    bus = SessionBus()
    monkeypatch.setenv("DBUS_SESSION_BUS_ADDRESS", bus.address)
    yield bus
    bus.stop()


@pytest.fixture
def bus(session_bus: SessionBus) -> str:
    return session_bus.address


@pytest.fixture
def portal_factory(bus: str) -> Iterator:
    started: list[Portal] = []

    def start(*flags: str) -> Portal:
        started.append(Portal(bus, *flags))
        return started[-1]

    yield start
    for p in started:
        p.close()


@pytest.fixture
def no_tracebacks(monkeypatch) -> list[str]:
    """Exceptions that escaped any thread (they would print a traceback): the list must stay empty."""
    escaped: list[str] = []
    monkeypatch.setattr(threading, "excepthook", lambda args: escaped.append(f"{args.thread}: {args.exc_value!r}"))
    return escaped


class Seen:
    """What the backend's callbacks reported, from its thread; `wait` blocks the test until enough came."""

    def __init__(self) -> None:
        self.pressed: list[str] = []
        self.late: list[dict[str, str]] = []
        self.triggers: list[dict[str, str]] = []
        self.unavailable: list[str] = []
        self._cond = threading.Condition()

    def _add(self, what: str, value: object) -> None:
        with self._cond:
            getattr(self, what).append(value)
            self._cond.notify_all()

    def keys(self, **kwargs) -> PortalHotkeys:
        return PortalHotkeys(lambda a: self._add("pressed", a), on_late=lambda p: self._add("late", p),
                             on_triggers=lambda t: self._add("triggers", t),
                             on_unavailable=lambda r: self._add("unavailable", r), **kwargs)

    def wait(self, what: str, n: int = 1, timeout: float = 10.0) -> list:
        with self._cond:
            assert self._cond.wait_for(lambda: len(getattr(self, what)) >= n, timeout), (what, self.__dict__)
            return list(getattr(self, what))


@pytest.fixture
def seen() -> Iterator[Seen]:
    yield Seen()


@pytest.fixture
def keys_factory(seen: Seen) -> Iterator:
    made: list[PortalHotkeys] = []

    def make(**kwargs) -> PortalHotkeys:
        made.append(seen.keys(**kwargs))
        return made[-1]

    yield make
    for k in made:
        k.close()


def test_registers_first_creates_a_session_binds_all_three_and_an_activation_reaches_the_callback(
        portal_factory, keys_factory, seen) -> None:
    portal = portal_factory()
    keys = keys_factory()
    assert keys.bind(COMBOS) == {}
    assert seen.wait("late") == [{}]
    assert not keys.pending
    assert portal.calls()[:3] == ["Register", "CreateSession", "BindShortcuts"]
    assert sorted(portal.call("Bound")[0]) == [
        ("capture", "CTRL+ALT+c"), ("search", "CTRL+ALT+m"), ("selection", "CTRL+ALT+SHIFT+c")]
    assert keys.triggers == COMBOS  # the desktop's "CTRL+ALT+m" shown as the app writes it
    assert seen.triggers[-1] == COMBOS
    portal.call("Activate", "s", ("selection",))
    assert seen.wait("pressed") == ["selection"]
    assert seen.unavailable == []


def test_binding_again_binds_every_time_and_a_refused_shortcut_is_reported_by_name(
        portal_factory, keys_factory, seen) -> None:
    portal = portal_factory("--refuse", "capture")
    keys = keys_factory()
    assert keys.bind(COMBOS) == {}
    problems = seen.wait("late")[0]
    assert list(problems) == ["capture"] and "Ctrl+Alt+C" in problems["capture"]
    immediate = keys.bind({**COMBOS, "search": "Ctrl+Alt+K", "selection": "Ctrl+Hyper+Q"})
    assert list(immediate) == ["selection"] and "Hyper" in immediate["selection"]
    assert list(seen.wait("late", 2)[1]) == ["capture"]
    assert portal.calls().count("BindShortcuts") == 2
    assert ("search", "CTRL+ALT+k") in portal.call("Bound")[0]
    assert len(portal.call("Sessions")[0]) == 1  # the first session was closed
    portal.call("Activate", "s", ("search",))
    assert seen.wait("pressed") == ["search"]


def test_a_bind_before_the_session_is_open_is_sent_once_it_is(portal_factory, keys_factory, seen) -> None:
    portal = portal_factory("--reply-delay", "0.5")
    keys = keys_factory()
    keys.bind({"search": "Ctrl+Alt+J"})
    keys.bind(COMBOS)  # the settings were saved again meanwhile: only the newest set counts
    assert seen.wait("late", timeout=15)[-1] == {}
    time.sleep(0.3)
    assert len(seen.late) == 1
    assert sorted(portal.call("Bound")[0])[1] == ("search", "CTRL+ALT+m")


def test_a_missing_registry_is_tolerated(portal_factory, keys_factory, seen) -> None:
    portal = portal_factory("--no-registry")
    keys_factory().bind(COMBOS)
    assert seen.wait("late") == [{}]
    assert "CreateSession" in portal.calls()


@pytest.mark.parametrize("flags", [("--no-shortcuts",), ("--no-shortcuts", "--no-registry")])
def test_a_portal_without_global_shortcuts_is_unavailable_with_a_reason(portal_factory, keys_factory, seen,
                                                                        flags) -> None:
    portal_factory(*flags)
    keys = keys_factory()
    assert keys.bind(COMBOS) == {}
    assert "global shortcuts" in seen.wait("unavailable")[0]
    assert seen.late == []


def test_no_portal_on_the_bus_is_unavailable(bus: str, keys_factory, seen) -> None:
    keys_factory(timeout=2)
    assert "portal" in seen.wait("unavailable")[0]


def test_no_session_bus_is_unavailable(monkeypatch, keys_factory, seen) -> None:
    monkeypatch.setenv("DBUS_SESSION_BUS_ADDRESS", "unix:path=/nonexistent/bus")
    keys_factory(timeout=2)
    assert "D-Bus" in seen.wait("unavailable")[0]


def test_an_answer_of_the_wrong_shape_is_a_problem_not_a_traceback(portal_factory, keys_factory, seen,
                                                                  no_tracebacks) -> None:
    portal = portal_factory("--garbage")
    keys = keys_factory()
    keys.bind(COMBOS)
    problems = seen.wait("late")[0]
    assert set(problems) == set(COMBOS) and all("refused" in p for p in problems.values())
    assert not keys.pending and no_tracebacks == []
    portal.call("Activate", "s", ("search",))  # the session itself works
    assert seen.wait("pressed") == ["search"]


def test_a_declined_dialog_reports_every_shortcut(portal_factory, keys_factory, seen) -> None:
    portal_factory("--bind-response", "1")
    keys_factory().bind(COMBOS)
    problems = seen.wait("late")[0]
    assert set(problems) == set(COMBOS)
    assert all("declined" in p for p in problems.values())


def test_a_slow_dialog_never_holds_up_the_caller_and_its_answer_comes_later(portal_factory, keys_factory,
                                                                            seen) -> None:
    portal_factory("--bind-delay", "3", "--refuse", "search")
    started = time.monotonic()
    keys = keys_factory()
    assert keys.bind(COMBOS) == {}  # still waiting for the person to confirm: nothing known yet
    assert time.monotonic() - started < 0.1
    time.sleep(0.5)
    assert keys.pending and seen.late == []
    assert list(seen.wait("late")[0]) == ["search"]
    assert not keys.pending


def test_a_slow_portal_never_holds_up_the_caller(portal_factory, keys_factory, seen) -> None:
    portal = portal_factory("--reply-delay", "3")
    started = time.monotonic()
    keys = keys_factory()
    assert keys.bind(COMBOS) == {}
    assert time.monotonic() - started < 0.1
    assert seen.wait("late", timeout=20) == [{}]  # Register, version, CreateSession, BindShortcuts: 3 s each
    portal.call("Activate", "s", ("capture",))
    assert seen.wait("pressed") == ["capture"]


def test_a_shortcut_the_person_changed_in_the_desktop_is_shown_and_not_fought(portal_factory, keys_factory,
                                                                             seen) -> None:
    portal = portal_factory()
    keys = keys_factory()
    keys.bind(COMBOS)
    seen.wait("late")
    portal.call("ChangeShortcuts", "a(ss)", ([("search", "Meta+Shift+K")],))
    assert seen.wait("triggers", 2)[1] == {**COMBOS, "search": "Meta+Shift+K"}
    assert keys.triggers["search"] == "Meta+Shift+K"
    time.sleep(0.3)
    assert portal.calls().count("BindShortcuts") == 1 and seen.late == [{}]  # no re-bind, nothing to report
    keys.close()
    again = keys_factory()  # the next start: the preferred trigger is sent again, the desktop keeps the person's
    again.bind(COMBOS)
    assert seen.wait("late", 2)[1] == {}
    assert ("search", "CTRL+ALT+m") in portal.call("Bound")[0]
    assert again.triggers["search"] == "Meta+Shift+K"
    portal.call("Activate", "s", ("search",))
    assert seen.wait("pressed") == ["search"]


def test_a_session_the_desktop_closed_is_reported_once_and_opened_again(portal_factory, keys_factory, seen,
                                                                        no_tracebacks) -> None:
    portal = portal_factory()
    keys = keys_factory(retry_delays=QUICK)
    keys.bind(COMBOS)
    seen.wait("late")
    portal.call("FailSessions", "u", (2,))  # the first two tries are refused too
    portal.call("CloseSession")
    lost = seen.wait("late", 2)[1]
    assert set(lost) == set(COMBOS) and all("ended" in p for p in lost.values())
    assert seen.wait("late", 3, timeout=15)[2] == {}  # bound again after backing off
    assert portal.calls().count("CreateSession") == 4 and portal.calls().count("BindShortcuts") == 2
    portal.call("Activate", "s", ("search",))
    assert seen.wait("pressed") == ["search"]
    assert len(seen.late) == 3 and no_tracebacks == []


def test_retrying_a_closed_session_gives_up_after_a_few_tries_quietly(portal_factory, keys_factory, seen,
                                                                      no_tracebacks) -> None:
    portal = portal_factory()
    keys = keys_factory(retry_delays=(0.1, 0.2))
    keys.bind(COMBOS)
    seen.wait("late")
    portal.call("FailSessions", "u", (100,))
    portal.call("CloseSession")
    seen.wait("late", 2)
    time.sleep(1.5)
    assert portal.calls().count("CreateSession") == 3
    assert len(seen.late) == 2 and no_tracebacks == []
    keys.bind(COMBOS)  # settings saved later: tried again, reported once more
    assert "refused" in next(iter(seen.wait("late", 3)[2].values()))
    time.sleep(1.0)
    assert len(seen.late) == 3 and portal.calls().count("CreateSession") > 3


def test_a_portal_that_went_away_is_reported_once_and_used_again_when_it_is_back(
        portal_factory, keys_factory, seen, no_tracebacks) -> None:
    portal = portal_factory()
    keys = keys_factory(retry_delays=(30.0,))  # not the retry: the portal's name coming back starts it again
    keys.bind(COMBOS)
    seen.wait("late")
    portal.proc.kill()
    portal.proc.wait(5)
    lost = seen.wait("late", 2)[1]
    assert set(lost) == set(COMBOS) and all("went away" in p for p in lost.values())
    back = portal_factory()
    assert seen.wait("late", 3, timeout=5)[2] == {}
    assert back.calls()[:3] == ["Register", "CreateSession", "BindShortcuts"]
    back.call("Activate", "s", ("capture",))
    assert seen.wait("pressed") == ["capture"]
    assert len(seen.late) == 3 and no_tracebacks == []


def test_the_session_bus_going_away_is_reported_once_without_a_traceback(session_bus, portal_factory,
                                                                         keys_factory, seen, no_tracebacks) -> None:
    portal_factory()
    keys = keys_factory(retry_delays=(0.1, 0.2))
    keys.bind(COMBOS)
    seen.wait("late")
    session_bus.proc.kill()
    session_bus.proc.wait(5)
    lost = seen.wait("late", 2)[1]
    assert set(lost) == set(COMBOS) and all("went away" in p for p in lost.values())
    time.sleep(1.0)
    assert len(seen.late) == 2 and no_tracebacks == []
    started = time.monotonic()
    keys.close()
    assert time.monotonic() - started < 0.5


def test_a_session_bus_that_comes_back_is_connected_to_again(tmp_path, monkeypatch, keys_factory, seen,
                                                              no_tracebacks) -> None:
    address = f"unix:path={tmp_path / 'bus'}"
    first = SessionBus(address)
    monkeypatch.setenv("DBUS_SESSION_BUS_ADDRESS", first.address)
    portal = Portal(first.address)
    again = back = None
    try:
        keys = keys_factory(retry_delays=(0.5, 1.0, 1.5, 2.0, 3.0))
        keys.bind(COMBOS)
        assert seen.wait("late") == [{}]
        first.proc.kill()
        first.proc.wait(5)
        portal.close()
        (tmp_path / "bus").unlink()
        assert all("went away" in p for p in seen.wait("late", 2)[1].values())
        again = SessionBus(address)  # the bus restarted (a new login would do the same)
        back = Portal(again.address)
        assert seen.wait("late", 3, timeout=15)[2] == {}
        assert back.calls()[:3] == ["Register", "CreateSession", "BindShortcuts"]
        back.call("Activate", "s", ("selection",))
        assert seen.wait("pressed") == ["selection"]
        assert len(seen.late) == 3 and no_tracebacks == []
    finally:
        for thing in (back, again, first):
            if thing is not None:
                thing.close() if isinstance(thing, Portal) else thing.stop()


# -- the tray app's glue (qt/hotkeys.py): the GUI thread never waits --------------------------------------
@pytest.fixture
def wayland(monkeypatch) -> None:
    monkeypatch.setattr(sys, "platform", "linux")
    monkeypatch.setenv("WAYLAND_DISPLAY", "wayland-0")


def test_the_tray_app_glue_uses_the_portal_on_wayland(portal_factory, wayland, qtbot) -> None:
    from desktop_memory.qt.hotkeys import GlobalHotkeys

    portal = portal_factory()
    hotkeys = GlobalHotkeys()
    try:
        assert hotkeys.active and hotkeys.note == ""
        with qtbot.waitSignal(hotkeys.late_problems, timeout=5000) as answered:
            assert hotkeys.bind(COMBOS) == {}
        assert answered.args == [{}]
        with qtbot.waitSignal(hotkeys.pressed, timeout=5000) as blocker:
            portal.call("Activate", "s", ("capture",))
        assert blocker.args == ["capture"]
        with qtbot.waitSignal(hotkeys.triggers_changed, timeout=5000) as changed:
            portal.call("ChangeShortcuts", "a(ss)", ([("capture", "Meta+V")],))
        assert changed.args == [{**COMBOS, "capture": "Meta+V"}]
    finally:
        hotkeys.close()


def test_the_gui_thread_never_waits_for_a_slow_portal(portal_factory, wayland, qtbot) -> None:
    """The portal answers every call 3 s late (a busy or just-activated portal): the GUI thread goes on."""
    from desktop_memory.qt.hotkeys import GlobalHotkeys

    portal = portal_factory("--reply-delay", "3", "--refuse", "selection")
    started = time.monotonic()
    hotkeys = GlobalHotkeys()
    try:
        problems = hotkeys.bind(COMBOS)
        spent = time.monotonic() - started
        assert spent < 0.1, f"the GUI thread waited {spent:.2f} s"
        assert problems == {} and hotkeys.active and hotkeys.pending
        with qtbot.waitSignal(hotkeys.late_problems, timeout=20_000) as answered:
            pass
        assert list(answered.args[0]) == ["selection"] and not hotkeys.pending
        with qtbot.waitSignal(hotkeys.pressed, timeout=5000) as blocker:
            portal.call("Activate", "s", ("search",))
        assert blocker.args == ["search"]
    finally:
        hotkeys.close()


def test_the_tray_app_glue_keeps_the_fallback_without_the_interface_without_waiting(portal_factory, wayland,
                                                                                      qtbot) -> None:
    from desktop_memory.qt.hotkeys import WAYLAND_HINT, GlobalHotkeys

    portal_factory("--no-shortcuts", "--reply-delay", "2")
    started = time.monotonic()
    hotkeys = GlobalHotkeys()
    try:
        assert hotkeys.bind(COMBOS) == {}
        assert time.monotonic() - started < 0.1
        with qtbot.waitSignal(hotkeys.late_problems, timeout=15_000) as answered:
            pass
        assert answered.args == [{}]  # nothing to report: the app shows the fallback, no balloon
        assert not hotkeys.active and hotkeys.note == WAYLAND_HINT
        assert hotkeys.bind(COMBOS) == {}
    finally:
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
