"""Windows: the user32/kernel32 calls the capture backends share (ctypes, loaded on first use), and key chords.

`dll("user32")` loads a DLL once with the prototypes below (64-bit handles would be cut to 32 bits without
them) and keeps it in `_DLLS`, where the unit tests put their fakes. `send_chord` first lets go of the
modifiers the person still holds from a hotkey (Shift, Alt or Win held while we send Ctrl+C would make it
another chord; Alt or Win let go alone would open the menu bar or the Start menu, so a key nobody uses,
VK 0xE8, is tapped before them) and then presses and releases the chord with one `SendInput`.
"""

from __future__ import annotations

import ctypes
import time
from ctypes import wintypes
from typing import Any

from .. import winapi
from ..core.errors import CaptureUnavailable

INPUT_KEYBOARD = 1
KEYEVENTF_EXTENDEDKEY, KEYEVENTF_KEYUP = 0x0001, 0x0002
VK_SHIFT, VK_CONTROL, VK_MENU = 0x10, 0x11, 0x12
VK_LSHIFT, VK_RSHIFT, VK_LCONTROL, VK_RCONTROL, VK_LMENU, VK_RMENU = 0xA0, 0xA1, 0xA2, 0xA3, 0xA4, 0xA5
VK_LWIN, VK_RWIN = 0x5B, 0x5C
VK_MASK = 0xE8  # unassigned: tapped so that letting go of Alt or Win alone does not open a menu
HELD_MODIFIERS = (VK_LSHIFT, VK_RSHIFT, VK_LCONTROL, VK_RCONTROL, VK_LMENU, VK_RMENU, VK_LWIN, VK_RWIN)
_EXTENDED = {VK_RCONTROL, VK_RMENU, VK_LWIN, VK_RWIN}
ULONG_PTR = ctypes.c_size_t
PM_NOREMOVE, PM_QS_SENDMESSAGE = 0x0000, 0x0040 << 16


class KEYBDINPUT(ctypes.Structure):
    _fields_ = [("wVk", wintypes.WORD), ("wScan", wintypes.WORD), ("dwFlags", wintypes.DWORD),
                ("time", wintypes.DWORD), ("dwExtraInfo", ULONG_PTR)]


class MOUSEINPUT(ctypes.Structure):
    _fields_ = [("dx", wintypes.LONG), ("dy", wintypes.LONG), ("mouseData", wintypes.DWORD),
                ("dwFlags", wintypes.DWORD), ("time", wintypes.DWORD), ("dwExtraInfo", ULONG_PTR)]


class HARDWAREINPUT(ctypes.Structure):
    _fields_ = [("uMsg", wintypes.DWORD), ("wParamL", wintypes.WORD), ("wParamH", wintypes.WORD)]


class _INPUTUNION(ctypes.Union):
    _fields_ = [("mi", MOUSEINPUT), ("ki", KEYBDINPUT), ("hi", HARDWAREINPUT)]  # the size SendInput checks


class INPUT(ctypes.Structure):
    _anonymous_ = ("u",)
    _fields_ = [("type", wintypes.DWORD), ("u", _INPUTUNION)]


_H, _B, _D, _U, _I = wintypes.HANDLE, wintypes.BOOL, wintypes.DWORD, wintypes.UINT, ctypes.c_int
_W, _P = wintypes.HWND, ctypes.c_void_p
# name -> (restype, argtypes) of every call the Windows backends make
PROTOTYPES: dict[str, dict[str, tuple[Any, list[Any]]]] = {
    "user32": {
        "RegisterHotKey": (_B, [_W, _I, _U, _U]), "UnregisterHotKey": (_B, [_W, _I]),
        "VkKeyScanW": (wintypes.SHORT, [wintypes.WCHAR]), "GetAsyncKeyState": (wintypes.SHORT, [_I]),
        "SendInput": (_U, [_U, _P, _I]),
        "PeekMessageW": (_B, [ctypes.POINTER(wintypes.MSG), _W, _U, _U, _U]),
        "GetForegroundWindow": (_W, []), "SetForegroundWindow": (_B, [_W]), "BringWindowToTop": (_B, [_W]),
        "IsWindow": (_B, [_W]), "IsIconic": (_B, [_W]), "ShowWindow": (_B, [_W, _I]),
        "AttachThreadInput": (_B, [_D, _D, _B]),
        "GetWindowThreadProcessId": (_D, [_W, ctypes.POINTER(_D)]),
        "GetWindowTextLengthW": (_I, [_W]), "GetWindowTextW": (_I, [_W, wintypes.LPWSTR, _I]),
        "CreateWindowExW": (_W, [_D, wintypes.LPCWSTR, wintypes.LPCWSTR, _D, _I, _I, _I, _I, _W, _H, _H, _P]),
        "DestroyWindow": (_B, [_W]),
        "GetClipboardSequenceNumber": (_D, []), "OpenClipboard": (_B, [_W]), "CloseClipboard": (_B, []),
        "EmptyClipboard": (_B, []), "EnumClipboardFormats": (_U, [_U]), "IsClipboardFormatAvailable": (_B, [_U]),
        "GetClipboardData": (_H, [_U]), "SetClipboardData": (_H, [_U, _H]),
        "GetClipboardFormatNameW": (_I, [_U, wintypes.LPWSTR, _I]),
        "RegisterClipboardFormatW": (_U, [wintypes.LPCWSTR]),
    },
    "kernel32": {
        "GlobalAlloc": (_H, [_U, ctypes.c_size_t]), "GlobalLock": (_P, [_H]), "GlobalUnlock": (_B, [_H]),
        "GlobalSize": (ctypes.c_size_t, [_H]), "GlobalFree": (_H, [_H]),
        "GetCurrentThreadId": (_D, []), "GetCurrentProcessId": (_D, []),
        "OpenProcess": (_H, [_D, _B, _D]), "CloseHandle": (_B, [_H]),
        "QueryFullProcessImageNameW": (_B, [_H, _D, wintypes.LPWSTR, ctypes.POINTER(_D)]),
    },
}
_DLLS: dict[str, Any] = {}


