"""Readers of what people already have (issue 32): AI chat exports, Markdown notes and vaults, text files.

Each format is a module with the same two functions:

    sniff(path: Path) -> bool           cheap: a few KB read at most; True when this reader takes the path
    read(path: Path) -> Iterator[Item | Problem]
                                        every memory the export holds, in the source's order, streamed (a 1 GB
                                        export in bounded memory); a malformed part is a Problem and reading
                                        goes on with the next part

A reader never raises for bad content: an unreadable file as a whole (not JSON at all, a damaged zip) is one
Problem and nothing else. It does no I/O but reading `path`; it never writes.

An `Item` is one memory in the project's terms (engine/records.py: content, title, created_at, tags, source_app,
source_url, metadata, versions) plus two keys the importer uses:
- `session`: the conversation (or note) it belongs to, e.g. "chatgpt:<conversation id>": the items of one
  conversation become one session;
- `external_id`: its identity in the source, e.g. "chatgpt:<conversation id>:<message id>": importing the same
  export again, or a newer export of the same account, adds only what is new.

This package uses the standard library, core/ and ijson (streaming JSON); never the engine, the service or a
front end (tests/unit/test_layers.py).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass
class Item:
    """One memory read from another tool's export."""

    content: str
    external_id: str  # "<format>:<the source's own ids>", stable across exports of the same account
    session: str = ""  # "<format>:<conversation or note id>"
    title: str = ""
    created_at: float | None = None  # seconds since the epoch, UTC; None when the source has no time
    tags: list[str] = field(default_factory=list)
    source_app: str = ""  # "ChatGPT", "Claude", "Gemini", "Obsidian", "Markdown", "Text"
    source_url: str = ""  # the conversation's address when the source gives one (never made up)
    metadata: dict[str, Any] = field(default_factory=dict)
    versions: list[dict[str, Any]] = field(default_factory=list)  # earlier or alternative texts:
    # {"content": str, "created_at": ISO 8601 str or None}, e.g. the other branches of a regenerated answer


@dataclass
class Problem:
    """A part of the export that could not be read: where (a conversation's title or index, a file name) and
    why, in one line for the person."""

    where: str
    message: str


from .feed import Recognised, recognise  # noqa: E402 - after Item and Problem, which the readers import

__all__ = ["Item", "Problem", "Recognised", "recognise"]
