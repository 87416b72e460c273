"""Windows: WM_HOTKEY reaches the app through a native event filter on the QApplication.

RegisterHotKey with hwnd NULL (capture/hotkeys_windows.py) makes Windows post WM_HOTKEY to the GUI
thread's message queue; Qt's event dispatcher hands every message it takes from that queue to the native
event filters ("windows_generic_MSG", a pointer to the MSG) before dispatching it. The filter gives ours
to the backend, which calls `on_press(action)` right there, on the GUI thread.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QAbstractNativeEventFilter, QCoreApplication

from ..capture.hotkeys_windows import WindowsHotkeys, hotkey_id

log = logging.getLogger(__name__)
MESSAGE_TYPES = (b"windows_generic_MSG", b"windows_dispatcher_MSG")


def address(message: Any) -> int:
    """The MSG's address: PySide gives an int, or a shiboken VoidPtr in some versions."""
    try:
        return int(message)
    except (TypeError, ValueError):
        return 0


class HotkeyMessages(QAbstractNativeEventFilter):
    """Passes the GUI thread's WM_HOTKEY messages to the backend; every other message goes on untouched."""

    def __init__(self, backend: WindowsHotkeys) -> None:
        super().__init__()
        self.backend = backend

    def nativeEventFilter(self, event_type: Any, message: Any) -> tuple[bool, int]:  # noqa: N802 - Qt's name
        if bytes(event_type) not in MESSAGE_TYPES:
            return False, 0
        ident = hotkey_id(address(message))
        if ident is None:
            return False, 0
        return self.backend.dispatch(ident), 0


class WindowsGlobalHotkeys:
    """The Windows backend with its filter installed on the running QApplication (construct on the GUI thread)."""

    def __init__(self, on_press: Callable[[str], None]) -> None:
        app = QCoreApplication.instance()
        if app is None:
            raise RuntimeError("no QApplication to receive WM_HOTKEY")
        self._backend = WindowsHotkeys(on_press)
        self._filter = HotkeyMessages(self._backend)
        app.installNativeEventFilter(self._filter)

    def bind(self, combos: Any) -> dict[str, str]:
        return self._backend.bind(combos)

    def close(self) -> None:
        self._backend.close()
        app = QCoreApplication.instance()
        if app is not None:
            app.removeNativeEventFilter(self._filter)
