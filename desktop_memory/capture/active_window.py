"""The app and window title in front when something is copied (X11 through python-xlib).

On X11 the window manager names the active window in `_NET_ACTIVE_WINDOW`; its `WM_CLASS` gives the
app and `_NET_WM_NAME` (or `WM_NAME`) the title. macOS: capture/window_macos.py (the frontmost app;
the title only with the Screen Recording grant). Windows: capture/window_windows.py (the program file
without .exe and the window title). Elsewhere (Wayland, or an X server without a window manager) both
are empty and the capture rules on app and window do not match.
"""

from __future__ import annotations

import logging
import os
import sys
from typing import Any

log = logging.getLogger(__name__)


class ActiveWindow:
    """Reads the active window's app and title; keeps one X connection open (cheap to ask again)."""

    def __init__(self) -> None:
        self._display: Any = None
        self._tried = False

    def _connect(self) -> Any:
        if not self._tried:
            self._tried = True
            if sys.platform.startswith("linux") and os.environ.get("DISPLAY"):
                try:
                    from Xlib import display

                    self._display = display.Display()
                except Exception:  # noqa: BLE001 - no X server or no python-xlib: no window names
                    log.debug("no X display for window names", exc_info=True)
        return self._display

    def current(self) -> tuple[str, str]:
        """(app, window title); ("", "") when the OS does not say."""
        if sys.platform == "darwin":
            from .window_macos import current

            return current()
        if sys.platform == "win32":
            return self._windows()
        d = self._connect()
        if d is None:
            return "", ""
        try:
            root = d.screen().root
            active = root.get_full_property(d.intern_atom("_NET_ACTIVE_WINDOW"), 0)
            if not active or not active.value or not active.value[0]:
                return "", ""
            window = d.create_resource_object("window", active.value[0])
            klass = window.get_wm_class() or ("", "")
            name = window.get_full_property(d.intern_atom("_NET_WM_NAME"), d.intern_atom("UTF8_STRING"))
            title = name.value.decode("utf-8", "replace") if name and name.value else (window.get_wm_name() or "")
            return str(klass[-1] or ""), str(title)
        except Exception:  # noqa: BLE001 - a window that closed meanwhile, a broken property: no names
            log.debug("cannot read the active window", exc_info=True)
            return "", ""

    @staticmethod
    def _windows() -> tuple[str, str]:
        try:
            from .window_windows import current

            return current()
        except Exception:  # noqa: BLE001 - a window that closed meanwhile, no user32: no names
            log.debug("cannot read the window in front", exc_info=True)
            return "", ""

    def close(self) -> None:
        if self._display is not None:
            self._display.close()
            self._display = None