def dll(name: str) -> Any:
    """user32 or kernel32 with the prototypes set, loaded on first use (never at import: Linux imports this)."""
    return winapi.load(name, PROTOTYPES, _DLLS)


def last_error() -> int:
    """The Windows error code of the last failed call of ours (this thread's)."""
    return ctypes.get_last_error()  # type: ignore[attr-defined]  # Windows only


def held_modifiers() -> list[int]:
    """The modifier keys down now (left and right apart), as Windows' asynchronous key state says."""
    user32 = dll("user32")
    return [vk for vk in HELD_MODIFIERS if user32.GetAsyncKeyState(vk) & 0x8000]


def _key(vk: int, up: bool) -> INPUT:
    flags = (KEYEVENTF_KEYUP if up else 0) | (KEYEVENTF_EXTENDEDKEY if vk in _EXTENDED else 0)
    event = INPUT(type=INPUT_KEYBOARD)
    event.ki = KEYBDINPUT(wVk=vk, wScan=0, dwFlags=flags, time=0, dwExtraInfo=0)
    return event


def chord_events(modifiers: list[int], key: int, held: list[int]) -> list[INPUT]:
    """The key events: let go of `held` (after a VK_MASK tap when Alt or Win is among them), press
    `modifiers` then `key`, release them in reverse order."""
    events: list[INPUT] = []
    if set(held) & {VK_LMENU, VK_RMENU, VK_LWIN, VK_RWIN}:
        events += [_key(VK_MASK, False), _key(VK_MASK, True)]
    events += [_key(vk, True) for vk in held]
    events += [_key(vk, False) for vk in (*modifiers, key)]
    events += [_key(vk, True) for vk in reversed((*modifiers, key))]
    return events


def send_chord(modifiers: list[int], key: int) -> None:
    """Send a chord such as Ctrl+C to the window in front, modifiers the person holds let go first.

    Raises CaptureUnavailable when Windows takes fewer events than sent (another program blocks input).
    A window running as administrator may drop them without saying so (UIPI): the caller's wait tells.
    """
    events = chord_events(modifiers, key, held_modifiers())
    array = (INPUT * len(events))(*events)
    sent = dll("user32").SendInput(len(events), ctypes.cast(array, ctypes.c_void_p), ctypes.sizeof(INPUT))
    if sent != len(events):
        raise CaptureUnavailable("Windows did not take the keystrokes (another program may be blocking input)")


def pump_sent_messages() -> None:
    """Handle the messages other threads *send* to this one, and nothing else (posted ones stay queued).

    While the GUI thread waits for another program's copy, that program's EmptyClipboard sends
    WM_DESTROYCLIPBOARD to the clipboard's owner, which is our own (Qt's) window after a copy from the app:
    without this the other program would hang until we stop waiting (seen under Wine).
    """
    msg = wintypes.MSG()
    dll("user32").PeekMessageW(ctypes.byref(msg), None, 0, 0, PM_NOREMOVE | PM_QS_SENDMESSAGE)


def wait_until(check: Any, timeout_s: float, step_s: float = 0.01) -> bool:
    """Poll `check()` until it is true or `timeout_s` passes, answering sent messages meanwhile."""
    deadline = time.monotonic() + timeout_s
    while True:
        if check():
            return True
        if time.monotonic() >= deadline:
            return False
        pump_sent_messages()
        time.sleep(step_s)
