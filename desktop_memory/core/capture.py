"""What a copy becomes: the capture decision, made from plain data (no Qt, no I/O).

A front end (the tray app's clipboard watcher, a hotkey) turns what the OS reports into a
`Snapshot`; `decide` answers "store it (maybe redacted or tagged)" or "skip it, because ...".
The reason is shown to the person in "Recent captures"; it never contains the copied text.
"""

from __future__ import annotations

import re
from collections import deque
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

OWN_MIME = "application/x-desktop-memory"  # we put this on every copy we make, and skip it on the way in

# Formats a password manager or the OS sets on a copy that must not be kept (value checked where it matters).
KDE_HINT = "x-kde-passwordManagerHint"
WINDOWS_EXCLUDE = "ExcludeClipboardContentFromMonitorProcessing"
WINDOWS_HISTORY = "CanIncludeInClipboardHistory"
MAC_CONCEALED = "org.nspasteboard.ConcealedType"
MAC_TRANSIENT = "org.nspasteboard.TransientType"
MARKER_FORMATS = (KDE_HINT, WINDOWS_EXCLUDE, WINDOWS_HISTORY, MAC_CONCEALED, MAC_TRANSIENT)

ACTIONS = ("ignore", "redact", "tag")
_QT_WRAPPED = re.compile(r'value="([^"]+)"')
_PLACEHOLDER = re.compile(r"\[REDACTED:[a-z0-9_]+\]")


def format_name(mime: str) -> str:
    """The OS's own name of a clipboard format, also when Qt wraps it as `application/x-qt-...;value="..."`."""
    found = _QT_WRAPPED.search(mime)
    return found.group(1) if found else mime


def concealed_by(formats: Mapping[str, bytes]) -> str | None:
    """Which secret marker the copy carries (None: none); `formats` maps format names to their data."""
    by_name = {format_name(k): v for k, v in formats.items()}
    if by_name.get(KDE_HINT, b"").strip().lower() == b"secret":
        return "password manager"
    if WINDOWS_EXCLUDE in by_name:
        return "password manager"
    history = by_name.get(WINDOWS_HISTORY)
    if history is not None and len(history) >= 4 and int.from_bytes(history[:4], "little") == 0:
        return "password manager"
    if MAC_CONCEALED in by_name:
        return "password manager"
    if MAC_TRANSIENT in by_name:
        return "transient copy"
    return None


@dataclass(frozen=True)
class CaptureRule:
    """Regular expressions on the content, the app and the window title -> ignore, redact or tag.

    Every pattern given must match (search, case-insensitive); a rule with no pattern never matches.
    `redact` replaces what the content pattern matched with `[REDACTED:rule]`; `tag` adds `tag`.
    """

    name: str
    action: str = "ignore"
    content: str = ""
    app: str = ""
    window: str = ""
    tag: str = ""
    enabled: bool = True

    def __post_init__(self) -> None:
        if self.action not in ACTIONS:
            raise ValueError(f"rule {self.name!r}: action must be one of {', '.join(ACTIONS)}")
        if self.action == "redact" and not self.content:
            raise ValueError(f"rule {self.name!r}: redact needs a content pattern")
        if self.action == "tag" and not self.tag.strip():
            raise ValueError(f"rule {self.name!r}: tag needs a tag")
        for label, pattern in (("content", self.content), ("app", self.app), ("window", self.window)):
            try:
                re.compile(pattern)
            except re.error as exc:
                raise ValueError(f"rule {self.name!r}: the {label} pattern is not a valid regular expression: "
                                 f"{exc}") from None

    def matches(self, text: str, app: str, window: str) -> bool:
        pairs = [(p, v) for p, v in ((self.content, text), (self.app, app), (self.window, window)) if p]
        return self.enabled and bool(pairs) and all(re.search(p, v, re.IGNORECASE | re.MULTILINE) for p, v in pairs)

    def to_dict(self) -> dict[str, Any]:
        return {k: v for k, v in self.__dict__.items() if v or k in ("name", "action", "enabled")}

    @classmethod
    def from_dict(cls, raw: Mapping[str, Any]) -> CaptureRule:
        known = {k: raw[k] for k in ("name", "action", "content", "app", "window", "tag", "enabled") if k in raw}
        return cls(**known)


