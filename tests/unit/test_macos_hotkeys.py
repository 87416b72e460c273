"""macOS global hotkeys (capture/hotkeys_macos.py) against a fake Carbon framework.

macOS cannot run here: the fake stands for the Carbon functions the backend calls through ctypes
(it receives the real ctypes structures and calls the real ctypes callback), so what is checked is
our side: combos -> Carbon's modifier bits and virtual key codes, one EventHotKeyID per action, a
taken combo reported by name, presses routed to the right action, everything removed on close.
"""

from __future__ import annotations

import ctypes
import sys

import pytest
from hypothesis import given
from hypothesis import strategies as st

from desktop_memory.capture import hotkeys_macos as hk
from desktop_memory.capture.hotkeys_x11 import HotkeyError

CMD, SHIFT, OPTION, CONTROL = 256, 512, 2048, 4096  # Carbon's cmdKey, shiftKey, optionKey, controlKey


class FakeCarbon:
    """The Carbon calls MacHotkeys makes, with Carbon's answers; `taken` holds combos another app registered."""

    def __init__(self, taken: set[tuple[int, int]] = frozenset()) -> None:
        self.taken = set(taken)
        self.registered: dict[int, tuple[int, int, int, int]] = {}  # ref -> (code, bits, signature, id)
        self.handler = None
        self.handler_spec: tuple[int, int] | None = None
        self.removed_handlers: list[int] = []
        self.events: dict[int, tuple[int, int]] = {}
        self._next = 100

    def GetApplicationEventTarget(self):  # noqa: N802 - Carbon's names
        return 0xA11

    def InstallEventHandler(self, target, handler, count, spec, data, out):  # noqa: N802
        assert target == 0xA11 and count == 1
        self.handler = handler
        self.handler_spec = (spec._obj.eventClass, spec._obj.eventKind)
        out._obj.value = 0x4A
        return 0

    def RemoveEventHandler(self, ref):  # noqa: N802
        self.removed_handlers.append(ref.value)
        return 0

    def RegisterEventHotKey(self, code, bits, hotkey_id, target, options, out):  # noqa: N802
        assert isinstance(hotkey_id, hk.EventHotKeyID) and target == 0xA11
        if (bits, code) in self.taken or any((b, c) == (bits, code) for c, b, _s, _i in self.registered.values()):
            return hk.HOTKEY_EXISTS
        self._next += 1
        out._obj.value = self._next
        self.registered[self._next] = (code, bits, hotkey_id.signature, hotkey_id.id)
        return 0

    def UnregisterEventHotKey(self, ref):  # noqa: N802
        del self.registered[ref.value]
        return 0

    def GetEventParameter(self, event, name, kind, actual, size, actual_size, out):  # noqa: N802
        assert name == hk.K_EVENT_PARAM_DIRECT_OBJECT and kind == hk.TYPE_EVENT_HOTKEY_ID
        assert size == ctypes.sizeof(hk.EventHotKeyID)
        out._obj.signature, out._obj.id = self.events[event]
        return 0

    def press(self, bits: int, code: int) -> None:
        """What Carbon does when a registered combo is pressed: the handler gets an event holding its id."""
        for c, b, signature, number in self.registered.values():
            if (b, c) == (bits, code):
                event = 7000 + number
                self.events[event] = (signature, number)
                assert self.handler(None, event, None) == 0  # the real ctypes callback, as Carbon calls it
                return
        raise AssertionError("not registered")


@pytest.mark.parametrize("combo, expected", [
    ("Ctrl+Alt+M", (CMD | OPTION, 0x2E)),  # Qt's Ctrl is Command on macOS, Alt is Option
    ("Ctrl+Alt+C", (CMD | OPTION, 0x08)),
    ("Ctrl+Alt+Shift+C", (CMD | OPTION | SHIFT, 0x08)),
    ("Meta+Shift+F5", (CONTROL | SHIFT, 0x60)),  # Qt's Meta is the Control key on macOS
    ("Cmd+Option+Space", (CMD | OPTION, 0x31)),
    ("ctrl + alt + 1", (CMD | OPTION, 0x12)),
    ("Ctrl+Alt+PgDown", (CMD | OPTION, 0x79)),
    ("Ctrl+/", (CMD, 0x2C)),
])
def test_combos_as_qt_writes_them_become_carbon_modifiers_and_key_codes(combo, expected):
    assert hk.parse(combo) == expected


