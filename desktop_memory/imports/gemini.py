"""Google Takeout's "My Activity" for Gemini Apps: `My Activity/Gemini Apps/MyActivity.json` (the path is
localized, e.g. "Meine Aktivitäten/Gemini-Apps/MeineAktivitäten.json"), bare or in the Takeout zip.

The file is a JSON array of activity records, newest first: `header` ("Gemini Apps"), `title` ("Prompted <the
prompt>"), `time` (ISO 8601, UTC), `products`, `safeHtmlItem` (the answer as HTML: [{"html": ...}]), `subtitles`,
`attachedFiles`, `imageFile` and, in newer exports, `details` with the conversation's link
(https://gemini.google.com/app/<id>).

One Item per prompt: "You: <prompt>\n\nGemini: <answer as text>". The answer's HTML becomes readable text with
the standard library (paragraphs, lists, tables and code blocks kept; tags and entities gone). A record with
several answers (Takeout writes one per regenerated draft) keeps the first in the content and the others as
`versions`.

Sessions: a record whose `details` link names one conversation belongs to it ("gemini:<id>"). The others have no
conversation id: records less than SESSION_GAP apart make one session, named after its earliest record's time
("gemini:2025-06-01T17:45:00Z"); its records come out oldest first. The external id is the record's time (to the
millisecond) and a hash of its title, so a newer export, where every record moved, finds the same ids.

Skipped silently: activity that is no prompt ("Used Gemini Apps", "Gave feedback: ...", "Selected preferred
draft", "Created ..." canvases) and records of other products. A malformed record (not an object, no title, no
time or one that is not a time, an answer that is not a list of {"html": ...}) is a Problem.

Not read: Takeout's HTML form of My Activity (the default there), which is one Problem saying to export JSON.
Only the English "Prompted " prefix is known; a title in another language, when it has an answer, is the prompt
whole.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import html
import re
import unicodedata
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path, PurePosixPath
from typing import Any

from ..core.text import one_line, utf8_safe
from . import Item, Problem
from ._shared import Unreadable, elements, first_words, kind, parse_time, sniffed

APP = "Gemini"
SESSION_GAP = 30 * 60  # seconds between two records of one session at most
SESSION_MAX = 500  # records of one session held at once at most; a longer one is split (memory stays bounded)
SNIFF_BYTES = 4096
PROMPT_PREFIXES = ("Prompted ",)
NOT_PROMPTS = ("Used ", "Gave ", "Selected ", "Created ", "Added ", "Cleared ", "Deleted ", "Removed ", "Shared ",
               "Saved ", "Pinned ", "Unpinned ", "Renamed ", "Edited ", "Viewed ", "Visited ", "Enabled ", "Disabled ",
               "Updated ", "Turned ")
_GEMINI = re.compile(r"gemini|bard", re.IGNORECASE)
_HEADER = re.compile(r'"header"\s*:\s*"[^"]*(?:gemini|bard)|"products"\s*:\s*\[[^\]]*(?:gemini|bard)',
                     re.IGNORECASE)
_ACTIVITY = re.compile(r"activ|aktiv|attiv|アクティビティ", re.IGNORECASE)  # MyActivity, MeineAktivitäten, ...
_CONVERSATION = re.compile(r"^https?://gemini\.google\.com/app/([A-Za-z0-9_-]+)/?(?:[?#].*)?$")


def sniff(path: Path) -> bool:
    """A .json whose first KB are Gemini Apps activity, or a zip holding one (or its HTML form)."""
    return sniffed(path, lambda archive: _member(archive) is not None or _html_member(archive) is not None,
                   _looks_like_gemini, SNIFF_BYTES)


def _looks_like_gemini(head: bytes) -> bool:
    text = head.decode("utf-8", "ignore").lstrip("\ufeff \t\r\n")
    return text.startswith("[") and bool(_HEADER.search(text))


def _member(archive: zipfile.ZipFile) -> str | None:
    """The zip's Gemini Apps activity: a .json under a folder naming Gemini (or Bard) that starts like one."""
    for name in _candidates(archive, ".json"):
        with archive.open(name) as f:
            if _looks_like_gemini(f.read(SNIFF_BYTES)):
                return name
    return None


