"""Paste where you came from: the backend chosen per OS and session (capture/paste.py), and the X11 backend's
steps (capture/paste_x11.py) against a fake X display; the real X server is in tests/gui/test_paste_x11.py."""

from __future__ import annotations

import os
import sys
import types
from typing import Any

import pytest

import desktop_memory.capture as capture_package
from desktop_memory.capture import paste, paste_x11
from desktop_memory.engine.settings import Settings

X11_ENV = {"DISPLAY": ":1"}


@pytest.mark.parametrize(("qt", "platform", "env", "want"), [
    (None, "linux", X11_ENV, "x11"),
    ("xcb", "linux", X11_ENV, "x11"),
    ("offscreen", "linux", X11_ENV, "none"),  # the GUI tests: never type into the real desktop
    ("xcb", "linux", {}, "none"),
    (None, "linux", {}, "none"),
    ("wayland", "linux", {"WAYLAND_DISPLAY": "wayland-0"}, "wayland"),
    ("xcb", "linux", {"WAYLAND_DISPLAY": "wayland-0", "DISPLAY": ":0"}, "wayland"),  # XWayland: still Wayland
    ("xcb", "linux", {"XDG_SESSION_TYPE": "wayland", "DISPLAY": ":0"}, "wayland"),
    ("offscreen", "linux", {"WAYLAND_DISPLAY": "wayland-0"}, "none"),
    (None, "win32", {}, "windows"),
    ("windows", "win32", {}, "windows"),
    ("offscreen", "win32", {}, "none"),
    (None, "darwin", {}, "macos"),
    ("cocoa", "darwin", {}, "macos"),
    ("minimal", "darwin", {}, "none"),
])
def test_the_session_decides_the_backend(qt, platform, env, want) -> None:
    assert paste.session(qt, platform=platform, environ=env) == want


def test_x11_uses_the_xtest_backend_and_wayland_only_copies() -> None:
    x11 = paste.support("xcb", platform="linux", environ=X11_ENV)
    assert x11.available and x11.backend is paste_x11 and x11.paste_keys == "Ctrl+V"
    wayland = paste.support("wayland", platform="linux", environ={"WAYLAND_DISPLAY": "w"})
    assert not wayland.available and wayland.note == "Wayland: the context is copied; paste it with Ctrl+V"
    none = paste.support("offscreen", platform="linux", environ=X11_ENV)
    assert not none.available and "paste it yourself" in none.note


def test_a_missing_or_broken_os_module_means_not_available(monkeypatch) -> None:
    # import fails (the package attribute too: another test may have imported the real module already)
    monkeypatch.setitem(sys.modules, "desktop_memory.capture.paste_windows", None)
    monkeypatch.delattr(capture_package, "paste_windows", raising=False)
    windows = paste.support(None, platform="win32", environ={})
    assert not windows.available and "not available on this system yet" in windows.note
    half = types.ModuleType("desktop_memory.capture.paste_macos")
    half.foreground = lambda: 1  # type: ignore[attr-defined] - no paste_into
    monkeypatch.setitem(sys.modules, "desktop_memory.capture.paste_macos", half)
    monkeypatch.setattr(capture_package, "paste_macos", half, raising=False)
    assert not paste.support(None, platform="darwin", environ={}).available


def test_an_os_module_with_the_agreed_functions_is_used(monkeypatch) -> None:
    mac = types.ModuleType("desktop_memory.capture.paste_macos")
    mac.foreground = lambda: os.getpid()  # type: ignore[attr-defined]
    mac.paste_into = lambda target: None  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "desktop_memory.capture.paste_macos", mac)
    monkeypatch.setattr(capture_package, "paste_macos", mac, raising=False)
    support = paste.support("cocoa", platform="darwin", environ={})
    assert support.available and support.backend is mac and support.paste_keys == "Cmd+V"
    assert support.target() is None  # macOS names apps by pid: our own app is never the target
    mac.foreground = lambda: 4321  # type: ignore[attr-defined]
    assert support.target() == 4321


