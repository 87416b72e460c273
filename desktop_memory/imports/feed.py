"""What `import` is given, recognised, and turned into the project's import records: the one step both front ends
(cli/commands.py `cmd_import`, qt/importing.py) take before `service.import_records`, so the engine's batching,
acknowledgements and crash safety are the same for every format.

`recognise(path)` tries each reader's `sniff` (ChatGPT, Claude, Gemini, then notes: a folder, .md, .markdown,
.txt); the project's own JSON Lines first when the name says so (.jsonl, .ndjson), else last, when the file starts
with a JSON object. None: not a format desktop-memory imports (KNOWN says which are).

`Feed(recognised, limit).lines()` streams record lines: a JSON Lines file's own lines (an over-long one skipped
unread, `core/lines.read_lines`), or one JSON record per Item (engine/records.py: `session` and `external_id`
carried) while the reader's Problems are kept for the person (the first PROBLEMS_KEPT; the rest counted). Nothing
is held but the item being converted: a 1 GB export in bounded memory.
"""

from __future__ import annotations

import json
import os
import zipfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from ..core.lines import Overlong, read_lines
from ..core.models import to_iso
from ..core.text import one_line
from . import Item, Problem, chatgpt, claude, gemini, notes

KNOWN = ("ChatGPT export (.zip or conversations.json), Claude export, Gemini (Google Takeout My Activity), "
         "Markdown files and folders, Obsidian vaults, text files, desktop-memory JSON Lines")
JSONL_SUFFIXES = frozenset({".jsonl", ".ndjson"})
SNIFF_BYTES = 65_536
FOLDER_SCAN = 20_000  # entries looked at, at most, to find one note in a folder
PROBLEMS_KEPT = 50

Reader = Callable[[Path], Iterator[Item | Problem]]


@dataclass
class Recognised:
    """What a path was found to be: `name` ("ChatGPT export"), `description` for the person ("a ChatGPT export
    (conversations.json in export.zip)") and how to read it (None: desktop-memory JSON Lines, read as lines)."""

    name: str
    description: str
    path: Path
    reader: Reader | None = None

    @property
    def jsonl(self) -> bool:
        return self.reader is None

    def items(self) -> Iterator[Item | Problem]:
        """Every Item and Problem of an export (nothing for JSON Lines: those are lines, not Items)."""
        return self.reader(self.path) if self.reader is not None else iter(())


def recognise(path: Path | str) -> Recognised | None:
    """What `path` is, or None when it is not a format desktop-memory imports (or cannot be read)."""
    path = Path(path)
    try:
        if path.is_file() and path.suffix.lower() in JSONL_SUFFIXES:
            return Recognised("JSON Lines", f"desktop-memory JSON Lines ({path.name})", path)
        for name, what, reader in (("ChatGPT export", "a ChatGPT export", chatgpt),
                                   ("Claude export", "a Claude export", claude),
                                   ("Gemini activity", "Gemini Apps activity from Google Takeout", gemini)):
            if reader.sniff(path):
                return Recognised(name, f"{what} ({_inside(path, reader.inside)})", path, reader.read)
        if path.is_dir():
            if not _has_notes(path):
                return None
            if (path / ".obsidian").is_dir():
                return Recognised("Obsidian vault", f"an Obsidian vault (the folder {_named(path)})", path, notes.read)
            return Recognised("Markdown notes", f"Markdown and text notes (the folder {_named(path)})", path,
                              notes.read)
        if notes.sniff(path):
            kind = notes.KINDS[path.suffix.lower()]
            return Recognised(f"{kind} file", f"a {kind} file ({path.name})", path, notes.read)
        if path.is_file() and _looks_like_jsonl(path):
            return Recognised("JSON Lines", f"desktop-memory JSON Lines ({path.name})", path)
    except (OSError, ValueError):
        return None
    return None


def _named(path: Path) -> str:
    return path.name or str(path)