DEFAULT_RULES: tuple[CaptureRule, ...] = (
    CaptureRule("one-time code", content=r"\A\s*(?:\d{4,8}|\d{3,4}[ -]\d{3,4})\s*\Z"),
    CaptureRule("password prompt",
                content=r"\A\s*(?:\[sudo\] )?(?:password|passphrase|pin)(?: for [^\n:]{1,64})?:\s*\Z"),
    CaptureRule("password manager app",
                app=r"keepass|1password|bitwarden|lastpass|enpass|dashlane|keeper|proton ?pass|seahorse"),
    CaptureRule("private browsing window", window=r"private browsing|incognito"),
)


def rules_from(raw: Iterable[Mapping[str, Any]]) -> list[CaptureRule]:
    """Rules from settings data; a broken rule raises ValueError naming it (the settings window shows it)."""
    return [CaptureRule.from_dict(r) for r in raw]


@dataclass(frozen=True)
class Snapshot:
    """One copy as the OS reported it. `text` is None when the copy has no text (an image, files)."""

    text: str | None
    formats: Mapping[str, bytes] = field(default_factory=dict)
    app: str = ""
    window: str = ""
    kind: str = "text"  # what it is when not text: "image", "files", ...


@dataclass(frozen=True)
class CaptureLimits:
    min_chars: int = 3
    max_chars: int = 200_000


@dataclass(frozen=True)
class Decision:
    store: bool
    reason: str  # shown to the person; never any of the copied text
    text: str = ""
    tags: tuple[str, ...] = ()
    rule: str = ""


def decide(
    snap: Snapshot,
    *,
    rules: Sequence[CaptureRule] = DEFAULT_RULES,
    limits: CaptureLimits = CaptureLimits(),
    paused: bool = False,
    enabled: bool = True,
    blocked: str = "",
) -> Decision:
    """Store or skip one copy, with the reason. Order: blocked, off/paused, our own copy, secret markers,
    not text, size limits, then the rules in order (the first `ignore` wins; every `redact` and `tag` applies).

    `blocked` (the reason) stops every capture, explicit ones too: the person's rules cannot be read.
    """
    if blocked:
        return Decision(False, blocked)
    if not enabled:
        return Decision(False, "capture is off")
    if paused:
        return Decision(False, "paused")
    names = {format_name(k) for k in snap.formats}
    if OWN_MIME in names:
        return Decision(False, "our own copy")
    marker = concealed_by(snap.formats)
    if marker:
        return Decision(False, marker)
    if snap.text is None:
        return Decision(False, f"not text ({snap.kind}): only text is captured for now")
    text = snap.text
    size = len(text.strip())
    if size < limits.min_chars:
        return Decision(False, "too short")
    if size > limits.max_chars:
        return Decision(False, "too long")
    tags: list[str] = []
    applied: list[str] = []
    for rule in rules:
        if not rule.matches(text, snap.app, snap.window):
            continue
        if rule.action == "ignore":
            return Decision(False, f"rule: {rule.name}", rule=rule.name)
        if rule.action == "redact":
            text = re.sub(rule.content, f"[REDACTED:{_slug(rule.name)}]", text, flags=re.IGNORECASE | re.MULTILINE)
        else:
            tags.append(rule.tag.strip().lstrip("#").lower())
        applied.append(rule.name)
    if len(_PLACEHOLDER.sub("", text).strip()) < limits.min_chars:
        return Decision(False, "nothing left after redaction")
    reason = "saved" + (f" (rules: {', '.join(applied)})" if applied else "")
    return Decision(True, reason, text, tuple(dict.fromkeys(tags)))


def _slug(name: str) -> str:
    return re.sub(r"[^a-z0-9]+", "_", name.lower()).strip("_") or "rule"


@dataclass(frozen=True)
class CaptureEvent:
    """One line of "Recent captures": what happened and why, never the skipped text."""

    at: float
    stored: bool
    reason: str
    source: str = "clipboard"
    app: str = ""
    memory_id: str = ""
    title: str = ""  # the stored memory's title (stored ones only)


class RecentCaptures:
    """The last few capture decisions, newest first."""

    def __init__(self, size: int = 50) -> None:
        self._events: deque[CaptureEvent] = deque(maxlen=size)

    def add(self, event: CaptureEvent) -> None:
        if not event.stored and (event.title or event.memory_id):
            raise ValueError("a skipped capture keeps no title or id")
        self._events.appendleft(event)

    def __iter__(self) -> Iterator[CaptureEvent]:
        return iter(list(self._events))

    def __len__(self) -> int:
        return len(self._events)