def _html_member(archive: zipfile.ZipFile) -> str | None:
    """Takeout's HTML form of the activity (My Activity/Gemini Apps/MyActivity.html)."""
    return next((n for n in _candidates(archive, ".html") if _ACTIVITY.search(PurePosixPath(n).name)), None)


def _candidates(archive: zipfile.ZipFile, suffix: str) -> list[str]:
    return [n for n in archive.namelist()
            if n.lower().endswith(suffix) and _GEMINI.search(str(PurePosixPath(n).parent)) and "__MACOSX" not in n]


def _choose(archive: zipfile.ZipFile) -> str | None:
    member = _member(archive)
    if member is None and _html_member(archive) is not None:
        raise Unreadable("this Takeout has My Activity for Gemini Apps as HTML, which is not read: export it again "
                         "choosing JSON as My Activity's format")
    return member


def inside(zf: zipfile.ZipFile) -> list[str]:
    """The files of a zipped export this reader reads (to say what was found)."""
    member = _member(zf) or _html_member(zf)
    return [member] if member else []



def read(path: Path) -> Iterator[Item | Problem]:
    """Every prompt and its answer; see the module's docstring."""
    group: list[_Exchange] = []
    for entry in elements(Path(path), _choose, "Gemini Apps activity (My Activity/Gemini Apps/MyActivity.json)",
                          "record"):
        if isinstance(entry, Problem):  # the file's end: it broke off, or was never readable
            yield from _session(group)
            group = []
            yield entry
            continue
        index, raw = entry
        try:
            exchange = _exchange(index, raw)
        except Unreadable as e:
            yield Problem(f"record {index}", one_line(str(e)))
            continue
        if exchange is None:
            continue
        if group and (abs(exchange.time - group[-1].time) > SESSION_GAP or len(group) >= SESSION_MAX):
            yield from _session(group)
            group = []
        group.append(exchange)
    yield from _session(group)


@dataclass
class _Exchange:
    index: int
    time: float
    at: str  # the record's time as written
    moment: dt.datetime  # the same, in UTC
    title: str
    prompt: str
    answers: list[str]
    attachments: list[str] = field(default_factory=list)
    conversation: str | None = None


def _exchange(index: int, raw: Any) -> _Exchange | None:
    """One record read; None for activity that is no prompt (or not Gemini's), Unreadable for a malformed one."""
    if not isinstance(raw, dict):
        raise Unreadable(f"not an activity record but {kind(raw)}")
    header = raw.get("header")
    if header is not None and not isinstance(header, str):
        raise Unreadable(f"its header is {kind(header)}")
    products = raw.get("products")
    if products is not None and not (isinstance(products, list) and all(isinstance(p, str) for p in products)):
        raise Unreadable("its products are not a list of names")
    if not _GEMINI.search(" ".join([header or "", *(products or [])])):
        return None  # another product's activity
    title = raw.get("title")
    if not isinstance(title, str):
        raise Unreadable("it has no title" if title is None else f"its title is {kind(title)}")
    time, at = parse_time(raw.get("time"), "its time")
    if time is None or at is None:
        raise Unreadable("it has no time")
    answers = [text for markup in _html_items(raw.get("safeHtmlItem")) if (text := html_to_text(markup))]
    attachments = _attachments(raw)
    conversation = _conversation(raw.get("details"))
    title = title.strip()
    prompt = next((title[len(p):].strip() for p in PROMPT_PREFIXES if title.startswith(p) or title == p.strip()), None)
    if prompt is None:
        if title.startswith(NOT_PROMPTS) or not answers:
            return None
        prompt = title  # a title in a language whose prefix is not known: the prompt whole
    if not (prompt or attachments) or not (prompt or answers):
        return None
    moment = dt.datetime.fromisoformat(at)  # read once already by parse_time, which takes no zone as UTC
    moment = (moment if moment.tzinfo else moment.replace(tzinfo=dt.UTC)).astimezone(dt.UTC)
    return _Exchange(index, time, at, moment, title, prompt, answers, attachments, conversation)