@pytest.mark.parametrize("bad", ["M", "", "Ctrl", "Hyper+M", "Ctrl+Alt+NoSuchKey", "Ctrl+Alt+é"])
def test_combos_that_make_no_sense_are_refused_with_the_combo_named(bad):
    with pytest.raises(HotkeyError) as err:
        hk.parse(bad)
    assert repr(bad) in str(err.value) and "\n" not in str(err.value)


def test_every_letter_and_digit_has_its_own_key_code():
    letters = [hk.parse(f"Ctrl+{c}")[1] for c in "abcdefghijklmnopqrstuvwxyz0123456789"]
    assert len(set(letters)) == 36
    assert hk.parse("Ctrl+A")[1] == 0x00 and hk.parse("Ctrl+Z")[1] == 0x06 and hk.parse("Ctrl+0")[1] == 0x1D


def test_structures_have_carbons_layout():
    assert ctypes.sizeof(hk.EventHotKeyID) == 8 and ctypes.sizeof(hk.EventTypeSpec) == 8
    assert hk.K_EVENT_CLASS_KEYBOARD == 0x6B657962  # 'keyb'
    assert hk.TYPE_EVENT_HOTKEY_ID == 0x686B6964  # 'hkid'
    assert hk.K_EVENT_PARAM_DIRECT_OBJECT == 0x2D2D2D2D  # '----'


def test_each_action_is_registered_and_a_press_reaches_its_action():
    carbon = FakeCarbon()
    got: list[str] = []
    keys = hk.MacHotkeys(got.append, carbon=carbon)
    assert carbon.handler_spec == (hk.K_EVENT_CLASS_KEYBOARD, hk.K_EVENT_HOTKEY_PRESSED)
    problems = keys.bind({"search": "Ctrl+Alt+M", "capture": "Ctrl+Alt+C", "selection": "Ctrl+Alt+Shift+C"})
    assert problems == {}
    assert sorted((c, b) for c, b, _s, _i in carbon.registered.values()) == [
        (0x08, CMD | OPTION), (0x08, CMD | OPTION | SHIFT), (0x2E, CMD | OPTION)]
    assert len({i for *_x, i in carbon.registered.values()}) == 3  # one EventHotKeyID per action
    carbon.press(CMD | OPTION | SHIFT, 0x08)
    carbon.press(CMD | OPTION, 0x2E)
    assert got == ["selection", "search"]


def test_a_combo_another_app_holds_is_reported_by_name_and_the_others_still_work():
    carbon = FakeCarbon(taken={(CMD | OPTION, 0x08)})
    got: list[str] = []
    keys = hk.MacHotkeys(got.append, carbon=carbon)
    problems = keys.bind({"search": "Ctrl+Alt+M", "capture": "Ctrl+Alt+C", "bad": "Ctrl+Alt+NoSuchKey",
                          "off": ""})
    assert problems == {"capture": "Ctrl+Alt+C is already taken by another program",
                        "bad": "'Ctrl+Alt+NoSuchKey': no such key on this keyboard"}
    carbon.press(CMD | OPTION, 0x2E)
    assert got == ["search"]


def test_binding_again_replaces_the_old_combos_and_close_removes_everything():
    carbon = FakeCarbon()
    got: list[str] = []
    keys = hk.MacHotkeys(got.append, carbon=carbon)
    keys.bind({"search": "Ctrl+Alt+M"})
    assert keys.bind({"search": "Meta+Shift+K"}) == {}
    assert [(c, b) for c, b, _s, _i in carbon.registered.values()] == [(0x28, CONTROL | SHIFT)]
    carbon.press(CONTROL | SHIFT, 0x28)
    assert got == ["search"]
    keys.close()
    assert carbon.registered == {} and carbon.removed_handlers == [0x4A]


