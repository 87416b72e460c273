"""The app and window title in front on Windows: GetForegroundWindow, its title, its program's file name.

The app is the program file without ".exe" ("KeePassXC", "chrome", "WINWORD"), from
QueryFullProcessImageNameW with the limited query right (works for other users' and most elevated
processes; a protected one gives no app, the title still comes). A Store app's window belongs to
ApplicationFrameHost.exe; the app is then the child window's own process (CalculatorApp, ...).
"""

from __future__ import annotations

import ctypes
import logging
from pathlib import PureWindowsPath

from . import keys_windows as keys

log = logging.getLogger(__name__)
PROCESS_QUERY_LIMITED_INFORMATION = 0x1000
FRAME_HOST = "applicationframehost"
_ENUM_PROC = getattr(ctypes, "WINFUNCTYPE", ctypes.CFUNCTYPE)(ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p)


def current() -> tuple[str, str]:
    """(app, window title) of the window in front; ("", "") when Windows does not say."""
    hwnd = keys.dll("user32").GetForegroundWindow()
    if not hwnd:
        return "", ""
    return _app(hwnd), _title(hwnd)


def _title(hwnd: int) -> str:
    user32 = keys.dll("user32")
    size = user32.GetWindowTextLengthW(hwnd) + 1
    buf = ctypes.create_unicode_buffer(size)
    user32.GetWindowTextW(hwnd, buf, size)
    return buf.value


def _pid(hwnd: int) -> int:
    pid = ctypes.c_ulong(0)
    keys.dll("user32").GetWindowThreadProcessId(hwnd, ctypes.byref(pid))
    return pid.value


def _program(pid: int) -> str:
    """The program file's name without .exe, or "" when the process cannot be asked."""
    kernel32 = keys.dll("kernel32")
    handle = kernel32.OpenProcess(PROCESS_QUERY_LIMITED_INFORMATION, False, pid) if pid else None
    if not handle:
        return ""
    try:
        size = ctypes.c_ulong(32768)
        buf = ctypes.create_unicode_buffer(size.value)
        if not kernel32.QueryFullProcessImageNameW(handle, 0, buf, ctypes.byref(size)):
            return ""
        name = PureWindowsPath(buf.value).name
        return name[:-4] if name.lower().endswith(".exe") else name
    finally:
        kernel32.CloseHandle(handle)


def _app(hwnd: int) -> str:
    pid = _pid(hwnd)
    app = _program(pid)
    if app.lower() != FRAME_HOST:
        return app
    found: list[int] = []

    def child(child_hwnd: int, _lparam: int) -> int:
        other = _pid(child_hwnd)
        if other and other != pid:
            found.append(other)
            return 0  # stop
        return 1

    keys.dll("user32").EnumChildWindows(hwnd, _ENUM_PROC(child), None)
    return _program(found[0]) if found else app
