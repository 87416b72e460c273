"""Key chords sent to the app in front on macOS (Cmd+C, Cmd+V) and the Accessibility grant they need.

Posting keyboard events to other apps (Quartz's CGEventPost) works only for a process the person
trusted in System Settings > Privacy & Security > Accessibility; without it macOS drops the events
silently. So every sender asks first (`AXIsProcessTrustedWithOptions`, which also shows macOS's own
prompt the first time) and says exactly how to grant it when it is missing.

pyobjc (ApplicationServices, Quartz) is imported inside the functions: this module imports anywhere.
"""

from __future__ import annotations

import logging
import threading
from typing import Any

log = logging.getLogger(__name__)

ACCESSIBILITY_HINT = ("desktop-memory needs Accessibility access to send Cmd+C / Cmd+V: open System Settings > "
                      "Privacy & Security > Accessibility, switch on desktop-memory (or the terminal you started "
                      "it from), then try again")
KEY_C, KEY_V = 0x08, 0x09  # kVK_ANSI_C, kVK_ANSI_V (the key's position on an ANSI keyboard)
_asked = threading.Event()  # macOS's own prompt is shown once per run, not on every hotkey press


def _ax() -> Any:
    try:
        import ApplicationServices  # pyobjc-framework-ApplicationServices (HIServices' AX functions)

        return ApplicationServices
    except ImportError:
        import HIServices  # older pyobjc splits it out

        return HIServices


def trusted(prompt: bool = True) -> bool:
    """Whether this process may post key events to other apps; the first call with `prompt` shows macOS's
    "would like to control this computer" prompt when it may not."""
    try:
        ax = _ax()
    except ImportError:
        log.info("pyobjc's ApplicationServices is missing: cannot check the Accessibility grant")
        return False
    ask = prompt and not _asked.is_set()
    _asked.set()
    if ask:
        key = getattr(ax, "kAXTrustedCheckOptionPrompt", "AXTrustedCheckOptionPrompt")  # the constant's value
        return bool(ax.AXIsProcessTrustedWithOptions({key: True}))
    return bool(ax.AXIsProcessTrusted())


def post_command_chord(keycode: int) -> None:
    """Press and release Cmd+<key> for the app in front. The events carry the Command flag only, so
    Option / Shift still held from the hotkey that asked for it do not turn Cmd+C into another shortcut."""
    import Quartz  # pyobjc-framework-Quartz

    source = Quartz.CGEventSourceCreate(Quartz.kCGEventSourceStateCombinedSessionState)
    for down in (True, False):
        event = Quartz.CGEventCreateKeyboardEvent(source, keycode, down)
        Quartz.CGEventSetFlags(event, Quartz.kCGEventFlagMaskCommand)
        Quartz.CGEventPost(Quartz.kCGHIDEventTap, event)
