"""Markdown files and folders, Obsidian vaults and plain text files as memories (issue 32).

`read(path)` takes one .md/.markdown/.txt file or a folder, walked depth-first in sorted order (names compared
as strings, so "B.md" before "a.md"). A folder holding `.obsidian/` is a vault: its notes come from "Obsidian"
and share one session, "notes:<vault name>"; elsewhere each note is a session of its own,
"notes:<relative path without extension>". A note's identity is "notes:<folder name>/<relative path>": the same
across re-imports, so an edited note is a new version of the same memory.

Skipped without a word: hidden files and folders (.obsidian, .trash, .git, ...), attachments (anything not
.md/.markdown/.txt) and symlinks that stay inside the folder (what they lead to is read in its own place, so no
note twice and no cycle). A symlink leading out of the folder is never followed: one Problem. A binary file
(NUL bytes), one over MAX_BYTES or one that cannot be read is a Problem, and the walk goes on.

One Item per Markdown note:
- front matter: a leading `---` YAML block (every scalar read as text: no YAML 1.1 guessing of "yes" or
  "2024-01-05") or a `+++` TOML block. Malformed (unclosed, invalid, not a mapping, over MAX_FRONT_MATTER):
  the block stays in the text and the reason is in metadata "problems";
- content: the text without its front matter; wikilinks become their text (`[[Note]]` -> "Note",
  `[[Note|shown]]` -> "shown", `[[Note#Part]]` -> "Note > Part", `![[pic.png|300]]` -> "pic.png"); code is
  left exactly as written;
- title: front matter `title`, else the first level-1 `# heading`, else the file name without extension;
- tags: front matter `tags`/`tag` (a list, or one string split on commas and spaces; '#' optional), then the
  inline #tags outside code, each once, as core/text.py stores tags (lower case, no '#'). An inline tag
  follows whitespace or starts a line (so not a URL's #fragment, "&#123;", "\\#", "[a](#b)"), is made of
  letters, digits, marks, symbols such as emoji, '_', '-' and '/' (#project/alpha kept whole), ends at any other
  character and holds at least one letter or symbol (#1984 is an issue number, not a tag);
- created_at: front matter `created`, else `date` (ISO 8601 date or time; without a zone local time; a
  value that is not one, or outside 1970-2999, noted in "problems" and ignored), else the file's modification
  time;
- metadata: "path" (relative to the folder, '/' separators), "links" (linked note names, in order, each once;
  not attachments), "aliases" (front matter `aliases`/`alias`) when any, "problems" when any.
A .txt file is plain text: no front matter, tags or links; its title is its file name.
"""

from __future__ import annotations

import bisect
import codecs
import datetime as dt
import os
import re
import stat
import tomllib
import unicodedata
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import yaml

from ..core.models import from_iso, in_range
from ..core.text import clean_tags, one_line, utf8_safe
from . import Item, Problem

KINDS = {".md": "Markdown", ".markdown": "Markdown", ".txt": "Text"}
MAX_BYTES = 5 * 1024 * 1024  # a note larger than this is a Problem, not read
MAX_FRONT_MATTER = 256 * 1024  # a front matter block larger than this stays text (the YAML parser is pure Python)
# a wikilink to a file with one of these extensions is an attachment, shown as its file name and not a link
ATTACHMENTS = frozenset({
    "png", "jpg", "jpeg", "gif", "bmp", "svg", "webp", "avif", "heic", "heif", "tif", "tiff", "ico", "pdf", "mp3",
    "wav", "m4a", "ogg", "oga", "opus", "flac", "aac", "3gp", "webm", "mp4", "m4v", "mov", "mkv", "avi", "ogv",
    "canvas", "excalidraw", "base", "zip", "csv", "tsv", "json", "xls", "xlsx", "doc", "docx", "ppt", "pptx", "odt",
    "ods", "odp", "epub",
})
NOT_UTF8 = "not valid UTF-8: undecodable bytes shown as \ufffd"

