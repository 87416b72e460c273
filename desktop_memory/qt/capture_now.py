"""The app's side of a capture: "Capture clipboard now", the hotkeys and the watcher.

`snapshot` runs on the GUI thread (it reads the clipboard) and turns what it holds into plain data, with the
time of the copy (the memory's time, also when the engine gets it only after a restart or the person's Retry);
`capture` runs on the engine lane and sends it once (`service.capture`): the engine applies the markers,
rules, size limits and redaction (service/capture.py) and answers saved or skipped with the reason. What
it returns is for a notification and for "Recent captures", so it never quotes the text.
"""

from __future__ import annotations

import logging
import sys
import time
from dataclasses import replace

from PySide6.QtCore import QMimeData

from ..core.capture import MARKER_FORMATS, OWN_MIME, CaptureEvent, Snapshot
from ..engine.settings import Settings
from ..service.protocol import MemoryOperations

log = logging.getLogger(__name__)


def snapshot(mime: QMimeData | None, app: str = "", window: str = "") -> Snapshot:
    """What the clipboard holds: its text and only the formats that mark secrets (or our own copies)."""
    if mime is None:
        return Snapshot(None, kind="empty", at=time.time())
    wanted = (*MARKER_FORMATS, OWN_MIME)
    formats = {f: bytes(mime.data(f).data()) for f in mime.formats() if any(w in f for w in wanted)}
    if sys.platform == "darwin":  # Qt hides pasteboard types it has no converter for: ask the pasteboard
        formats.update(_pasteboard_markers())
    text = mime.text() if mime.hasText() else None
    return Snapshot(text, formats, app=app, window=window, kind="text" if text is not None else "image or files",
                    at=time.time())


def _pasteboard_markers() -> dict[str, bytes]:
    """macOS: the secret and transient marker types on the pasteboard (capture/pasteboard_macos.py)."""
    try:
        from ..capture.pasteboard_macos import Pasteboard

        return Pasteboard().markers()
    except Exception:  # noqa: BLE001 - pyobjc missing or broken: Qt's formats only (said in the log)
        log.warning("cannot read the pasteboard's marker types (pyobjc missing?)")
        return {}


def settings_notice(settings: Settings) -> str | None:
    """What the app should tell the person once when settings.json could not be used (None: all well)."""
    return settings.problem


def capture(service: MemoryOperations, snap: Snapshot, *, automatic: bool = False, paused: bool = False,
            source: str = "clipboard") -> tuple[str, CaptureEvent]:
    """Send the copy to the engine once; (notification text, Recent-captures event). Neither quotes the copy.

    An explicit request ("Capture clipboard now", a hotkey) is not stopped by capture being off or
    paused; the watcher's automatic captures are (the engine decides, from `automatic` and `paused`).
    """
    sent = replace(snap, source=source, automatic=automatic, paused=paused)
    result = service.capture(sent)
    return result.message, result.event(time.time(), source=source, app=snap.app)
