"""Paste where you came from on macOS: the app in front (by pid), brought back, then Cmd+V.

`foreground` is asked before the search window opens; `paste_into` activates that app again
(NSRunningApplication.activateWithOptions_) and posts Cmd+V through Quartz, which needs the
Accessibility grant (capture/input_macos.py). AppKit is imported inside the functions.
"""

from __future__ import annotations

import logging
import os
import time
from typing import Any

from . import input_macos

log = logging.getLogger(__name__)
ACTIVATE_WAIT_S = 0.5


def _frontmost() -> Any:
    import AppKit  # pyobjc-framework-Cocoa

    return AppKit.NSWorkspace.sharedWorkspace().frontmostApplication()


def foreground() -> int | None:
    """The app in front now, by process id; None when unknown or when it is desktop-memory itself."""
    try:
        app = _frontmost()
    except Exception:  # noqa: BLE001 - no AppKit, no window server: nothing to paste into
        log.debug("cannot ask for the app in front", exc_info=True)
        return None
    if app is None:
        return None
    pid = int(app.processIdentifier())
    return None if pid == os.getpid() else pid


def paste_into(target: int | None) -> str | None:
    """Bring the app `target` (a pid from `foreground`) forward and send Cmd+V; None when sent, else a
    one-line problem for a person (the context stays on the clipboard either way)."""
    if not input_macos.trusted(prompt=True):
        return input_macos.ACCESSIBILITY_HINT
    if target is not None:
        problem = _activate(target)
        if problem:
            return problem
    input_macos.post_command_chord(input_macos.KEY_V)
    return None


def _activate(pid: int) -> str | None:
    import AppKit

    app = AppKit.NSRunningApplication.runningApplicationWithProcessIdentifier_(pid)
    if app is None or app.isTerminated():
        return "the app you came from has quit: the context is on the clipboard, paste it with Cmd+V"
    app.activateWithOptions_(getattr(AppKit, "NSApplicationActivateIgnoringOtherApps", 1 << 1))
    deadline = time.monotonic() + ACTIVATE_WAIT_S
    while time.monotonic() < deadline:  # activation is asynchronous: Cmd+V must reach that app, not ours
        front = _frontmost()
        if front is not None and int(front.processIdentifier()) == pid:
            return None
        time.sleep(0.02)
    log.info("the app to paste into did not come forward within %.1f s; pasting anyway", ACTIVATE_WAIT_S)
    return None