_FENCE = re.compile(r"[ \t]*(`{3,}|~{3,})")
_TICKS = re.compile(r"`+")
_BLANK_LINE = re.compile(r"\n[ \t]*\n")
_WIKILINK = re.compile(r"(!?)\[\[([^\[\]\n]+)\]\]")
_TAG = re.compile(r"(?<!\S)#([^\s#]+)")
_HEADING = re.compile(r"^ {0,3}#[ \t]", re.M)
_YAML_END = re.compile(r"^(?:---|\.\.\.)[ \t]*$", re.M)
_TOML_END = re.compile(r"^\+\+\+[ \t]*$", re.M)
_WORDS = re.compile(r"[,\s\x00-\x1f\x7f-\x9f]+")  # between tags: commas, spaces, control characters


class _TextLoader(yaml.SafeLoader):
    """SafeLoader reading every plain scalar as text except null: `title: No`, `tags: [2024]` and
    `created: 2024-13-45` stay as written instead of a bool, an int or an error."""


_TextLoader.yaml_implicit_resolvers = {
    first: [(tag, rx) for tag, rx in resolvers if tag in ("tag:yaml.org,2002:null", "tag:yaml.org,2002:merge")]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}


def sniff(path: Path) -> bool:
    """A folder, or a file ending in .md, .markdown or .txt."""
    try:
        path = Path(path)
        return path.is_dir() or (path.suffix.lower() in KINDS and path.is_file())
    except (OSError, ValueError):
        return False


def read(path: Path) -> Iterator[Item | Problem]:
    """Every note under `path` (a folder) or the note `path` is, as Items; what cannot be read as Problems."""
    path = Path(path)
    where = one_line(path.name or str(path))
    try:
        folder = path.is_dir()
        if not folder:
            os.stat(path)
    except (OSError, ValueError) as e:
        yield Problem(where, f"cannot read: {_why(e)}")
        return
    if folder:
        yield from _walk(path)
        return
    kind = KINDS.get(path.suffix.lower())
    if kind is None:
        yield Problem(where, "not a Markdown or text file")
        return
    parent = os.path.basename(os.path.dirname(os.path.abspath(path)))
    yield from _note(path, path.name, utf8_safe(parent), kind, vault=False)


def _walk(given: Path) -> Iterator[Item | Problem]:
    """The folder depth-first, each folder's entries sorted by name; an explicit stack, so any depth."""
    root = os.path.realpath(given)
    name = utf8_safe(os.path.basename(os.path.abspath(given)) or root)
    vault = os.path.isdir(os.path.join(root, ".obsidian"))
    stack: list[tuple[Iterator[os.DirEntry[str]], str]] = []
    listing = _listing(root, one_line(name))
    if isinstance(listing, Problem):
        yield listing
        return
    stack.append((iter(listing), ""))
    while stack:
        entries, prefix = stack[-1]
        entry = next(entries, None)
        if entry is None:
            stack.pop()
            continue
        if entry.name.startswith("."):
            continue
        rel = prefix + entry.name
        kind = KINDS.get(os.path.splitext(entry.name)[1].lower())
        try:
            if entry.is_symlink():
                if not _inside(os.path.realpath(entry.path), root) and (kind or os.path.isdir(entry.path)):
                    yield Problem(one_line(rel), "a link to outside the folder: skipped")
                continue
            if entry.is_dir(follow_symlinks=False):
                listing = _listing(entry.path, one_line(rel))
                if isinstance(listing, Problem):
                    yield listing
                else:
                    stack.append((iter(listing), rel + "/"))
                continue
        except OSError as e:
            yield Problem(one_line(rel), f"cannot read: {_why(e)}")
            continue
        if kind:
            yield from _note(Path(entry.path), rel, name, "Obsidian" if vault and kind == "Markdown" else kind,
                             vault=vault)


