"""macOS's general pasteboard through pyobjc (AppKit): its change count, the marker types on a copy,
its text, and saving / putting back what it holds (the selection capture borrows it for a moment).

A background app is not told when the pasteboard changes, and Qt's `dataChanged` does not fire
reliably there, so the clipboard watcher polls `changeCount` (qt/clipboard_watcher.py). Qt also does
not show pasteboard types it has no converter for (org.nspasteboard.ConcealedType and the password
managers' types), so the markers are read here, from the pasteboard itself (core/capture.MAC_MARKERS).

AppKit is imported when a `Pasteboard` is made, so this module imports anywhere (tests use a fake AppKit).
"""

from __future__ import annotations

import threading
from collections import deque
from typing import Any

from ..core.capture import MAC_MARKERS

MARKER_BYTES = 4096  # a marker's data travels with the snapshot; they are a few bytes (core/capture limit)
_own_lock = threading.Lock()
_own_counts: deque[int] = deque(maxlen=64)  # change counts our own writes made (the last 64, newest last)


def mark_own(count: int) -> None:
    """Remember that the pasteboard's change `count` is our own write, not a copy the person made."""
    with _own_lock:
        _own_counts.append(int(count))


def is_own(count: int) -> bool:
    """Whether change `count` was our own write (then the watcher does not capture it)."""
    with _own_lock:
        return int(count) in _own_counts


class Pasteboard:
    """NSPasteboard.generalPasteboard(), asked only for what capture needs."""

    def __init__(self) -> None:
        import AppKit  # pyobjc-framework-Cocoa, macOS only

        self._appkit: Any = AppKit
        self._pb: Any = AppKit.NSPasteboard.generalPasteboard()

    def change_count(self) -> int:
        """Goes up by one with every write to the pasteboard (any app's)."""
        return int(self._pb.changeCount())

    def types(self) -> list[str]:
        """Every type on the pasteboard: its own list (a type declared the old way, with `declareTypes`, is
        only there) and each item's, in order, without repeats."""
        found = [str(t) for t in (self._pb.types() or ())]
        for item in self._pb.pasteboardItems() or ():
            found += [str(t) for t in (item.types() or ())]
        return list(dict.fromkeys(found))

    def markers(self) -> dict[str, bytes]:
        """The secret and transient marker types present (core/capture.MAC_MARKERS), with their data."""
        out: dict[str, bytes] = {}
        for name in self.types():
            if name in MAC_MARKERS:
                data = self._pb.dataForType_(name)
                out[name] = bytes(data)[:MARKER_BYTES] if data is not None else b""
        return out

    def text(self) -> str | None:
        """The plain text on the pasteboard, None when it holds none."""
        value = self._pb.stringForType_(self._appkit.NSPasteboardTypeString)
        return None if value is None else str(value)

    def save(self) -> list[dict[str, Any]]:
        """What the pasteboard holds, item by item ({type: NSData}), to `restore` afterwards."""
        saved: list[dict[str, Any]] = []
        for item in self._pb.pasteboardItems() or ():
            kept: dict[str, Any] = {}
            for name in item.types() or ():
                data = item.dataForType_(name)
                if data is not None:
                    kept[str(name)] = data
            saved.append(kept)
        return saved

    def restore(self, saved: list[dict[str, Any]]) -> int:
        """Put back what `save` returned (an empty pasteboard stays empty); the change count it made,
        remembered as our own so the watcher does not capture it again."""
        self._pb.clearContents()
        items = []
        for kept in saved:
            item = self._appkit.NSPasteboardItem.alloc().init()
            for name, data in kept.items():
                item.setData_forType_(data, name)
            items.append(item)
        if items:
            self._pb.writeObjects_(items)
        count = self.change_count()
        mark_own(count)
        return count