def _html_items(value: Any) -> list[str]:
    if value is None:
        return []
    if not isinstance(value, list):
        raise Unreadable(f"its answer (safeHtmlItem) is {kind(value)}, not a list")
    markup = []
    for entry in value:
        if not isinstance(entry, dict):
            raise Unreadable(f"its answer (safeHtmlItem) holds {kind(entry)}")
        text = entry.get("html")
        if text is not None and not isinstance(text, str):
            raise Unreadable(f"its answer's html is {kind(text)}")
        if text:
            markup.append(text)
    return markup


def _attachments(raw: dict[str, Any]) -> list[str]:
    files = raw.get("attachedFiles")
    if files is not None and not isinstance(files, list):
        raise Unreadable(f"its attachedFiles are {kind(files)}, not a list")
    names = [f for f in files or [] if isinstance(f, str) and f.strip()]
    image = raw.get("imageFile")
    images = image if isinstance(image, list) else [image]
    names += [i for i in images if isinstance(i, str) and i.strip() and i not in names]
    return names


def _conversation(details: Any) -> str | None:
    """The conversation id when the record's `details` link to exactly one conversation."""
    if details is None:
        return None
    if not isinstance(details, list):
        raise Unreadable(f"its details are {kind(details)}, not a list")
    ids = {m.group(1) for d in details if isinstance(d, dict) and isinstance(d.get("url"), str)
           and (m := _CONVERSATION.match(d["url"].strip()))}
    return ids.pop() if len(ids) == 1 else None