class Backend:
    def __init__(self, front: object) -> None:
        self.front = front

    def foreground(self) -> int | None:
        if isinstance(self.front, Exception):
            raise self.front
        return self.front  # type: ignore[return-value]

    def paste_into(self, target: int | None) -> str | None:
        return None


def test_the_target_is_never_our_own_window_and_a_failing_os_call_is_no_target() -> None:
    assert paste.PasteSupport("x11", Backend(77)).target(own={12, 13}) == 77
    assert paste.PasteSupport("x11", Backend(12)).target(own={12, 13}) is None
    assert paste.PasteSupport("x11", Backend(None)).target() is None
    assert paste.PasteSupport("x11", Backend(RuntimeError("X went away"))).target() is None
    assert paste.PasteSupport("x11", Backend(os.getpid())).target() == os.getpid()  # an X id, not a pid
    assert paste.PasteSupport("wayland", None, paste.WAYLAND_NOTE).target() is None


def test_the_settings_are_checked_strictly_and_default_to_pasting(tmp_path) -> None:
    assert Settings().paste_into_previous_window is True and Settings().restore_clipboard_after_paste is False
    s, problems = Settings.checked({"paste_into_previous_window": "yes", "restore_clipboard_after_paste": 1})
    assert len(problems) == 2 and all("bool" in p for p in problems)
    assert s.paste_into_previous_window is True and s.restore_clipboard_after_paste is False
    Settings(paste_into_previous_window=False, restore_clipboard_after_paste=True).save(tmp_path)
    again = Settings.load(tmp_path)
    assert (again.paste_into_previous_window, again.restore_clipboard_after_paste, again.problem) == (False, True, None)
    assert Settings.from_dict({"paste_into_previous_window": "no"}).paste_into_previous_window is True


# -- the X11 backend against a fake display ---------------------------------------------------------------
class Prop:
    def __init__(self, value: list[int]) -> None:
        self.value = value


class FakeWindow:
    def __init__(self, x: FakeX, wid: int, parent: int | None = None, classes: tuple[str, ...] = ("app", "App"),
                 viewable: bool = True) -> None:
        self.x, self.id, self.parent, self.classes, self.viewable = x, wid, parent, classes, viewable
        self.props: dict[str, list[int]] = {}

    def __window__(self) -> int:  # how python-xlib packs a window into a request
        return self.id

    def get_full_property(self, atom: int, _type: object) -> Prop | None:
        name = FakeX.ATOMS[atom - 300]
        value = self.props.get(name)
        return Prop([300 + FakeX.ATOMS.index(v) if isinstance(v, str) else v for v in value]) if value else None

    def query_tree(self) -> Any:
        return types.SimpleNamespace(parent=self.x.windows.get(self.parent) if self.parent else None)

    def get_attributes(self) -> Any:
        from Xlib import X, error

        if self.id not in self.x.windows:
            raise error.BadWindow.__new__(error.BadWindow)  # as python-xlib raises it for a closed window
        return types.SimpleNamespace(map_state=X.IsViewable if self.viewable else X.IsUnmapped)

    def get_wm_class(self) -> tuple[str, ...]:
        return self.classes

    def configure(self, **_kw: object) -> None:
        self.x.log.append(("raise", self.id))

    def set_input_focus(self, _revert: int, _time: int, onerror: object = None) -> None:
        self.x.log.append(("focus", self.id))
        if self.x.obeys:
            self.x.focus = self.id

    def send_event(self, ev: Any, event_mask: int = 0) -> None:
        self.x.log.append(("message", ev.window.id, list(ev.data[1])[:2]))
        if self.x.obeys:
            self.x.root.props["_NET_ACTIVE_WINDOW"] = [ev.window.id]


