"""Copy a text the way a Windows program does, from its own process (run by the Windows Python under Wine).

    python clipboard_copy.py TEXT [--exclude] [--history-off]

--exclude adds the registered format `ExcludeClipboardContentFromMonitorProcessing` (what password managers
set so that clipboard watchers skip the copy); --history-off adds `CanIncludeInClipboardHistory` with a DWORD 0.
Used by scripts/windows/check.sh to drive the frozen app; Windows only (ctypes.windll).
"""

from __future__ import annotations

import ctypes
import sys
import time
from ctypes import wintypes

CF_UNICODETEXT = 13
GMEM_MOVEABLE = 0x0002


def _api() -> tuple[ctypes.WinDLL, ctypes.WinDLL]:
    user32 = ctypes.WinDLL("user32", use_last_error=True)
    kernel32 = ctypes.WinDLL("kernel32", use_last_error=True)
    user32.OpenClipboard.argtypes = [wintypes.HWND]
    user32.SetClipboardData.argtypes = [wintypes.UINT, wintypes.HANDLE]
    user32.SetClipboardData.restype = wintypes.HANDLE
    user32.RegisterClipboardFormatW.argtypes = [wintypes.LPCWSTR]
    user32.RegisterClipboardFormatW.restype = wintypes.UINT
    kernel32.GlobalAlloc.argtypes = [wintypes.UINT, ctypes.c_size_t]
    kernel32.GlobalAlloc.restype = wintypes.HGLOBAL
    kernel32.GlobalLock.argtypes = [wintypes.HGLOBAL]
    kernel32.GlobalLock.restype = ctypes.c_void_p
    kernel32.GlobalUnlock.argtypes = [wintypes.HGLOBAL]
    return user32, kernel32


def _global(kernel32: ctypes.WinDLL, data: bytes) -> int:
    handle = kernel32.GlobalAlloc(GMEM_MOVEABLE, max(len(data), 1))
    if not handle:
        raise OSError(ctypes.get_last_error(), "GlobalAlloc failed")
    ctypes.memmove(kernel32.GlobalLock(handle), data, len(data))
    kernel32.GlobalUnlock(handle)
    return handle


def copy(text: str, exclude: bool = False, history_off: bool = False) -> None:
    """Put `text` on the clipboard, with the secret markers asked for."""
    user32, kernel32 = _api()
    for _ in range(50):  # another program may hold the clipboard for a moment
        if user32.OpenClipboard(None):
            break
        time.sleep(0.1)
    else:
        raise OSError(ctypes.get_last_error(), "OpenClipboard failed")
    try:
        user32.EmptyClipboard()
        if not user32.SetClipboardData(CF_UNICODETEXT, _global(kernel32, (text + "\0").encode("utf-16-le"))):
            raise OSError(ctypes.get_last_error(), "SetClipboardData(CF_UNICODETEXT) failed")
        markers = []
        if exclude:
            markers.append(("ExcludeClipboardContentFromMonitorProcessing", b"\0\0\0\0"))
        if history_off:
            markers.append(("CanIncludeInClipboardHistory", b"\0\0\0\0"))
        for name, data in markers:
            fmt = user32.RegisterClipboardFormatW(name)
            if not fmt or not user32.SetClipboardData(fmt, _global(kernel32, data)):
                raise OSError(ctypes.get_last_error(), f"SetClipboardData({name}) failed")
    finally:
        user32.CloseClipboard()


if __name__ == "__main__":
    args = sys.argv[1:]
    words = [a for a in args if not a.startswith("--")]
    copy(" ".join(words), exclude="--exclude" in args, history_off="--history-off" in args)
    print("copied" + (" with ExcludeClipboardContentFromMonitorProcessing" if "--exclude" in args else ""))
