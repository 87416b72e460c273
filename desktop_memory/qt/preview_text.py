"""What the preview says about a memory, in words for people: when, where from, a summary that is one, and
the details (ids, importance, raw metadata) kept for the disclosure.

Plain Python (no Qt), so it is easy to test."""

from __future__ import annotations

import json
import re
import time
from dataclasses import dataclass
from typing import Any

from ..core.headline import cut
from ..core.models import Memory, local, readable
from . import display

SCAN_CHARS = 20_000  # of a memory's text, what its kind, title and summary are checked against (as a row does)
MAX_RUN = 24  # characters of a word shown without a place to break it (a zero-width space is put there)
_RUN = re.compile(rf"\S{{{MAX_RUN + 1},}}")
ZWSP = "\u200b"
SOURCE_NAMES = {"clipboard": "Clipboard", "hotkey": "Captured with the hotkey", "manual": "Added by hand",
                "cli": "Command line", "import": "Import", "mcp": "AI assistant (MCP)", "chat": "Chat",
                "app": "App"}
_DOCSTRING = re.compile(r"(\"\"\"|''')(.*?)(?:\1|\Z)", re.DOTALL)
_COMMENT = re.compile(r"^\s*(?:#(?![!\w])|//+|/\*+|\*(?!/)|--(?=\s)|;+(?=\s))\s*(.*?)\s*(?:\*/)?\s*$")
_PROSE = re.compile(r"[^\W\d_]{2,}")


def local_time(ts: float | None) -> str:
    """A moment in the person's own time zone: 'Tue 24 Nov 2026, 06:05 CET' (never UTC unless they live there)."""
    if not ts:
        return ""
    at = local(ts)
    return f"{at.strftime('%a')} {at.day} {at.strftime('%b %Y, %H:%M')} {at.tzname() or ''}".rstrip()


def when(ts: float, now: float | None = None) -> tuple[str, str]:
    """When something happened, relative and absolute, in local time: ('Yesterday 14:02', '4 Mar 2026'),
    ('5 min ago', '5 Mar 2026, 16:25'), ('3 weeks ago', '12 Feb 2026, 09:00'); a time in the future (a clock
    set wrong) has no relative part."""
    ts = readable(ts)
    now = readable(time.time() if now is None else now)
    at, today = local(ts), local(now)
    clock = at.strftime("%H:%M")
    date = f"{at.day} {at.strftime('%b %Y')}"
    seconds = now - ts
    days = (today.date() - at.date()).days
    if seconds < -60 or days < 0:
        return "", f"{date}, {clock}"
    if seconds < 60:
        return "Just now", f"{date}, {clock}"
    if seconds < 3600:
        return f"{int(seconds // 60)} min ago", f"{date}, {clock}"
    if days == 0:
        return f"Today {clock}", date
    if days == 1:
        return f"Yesterday {clock}", date
    if days < 7:
        return f"{at.strftime('%A')} {clock}", date
    for size, unit in ((365, "year"), (30, "month"), (7, "week")):
        if days >= size:
            n = days // size
            return f"{n} {unit}{'s' if n != 1 else ''} ago", f"{date}, {clock}"
    return "", f"{date}, {clock}"  # not reached: days >= 7 here


def one_line(value: object) -> str:
    return " ".join(str(value).split())


def app_name(app: str) -> str:
    """An application as people name it: 'firefox' -> 'Firefox' (a name with capitals stays as written)."""
    app = one_line(app)
    return app[:1].upper() + app[1:] if app.islower() else app


def source_line(m: Memory) -> str:
    """Where a memory comes from: 'Clipboard · Firefox', 'Import · ChatGPT', 'Added by hand'."""
    source = SOURCE_NAMES.get(m.source, one_line(m.source).capitalize() or "Added by hand")
    return " · ".join(part for part in (source, app_name(m.source_app)) if part)


@dataclass(frozen=True)
class Origin:
    """Where a memory was copied or imported: the window's title, the page's address, the imported file."""

    window: str = ""
    url: str = ""
    file: str = ""


def _text(value: Any) -> str:
    return one_line(value) if isinstance(value, str) else ""


