"""Paste where you came from, on Windows: the window in front remembered, brought back, sent Ctrl+V.

`foreground()` is GetForegroundWindow's HWND (taken before the search window opens). `paste_into`
brings it forward with SetForegroundWindow; the tray app is the foreground process at that moment (the
person just pressed Enter in its window), which Windows allows. If Windows refuses anyway (another window
took the front meanwhile), it tries once more attached to the input of the thread in front
(AttachThreadInput), and gives up rather than typing into the wrong window. AllowSetForegroundWindow is not
needed: it lets *another* process take the front, and here we take it ourselves. Ctrl+V is sent with
SendInput after letting go of the modifiers the person still holds (keys_windows.send_chord).
"""

from __future__ import annotations

import logging

from ..core.errors import CaptureUnavailable
from . import keys_windows as keys

log = logging.getLogger(__name__)
SW_RESTORE = 9
FOCUS_WAIT_S = 0.25
CLIPBOARD_ONLY = "the context is on the clipboard: paste it with Ctrl+V"


def foreground() -> int | None:
    """The window in front now (its HWND), or None when unknown."""
    try:
        hwnd = keys.dll("user32").GetForegroundWindow()
    except OSError:
        log.debug("no user32 to ask for the window in front", exc_info=True)
        return None
    return int(hwnd) if hwnd else None


def paste_into(target: int | None) -> str | None:
    """Bring `target` forward and send Ctrl+V; None when sent, else a one-line problem for the person."""
    user32 = keys.dll("user32")
    if target is not None:
        if not user32.IsWindow(target):
            return f"the window you came from is closed; {CLIPBOARD_ONLY}"
        if not _bring_forward(target):
            return f"Windows did not let desktop-memory bring that window back; {CLIPBOARD_ONLY}"
    try:
        keys.send_chord([keys.VK_CONTROL], ord("V"))
    except CaptureUnavailable as exc:
        return f"{exc}; {CLIPBOARD_ONLY}"
    return None


def _bring_forward(hwnd: int) -> bool:
    """Whether `hwnd` is in front (after SetForegroundWindow, and once more attached to the front thread)."""
    user32 = keys.dll("user32")

    def in_front() -> bool:
        return user32.GetForegroundWindow() == hwnd

    if in_front():
        return True
    if user32.IsIconic(hwnd):
        user32.ShowWindow(hwnd, SW_RESTORE)
    if user32.SetForegroundWindow(hwnd) and keys.wait_until(in_front, FOCUS_WAIT_S):
        return True
    front = user32.GetForegroundWindow()
    ours = keys.dll("kernel32").GetCurrentThreadId()
    theirs = user32.GetWindowThreadProcessId(front, None) if front else 0
    attached = bool(theirs and theirs != ours and user32.AttachThreadInput(ours, theirs, True))
    try:
        user32.BringWindowToTop(hwnd)
        user32.SetForegroundWindow(hwnd)
    finally:
        if attached:
            user32.AttachThreadInput(ours, theirs, False)
    found = keys.wait_until(in_front, FOCUS_WAIT_S)
    if not found:
        log.info("the window to paste into could not be brought forward")
    return found