def _session(group: list[_Exchange]) -> Iterator[Item]:
    """The records of one stretch of activity, oldest first."""
    if not group:
        return
    group = sorted(group, key=lambda e: (e.time, -e.index))  # the file is newest first: ties keep its order
    session = f"gemini:{group[0].moment.strftime('%Y-%m-%dT%H:%M:%SZ')}"
    for e in group:
        prompt = "\n\n".join(([e.prompt] if e.prompt else []) + [f"[{name}]" for name in e.attachments])
        metadata: dict[str, Any] = {}
        if e.attachments:
            metadata["attachments"] = [utf8_safe(n) for n in e.attachments]
        if e.conversation:
            metadata["conversation_id"] = e.conversation
        stamp = e.moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{e.moment.microsecond // 1000:03d}Z"
        digest = hashlib.sha256(unicodedata.normalize("NFC", utf8_safe(e.title)).encode()).hexdigest()[:16]
        yield Item(
            content=_content(prompt, e.answers[0] if e.answers else ""),
            external_id=f"gemini:{stamp}:{digest}",
            session=f"gemini:{e.conversation}" if e.conversation else session,
            title=utf8_safe(first_words(e.prompt) or first_words(prompt)),
            created_at=e.time,
            source_app=APP,
            source_url=f"https://gemini.google.com/app/{e.conversation}" if e.conversation else "",
            metadata=metadata,
            versions=[{"content": _content(prompt, other), "created_at": e.at} for other in e.answers[1:]],
        )


def _content(prompt: str, answer: str) -> str:
    parts = ([f"You: {prompt}"] if prompt else []) + ([f"{APP}: {answer}"] if answer else [])
    return utf8_safe("\n\n".join(parts))


# The answer's HTML as text


def html_to_text(markup: str) -> str:
    """Readable text of an HTML answer: paragraphs, headings (as "## "), lists ("- ", "1. ", nested by two
    spaces), tables (cells between " | "), code blocks (fenced with ```), inline code (`x`); no tags, entities
    decoded, scripts and styles left out. Markup the parser cannot follow falls back to tags stripped."""
    parser = _Text()
    try:
        parser.feed(markup)
        parser.close()
        text = "".join(parser.out)
    except (AssertionError, ValueError):  # html.parser on a marked section it does not know ("<![bogus]>")
        text = html.unescape(re.sub(r"<[^>]*>", " ", markup))
        text = re.sub(r"[ \t\r\f\v]+", " ", text)
    text = re.sub(r"[ \t]+\n", "\n", text)
    return re.sub(r"\n{3,}", "\n\n", text).strip()


_PARAGRAPHS = {"p", "div", "section", "article", "header", "footer", "main", "aside", "blockquote", "table", "dl",
               "figure", "figcaption", "details", "summary", "form", "address"}
_HEADINGS = {"h1": 1, "h2": 2, "h3": 3, "h4": 4, "h5": 5, "h6": 6}
_HIDDEN = {"script", "style", "template", "noscript", "head", "title"}
_LANGUAGE = re.compile(r"(?:^|\s)(?:language|lang)-([\w+#.-]+)")


class _Text(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.out: list[str] = []
        self.lists: list[list[Any]] = []  # [ordered, items so far] of each open list
        self.pre = 0
        self.fence = -1  # where the open code block's fence is in `out`
        self.hidden = 0
        self.fresh = True  # at the start of a line (or just after a list marker)
        self.cells = 0

    def _break(self, lines: int) -> None:
        """End the current line, and leave `lines` - 1 blank lines (less inside a list)."""
        if not self.out or (self.fresh and self.out[-1].endswith(("- ", ". "))):
            return
        lines = 1 if self.lists else lines
        tail = "".join(self.out[-3:])
        have = len(tail) - len(tail.rstrip("\n"))
        if have < lines:
            self.out.append("\n" * (lines - have))
        self.fresh = True

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in _HIDDEN:
            self.hidden += 1
        elif self.pre:
            if tag == "code" and self.fence >= 0 and (language := _LANGUAGE.search(dict(attrs).get("class") or "")):
                self.out[self.fence] = f"```{language.group(1)}\n"
        elif tag == "br":
            self.out.append("\n")
            self.fresh = True
        elif tag in _PARAGRAPHS:
            self._break(2)
        elif tag in _HEADINGS:
            self._break(2)
            self.out.append("#" * _HEADINGS[tag] + " ")
        elif tag in ("ul", "ol"):
            self._break(1 if self.lists else 2)
            self.lists.append([tag == "ol", 0])
        elif tag == "li":
            self._break(1)
            depth = max(len(self.lists), 1)
            marker = "- "
            if self.lists and self.lists[-1][0]:
                self.lists[-1][1] += 1
                marker = f"{self.lists[-1][1]}. "
            self.out.append("  " * (depth - 1) + marker)
            self.fresh = True
        elif tag == "pre":
            self._break(2)
            self.fence = len(self.out)
            self.out.append("```\n")
            self.pre += 1
        elif tag == "code":
            self.out.append("`")
            self.fresh = False
        elif tag == "tr":
            self._break(1)
            self.cells = 0
        elif tag in ("td", "th"):
            if self.cells:
                self.out.append(" | ")
            self.cells += 1
        elif tag == "hr":
            self._break(2)
            self.out.append("---")
            self.fresh = False
            self._break(2)

    def handle_endtag(self, tag: str) -> None:
        if tag in _HIDDEN:
            self.hidden = max(0, self.hidden - 1)
        elif tag == "pre" and self.pre:
            self.pre -= 1
            if not "".join(self.out[-2:]).endswith("\n"):
                self.out.append("\n")
            self.out.append("```")
            self.fence = -1
            self.fresh = False
            self._break(2)
        elif self.pre:
            return
        elif tag in _PARAGRAPHS or tag in _HEADINGS:
            self._break(2)
        elif tag in ("ul", "ol"):
            if self.lists:
                self.lists.pop()
            self._break(1 if self.lists else 2)
        elif tag in ("li", "tr"):
            self._break(1)
        elif tag == "code":
            self.out.append("`")

    def handle_data(self, data: str) -> None:
        if self.hidden:
            return
        if self.pre:
            self.out.append(data)
            return
        text = " ".join(data.split())  # white space collapsed, as a browser shows it (faster than a regex)
        if text and data[0].isspace():
            text = " " + text
        if data[-1:].isspace():
            text += " "
        if self.fresh:
            text = text.lstrip()
        if text:
            self.out.append(text)
            self.fresh = False
