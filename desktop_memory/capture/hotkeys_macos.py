"""Global hotkeys on macOS: Carbon's RegisterEventHotKey through ctypes (no Accessibility grant needed).

pyobjc does not wrap RegisterEventHotKey usefully, so the Carbon framework is called with ctypes:
one event handler for kEventClassKeyboard / kEventHotKeyPressed is installed on the application's
event target (`InstallEventHandler(GetApplicationEventTarget(), ...)`), and each combo is registered
with an EventHotKeyID whose id says which action it is. The handler runs on the main thread's run
loop, which Qt's Cocoa event loop drives; the ctypes callback object is kept on the instance, or
Carbon would call freed memory.

Combos are written as Qt writes them ("Ctrl+Alt+M"); as in Qt on macOS, Ctrl means the Command key
and Meta the Control key (so the Settings window shows ⌘⌥M for the default), Alt is Option. A combo
another app registered is refused by Carbon (eventHotKeyExistsErr) and reported by name.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import logging
from collections.abc import Callable, Mapping
from typing import Any

from .hotkeys_x11 import HotkeyError, split

log = logging.getLogger(__name__)

CARBON_PATH = "/System/Library/Frameworks/Carbon.framework/Carbon"
# Carbon's modifier bits (Events.h) and the Qt names that mean them on macOS
CMD_KEY, SHIFT_KEY, OPTION_KEY, CONTROL_KEY = 1 << 8, 1 << 9, 1 << 11, 1 << 12
_MODIFIERS = {"ctrl": CMD_KEY, "control": CMD_KEY, "cmd": CMD_KEY, "command": CMD_KEY,
              "alt": OPTION_KEY, "option": OPTION_KEY, "opt": OPTION_KEY, "shift": SHIFT_KEY,
              "meta": CONTROL_KEY}
# Virtual key codes (HIToolbox Events.h kVK_*): positions on an ANSI keyboard
_LETTERS = {"a": 0x00, "s": 0x01, "d": 0x02, "f": 0x03, "h": 0x04, "g": 0x05, "z": 0x06, "x": 0x07, "c": 0x08,
            "v": 0x09, "b": 0x0B, "q": 0x0C, "w": 0x0D, "e": 0x0E, "r": 0x0F, "y": 0x10, "t": 0x11, "o": 0x1F,
            "u": 0x20, "i": 0x22, "p": 0x23, "l": 0x25, "j": 0x26, "k": 0x28, "n": 0x2D, "m": 0x2E}
_DIGITS = {"1": 0x12, "2": 0x13, "3": 0x14, "4": 0x15, "6": 0x16, "5": 0x17, "9": 0x19, "7": 0x1A, "8": 0x1C,
           "0": 0x1D}
_PUNCTUATION = {"=": 0x18, "-": 0x1B, "]": 0x1E, "[": 0x21, "'": 0x27, ";": 0x29, "\\": 0x2A, ",": 0x2B,
                "/": 0x2C, ".": 0x2F, "`": 0x32}
_NAMED = {"return": 0x24, "enter": 0x24, "tab": 0x30, "space": 0x31, "backspace": 0x33, "esc": 0x35,
          "escape": 0x35, "del": 0x75, "delete": 0x75, "home": 0x73, "end": 0x77, "pgup": 0x74, "pageup": 0x74,
          "pgdown": 0x79, "pagedown": 0x79, "left": 0x7B, "right": 0x7C, "down": 0x7D, "up": 0x7E, "help": 0x72,
          "ins": 0x72, "f1": 0x7A, "f2": 0x78, "f3": 0x63, "f4": 0x76, "f5": 0x60, "f6": 0x61, "f7": 0x62,
          "f8": 0x64, "f9": 0x65, "f10": 0x6D, "f11": 0x67, "f12": 0x6F, "f13": 0x69, "f14": 0x6B, "f15": 0x71,
          "f16": 0x6A, "f17": 0x40, "f18": 0x4F, "f19": 0x50, "f20": 0x5A}
KEY_CODES = {**_LETTERS, **_DIGITS, **_PUNCTUATION, **_NAMED}

NO_ERR = 0
EVENT_NOT_HANDLED = -9874  # eventNotHandledErr: let the next handler have an event that is not ours
HOTKEY_EXISTS = -9878  # eventHotKeyExistsErr: another app registered this combo
HOTKEY_INVALID = -9879  # eventHotKeyInvalidErr
SIGNATURE = int.from_bytes(b"dmem", "big")  # our EventHotKeyID signature (an OSType)
K_EVENT_CLASS_KEYBOARD = int.from_bytes(b"keyb", "big")
K_EVENT_HOTKEY_PRESSED = 5
K_EVENT_PARAM_DIRECT_OBJECT = int.from_bytes(b"----", "big")
TYPE_EVENT_HOTKEY_ID = int.from_bytes(b"hkid", "big")


class EventTypeSpec(ctypes.Structure):
    _fields_ = [("eventClass", ctypes.c_uint32), ("eventKind", ctypes.c_uint32)]


class EventHotKeyID(ctypes.Structure):
    _fields_ = [("signature", ctypes.c_uint32), ("id", ctypes.c_uint32)]


# OSStatus (*EventHandlerUPP)(EventHandlerCallRef, EventRef, void *userData); a UPP is the bare pointer on 64-bit
EventHandlerProc = ctypes.CFUNCTYPE(ctypes.c_int32, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p)


def parse(combo: str) -> tuple[int, int]:
    """("Ctrl+Alt+M") -> (Carbon modifier bits, virtual key code); raises HotkeyError when it makes no sense."""
    mods, key = split(combo, _MODIFIERS, named="Ctrl/Cmd, Alt/Option, Shift, Meta")
    bits = 0
    for bit in mods:
        bits |= bit
    code = KEY_CODES.get(key.lower())
    if code is None:
        raise HotkeyError(f"{combo!r}: no such key on this keyboard")
    return bits, code


def load_carbon() -> Any:
    """The Carbon framework with the argument and result types of the functions used here."""
    carbon = ctypes.CDLL(ctypes.util.find_library("Carbon") or CARBON_PATH)
    p, u32, i32 = ctypes.c_void_p, ctypes.c_uint32, ctypes.c_int32
    carbon.GetApplicationEventTarget.argtypes, carbon.GetApplicationEventTarget.restype = [], p
    carbon.InstallEventHandler.argtypes = [p, EventHandlerProc, ctypes.c_ulong, ctypes.POINTER(EventTypeSpec), p,
                                           ctypes.POINTER(p)]
    carbon.InstallEventHandler.restype = i32
    carbon.RemoveEventHandler.argtypes, carbon.RemoveEventHandler.restype = [p], i32
    carbon.RegisterEventHotKey.argtypes = [u32, u32, EventHotKeyID, p, u32, ctypes.POINTER(p)]
    carbon.RegisterEventHotKey.restype = i32
    carbon.UnregisterEventHotKey.argtypes, carbon.UnregisterEventHotKey.restype = [p], i32
    carbon.GetEventParameter.argtypes = [p, u32, u32, ctypes.POINTER(u32), ctypes.c_ulong,
                                         ctypes.POINTER(ctypes.c_ulong), p]
    carbon.GetEventParameter.restype = i32
    return carbon


class MacHotkeys:
    """Registers combos with Carbon; `bind` (re)places them all, `close` removes them and the handler."""

    def __init__(self, on_press: Callable[[str], None], carbon: Any = None) -> None:
        self.on_press = on_press
        self._carbon = carbon if carbon is not None else load_carbon()
        self._actions: dict[int, str] = {}  # EventHotKeyID.id -> action
        self._refs: list[ctypes.c_void_p] = []
        self._handler = EventHandlerProc(self._on_event)  # kept alive as long as Carbon may call it
        self._handler_ref = ctypes.c_void_p()
        spec = EventTypeSpec(K_EVENT_CLASS_KEYBOARD, K_EVENT_HOTKEY_PRESSED)
        status = self._carbon.InstallEventHandler(self._carbon.GetApplicationEventTarget(), self._handler, 1,
                                                  ctypes.byref(spec), None, ctypes.byref(self._handler_ref))
        if status != NO_ERR:
            raise OSError(f"Carbon refused the hotkey event handler (OSStatus {status})")

    def bind(self, combos: Mapping[str, str]) -> dict[str, str]:
        """Register {action: combo}; returns {action: problem} for those that could not be bound."""
        self._unregister_all()
        problems: dict[str, str] = {}
        target = self._carbon.GetApplicationEventTarget()
        for number, (action, combo) in enumerate(combos.items(), 1):
            if not combo:
                continue
            try:
                bits, code = parse(combo)
            except HotkeyError as exc:
                problems[action] = str(exc)
                continue
            ref = ctypes.c_void_p()
            status = self._carbon.RegisterEventHotKey(code, bits, EventHotKeyID(SIGNATURE, number), target, 0,
                                                      ctypes.byref(ref))
            if status == HOTKEY_EXISTS:
                problems[action] = f"{combo} is already taken by another program"
            elif status != NO_ERR:
                problems[action] = f"{combo} could not be registered (macOS error {status})"
            else:
                self._refs.append(ref)
                self._actions[number] = action
        for action, problem in problems.items():
            log.info("hotkey for %s not bound: %s", action, problem)
        return problems

    def _on_event(self, _call: Any, event: Any, _data: Any) -> int:
        """Carbon's callback (main thread): which of our hotkeys was pressed, then `on_press(action)`; an event
        that is not one of ours goes on to the next handler."""
        try:
            hotkey = EventHotKeyID()
            status = self._carbon.GetEventParameter(event, K_EVENT_PARAM_DIRECT_OBJECT, TYPE_EVENT_HOTKEY_ID, None,
                                                    ctypes.sizeof(hotkey), None, ctypes.byref(hotkey))
            action = self._actions.get(hotkey.id) if status == NO_ERR and hotkey.signature == SIGNATURE else None
        except Exception:  # noqa: BLE001 - an exception must never unwind into Carbon
            log.debug("cannot read the hotkey event", exc_info=True)
            return EVENT_NOT_HANDLED
        if not action:
            return EVENT_NOT_HANDLED
        try:
            self.on_press(action)
        except Exception:  # noqa: BLE001 - a broken receiver must not unwind into Carbon either
            log.debug("hotkey receiver failed", exc_info=True)
        return NO_ERR

    def _unregister_all(self) -> None:
        for ref in self._refs:
            self._carbon.UnregisterEventHotKey(ref)
        self._refs.clear()
        self._actions.clear()

    def close(self) -> None:
        self._unregister_all()
        if self._handler_ref:
            self._carbon.RemoveEventHandler(self._handler_ref)
            self._handler_ref = ctypes.c_void_p()