def _listing(folder: str, where: str) -> list[os.DirEntry[str]] | Problem:
    try:
        with os.scandir(folder) as entries:
            return sorted(entries, key=lambda e: e.name)
    except OSError as e:
        return Problem(where, f"cannot read the folder: {_why(e)}")


def _inside(real: str, root: str) -> bool:
    return real == root or real.startswith(root.rstrip(os.sep) + os.sep)


def _why(e: BaseException) -> str:
    return one_line(getattr(e, "strerror", None) or str(e) or type(e).__name__)


def _note(path: Path, rel: str, folder: str, app: str, *, vault: bool) -> Iterator[Item | Problem]:
    """One file as an Item, or the Problem that keeps it out."""
    where = one_line(rel)
    try:
        info = os.stat(path)
        if not stat.S_ISREG(info.st_mode):
            yield Problem(where, "not a regular file: skipped")
            return
        data = b""
        if info.st_size <= MAX_BYTES:
            with open(path, "rb") as f:
                data = f.read(MAX_BYTES + 1)
    except OSError as e:
        yield Problem(where, f"cannot read: {_why(e)}")
        return
    if info.st_size > MAX_BYTES or len(data) > MAX_BYTES:
        size = max(info.st_size, len(data))
        yield Problem(where, f"too large ({size:,} bytes; the limit is {MAX_BYTES:,} bytes): skipped")
        return
    text, trouble = _decode(data)
    if text is None:
        yield Problem(where, "binary, not text (NUL bytes): skipped")
        return
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    rel = utf8_safe(rel)  # a file name that is not UTF-8 (surrogate escapes) as it can be stored
    stem = os.path.splitext(rel)[0]
    note = _Note(os.path.basename(stem))
    if trouble:
        note.problems.append(trouble)
    if app == "Text":
        note.content = text.strip()
    else:
        note.parse(text)
    if not note.content:
        yield Problem(where, "empty: nothing to import")
        return
    metadata: dict[str, Any] = {"path": rel, "links": note.links}
    if note.aliases:
        metadata["aliases"] = note.aliases
    if note.problems:
        metadata["problems"] = note.problems
    created = note.created_at
    if created is None and in_range(info.st_mtime):
        created = info.st_mtime
    yield Item(content=note.content, external_id=f"notes:{folder}/{rel}",
               session=f"notes:{folder}" if vault else f"notes:{stem}", title=note.title, created_at=created,
               tags=note.tags, source_app=app, metadata=metadata)


def _decode(data: bytes) -> tuple[str | None, str | None]:
    """(text, the problem to note) or (None, None) for binary. UTF-8 (BOM dropped); UTF-16 only with its BOM."""
    if data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        try:
            return data.decode("utf-16"), None
        except UnicodeDecodeError:
            return data.decode("utf-16", errors="replace"), "not valid UTF-16: undecodable bytes shown as \ufffd"
    if b"\x00" in data:
        return None, None
    try:
        return data.decode("utf-8-sig"), None
    except UnicodeDecodeError:
        return data.decode("utf-8-sig", errors="replace"), NOT_UTF8


