"""Store a copy through the capture decision of core/capture.py: "Capture clipboard now" and the watcher.

`snapshot` runs on the GUI thread (it reads the clipboard); `capture` runs on the engine thread. What it
returns is for a notification and for "Recent captures", so it never quotes the text.
"""

from __future__ import annotations

import re
import time

from PySide6.QtCore import QMimeData

from ..core.capture import (
    DEFAULT_RULES,
    MARKER_FORMATS,
    OWN_MIME,
    CaptureEvent,
    CaptureRule,
    Snapshot,
    decide,
    rules_from,
)
from ..core.redact import redact
from ..core.text import first_line
from ..engine.settings import Settings
from ..service import MemoryService

_PLACEHOLDER = re.compile(r"\[REDACTED:[a-z0-9_]+\]")
_WORD = re.compile(r"\w+")


def snapshot(mime: QMimeData | None, app: str = "", window: str = "") -> Snapshot:
    """What the clipboard holds: its text and only the formats that mark secrets (or our own copies)."""
    if mime is None:
        return Snapshot(None, kind="empty")
    wanted = (*MARKER_FORMATS, OWN_MIME)
    formats = {f: bytes(mime.data(f).data()) for f in mime.formats() if any(w in f for w in wanted)}
    text = mime.text() if mime.hasText() else None
    return Snapshot(text, formats, app=app, window=window, kind="text" if text is not None else "image or files")


SETTINGS_DAMAGED = "settings.json is damaged: fix it or save Settings again"


def settings_notice(settings: Settings) -> str | None:
    """What the app should tell the person once when settings.json could not be used (None: all well)."""
    return settings.problem


def rules(settings: Settings) -> list[CaptureRule]:
    """The built-in rules still on, the person's rules, and the simple ignore lists from Settings.

    A broken rule raises ValueError naming it (capture then stores nothing: no rule is dropped silently).
    """
    defaults = [r for r in DEFAULT_RULES if r.name not in settings.capture_disabled_defaults]
    mine = rules_from(settings.capture_rules)
    mine += [CaptureRule(f"ignore text {n}", content=p) for n, p in enumerate(settings.capture_ignore_patterns, 1)]
    mine += [CaptureRule(f"ignore app {a}", app=re.escape(a)) for a in settings.capture_ignore_apps if a]
    return [*defaults, *mine]


def capture(service: MemoryService, snap: Snapshot, *, automatic: bool = False, paused: bool = False,
            source: str = "clipboard") -> tuple[str, CaptureEvent]:
    """Remember the copy's text; (notification text, Recent-captures event). Neither quotes the copy.

    An explicit request ("Capture clipboard now", a hotkey) is not stopped by capture being off or
    paused; the watcher's automatic captures are.
    """
    def skipped(reason: str) -> tuple[str, CaptureEvent]:
        return f"Skipped: {reason}", CaptureEvent(time.time(), False, reason, app=snap.app)

    if snap.text is not None and not snap.text.strip():
        return "Nothing saved: the clipboard holds no text", CaptureEvent(time.time(), False, "empty", app=snap.app)
    settings = service.settings  # one read (a call to the engine host when it runs in its own process)
    gate = {"paused": paused, "enabled": settings.capture_enabled} if automatic else {}
    # unreadable settings stop every capture, explicit ones too: they would run without the person's rules
    blocked = SETTINGS_DAMAGED if settings.problem else ""
    try:
        decision = decide(snap, rules=rules(settings), blocked=blocked, **gate)
    except (TypeError, ValueError) as exc:  # a broken rule: without it the copy could be kept unredacted
        return skipped(f"a capture rule is broken ({str(exc)[:120]}): fix it in Settings")
    if not decision.store:
        return skipped(decision.reason)
    red = redact(decision.text)
    if red.total and len(_WORD.findall(_PLACEHOLDER.sub(" ", red.text))) < 3:  # a secret, maybe with a label
        return skipped("looks like a password")
    meta = {"window": snap.window} if snap.window else {}
    result = service.add(decision.text, source=source, source_app=snap.app, tags=decision.tags, metadata=meta)
    note = f" ({sum(result.redactions.values())} secret(s) redacted)" if result.redactions else ""
    message = {"added": "Saved", "duplicate": "Already remembered", "related": "Saved (next to a similar memory)",
               "extended": "Saved (extends the previous copy; the earlier text is kept)"}[result.status] + note
    m = result.memory
    return message, CaptureEvent(time.time(), True, message.lower(), source=source, app=snap.app, memory_id=m.id,
                                 title=m.title or first_line(m.content, 60))
