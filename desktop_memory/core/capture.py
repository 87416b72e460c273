"""What a copy becomes: the capture decision, made from plain data (no Qt, no I/O).

A front end (the tray app's clipboard watcher, a hotkey, the CLI) turns what the OS reports into a
`Snapshot` and sends it to the engine once (`MemoryService.capture`); there `judge` answers "store it
(maybe redacted or tagged)" or "skip it, because ...", and the answer travels back as a
`CaptureResult`. The reason is shown to the person in "Recent captures"; it never contains the copied text.
"""

from __future__ import annotations

import base64
import re
from collections import deque
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from .text import normalise_tag

OWN_MIME = "application/x-desktop-memory"  # we put this on every copy we make, and skip it on the way in

# Formats a password manager or the OS sets on a copy that must not be kept (value checked where it matters).
KDE_HINT = "x-kde-passwordManagerHint"
WINDOWS_EXCLUDE = "ExcludeClipboardContentFromMonitorProcessing"
WINDOWS_HISTORY = "CanIncludeInClipboardHistory"  # a DWORD: 0 = keep out of Win+V history
WINDOWS_CLOUD = "CanUploadToCloudClipboard"  # a DWORD: 0 = do not sync to other devices
WINDOWS_VIEWER_IGNORE = "Clipboard Viewer Ignore"  # present: clipboard managers leave the copy alone
WINDOWS_MARKERS = (WINDOWS_EXCLUDE, WINDOWS_VIEWER_IGNORE, WINDOWS_HISTORY, WINDOWS_CLOUD)
MAC_CONCEALED = "org.nspasteboard.ConcealedType"
MAC_TRANSIENT = "org.nspasteboard.TransientType"
MARKER_FORMATS = (KDE_HINT, *WINDOWS_MARKERS, MAC_CONCEALED, MAC_TRANSIENT)

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
    if WINDOWS_EXCLUDE in by_name or WINDOWS_VIEWER_IGNORE in by_name:
        return "password manager"
    for name in (WINDOWS_HISTORY, WINDOWS_CLOUD):  # only a DWORD 0 says no (no data, or 1: a plain copy)
        value = by_name.get(name, b"")
        if len(value) >= 4 and int.from_bytes(value[:4], "little") == 0:
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


def build_rules(*, disabled_defaults: Iterable[str] = (), rules: Iterable[Mapping[str, Any]] = (),
                ignore_patterns: Iterable[str] = (), ignore_apps: Iterable[str] = ()) -> list[CaptureRule]:
    """The built-in rules still on, the person's rules, then the simple ignore lists (settings' fields).

    A broken rule raises ValueError naming it (capture then stores nothing: no rule is dropped silently).
    """
    off = set(disabled_defaults)
    mine = rules_from(rules)
    mine += [CaptureRule(f"ignore text {n}", content=p) for n, p in enumerate(ignore_patterns, 1)]
    mine += [CaptureRule(f"ignore app {a}", app=re.escape(a)) for a in ignore_apps if a]
    return [*(r for r in DEFAULT_RULES if r.name not in off), *mine]


CAPTURE_SOURCES = ("clipboard", "hotkey", "cli", "mcp")
_MAX_FORMATS, _MAX_FORMAT_BYTES = 16, 4096  # only marker formats travel; they are a few bytes each