class _Note:
    """What one Markdown text says: filled by `parse`."""

    def __init__(self, default_title: str) -> None:
        self.content = ""
        self.title = default_title
        self.tags: list[str] = []
        self.links: list[str] = []
        self.aliases: list[str] = []
        self.created_at: float | None = None
        self.problems: list[str] = []

    def parse(self, text: str) -> None:
        props, body = self._front_matter(text)
        title = _scalar(props.get("title"))
        if "title" in props and props["title"] is not None and title is None:
            self.problems.append("title: not text: ignored")
        words = self._words(props, ("tags", "tag"), _WORDS)
        self.aliases = _unique(a.strip() for a in self._words(props, ("aliases", "alias"), re.compile(r",")))
        self.created_at = self._created(props)
        pieces: list[str] = []
        inline: list[str] = []
        heading = ""
        for code, block in _fenced(body):
            if code:
                pieces.append(block)
                continue
            if not heading:
                lines = (block[m.end():].partition("\n")[0] for m in _HEADING.finditer(block))
                heading = next((h for line in lines if (h := _heading(line))), "")
            for span, part in _spans(block):
                if not span:
                    part = _WIKILINK.sub(lambda w: _link_text(w, self.links), part)
                    inline.extend(t for m in _TAG.finditer(part) if (t := _tag(m.group(1))))
                pieces.append(part)
        self.content = "".join(pieces).strip()
        self.title = title or heading or self.title
        self.tags = clean_tags(unicodedata.normalize("NFC", t) for t in [*words, *inline])
        self.links = _unique(self.links)

    def _front_matter(self, text: str) -> tuple[dict[str, Any], str]:
        """(its properties by lower-case key, the text after it); ({}, text) when there is none or it is bad."""
        first, newline, rest = text.partition("\n")
        fence = first.rstrip(" \t")
        if fence not in ("---", "+++") or not newline:
            return {}, text
        end = (_YAML_END if fence == "---" else _TOML_END).search(rest)
        if end is None:
            return self._bad("front matter not closed", text)
        block = rest[:end.start()]
        if len(block) > MAX_FRONT_MATTER:
            return self._bad(f"front matter over {MAX_FRONT_MATTER:,} characters", text)
        try:
            data = yaml.load(block, Loader=_TextLoader) if fence == "---" else tomllib.loads(block)
        except Exception as e:  # noqa: BLE001 - PyYAML raises more than YAMLError on odd input (explicit tags, deep nesting)
            mark = getattr(e, "problem_mark", None)
            at = f" (line {mark.line + 2})" if mark is not None else ""
            return self._bad(f"front matter is not valid {'YAML' if fence == '---' else 'TOML'}{at}", text)
        if data is None:
            data = {}
        if not isinstance(data, dict):
            return self._bad(f"front matter is not a mapping (a {type(data).__name__})", text)
        body = rest[end.end():]
        return {str(k).lower(): v for k, v in data.items()}, body[1:] if body.startswith("\n") else body

    def _bad(self, why: str, text: str) -> tuple[dict[str, Any], str]:
        self.problems.append(f"{why}: read as text")
        return {}, text

    def _words(self, props: dict[str, Any], keys: tuple[str, ...], split: re.Pattern[str]) -> list[str]:
        """The strings under the first of `keys` present: a list's scalars, or one string split."""
        key = next((k for k in keys if props.get(k) is not None), None)
        if key is None:
            return []
        value = props[key]
        items = value if isinstance(value, list) else [value]
        texts = [s for v in items if (s := _scalar(v)) is not None]
        if len(texts) < sum(v is not None for v in items):
            self.problems.append(f"{key}: values that are not text ignored")
        return [w for s in texts for w in split.split(s) if w.strip()]

    def _created(self, props: dict[str, Any]) -> float | None:
        for key in ("created", "date"):
            value = props.get(key)
            if value is None or value == "":
                continue
            try:
                return _epoch(value)
            except (ValueError, TypeError, OverflowError, OSError):
                plain = isinstance(value, str | int | float | dt.date | dt.time)  # never str() a YAML alias bomb
                shown = one_line(repr(str(value))[:60]) if plain else f"a {type(value).__name__}"
                self.problems.append(f"{key}: {shown} is not a date (ISO 8601, 1970 to 2999): ignored")
        return None


def _fenced(body: str) -> Iterator[tuple[bool, str]]:
    """(is code, text) in order: fenced code blocks (``` or ~~~, any indent; unclosed: to the end) and prose."""
    prose: list[str] = []
    code: list[str] = []
    fence = ""
    for line in body.splitlines(keepends=True):
        if not fence:
            m = _FENCE.match(line)
            if m and not (m.group(1)[0] == "`" and "`" in line[m.end():]):
                if prose:
                    yield False, "".join(prose)
                    prose = []
                fence, code = m.group(1), [line]
            else:
                prose.append(line)
            continue
        code.append(line)
        mark = line.strip()
        if len(mark) >= len(fence) and mark == fence[0] * len(mark):
            yield True, "".join(code)
            fence, code = "", []
    if code:
        yield True, "".join(code)
    if prose:
        yield False, "".join(prose)