def origin(m: Memory) -> Origin:
    meta = m.metadata if isinstance(m.metadata, dict) else {}
    url = one_line(m.source_url) or _text(meta.get("url"))
    return Origin(window=_text(meta.get("window")), url=url, file=_text(meta.get("path") or meta.get("file")))


def is_web_link(url: str) -> bool:
    return re.match(r"(?i)^(https?://|mailto:)\S+$", url) is not None


def code_summary(text: str) -> str:
    """The first line of a piece of code's docstring or first comment, when it is prose; else ""."""
    head = "\n".join(text.splitlines()[:40])
    doc = _DOCSTRING.search(head)
    candidates = []
    if doc:
        candidates.append(next((ln.strip() for ln in doc.group(2).splitlines() if ln.strip()), ""))
    candidates += [c.group(1) for ln in head.splitlines() if (c := _COMMENT.match(ln))]
    for line in candidates:
        if len(_PROSE.findall(line)) >= 2:
            return cut(line, 160)
    return ""


def summary(m: Memory, code: bool) -> str:
    """A summary worth showing above the text: for code only its docstring's or comment's first line; for
    other texts the grounded summary (display.summary_of) unless it is the text itself, its opening or the
    title again."""
    if code:
        return code_summary(m.content)
    text = display.summary_of(m)
    flat = one_line(text).rstrip("…").rstrip()
    content = one_line(m.content)
    if not flat or content.startswith(flat) or len(flat) >= 0.9 * len(content):
        return ""
    if flat.casefold() == one_line(display.title_of(m)).rstrip("…").rstrip().casefold():
        return ""
    return text.strip()


def breakable(text: str, run: int = MAX_RUN) -> str:
    """The text with a zero-width space every `run` characters of a longer unbroken word (a URL, a hash), so a
    word-wrapped label can wrap it instead of growing wider."""
    if len(text) <= run:
        return text
    return _RUN.sub(lambda m: ZWSP.join(m.group(0)[i:i + run] for i in range(0, len(m.group(0)), run)), text)


def chip_texts(m: Memory, limit: int = 14) -> tuple[list[str], list[tuple[str, str]], int]:
    """The tags ('#work') and entities ((text, type)) shown as chips, each once, at most `limit` in all, and how
    many more there are."""
    tags = [f"#{t}" for t in dict.fromkeys(one_line(t) for t in m.tags) if t]
    seen: set[str] = {t[1:].casefold() for t in tags}
    entities = []
    for e in m.entities:
        name = one_line(e.get("text") or e.get("name") or "") if isinstance(e, dict) else one_line(e)
        if name and name.casefold() not in seen:
            seen.add(name.casefold())
            entities.append((name, one_line(e.get("type") or "") if isinstance(e, dict) else ""))
    total = len(tags) + len(entities)
    tags = tags[:limit]
    entities = entities[: max(0, limit - len(tags))]
    return tags, entities, total - len(tags) - len(entities)


def details(m: Memory) -> list[tuple[str, str]]:
    """What the disclosure shows: ids, importance, the times with their zone, and the raw metadata."""
    rows = [("Id", m.id), ("Importance", f"{m.importance:.2f}" + (" · pinned" if m.pinned else "")),
            ("Created", local_time(m.created_at))]
    if m.updated_at and m.updated_at - m.created_at > 60:
        rows.append(("Changed", local_time(m.updated_at)))
    if m.accessed_at:
        used = f" · used {m.access_count} time{'s' if m.access_count != 1 else ''}" if m.access_count else ""
        rows.append(("Last used", local_time(m.accessed_at) + used))
    rows.append(("Source", display.origin(m)))
    if m.source_url:
        rows.append(("URL", m.source_url))
    rows.append(("Enrichment", m.enrichment_state))
    if m.redactions:
        rows.append(("Redactions", str(m.redactions)))
    if m.family_id:
        rows.append(("Family", m.family_id))
    if m.session_id:
        rows.append(("Session", m.session_id))
    if m.metadata:
        raw = json.dumps(m.metadata, ensure_ascii=False, indent=2, default=str)
        rows.append(("Metadata", raw if len(raw) <= 2000 else raw[:2000] + "\n…"))
    return rows
