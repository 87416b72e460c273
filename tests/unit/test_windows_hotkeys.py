"""Windows global hotkeys (capture/hotkeys_windows.py) against a fake user32: parsing, registering, a combo
another program holds reported by name, WM_HOTKEY messages to actions (issue 18). Real RegisterHotKey and
the Qt event filter on a real Windows message loop are not exercised here."""

from __future__ import annotations

import ctypes
from ctypes import wintypes

import pytest
from hypothesis import given
from hypothesis import strategies as st

from desktop_memory.capture import hotkeys_windows as hw
from desktop_memory.capture.hotkeys_x11 import HotkeyError
from tests.windows_fakes import FakeWindows

COMBOS = {"search": "Ctrl+Alt+M", "capture": "Ctrl+Alt+C", "selection": "Ctrl+Alt+Shift+C"}
NOREPEAT = hw.MOD_NOREPEAT


@pytest.fixture
def win(monkeypatch):
    return FakeWindows().install(monkeypatch)


@pytest.mark.parametrize(("combo", "flags", "vk"), [
    ("Ctrl+Alt+M", hw.MOD_CONTROL | hw.MOD_ALT, ord("M")),
    ("ctrl+alt+shift+c", hw.MOD_CONTROL | hw.MOD_ALT | hw.MOD_SHIFT, ord("C")),
    ("Meta+Space", hw.MOD_WIN, 0x20),
    ("Win+F12", hw.MOD_WIN, 0x7B),
    ("Ctrl+Shift+9", hw.MOD_CONTROL | hw.MOD_SHIFT, ord("9")),
    ("Ctrl+Alt+PgDown", hw.MOD_CONTROL | hw.MOD_ALT, 0x22),
    ("Alt + Return", hw.MOD_ALT, 0x0D),
    ("Ctrl+Up", hw.MOD_CONTROL, 0x26),
])
def test_combos_become_modifiers_and_virtual_keys(win, combo, flags, vk):
    assert hw.to_registration(combo) == (flags | NOREPEAT, vk)


def test_punctuation_is_asked_of_the_keyboard_layout(win):
    win.layout = {"`": 0xC0, "!": 0x0131}  # "!" is Shift+1 on this layout
    assert hw.to_registration("Ctrl+Alt+`") == (hw.MOD_CONTROL | hw.MOD_ALT | NOREPEAT, 0xC0)
    assert hw.to_registration("Ctrl+!") == (hw.MOD_CONTROL | hw.MOD_SHIFT | NOREPEAT, 0x31)
    with pytest.raises(HotkeyError, match="no such key"):
        hw.to_registration("Ctrl+§")  # VkKeyScanW: -1


@pytest.mark.parametrize("combo", ["M", "", "Ctrl+", "Hyper+M", "Ctrl+Alt+NoSuchKey", "Ctrl+F25"])
def test_combos_that_make_no_sense_are_refused_by_name(win, combo):
    with pytest.raises(HotkeyError) as caught:
        hw.to_registration(combo)
    assert str(caught.value).count("\n") == 0


@given(st.text(max_size=30))
def test_no_combo_text_breaks_the_parser(combo):
    fake = FakeWindows()
    from desktop_memory.capture import keys_windows

    keys_windows._DLLS["user32"] = fake
    try:
        hw.to_registration(combo)
    except HotkeyError:
        pass
    finally:
        keys_windows._DLLS.pop("user32", None)


def test_bind_registers_each_combo_for_the_thread_without_repeat(win):
    hotkeys = hw.WindowsHotkeys(lambda a: None)
    assert hotkeys.bind(COMBOS) == {}
    calls = win.called("RegisterHotKey")
    assert [c[0] for c in calls] == [None, None, None]  # hwnd NULL: WM_HOTKEY goes to the thread's queue
    assert all(c[2] & NOREPEAT for c in calls)
    assert sorted(win.hotkeys.values()) == sorted(hw.to_registration(c) for c in COMBOS.values())


def test_a_combo_another_program_holds_is_reported_by_name(win):
    win.taken.add((hw.MOD_CONTROL | hw.MOD_ALT, ord("C")))
    hotkeys = hw.WindowsHotkeys(lambda a: None)
    problems = hotkeys.bind(COMBOS)
    assert problems == {"capture": "Ctrl+Alt+C is already taken by another program"}
    assert len(win.hotkeys) == 2


def test_another_refusal_says_windows_refused_with_the_code(win, monkeypatch):
    hotkeys = hw.WindowsHotkeys(lambda a: None)
    monkeypatch.setattr(win, "RegisterHotKey", lambda *a: 0)
    win.error = 87
    assert hotkeys.bind({"search": "Ctrl+Alt+M"}) == {"search": "Ctrl+Alt+M: Windows refused it (error 87)"}


def test_the_same_combo_for_two_actions_is_said_plainly(win):
    hotkeys = hw.WindowsHotkeys(lambda a: None)
    problems = hotkeys.bind({"search": "Ctrl+Alt+M", "capture": "ctrl+alt+m", "selection": ""})
    assert problems == {"capture": "ctrl+alt+m is already used for search"}


