"""'Capture clipboard now': store the clipboard's text through the capture decision of core/capture.py.

`snapshot` runs on the GUI thread (it reads the clipboard); `capture` runs on the engine thread. The
message it returns is for a notification, so it never quotes the text.
"""

from __future__ import annotations

import re

from PySide6.QtCore import QMimeData

from ..core.capture import DEFAULT_RULES, MARKER_FORMATS, OWN_MIME, CaptureRule, Snapshot, decide
from ..core.redact import redact
from ..engine.settings import Settings
from ..service import MemoryService

_PLACEHOLDER = re.compile(r"\[REDACTED:[a-z0-9_]+\]")
_WORD = re.compile(r"\w+")


def snapshot(mime: QMimeData | None, app: str = "") -> Snapshot:
    """What the clipboard holds: its text and only the formats that mark secrets (or our own copies)."""
    if mime is None:
        return Snapshot(None, kind="empty")
    wanted = (*MARKER_FORMATS, OWN_MIME)
    formats = {f: bytes(mime.data(f).data()) for f in mime.formats() if any(w in f for w in wanted)}
    text = mime.text() if mime.hasText() else None
    return Snapshot(text, formats, app=app, kind="text" if text is not None else "image or files")


def rules(settings: Settings) -> list[CaptureRule]:
    """The default rules plus the person's ignore rules from Settings."""
    mine = [CaptureRule(f"ignore text {n}", content=p) for n, p in enumerate(settings.capture_ignore_patterns, 1)]
    mine += [CaptureRule(f"ignore app {a}", app=re.escape(a)) for a in settings.capture_ignore_apps if a]
    return [*DEFAULT_RULES, *mine]


def capture(service: MemoryService, snap: Snapshot) -> str:
    """Remember the clipboard's text (an explicit request: capture being off or paused does not stop it)."""
    if snap.text is not None and not snap.text.strip():
        return "Nothing saved: the clipboard holds no text"
    try:
        decision = decide(snap, rules=rules(service.settings))
    except ValueError:  # a broken rule in settings.json never blocks an explicit capture
        decision = decide(snap)
    if not decision.store:
        return f"Skipped: {decision.reason}"
    red = redact(decision.text)
    if red.total and len(_WORD.findall(_PLACEHOLDER.sub(" ", red.text))) < 3:  # a secret, maybe with a label
        return "Skipped: looks like a password"
    result = service.add(decision.text, source="clipboard", source_app=snap.app, tags=decision.tags)
    note = f" ({sum(result.redactions.values())} secret(s) redacted)" if result.redactions else ""
    return {"added": "Saved", "duplicate": "Already remembered", "merged": "Saved (updated a similar memory)"}[
        result.status] + note