def _spans(prose: str) -> Iterator[tuple[bool, str]]:
    """(is inline code, text) in order. As CommonMark: a run of backticks opens a span closed by the next run of
    the same length (in the same paragraph), else it is literal. Linear: one pointer per run length."""
    runs = [(m.start(), m.end()) for m in _TICKS.finditer(prose)]
    breaks = [m.start() for m in _BLANK_LINE.finditer(prose)]
    by_length: dict[int, list[int]] = {}
    for n, (start, end) in enumerate(runs):
        by_length.setdefault(end - start, []).append(n)
    next_of = {length: 0 for length in by_length}  # per length: the first index in by_length not yet passed
    at = n = 0
    while n < len(runs):
        start, end = runs[n]
        same = by_length[end - start]
        k = next_of[end - start]
        while k < len(same) and same[k] <= n:
            k += 1
        next_of[end - start] = k
        b = bisect.bisect_left(breaks, end)
        if k < len(same) and (b == len(breaks) or runs[same[k]][0] < breaks[b]):
            close = runs[same[k]][1]
            yield False, prose[at:start]
            yield True, prose[start:close]
            at, n = close, same[k] + 1
        else:
            n += 1
    yield False, prose[at:]


def _link_text(m: re.Match[str], links: list[str]) -> str:
    """A wikilink's text as the reader sees it; a linked note's name added to `links`."""
    embed, inner = m.group(1), m.group(2).replace("\\|", "|")
    target, _, shown = inner.partition("|")
    name, _, part = target.strip().partition("#")
    name = name.strip()
    if name.lower().endswith(".md"):
        name = name[:-3]
    if os.path.splitext(name)[1][1:].lower() in ATTACHMENTS:
        text = name.rsplit("/", 1)[-1] if embed else (shown.strip() or name.rsplit("/", 1)[-1])
        return text or m.group()
    if name:
        links.append(name)
    text = shown.strip() or " > ".join(p for p in (name, *(s.strip() for s in part.split("#"))) if p)
    return text or m.group()


def _heading(line: str) -> str:
    """A heading's text: its closing '#'s dropped, wikilinks as their text."""
    text = line.strip()
    bare = text.rstrip("#")
    if bare != text and (not bare or bare[-1] in " \t"):
        text = bare.rstrip()
    return _WIKILINK.sub(lambda w: _link_text(w, []), text).strip()


def _tag(raw: str) -> str:
    """The tag at the start of what follows a '#', or "" (no letter or symbol in it)."""
    end = 0
    for c in raw:
        if c not in "_-/" and unicodedata.category(c)[0] not in "LNM" and unicodedata.category(c) != "So":
            break
        end += 1
    tag = raw[:end].strip("/")
    return tag if any(unicodedata.category(c)[0] == "L" or unicodedata.category(c) == "So" for c in tag) else ""


def _scalar(value: Any) -> str | None:
    """A front matter value as text when it is one (a string or a number), else None."""
    if isinstance(value, bool) or not isinstance(value, str | int | float):
        return None
    return str(value).strip()


def _epoch(value: Any) -> float:
    """A front matter date or time (text, or TOML's own) as epoch seconds; ValueError when it is not one."""
    if isinstance(value, str):
        ts = from_iso(value)
    elif isinstance(value, dt.date):
        moment = value if isinstance(value, dt.datetime) else dt.datetime.combine(value, dt.time())
        ts = (moment.astimezone() if moment.tzinfo is None else moment).timestamp()
    else:
        raise ValueError(value)
    if not in_range(ts):
        raise ValueError(value)
    return ts


def _unique(values: Any) -> list[str]:
    return list(dict.fromkeys(v for v in values if v))
