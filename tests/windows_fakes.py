"""A fake of the user32/kernel32 calls the Windows backends make (unit tests only; see desktop_memory/capture/
keys_windows.py). One object plays both DLLs: it records every call, keeps a clipboard (formats in real
ctypes buffers, so the code under test reads and writes memory as it would on Windows), a keyboard state
that SendInput changes, the hotkeys registered, the windows in front and the processes behind them.
`install(monkeypatch)` puts it where keys_windows looks for its DLLs.
"""

from __future__ import annotations

import ctypes
from collections.abc import Callable
from typing import Any

from desktop_memory.capture import keys_windows as keys

CTRL, SHIFT, ALT, WIN = {0x11, 0xA2, 0xA3}, {0x10, 0xA0, 0xA1}, {0x12, 0xA4, 0xA5}, {0x5B, 0x5C}
CF_UNICODETEXT = 13


def _set_out(ref: Any, value: int) -> None:
    """Write an out-parameter passed as byref(DWORD) or pointer(DWORD)."""
    if ref is None:
        return
    target = getattr(ref, "_obj", None)
    if target is None:
        target = ref.contents
    target.value = value


class FakeWindows:
    def __init__(self) -> None:
        self.calls: list[tuple[str, tuple[Any, ...]]] = []
        self.error = 0
        # hotkeys
        self.hotkeys: dict[int, tuple[int, int]] = {}  # id -> (flags, vk), ours
        self.taken: set[tuple[int, int]] = set()  # (flags without MOD_NOREPEAT, vk) another program holds
        self.layout: dict[str, int] = {}  # VkKeyScanW answers for punctuation
        # keyboard
        self.down: set[int] = set()
        self.events: list[tuple[int, bool]] = []  # (vk, up)
        self.chords: list[str] = []
        self.accept_inputs: int | None = None  # SendInput takes at most this many (None: all)
        self.on_chord: dict[str, Callable[[], None]] = {}
        # windows and processes
        self.foreground = 0x1001
        self.windows: dict[int, dict[str, Any]] = {0x1001: {"title": "notes.txt - Notepad", "pid": 4242, "tid": 77}}
        self.processes: dict[int, str] = {4242: r"C:\Windows\System32\notepad.exe"}
        self.pid, self.tid = 999, 55
        self.refuse_foreground = 0  # SetForegroundWindow fails this many times
        self.attached: list[tuple[int, int, bool]] = []
        self.created_windows: list[int] = []
        # clipboard
        self.clipboard: dict[int, bytes] = {}
        self.names: dict[int, str] = {}
        self.seq = 100
        self.owner: int | None = None
        self.is_open = False
        self.busy_opens = 0  # OpenClipboard fails this many times (another program holds it)
        self.globals: dict[int, Any] = {}
        self._next = 0x9000

    def install(self, monkeypatch: Any) -> FakeWindows:
        monkeypatch.setitem(keys._DLLS, "user32", self)
        monkeypatch.setitem(keys._DLLS, "kernel32", self)
        monkeypatch.setattr(keys, "last_error", lambda: self.error)
        return self

    def _call(self, name: str, *args: Any) -> None:
        self.calls.append((name, args))

    def called(self, name: str) -> list[tuple[Any, ...]]:
        return [a for n, a in self.calls if n == name]

    # -- hotkeys ------------------------------------------------------------------------------
    def RegisterHotKey(self, hwnd, ident, flags, vk):  # noqa: N802 - Windows' names
        self._call("RegisterHotKey", hwnd, ident, flags, vk)
        if (flags & ~0x4000, vk) in self.taken or ident in self.hotkeys:
            self.error = 1409
            return 0
        self.hotkeys[ident] = (flags, vk)
        return 1

    def UnregisterHotKey(self, hwnd, ident):  # noqa: N802
        self._call("UnregisterHotKey", hwnd, ident)
        return 1 if self.hotkeys.pop(ident, None) else 0

    def VkKeyScanW(self, ch):  # noqa: N802
        self._call("VkKeyScanW", ch)
        return self.layout.get(ch, -1)

    # -- keyboard -----------------------------------------------------------------------------
    def GetAsyncKeyState(self, vk):  # noqa: N802
        return -32768 if vk in self.down else 0  # SHORT with the top bit set

    def SendInput(self, count, pointer, size):  # noqa: N802
        self._call("SendInput", count, size)
        assert size == ctypes.sizeof(keys.INPUT)
        address = pointer.value if hasattr(pointer, "value") else pointer
        events = (keys.INPUT * count).from_address(address)
        taken = count if self.accept_inputs is None else min(count, self.accept_inputs)
        for event in list(events)[:taken]:
            assert event.type == keys.INPUT_KEYBOARD
            vk, up = event.ki.wVk, bool(event.ki.dwFlags & keys.KEYEVENTF_KEYUP)
            self.events.append((vk, up))
            if up:
                self.down.discard(vk)
                continue
            if vk not in CTRL | SHIFT | ALT | WIN | {keys.VK_MASK}:
                chord = "+".join(n for n, group in (("ctrl", CTRL), ("shift", SHIFT), ("alt", ALT), ("win", WIN))
                                 if self.down & group) + f"+{chr(vk).lower()}"
                self.chords.append(chord)
                if chord in self.on_chord:
                    self.on_chord[chord]()
            self.down.add(vk)
        return taken

    def PeekMessageW(self, msg_ref, hwnd, first, last, flags):  # noqa: N802
        self._call("PeekMessageW", hwnd, first, last, flags)
        return 0

    # -- windows and processes ----------------------------------------------------------------
    def GetForegroundWindow(self):  # noqa: N802
        return self.foreground or None

    def SetForegroundWindow(self, hwnd):  # noqa: N802
        self._call("SetForegroundWindow", hwnd)
        if self.refuse_foreground > 0:
            self.refuse_foreground -= 1
            return 0
        self.foreground = hwnd
        return 1

    def BringWindowToTop(self, hwnd):  # noqa: N802
        self._call("BringWindowToTop", hwnd)
        return 1

    def IsWindow(self, hwnd):  # noqa: N802
        return 1 if hwnd in self.windows else 0

    def IsIconic(self, hwnd):  # noqa: N802
        return 1 if self.windows.get(hwnd, {}).get("minimised") else 0

    def ShowWindow(self, hwnd, how):  # noqa: N802
        self._call("ShowWindow", hwnd, how)
        self.windows.get(hwnd, {})["minimised"] = False
        return 1

    def AttachThreadInput(self, ours, theirs, attach):  # noqa: N802
        self.attached.append((ours, theirs, bool(attach)))
        return 1

    def GetWindowThreadProcessId(self, hwnd, pid_ref):  # noqa: N802
        info = self.windows.get(hwnd)
        if info is None:
            return 0
        _set_out(pid_ref, info["pid"])
        return info["tid"]

    def GetWindowTextLengthW(self, hwnd):  # noqa: N802
        return len(self.windows.get(hwnd, {}).get("title", ""))

    def GetWindowTextW(self, hwnd, buf, size):  # noqa: N802
        title = self.windows.get(hwnd, {}).get("title", "")[: size - 1]
        buf.value = title
        return len(title)

    def EnumChildWindows(self, hwnd, callback, lparam):  # noqa: N802
        for child in self.windows.get(hwnd, {}).get("children", []):
            if not callback(child, lparam):
                break
        return 1

    def GetCurrentProcessId(self):  # noqa: N802
        return self.pid

    def GetCurrentThreadId(self):  # noqa: N802
        return self.tid

    def OpenProcess(self, access, inherit, pid):  # noqa: N802
        self._call("OpenProcess", access, inherit, pid)
        return 0x7000 + pid if pid in self.processes else None

    def QueryFullProcessImageNameW(self, handle, flags, buf, size_ref):  # noqa: N802
        path = self.processes[handle - 0x7000]
        buf.value = path
        _set_out(size_ref, len(path))
        return 1

    def CloseHandle(self, handle):  # noqa: N802
        self._call("CloseHandle", handle)
        return 1

    def CreateWindowExW(self, *args):  # noqa: N802
        self._call("CreateWindowExW", *args)
        self._next += 1
        self.created_windows.append(self._next)
        return self._next

    def DestroyWindow(self, hwnd):  # noqa: N802
        self._call("DestroyWindow", hwnd)
        self.created_windows.remove(hwnd)
        return 1

    # -- memory -------------------------------------------------------------------------------
    def GlobalAlloc(self, flags, size):  # noqa: N802
        self._next += 1
        self.globals[self._next] = ctypes.create_string_buffer(size)
        return self._next

    def GlobalLock(self, handle):  # noqa: N802
        buf = self.globals.get(handle)
        return ctypes.addressof(buf) if buf is not None and len(buf) else None

    def GlobalUnlock(self, handle):  # noqa: N802
        return 1

    def GlobalSize(self, handle):  # noqa: N802
        return len(self.globals[handle])

    def GlobalFree(self, handle):  # noqa: N802
        self._call("GlobalFree", handle)
        self.globals.pop(handle, None)
        return None

    def _global(self, data: bytes) -> int:
        handle = self.GlobalAlloc(2, len(data))
        ctypes.memmove(self.globals[handle], data, len(data))
        return handle

    # -- clipboard ----------------------------------------------------------------------------
    def copy(self, formats: dict[int | str, bytes]) -> None:
        """Another program puts this on the clipboard (names register formats from 0xC000 on)."""
        self.clipboard = {}
        for key, data in formats.items():
            if isinstance(key, str):
                key = self.register(key)
            self.clipboard[key] = data
        self.seq += 1

    def register(self, name: str) -> int:
        for ident, known in self.names.items():
            if known == name:
                return ident
        ident = 0xC000 + len(self.names)
        self.names[ident] = name
        return ident

    def text(self) -> str | None:
        data = self.clipboard.get(CF_UNICODETEXT)
        return None if data is None else data.decode("utf-16-le").split("\0")[0]

    def GetClipboardSequenceNumber(self):  # noqa: N802
        return self.seq

    def OpenClipboard(self, hwnd):  # noqa: N802
        self._call("OpenClipboard", hwnd)
        if self.busy_opens > 0:
            self.busy_opens -= 1
            return 0
        assert not self.is_open, "the clipboard is opened twice"
        self.is_open, self._opener = True, hwnd
        return 1

    def CloseClipboard(self):  # noqa: N802
        self._call("CloseClipboard")
        assert self.is_open
        self.is_open = False
        return 1

    def EmptyClipboard(self):  # noqa: N802
        self._call("EmptyClipboard")
        assert self.is_open
        self.clipboard = {}
        self.owner = self._opener
        self.seq += 1
        return 1

    def EnumClipboardFormats(self, previous):  # noqa: N802
        assert self.is_open
        order = list(self.clipboard)
        if previous == 0:
            return order[0] if order else 0
        i = order.index(previous) + 1
        return order[i] if i < len(order) else 0

    def IsClipboardFormatAvailable(self, fmt):  # noqa: N802
        return 1 if fmt in self.clipboard else 0

    def GetClipboardData(self, fmt):  # noqa: N802
        assert self.is_open
        data = self.clipboard.get(fmt)
        return None if data is None else self._global(data)

    def SetClipboardData(self, fmt, handle):  # noqa: N802
        self._call("SetClipboardData", fmt, handle)
        assert self.is_open
        if not self.owner:  # opened with hwnd NULL and emptied: Windows refuses
            return None
        buf = self.globals.pop(handle)
        self.clipboard[fmt] = bytes(buf.raw)
        return handle

    def RegisterClipboardFormatW(self, name):  # noqa: N802
        return self.register(name)

    def mine(self) -> dict[int, bytes]:
        """The clipboard without our own mark (what the person had)."""
        return {f: d for f, d in self.clipboard.items() if self.names.get(f) != "application/x-desktop-memory"}

    def GetClipboardFormatNameW(self, fmt, buf, size):  # noqa: N802
        name = self.names.get(fmt, "")[: size - 1]
        buf.value = name
        return len(name)