def test_rebinding_lets_the_old_combos_go_and_close_lets_all_go(win):
    hotkeys = hw.WindowsHotkeys(lambda a: None)
    hotkeys.bind(COMBOS)
    hotkeys.bind({"search": "Ctrl+Alt+K"})
    assert list(win.hotkeys.values()) == [hw.to_registration("Ctrl+Alt+K")]
    hotkeys.close()
    assert win.hotkeys == {}
    assert all(c[0] is None for c in win.called("UnregisterHotKey"))


def _msg(message: int, wparam: int, hwnd: int = 0) -> wintypes.MSG:
    return wintypes.MSG(hWnd=hwnd, message=message, wParam=wparam, lParam=0)


def test_wm_hotkey_messages_reach_the_action(win):
    pressed: list[str] = []
    hotkeys = hw.WindowsHotkeys(pressed.append)
    hotkeys.bind(COMBOS)
    ids = {action: ident for ident, action in hotkeys._bound.items()}
    for action in ("selection", "search"):
        msg = _msg(hw.WM_HOTKEY, ids[action])
        ident = hw.hotkey_id(ctypes.addressof(msg))
        assert ident == ids[action] and hotkeys.dispatch(ident)
    assert pressed == ["selection", "search"]


def test_other_messages_and_unknown_ids_are_left_alone(win):
    pressed: list[str] = []
    hotkeys = hw.WindowsHotkeys(pressed.append)
    hotkeys.bind(COMBOS)
    assert hw.hotkey_id(ctypes.addressof(_msg(0x0100, 5))) is None  # WM_KEYDOWN
    assert hw.hotkey_id(ctypes.addressof(_msg(hw.WM_HOTKEY, 5, hwnd=0x1234))) is None  # a window's, not ours
    assert hw.hotkey_id(0) is None
    assert not hotkeys.dispatch(0xBEEF)
    assert pressed == []


def test_a_broken_receiver_does_not_break_dispatch(win):
    def boom(action: str) -> None:
        raise RuntimeError(action)

    hotkeys = hw.WindowsHotkeys(boom)
    hotkeys.bind({"search": "Ctrl+Alt+M"})
    assert hotkeys.dispatch(next(iter(hotkeys._bound)))


@pytest.fixture
def qt_app():
    qtcore = pytest.importorskip("PySide6.QtCore")
    return qtcore.QCoreApplication.instance() or qtcore.QCoreApplication([])


def test_the_native_filter_hands_wm_hotkey_to_the_backend(win, qt_app):
    from PySide6.QtCore import QByteArray

    from desktop_memory.qt.native_hotkeys import HotkeyMessages, WindowsGlobalHotkeys

    pressed: list[str] = []
    hotkeys = WindowsGlobalHotkeys(pressed.append)
    try:
        assert hotkeys.bind(COMBOS) == {}
        ident = next(i for i, a in hotkeys._backend._bound.items() if a == "capture")
        flt = hotkeys._filter
        assert isinstance(flt, HotkeyMessages)
        msg = _msg(hw.WM_HOTKEY, ident)
        assert flt.nativeEventFilter(QByteArray(b"windows_generic_MSG"), ctypes.addressof(msg)) == (True, 0)
        assert flt.nativeEventFilter(b"windows_dispatcher_MSG", ctypes.addressof(msg)) == (True, 0)
        assert flt.nativeEventFilter(b"xcb_generic_event_t", ctypes.addressof(msg)) == (False, 0)
        other = _msg(0x0201, ident)  # WM_LBUTTONDOWN: not ours
        assert flt.nativeEventFilter(b"windows_generic_MSG", ctypes.addressof(other)) == (False, 0)
        assert flt.nativeEventFilter(b"windows_generic_MSG", None) == (False, 0)
        assert pressed == ["capture", "capture"]
    finally:
        hotkeys.close()
    assert win.hotkeys == {}


def test_global_hotkeys_uses_the_windows_backend_on_windows(win, qt_app, monkeypatch):
    from desktop_memory.qt import hotkeys as qt_hotkeys

    monkeypatch.setattr(qt_hotkeys, "desktop_mode", lambda: "windows")
    pressed: list[str] = []
    hk = qt_hotkeys.GlobalHotkeys()
    hk.pressed.connect(pressed.append)
    try:
        assert hk.active and hk.note == ""
        win.taken.add((hw.MOD_CONTROL | hw.MOD_ALT, ord("M")))
        assert hk.bind(COMBOS) == {"search": "Ctrl+Alt+M is already taken by another program"}
        ident = next(i for i, a in hk._backend._backend._bound.items() if a == "selection")
        msg = _msg(hw.WM_HOTKEY, ident)
        hk._backend._filter.nativeEventFilter(b"windows_generic_MSG", ctypes.addressof(msg))
        assert pressed == ["selection"]
    finally:
        hk.close()


def test_without_user32_the_app_says_hotkeys_are_not_available(qt_app, monkeypatch):
    from desktop_memory.capture import keys_windows
    from desktop_memory.qt import hotkeys as qt_hotkeys

    def missing(name: str):
        raise OSError(f"cannot load {name}")

    monkeypatch.setattr(qt_hotkeys, "desktop_mode", lambda: "windows")
    monkeypatch.setattr(keys_windows, "dll", missing)
    hk = qt_hotkeys.GlobalHotkeys()
    assert not hk.active and hk.note == "global hotkeys are not available: cannot load user32"
    assert hk.bind(COMBOS) == {}
