"""Capture in the engine: a copy arrives as plain data (`core.capture.Snapshot`) and is saved or skipped here.

The front end (the tray app's watcher and hotkeys, `desktop-memory capture`, MCP) sends the snapshot once;
this component reads the settings where they live, applies the secret markers, the rules, the size limits
(core/capture.py `judge`), redacts once (the ingest path's own redaction, whose result also tells a copy
that is little but a password) and stores it. The answer is a `CaptureResult`: saved or skipped with the
reason, never any of the copied text. Nothing here is logged above debug.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import Any

from ..core.capture import (
    LOOKS_LIKE_PASSWORD,
    CaptureResult,
    CaptureRule,
    Snapshot,
    build_rules,
    copied_at,
    judge,
    looks_like_password,
)
from ..core.errors import InvalidInput
from ..core.models import Memory
from ..core.text import first_line
from ..engine.settings import Settings

log = logging.getLogger(__name__)

Prepare = Callable[..., tuple[Memory, dict[str, int]]]  # text + fields -> (redacted memory, redaction counts)
Store = Callable[[Memory, dict[str, int]], Any]  # -> AddResult (memory, status, redactions)


def rules_of(settings: Settings) -> list[CaptureRule]:
    """The capture rules in force (ValueError naming a broken rule)."""
    return build_rules(disabled_defaults=settings.capture_disabled_defaults, rules=settings.capture_rules,
                       ignore_patterns=settings.capture_ignore_patterns, ignore_apps=settings.capture_ignore_apps)


def capture(snap: Snapshot, settings: Settings, prepare: Prepare, store: Store,
            fields: dict[str, Any] | None = None) -> CaptureResult:
    """Decide on one snapshot and store it when it passes; the answer says which and why. `fields`: what the
    memory carries instead of the copy's own (the browser's captures: source, title, URL, metadata, time)."""
    try:
        rules = rules_of(settings)
    except (TypeError, ValueError) as exc:  # a broken rule: without it the copy could be kept unredacted
        return CaptureResult.skipped(f"a capture rule is broken ({str(exc)[:120]}): fix it in Settings")
    decision = judge(snap, rules=rules, capture_enabled=settings.capture_enabled, settings_problem=settings.problem)
    if not decision.store:
        log.debug("capture skipped: %s", decision.reason)
        return CaptureResult.skipped(decision.reason)
    given = {"source": snap.source, "source_app": snap.app, "metadata": {"window": snap.window} if snap.window else {},
             "created_at": copied_at(snap.at, time.time()), **(fields or {})}
    try:
        memory, counts = prepare(decision.text, tags=decision.tags, **given)
    except InvalidInput as exc:  # longer than the folder's size limit, a field out of range
        return CaptureResult.skipped(" ".join(str(exc).split())[:200])
    if looks_like_password(memory.content, sum(counts.values())):
        return CaptureResult.skipped(LOOKS_LIKE_PASSWORD)
    result = store(memory, counts)
    m = result.memory
    return CaptureResult.saved(result.status, m.id, m.title or first_line(m.content, 60),
                               sum(result.redactions.values()))