def test_an_event_that_is_not_ours_and_a_broken_receiver_never_reach_carbon_as_an_exception():
    carbon = FakeCarbon()

    def broken(_action: str) -> None:
        raise RuntimeError("receiver failed")

    keys = hk.MacHotkeys(broken, carbon=carbon)
    keys.bind({"search": "Ctrl+Alt+M"})
    carbon.press(CMD | OPTION, 0x2E)  # the handler still answers noErr
    carbon.events[1] = (int.from_bytes(b"othr", "big"), 1)  # another signature with our id number
    got: list[str] = []
    keys.on_press = got.append
    assert carbon.handler(None, 1, None) == hk.EVENT_NOT_HANDLED and got == []  # left to the next handler
    carbon.GetEventParameter = lambda *a: -9870  # eventParameterNotFoundErr
    assert carbon.handler(None, 2, None) == hk.EVENT_NOT_HANDLED and got == []


def test_a_refused_event_handler_is_an_error_the_app_turns_into_its_note():
    carbon = FakeCarbon()
    carbon.InstallEventHandler = lambda *a: -50  # paramErr
    with pytest.raises(OSError, match="OSStatus -50"):
        hk.MacHotkeys(lambda _a: None, carbon=carbon)


@pytest.mark.skipif(sys.platform == "darwin", reason="Carbon exists there")
def test_without_carbon_the_backend_cannot_start():
    with pytest.raises(OSError):
        hk.MacHotkeys(lambda _a: None)


@given(st.text(max_size=40))
def test_any_text_is_a_combo_or_a_one_line_refusal(text):
    try:
        bits, code = hk.parse(text)
    except HotkeyError as exc:
        assert "\n" not in str(exc)
    else:
        assert bits and bits & ~(CMD | SHIFT | OPTION | CONTROL) == 0 and code in hk.KEY_CODES.values()


@given(st.sets(st.sampled_from(["Ctrl", "Alt", "Shift", "Meta"]), min_size=1),
       st.sampled_from(sorted(hk.KEY_CODES)))
def test_every_modifier_set_and_key_name_parses(mods, key):
    bits, code = hk.parse("+".join([*sorted(mods), key.upper() if len(key) > 1 else key]))
    expected = {"Ctrl": CMD, "Alt": OPTION, "Shift": SHIFT, "Meta": CONTROL}
    assert bits == sum(expected[m] for m in mods) and code == hk.KEY_CODES[key]


def test_the_apps_hotkeys_use_carbon_on_macos_and_say_so_when_it_is_missing(monkeypatch):
    pytest.importorskip("PySide6")
    import types

    from desktop_memory.qt import hotkeys as glue

    monkeypatch.setattr(glue, "sys", types.SimpleNamespace(platform="darwin"))
    carbon = FakeCarbon()
    monkeypatch.setattr(hk, "load_carbon", lambda: carbon)
    keys = glue.GlobalHotkeys()
    got: list[str] = []
    keys.pressed.connect(got.append)
    assert keys.mode == "macos" and keys.active and keys.note == ""
    assert keys.bind({"search": "Ctrl+Alt+M", "capture": "Ctrl+Alt+C"}) == {}
    carbon.press(CMD | OPTION, 0x08)
    assert got == ["capture"]
    keys.close()
    assert carbon.registered == {} and carbon.removed_handlers == [0x4A]

    def no_carbon():
        raise OSError("dlopen(Carbon): image not found")

    monkeypatch.setattr(hk, "load_carbon", no_carbon)
    keys = glue.GlobalHotkeys()
    assert not keys.active and keys.note == "global hotkeys are not available: dlopen(Carbon): image not found"
    assert keys.bind({"search": "Ctrl+Alt+M"}) == {}
