"""Selection capture on Windows: the selected text through a Ctrl+C of our own, the clipboard put back after.

Windows has no selection buffer like X11's PRIMARY, so `copy_selection` (on the GUI thread, the hotkey's)
saves what the clipboard holds, notes `GetClipboardSequenceNumber`, sends Ctrl+C with `SendInput` (the
modifiers still held from the hotkey let go first: keys_windows.send_chord), waits for the number to move
(it does not: nothing was selected, None), reads CF_UNICODETEXT and puts the earlier content back.

What comes back: every format held in movable memory, byte for byte: text (CF_UNICODETEXT, CF_TEXT,
CF_OEMTEXT, CF_LOCALE), images as CF_DIB / CF_DIBV5 (Windows makes CF_BITMAP from them again), files
(CF_HDROP), HTML, RTF and every other registered format, the secret markers included, so a password copied
before stays marked. Left out: formats that are GDI objects or pointers rather than memory (CF_BITMAP,
CF_ENHMETAFILE, CF_METAFILEPICT, CF_PALETTE, the CF_DSP* and owner-display ones, private and GDI-object
ranges) and OLE's own bookkeeping ("DataObject", "Ole Private Data", Wine's "Wine Marshalled DataObject":
pointers into the program that copied). Delayed formats are rendered while saving (the program that copied
is asked for them). The content put back also carries our own mark (core.capture.OWN_MIME, the name Qt gives
that registered format), so the app's clipboard watcher does not take it for a new copy.
"""

from __future__ import annotations

import ctypes
import logging
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from ..core.capture import OWN_MIME
from ..core.errors import CaptureUnavailable
from . import keys_windows as keys

log = logging.getLogger(__name__)

CF_UNICODETEXT = 13
GMEM_MOVEABLE = 0x0002
NOT_MEMORY = {2, 3, 9, 14, 0x0080, 0x0082, 0x0083, 0x008E}  # bitmap, metafiles, palette, display formats
PRIVATE_RANGE = range(0x0200, 0x0400)  # CF_PRIVATEFIRST..CF_GDIOBJLAST: the owner's own handles
OLE_FORMATS = {"DataObject", "Ole Private Data", "Wine Marshalled DataObject"}  # pointers into the copier
OPEN_PATIENCE_S = 0.5  # another program holding the clipboard open: how long we retry


def copy_selection(timeout_s: float = 0.5) -> str | None:
    """Send Ctrl+C to the window in front and return the selected text (None: nothing selected, no text).

    The clipboard's earlier content is put back. Raises CaptureUnavailable (one line) when the clipboard
    stays locked by another program or Windows does not take the keystrokes.
    """
    user32 = keys.dll("user32")
    front = user32.GetForegroundWindow()
    if not front or _ours(front):  # our own window's thread is this one: it could not copy while we wait
        return None
    with _window() as owner:
        saved = _save(owner)
        before = user32.GetClipboardSequenceNumber()
        keys.send_chord([keys.VK_CONTROL], ord("C"))
        if not keys.wait_until(lambda: user32.GetClipboardSequenceNumber() != before, timeout_s):
            log.debug("no copy within %.2f s: nothing selected", timeout_s)
            return None
        try:
            return _read_text(owner) or None
        finally:
            _restore(owner, saved)


def _ours(hwnd: int) -> bool:
    pid = ctypes.c_ulong(0)
    keys.dll("user32").GetWindowThreadProcessId(hwnd, ctypes.byref(pid))
    return pid.value == keys.dll("kernel32").GetCurrentProcessId()


@contextmanager
def _window() -> Iterator[int]:
    """A hidden window of ours to own the clipboard while we write it (with NULL, SetClipboardData fails)."""
    user32 = keys.dll("user32")
    hwnd = user32.CreateWindowExW(0, "STATIC", None, 0, 0, 0, 0, 0, None, None, None, None)
    if not hwnd:
        raise CaptureUnavailable(f"Windows would not make a window to hold the clipboard (error {keys.last_error()})")
    try:
        yield hwnd
    finally:
        user32.DestroyWindow(hwnd)