@dataclass(frozen=True)
class Snapshot:
    """One copy as the OS reported it, and how it was taken. `text` is None when it has no text (an image).

    `formats` holds only the marker formats (secret markers, our own MIME type) with their data.
    `automatic`: the clipboard watcher saw it (stopped by pause and capture being off); else an explicit
    request (Capture clipboard now, a hotkey, the CLI). `paused`: the app's pause was on when it was taken.
    """

    text: str | None
    formats: Mapping[str, bytes] = field(default_factory=dict)
    app: str = ""
    window: str = ""
    kind: str = "text"  # what it is when not text: "image", "files", ...
    source: str = "clipboard"  # the memory's source: clipboard, hotkey (the selection), cli, mcp
    automatic: bool = False
    paused: bool = False

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON data (format data in base64)."""
        return {"text": self.text, "formats": {k: base64.b64encode(v).decode("ascii") for k, v in self.formats.items()},
                "app": self.app, "window": self.window, "kind": self.kind, "source": self.source,
                "automatic": self.automatic, "paused": self.paused}

    @classmethod
    def from_dict(cls, raw: Any) -> Snapshot:
        """Checked like any input from outside: ValueError (one line) on a wrong type or size."""
        if not isinstance(raw, Mapping):
            raise ValueError("a snapshot must be an object")
        text = raw.get("text")
        formats = raw.get("formats", {})
        if text is not None and not isinstance(text, str):
            raise ValueError("snapshot text must be a string or null")
        if formats is None:
            formats = {}
        if not isinstance(formats, Mapping) or len(formats) > _MAX_FORMATS:
            raise ValueError(f"snapshot formats must be an object of at most {_MAX_FORMATS} marker formats")
        fields = {k: raw.get(k, d) for k, d in (("app", ""), ("window", ""), ("kind", "text"), ("source", "clipboard"))}
        flags = {k: raw.get(k, False) for k in ("automatic", "paused")}
        if not all(isinstance(v, str) for v in fields.values()) or not all(isinstance(v, bool) for v in flags.values()):
            raise ValueError("snapshot app, window, kind and source must be strings; automatic and paused true/false")
        if fields["source"] not in CAPTURE_SOURCES:
            raise ValueError(f"snapshot source must be one of {', '.join(CAPTURE_SOURCES)}")
        return cls(text, _decoded(formats), app=fields["app"][:200], window=fields["window"][:500],
                   kind=fields["kind"][:40], source=fields["source"], **flags)


def _decoded(formats: Mapping[Any, Any]) -> dict[str, bytes]:
    out: dict[str, bytes] = {}
    for name, data in formats.items():
        if not isinstance(name, str) or not isinstance(data, str) or len(data) > _MAX_FORMAT_BYTES:
            raise ValueError("snapshot formats must map names to short base64 strings")
        try:
            out[name[:200]] = base64.b64decode(data, validate=True)
        except ValueError:
            raise ValueError("snapshot format data must be base64") from None
    return out


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
            tags.append(normalise_tag(rule.tag))
        applied.append(rule.name)
    if len(_PLACEHOLDER.sub("", text).strip()) < limits.min_chars:
        return Decision(False, "nothing left after redaction")
    reason = "saved" + (f" (rules: {', '.join(applied)})" if applied else "")
    return Decision(True, reason, text, tuple(dict.fromkeys(tags)))


def _slug(name: str) -> str:
    return re.sub(r"[^a-z0-9]+", "_", name.lower()).strip("_") or "rule"


EMPTY = "empty"
SETTINGS_DAMAGED = "settings.json is damaged: fix it or save Settings again"
LOOKS_LIKE_PASSWORD = "looks like a password"
_WORD = re.compile(r"\w+")


def judge(snap: Snapshot, *, rules: Sequence[CaptureRule], limits: CaptureLimits = CaptureLimits(),
          capture_enabled: bool = True, settings_problem: str | None = None) -> Decision:
    """The engine's decision on one snapshot: `decide`, gated by pause and capture being off only when
    the watcher took it (explicit requests are not), and stopped by damaged settings whoever asked."""
    if snap.text is not None and not snap.text.strip():
        return Decision(False, EMPTY)
    gate = {"paused": snap.paused, "enabled": capture_enabled} if snap.automatic else {}
    return decide(snap, rules=rules, limits=limits, blocked=SETTINGS_DAMAGED if settings_problem else "", **gate)


def looks_like_password(redacted: str, redactions: int) -> bool:
    """Whether redacted text is little but a secret (maybe with a label): fewer than 3 words beside placeholders."""
    return redactions > 0 and len(_WORD.findall(_PLACEHOLDER.sub(" ", redacted))) < 3


_SAVED = {"added": "Saved", "duplicate": "Already remembered", "related": "Saved (next to a similar memory)",
          "extended": "Saved (extends the previous copy; the earlier text is kept)"}


@dataclass(frozen=True)
class CaptureResult:
    """What the engine answers for one snapshot: saved or skipped, and why; never any of the copied text.

    `message` is the notice to show; `status` is how it was stored (added, duplicate, related, extended)
    or "skipped"; `title` is the stored memory's title (stored ones only).
    """

    stored: bool
    reason: str
    message: str
    status: str = "skipped"
    memory_id: str = ""
    title: str = ""
    redactions: int = 0

    @classmethod
    def skipped(cls, reason: str) -> CaptureResult:
        if reason == EMPTY:
            return cls(False, reason, "Nothing saved: the clipboard holds no text")
        return cls(False, reason, f"Skipped: {reason}")

    @classmethod
    def saved(cls, status: str, memory_id: str, title: str, redactions: int) -> CaptureResult:
        note = f" ({redactions} secret(s) redacted)" if redactions else ""
        message = _SAVED.get(status, "Saved") + note
        return cls(True, message.lower(), message, status, memory_id, title, redactions)

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)

    @classmethod
    def from_dict(cls, raw: Mapping[str, Any]) -> CaptureResult:
        return cls(**{k: raw[k] for k in ("stored", "reason", "message", "status", "memory_id", "title",
                                          "redactions") if k in raw})

    def event(self, at: float, *, source: str = "clipboard", app: str = "") -> CaptureEvent:
        """The line of "Recent captures" it becomes."""
        if not self.stored:
            return CaptureEvent(at, False, self.reason, source=source, app=app)
        return CaptureEvent(at, True, self.reason, source=source, app=app, memory_id=self.memory_id, title=self.title)


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
