"""The app and window title in front on macOS (for the capture rules on app and window).

The app is NSWorkspace's frontmost application (its localized name: "Safari", "1Password 7").
The title comes from Quartz's window list (the app's frontmost normal window, layer 0); macOS gives
window titles of other apps only to a process with the Screen Recording grant, so without it the
title is "" and only the app rules match. Both calls take about a millisecond.
"""

from __future__ import annotations

import logging
from typing import Any

log = logging.getLogger(__name__)


def current() -> tuple[str, str]:
    """(app, window title) of the app in front; ("", "") when macOS does not say."""
    try:
        import AppKit  # pyobjc-framework-Cocoa

        app = AppKit.NSWorkspace.sharedWorkspace().frontmostApplication()
        if app is None:
            return "", ""
        name = str(app.localizedName() or "")
        return name, _title(int(app.processIdentifier()))
    except Exception:  # noqa: BLE001 - no AppKit or window server: no names, the rules on them do not match
        log.debug("cannot read the app in front", exc_info=True)
        return "", ""


def _title(pid: int) -> str:
    """The title of `pid`'s frontmost normal window, "" when hidden from us (no Screen Recording grant)."""
    try:
        import Quartz  # pyobjc-framework-Quartz

        options = Quartz.kCGWindowListOptionOnScreenOnly | Quartz.kCGWindowListExcludeDesktopElements
        windows: Any = Quartz.CGWindowListCopyWindowInfo(options, Quartz.kCGNullWindowID) or ()
    except Exception:  # noqa: BLE001 - Quartz missing: the app name alone
        log.debug("cannot list windows", exc_info=True)
        return ""
    for info in windows:  # front to back
        if info.get("kCGWindowOwnerPID") == pid and info.get("kCGWindowLayer", 0) == 0:
            return str(info.get("kCGWindowName") or "")
    return ""