def _inside(path: Path, members: Callable[[zipfile.ZipFile], list[str]]) -> str:
    """"conversations.json in export.zip", "3 files in export.zip", or the file's own name."""
    if not zipfile.is_zipfile(path):
        return path.name
    try:
        with zipfile.ZipFile(path) as zf:
            found = members(zf)
    except (OSError, ValueError, zipfile.BadZipFile):
        found = []
    if len(found) == 1:
        return f"{found[0]} in {path.name}"
    return f"{len(found)} files in {path.name}" if found else path.name


def _has_notes(folder: Path) -> bool:
    """A note (.md, .markdown, .txt, not hidden) somewhere in the folder, within FOLDER_SCAN entries."""
    seen = 0
    for _root, dirs, files in os.walk(folder):
        dirs[:] = [d for d in dirs if not d.startswith(".")]
        for name in files:
            if not name.startswith(".") and os.path.splitext(name)[1].lower() in notes.KINDS:
                return True
        seen += len(files) + len(dirs)
        if seen > FOLDER_SCAN:
            return False
    return False


def _looks_like_jsonl(path: Path) -> bool:
    """The first line that is not blank is a JSON object with "content" (or starts like one, when long)."""
    with path.open("rb") as fh:
        head = fh.read(SNIFF_BYTES)
    text = head.decode("utf-8", "replace").lstrip("\ufeff \t\r\n")
    line, newline, _ = text.partition("\n")
    if not line.startswith("{"):
        return False
    if not newline and len(head) >= SNIFF_BYTES:  # a first line longer than what was read
        return '"content"' in line
    try:
        first = json.loads(line)
    except ValueError:
        return False
    return isinstance(first, dict) and "content" in first


def record(item: Item) -> dict[str, Any]:
    """An Item as an import record (engine/records.py)."""
    out: dict[str, Any] = {"content": item.content, "source": "import", "external_id": item.external_id}
    for key, value in (("session", item.session), ("title", item.title), ("created_at", to_iso(item.created_at)),
                       ("tags", item.tags), ("source_app", item.source_app), ("source_url", item.source_url),
                       ("metadata", item.metadata), ("versions", item.versions)):
        if value:
            out[key] = value
    return out


@dataclass
class Feed:
    """Record lines from what `recognise` found, counting what was read and keeping its problems."""

    found: Recognised
    limit: int  # the longest line the engine takes (core/lines.line_limit)
    items: int = 0  # Items read (JSON Lines: lines read)
    conversations: int = 0  # sessions begun (conversations, notes)
    problems: list[str] = field(default_factory=list)  # the first PROBLEMS_KEPT, "where: why"
    more_problems: int = 0
    _fh: IO[bytes] | None = None
    _size: int = 0

    @property
    def unit(self) -> str:
        """What a number in the engine's report names: a line of a JSON Lines file, else the n-th item read."""
        return "line" if self.found.jsonl else "item"

    def fraction(self) -> float | None:
        """How much of a JSON Lines file was read (0 to 1); None when not known (exports: zips and readers)."""
        if self._fh is None or not self._size:
            return None
        try:
            return min(1.0, self._fh.tell() / self._size)
        except (OSError, ValueError):
            return None

    def lines(self) -> Iterator[str | bytes | Overlong]:
        if self.found.jsonl:
            with self.found.path.open("rb") as fh:
                self._fh, self._size = fh, os.fstat(fh.fileno()).st_size
                for line in read_lines(fh, self.limit):
                    self.items += 1
                    yield line
                self._fh = None
            return
        session = None
        for entry in self.found.items():
            if isinstance(entry, Problem):
                self._problem(entry)
                continue
            self.items += 1
            if entry.session != session or not entry.session:
                session = entry.session
                self.conversations += 1
            yield json.dumps(record(entry), ensure_ascii=False)

    def _problem(self, problem: Problem) -> None:
        if len(self.problems) < PROBLEMS_KEPT:
            self.problems.append(one_line(f"{problem.where}: {problem.message}"))
        else:
            self.more_problems += 1