class FakeX:
    """Just what paste_x11 asks of python-xlib's Display; `held` are the keycodes down now."""

    ROOT = 1

    def __init__(self, *, wm: bool = False, xtest: bool = True, held: tuple[int, ...] = (), obeys: bool = True) -> None:
        self.windows: dict[int, FakeWindow] = {}
        self.root = self.add(self.ROOT)
        self.xtest, self.obeys, self.held = xtest, obeys, set(held)
        self.focus: int | object = 0
        self.log: list[tuple] = []
        self.keys: list[tuple[str, int]] = []
        if wm:
            check = self.add(9, self.ROOT)
            self.root.props["_NET_SUPPORTING_WM_CHECK"] = check.props["_NET_SUPPORTING_WM_CHECK"] = [9]
            self.root.props["_NET_SUPPORTED"] = ["_NET_ACTIVE_WINDOW"]  # type: ignore[list-item]

    def add(self, wid: int, parent: int | None = None, **kw: Any) -> FakeWindow:
        self.windows[wid] = FakeWindow(self, wid, parent, **kw)
        return self.windows[wid]

    def screen(self) -> Any:
        return types.SimpleNamespace(root=self.root)

    ATOMS = ("_NET_ACTIVE_WINDOW", "_NET_SUPPORTED", "_NET_SUPPORTING_WM_CHECK")

    def intern_atom(self, name: str) -> int:
        return 300 + self.ATOMS.index(name)

    def create_resource_object(self, _kind: str, wid: int) -> FakeWindow:
        return self.windows.get(wid) or FakeWindow(self, wid)

    def get_input_focus(self) -> Any:
        return types.SimpleNamespace(focus=self.windows.get(self.focus, 1))  # 1: PointerRoot

    def has_extension(self, name: str) -> bool:
        return name == "XTEST" and self.xtest

    def query_keymap(self) -> list[int]:
        keymap = [0] * 32
        for code in self.held:
            keymap[code // 8] |= 1 << (code % 8)
        return keymap

    def get_modifier_mapping(self) -> list[list[int]]:
        # shift, lock, control, mod1 (Alt), mod2 (Num Lock), mod3, mod4 (Super), mod5 (AltGr)
        return [[50, 62], [66], [37, 105], [64, 108], [77], [], [133, 134], [92]]

    KEYSYMS = {"Control_L": 37, "Shift_L": 50, "v": 55}

    def keysym_to_keycode(self, keysym: int) -> int:
        from Xlib import XK

        return {XK.string_to_keysym(n): c for n, c in self.KEYSYMS.items()}.get(keysym, 0)

    def keycode_to_keysym(self, code: int, _index: int) -> int:
        from Xlib import XK

        return XK.string_to_keysym({66: "Caps_Lock", 77: "Num_Lock"}.get(code, "a"))

    def sync(self) -> None:
        pass

    def flush(self) -> None:
        pass


@pytest.fixture
def fake_x(monkeypatch):
    pytest.importorskip("Xlib", reason="python-xlib is a Linux-only dependency (the Windows tier has none)")
    from Xlib import X
    from Xlib.ext import xtest

    def use(x: FakeX) -> FakeX:
        monkeypatch.setattr(paste_x11, "_display", x)
        monkeypatch.setattr(xtest, "fake_input", lambda d, kind, code: d.keys.append(
            ("press" if kind == X.KeyPress else "release", code)))
        return x

    return use


def test_without_a_window_manager_the_focused_toplevel_is_the_foreground(fake_x) -> None:
    x = fake_x(FakeX())
    x.add(100, FakeX.ROOT)
    x.add(101, 100)
    x.focus = 101  # a child of the top-level window holds the focus
    assert paste_x11.foreground() == 100
    x.focus = 0
    assert paste_x11.foreground() is None  # PointerRoot: nobody


def test_with_a_window_manager_the_active_window_is_the_foreground(fake_x) -> None:
    x = fake_x(FakeX(wm=True))
    x.add(200, FakeX.ROOT)
    x.root.props["_NET_ACTIVE_WINDOW"] = [200]
    assert paste_x11.foreground() == 200
    del x.windows[9]  # the window manager died; its property stayed: the input focus decides
    x.add(300, FakeX.ROOT)
    x.focus = 300
    assert paste_x11.foreground() == 300


def test_paste_focuses_the_target_releases_held_modifiers_then_sends_ctrl_v(fake_x) -> None:
    # the hotkey's Ctrl and Alt, Shift of Shift+Enter, Super, AltGr and Caps Lock are down
    x = fake_x(FakeX(held=(37, 64, 50, 133, 92, 66)))
    x.add(100, FakeX.ROOT)
    assert paste_x11.paste_into(100) is None
    assert x.log == [("raise", 100), ("focus", 100)]
    released = sorted(code for kind, code in x.keys[:5])
    assert released == [37, 50, 64, 92, 133] and all(kind == "release" for kind, _ in x.keys[:5])  # not Caps Lock
    assert x.keys[5:] == [("press", 37), ("press", 55), ("release", 55), ("release", 37)]


def test_a_terminal_gets_ctrl_shift_v_and_xterm_is_told(fake_x) -> None:
    x = fake_x(FakeX())
    x.add(100, FakeX.ROOT, classes=("gnome-terminal-server", "Gnome-terminal"))
    assert paste_x11.paste_into(100) is None
    assert x.keys == [("press", 37), ("press", 50), ("press", 55), ("release", 55), ("release", 50),
                      ("release", 37)]
    x.add(101, FakeX.ROOT, classes=("xterm", "XTerm"))
    assert "xterm" in (paste_x11.paste_into(101) or "")


def test_a_window_manager_is_asked_as_a_pager_and_waited_for(fake_x) -> None:
    x = fake_x(FakeX(wm=True))
    x.add(200, FakeX.ROOT)
    assert paste_x11.paste_into(200) is None
    assert x.log == [("message", 200, [2, 0])]  # source indication 2, CurrentTime
    assert x.keys[-1] == ("release", 37)


def test_problems_are_one_line_and_no_key_is_sent(fake_x, monkeypatch) -> None:
    monkeypatch.setattr(paste_x11, "ACTIVATE_WAIT_S", 0.05)
    x = fake_x(FakeX(xtest=False))
    x.add(100, FakeX.ROOT)
    assert paste_x11.paste_into(100) == paste_x11.NO_XTEST
    x = fake_x(FakeX())
    assert paste_x11.paste_into(4242) == paste_x11.GONE  # closed since the search opened
    x.add(100, FakeX.ROOT, viewable=False)
    assert paste_x11.paste_into(100) == paste_x11.GONE  # minimised without a window manager
    assert paste_x11.paste_into(None) == paste_x11.NO_TARGET
    x = fake_x(FakeX(wm=True, obeys=False))  # the window manager refuses to bring it forward
    x.add(200, FakeX.ROOT)
    assert paste_x11.paste_into(200) == paste_x11.NOT_FORWARD
    assert x.keys == []
    for problem in (paste_x11.NO_XTEST, paste_x11.GONE, paste_x11.NOT_FORWARD, paste_x11.NO_TARGET):
        assert "\n" not in problem and "clipboard" in problem


def test_a_lost_x_connection_is_a_problem_not_a_traceback(fake_x) -> None:
    x = fake_x(FakeX())
    x.add(100, FakeX.ROOT)

    def broken() -> bool:
        raise ConnectionResetError("X server went away")

    x.has_extension = lambda _name: broken()  # type: ignore[method-assign]
    problem = paste_x11.paste_into(100)
    assert problem is not None and problem.startswith("could not paste (ConnectionResetError)")
    assert paste_x11._display is None  # the next call connects again


def test_foreground_does_not_wait_for_a_paste_waiting_on_its_window(fake_x, monkeypatch) -> None:
    """The GUI thread asks foreground() when the search opens; a paste still waiting for a slow window
    manager must not hold it up (the lock is held per step, not across the wait)."""
    import threading
    import time

    monkeypatch.setattr(paste_x11, "ACTIVATE_WAIT_S", 0.6)
    x = fake_x(FakeX(wm=True, obeys=False))
    x.add(200, FakeX.ROOT)
    x.root.props["_NET_ACTIVE_WINDOW"] = [201]
    x.add(201, FakeX.ROOT)
    result: list[str | None] = []
    worker = threading.Thread(target=lambda: result.append(paste_x11.paste_into(200)))
    worker.start()
    time.sleep(0.1)
    started = time.monotonic()
    assert paste_x11.foreground() == 201
    assert time.monotonic() - started < 0.1
    worker.join(5)
    assert result == [paste_x11.NOT_FORWARD]
