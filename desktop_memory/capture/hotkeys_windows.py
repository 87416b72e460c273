"""Global hotkeys on Windows: RegisterHotKey for the GUI thread (no keyboard hook), WM_HOTKEY read by the caller.

A combo is written as Qt writes it ("Ctrl+Alt+M", parsed like the X11 backend's). Each is registered
with `MOD_NOREPEAT` (holding the keys down does not repeat the action) and hwnd NULL, so Windows posts
WM_HOTKEY to the message queue of the thread that registered it: the tray app registers on its GUI
thread and its native event filter (qt/native_hotkeys.py) hands each message to `dispatch`. A combo
another program holds is refused (ERROR_HOTKEY_ALREADY_REGISTERED) and reported by name. Registration,
`dispatch` and `close` must all run on that one thread (Windows ties a thread's hotkeys to it).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from ctypes import wintypes

from . import keys_windows as keys
from .hotkeys_x11 import HotkeyError, parse

log = logging.getLogger(__name__)

WM_HOTKEY = 0x0312
MOD_ALT, MOD_CONTROL, MOD_SHIFT, MOD_WIN, MOD_NOREPEAT = 0x0001, 0x0002, 0x0004, 0x0008, 0x4000
ERROR_HOTKEY_ALREADY_REGISTERED = 1409
_MODS = {"ControlMask": MOD_CONTROL, "Mod1Mask": MOD_ALT, "ShiftMask": MOD_SHIFT, "Mod4Mask": MOD_WIN}
# the X11 parser's key names (keysyms) -> virtual-key codes; letters, digits and F-keys are computed
_VKS = {"space": 0x20, "Return": 0x0D, "Tab": 0x09, "Escape": 0x1B, "Insert": 0x2D, "Delete": 0x2E,
        "Home": 0x24, "End": 0x23, "Prior": 0x21, "Next": 0x22, "Left": 0x25, "Up": 0x26, "Right": 0x27,
        "Down": 0x28, "Backspace": 0x08, "Print": 0x2C, "Pause": 0x13}
FIRST_ID = 0x0101  # hotkey ids an application may use: 0x0000-0xBFFF


def virtual_key(name: str) -> tuple[int, int]:
    """A key name of `parse` -> (virtual-key code, extra MOD_ flags); raises HotkeyError when unknown.

    Letters and digits have fixed codes on every layout; punctuation is asked of the current layout
    (VkKeyScanW), which may say the character needs Shift.
    """
    low = name.lower()
    if len(name) == 1 and ("a" <= low <= "z" or "0" <= low <= "9"):
        return ord(name.upper()), 0
    if low.startswith("f") and low[1:].isdigit() and 1 <= int(low[1:]) <= 24:
        return 0x70 + int(low[1:]) - 1, 0
    found = next((vk for key, vk in _VKS.items() if key.lower() == low), None)
    if found is not None:
        return found, 0
    if len(name) == 1:
        scan = keys.dll("user32").VkKeyScanW(name) & 0xFFFF
        if scan != 0xFFFF and scan & 0xFF != 0xFF:
            shift = scan >> 8
            return scan & 0xFF, (MOD_SHIFT if shift & 1 else 0) | (MOD_CONTROL if shift & 2 else 0) | (
                MOD_ALT if shift & 4 else 0)
    raise HotkeyError(f"{name!r}: no such key on this keyboard")


def to_registration(combo: str) -> tuple[int, int]:
    """"Ctrl+Alt+M" -> (MOD_ flags with MOD_NOREPEAT, virtual-key code); raises HotkeyError (names the combo)."""
    masks, name = parse(combo)
    try:
        vk, extra = virtual_key(name)
    except HotkeyError:
        raise HotkeyError(f"{combo!r}: no such key on this keyboard") from None
    flags = MOD_NOREPEAT | extra
    for mask in masks:
        flags |= _MODS[mask]
    return flags, vk


def hotkey_id(message: int) -> int | None:
    """The hotkey id of a native MSG (its address, as Qt's event filter gets it) when it is a thread's
    WM_HOTKEY; None for any other message."""
    if not message:
        return None
    msg = wintypes.MSG.from_address(message)
    if msg.message != WM_HOTKEY or msg.hWnd:
        return None
    return int(msg.wParam)


class WindowsHotkeys:
    """Registers combos for the calling (GUI) thread; `bind` (re)places them all, `close` lets them go."""

    def __init__(self, on_press: Callable[[str], None]) -> None:
        self.on_press = on_press
        self._user32 = keys.dll("user32")
        self._bound: dict[int, str] = {}  # hotkey id -> action

    def bind(self, combos: Mapping[str, str]) -> dict[str, str]:
        """Register {action: combo}; returns {action: problem} for those that could not be registered."""
        self._unregister_all()
        problems: dict[str, str] = {}
        taken: dict[tuple[int, int], str] = {}
        for n, (action, combo) in enumerate(combos.items()):
            if not combo:
                continue
            try:
                flags, vk = to_registration(combo)
            except HotkeyError as exc:
                problems[action] = str(exc)
                continue
            if (flags, vk) in taken:
                problems[action] = f"{combo} is already used for {taken[(flags, vk)]}"
                continue
            ident = FIRST_ID + n
            if not self._user32.RegisterHotKey(None, ident, flags, vk):
                problems[action] = _refusal(combo, keys.last_error())
                continue
            self._bound[ident] = action
            taken[(flags, vk)] = action
        for action, problem in problems.items():
            log.info("hotkey for %s not bound: %s", action, problem)
        return problems

    def dispatch(self, ident: int) -> bool:
        """A WM_HOTKEY's id -> `on_press(action)`; whether the id was one of ours."""
        action = self._bound.get(ident)
        if action is None:
            return False
        try:
            self.on_press(action)
        except Exception:  # noqa: BLE001 - a broken receiver must not break the event loop
            log.debug("hotkey receiver failed", exc_info=True)
        return True

    def _unregister_all(self) -> None:
        for ident in self._bound:
            self._user32.UnregisterHotKey(None, ident)
        self._bound.clear()

    def close(self) -> None:
        self._unregister_all()


def _refusal(combo: str, error: int) -> str:
    if error == ERROR_HOTKEY_ALREADY_REGISTERED:
        return f"{combo} is already taken by another program"
    return f"{combo}: Windows refused it (error {error})"