@contextmanager
def _opened(owner: int, patience_s: float = OPEN_PATIENCE_S) -> Iterator[Any]:
    """The clipboard opened by `owner`, retried while another program holds it; closed after."""
    user32 = keys.dll("user32")
    if not keys.wait_until(lambda: user32.OpenClipboard(owner), patience_s):
        raise CaptureUnavailable("the clipboard is in use by another program; try again in a moment")
    try:
        yield user32
    finally:
        user32.CloseClipboard()


def _name(fmt: int) -> str:
    buf = ctypes.create_unicode_buffer(256)
    n = keys.dll("user32").GetClipboardFormatNameW(fmt, buf, 256)
    return buf.value[:n] if n else ""


def _restorable(fmt: int) -> bool:
    if fmt in NOT_MEMORY or fmt in PRIVATE_RANGE:
        return False
    return not (fmt >= 0xC000 and _name(fmt) in OLE_FORMATS)


def _read_global(handle: Any) -> bytes | None:
    kernel32 = keys.dll("kernel32")
    size = kernel32.GlobalSize(handle)
    if not size:  # an empty marker (e.g. ExcludeClipboardContentFromMonitorProcessing): its presence counts
        return b""
    pointer = kernel32.GlobalLock(handle)
    if not pointer:
        return None
    try:
        return ctypes.string_at(pointer, size)
    finally:
        kernel32.GlobalUnlock(handle)


def _save(owner: int) -> list[tuple[int, bytes]]:
    """Every format of the clipboard that lives in memory, in its order."""
    saved: list[tuple[int, bytes]] = []
    with _opened(owner) as user32:
        fmt = user32.EnumClipboardFormats(0)
        while fmt:
            if _restorable(fmt):
                handle = user32.GetClipboardData(fmt)
                data = _read_global(handle) if handle else None
                if data is not None:
                    saved.append((fmt, data))
            fmt = user32.EnumClipboardFormats(fmt)
    return saved


def _read_text(owner: int) -> str:
    """CF_UNICODETEXT of the new copy ("" when it has none); waits while the program copying holds it open."""
    with _opened(owner) as user32:
        if not user32.IsClipboardFormatAvailable(CF_UNICODETEXT):
            return ""
        handle = user32.GetClipboardData(CF_UNICODETEXT)
        data = _read_global(handle) if handle else None
    if not data:
        return ""
    return data.decode("utf-16-le", "replace").split("\0", 1)[0]


def _restore(owner: int, saved: list[tuple[int, bytes]]) -> None:
    """Put the saved formats back, owned by our window; a format Windows refuses is left out (debug log)."""
    started = time.monotonic()
    mark = keys.dll("user32").RegisterClipboardFormatW(OWN_MIME)
    with _opened(owner) as user32:
        user32.EmptyClipboard()
        for fmt, data in [*saved, *([(mark, b"restored")] if mark else [])]:
            _put(user32, fmt, data)
    log.debug("clipboard put back (%d formats) in %.0f ms", len(saved), (time.monotonic() - started) * 1000)


def _put(user32: Any, fmt: int, data: bytes) -> None:
    """One format onto the open clipboard, in movable memory the clipboard then owns."""
    kernel32 = keys.dll("kernel32")
    handle = kernel32.GlobalAlloc(GMEM_MOVEABLE, max(1, len(data)))
    pointer = kernel32.GlobalLock(handle) if handle else None
    if not pointer:
        log.debug("no memory to put clipboard format %d back", fmt)
        return
    ctypes.memmove(pointer, data, len(data))
    kernel32.GlobalUnlock(handle)
    if not user32.SetClipboardData(fmt, handle):  # on success the clipboard owns the memory
        kernel32.GlobalFree(handle)
        log.debug("Windows refused clipboard format %d back (error %d)", fmt, keys.last_error())
