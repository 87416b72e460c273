"""Claude.ai's data export: the zip Anthropic emails (conversations.json, users.json, projects.json, sometimes in
a folder) or a bare conversations.json.

conversations.json is a JSON array of conversations (`uuid`, `name`, `created_at`, `updated_at`, `account`,
`chat_messages`); a message has `uuid`, `sender` ("human" or "assistant"), `text`, `content` (blocks: text,
thinking, tool_use, tool_result, ...), `created_at`, `attachments` (with `extracted_content`), `files` (names
only) and, in newer exports, `parent_message_uuid`: every branch is in the list, linked by its parent.

One Item per exchange: "You: <prompt and its attachments' text>\n\nClaude: <answer>". The `content` blocks win
over `text`, which holds placeholders ("This block is not supported on your current device yet.") where blocks
were left out; thinking and tool blocks are never read. An answer of only tool calls is no answer. Along the latest
branch (the conversation's `current_leaf_message_uuid` when it names one, else the newest leaf); an alternative
answer to a prompt, or an edited prompt with its answer, becomes a `versions` entry of the exchange it stands
beside. Deeper turns of an abandoned branch are not read.

A conversation that cannot be read (not an object, no chat_messages, a wrong type, a date that is not one, a
message without sender) is one Problem naming it, and reading goes on. A lone surrogate (a cut emoji's escape)
or bytes that are not UTF-8 are not a Problem: they become U+FFFD, as everywhere in the project (core/text.py),
before ijson's C backend sees them (it would otherwise stop reading the file there).
"""

from __future__ import annotations

import re
import zipfile
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any
from urllib.parse import quote

from ..core.text import one_line, utf8_safe
from . import Item, Problem
from ._shared import Unreadable, elements, first_words, kind, parse_time, shortened, sniffed

APP = "Claude"
ATTACHMENT_CHARS = 20_000  # an attachment's extracted text kept in the prompt; the rest is left out, and said so
SNIFF_BYTES = 4096
_PLACEHOLDER = re.compile(r"`{3}\s*This block is not supported on your current device yet\.?\s*`{3}")


def sniff(path: Path) -> bool:
    """A .zip with a conversations.json of Claude's shape, or a .json whose first KB are; never a ChatGPT
    export (its conversations carry "mapping" and "current_node")."""
    return sniffed(path, _zipped, lambda head: _looks_like_claude(head, set()), SNIFF_BYTES)


def _zipped(archive: zipfile.ZipFile) -> bool:
    if (member := _member(archive)) is None:
        return False
    names = {PurePosixPath(n).name.lower() for n in archive.namelist()}
    with archive.open(member) as f:
        return _looks_like_claude(f.read(SNIFF_BYTES), names)


def _member(archive: zipfile.ZipFile) -> str | None:
    """The zip's conversations.json: the one nearest the top (the export is sometimes inside a folder)."""
    found = [n for n in archive.namelist()
             if PurePosixPath(n).name.lower() == "conversations.json" and not n.startswith("__MACOSX/")]
    return min(found, key=lambda n: (n.count("/"), n)) if found else None


def _looks_like_claude(head: bytes, names: set[str]) -> bool:
    text = head.decode("utf-8", "ignore").lstrip("\ufeff \t\r\n")
    if not text.startswith("[") or '"mapping"' in text or '"current_node"' in text:
        return False
    if '"chat_messages"' in text:
        return True
    return '"uuid"' in text and ('"account"' in text or bool({"users.json", "projects.json"} & names))


def inside(zf: zipfile.ZipFile) -> list[str]:
    """The files of a zipped export this reader reads (to say what was found)."""
    member = _member(zf)
    return [member] if member else []


def read(path: Path) -> Iterator[Item | Problem]:
    """Every exchange of every conversation, in the export's order; see the module's docstring."""
    for entry in elements(Path(path), _member, "conversations.json (is it Claude's data export?)", "conversation"):
        if isinstance(entry, Problem):
            yield entry
            continue
        index, raw = entry
        try:
            items = _items(raw)
        except Unreadable as e:
            yield Problem(_where(index, raw), one_line(str(e)))
            continue
        yield from items


# One conversation


@dataclass
class _Message:
    index: int
    uuid: str | None
    human: bool
    text: str
    time: float | None
    at: str | None  # the source's own ISO 8601 text of `time`
    parent: str | None
    attachments: list[tuple[str, str]] = field(default_factory=list)  # (file name, extracted text)
    files: list[str] = field(default_factory=list)


@dataclass
class _Exchange:
    human: _Message
    answers: list[_Message] = field(default_factory=list)
    versions: list[tuple[float | None, dict[str, Any]]] = field(default_factory=list)


def _where(index: int, raw: Any) -> str:
    name = raw.get("name") if isinstance(raw, dict) else None
    if isinstance(name, str) and name.strip():
        return one_line(f'conversation {index} ("{shortened(" ".join(name.split()), 60)}")')
    return f"conversation {index}"


def _items(raw: Any) -> list[Item]:
    if not isinstance(raw, dict):
        raise Unreadable(f"not a conversation but {kind(raw)}")
    uuid = raw.get("uuid")
    if not isinstance(uuid, str) or not uuid.strip():
        raise Unreadable("it has no uuid" if uuid is None else f"its uuid is {kind(uuid)}")
    name = _optional_text(raw, "name", "its name")
    started = parse_time(raw.get("created_at"), "its created_at")[0]
    parse_time(raw.get("updated_at"), "its updated_at")
    messages = raw.get("chat_messages")
    if messages is None:
        raise Unreadable("it has no chat_messages")
    if not isinstance(messages, list):
        raise Unreadable(f"its chat_messages are {kind(messages)}, not a list")
    parsed = [m for n, raw_m in enumerate(messages, 1) if (m := _message(n, raw_m)) is not None]
    leaf = raw.get("current_leaf_message_uuid")
    exchanges = _thread(parsed, leaf if isinstance(leaf, str) else None)

    title = " ".join(name.split()) if name.strip() else ""
    if not title:
        title = next((first_words(e.human.text) for e in exchanges if e.human.text), "")
    session = f"claude:{uuid}"
    items = []
    for exchange in exchanges:
        content = _content(_prompt(exchange.human), _answer(exchange.answers))
        if not content:
            continue
        names = [n for n, _ in exchange.human.attachments] + exchange.human.files
        metadata: dict[str, Any] = {"conversation_uuid": utf8_safe(uuid)}
        if names:
            metadata["attachments"] = [utf8_safe(n) for n in names]
        items.append(Item(
            content=content,
            external_id=utf8_safe(f"{session}:{exchange.human.uuid}"),
            session=utf8_safe(session),
            title=utf8_safe(title),
            created_at=exchange.human.time if exchange.human.time is not None else started,
            source_app=APP,
            source_url=f"https://claude.ai/chat/{quote(utf8_safe(uuid), safe='')}",
            metadata=metadata,
            versions=[v for _, v in sorted(exchange.versions, key=lambda tv: (tv[0] is not None, tv[0] or 0.0))],
        ))
    return items


def _message(n: int, raw: Any) -> _Message | None:
    """One chat message, its types checked; None for a sender that is neither the person nor Claude."""
    if not isinstance(raw, dict):
        raise Unreadable(f"message {n} is {kind(raw)}, not an object")
    sender = _optional_text(raw, "sender", f"message {n}'s sender")
    if not sender:
        raise Unreadable(f"message {n} has no sender")
    uuid = _optional_text(raw, "uuid", f"message {n}'s uuid")
    parent = _optional_text(raw, "parent_message_uuid", f"message {n}'s parent_message_uuid") or None
    time, at = parse_time(raw.get("created_at"), f"message {n}'s created_at")
    text = _text(raw, n)
    attachments = []
    for a in _objects(raw, "attachments", n):
        name = _optional_text(a, "file_name", f"message {n}'s attachment name")
        extracted = _optional_text(a, "extracted_content", f"message {n}'s attachment text")
        if name or extracted.strip():
            attachments.append((name, extracted))
    files = []
    for f in _objects(raw, "files", n, names_allowed=True):
        name = f if isinstance(f, str) else _optional_text(f, "file_name", f"message {n}'s file name")
        if name and name not in files and name not in {a for a, _ in attachments}:
            files.append(name)
    if sender.lower() not in ("human", "user", "assistant"):
        return None
    human = sender.lower() != "assistant"
    if human and not uuid.strip():
        raise Unreadable(f"message {n} (the person's) has no uuid")
    return _Message(n, uuid or None, human, text, time, at, parent, attachments, files)


def _text(raw: dict[str, Any], n: int) -> str:
    """The message's text blocks; its `text` (placeholders removed) only when it has no blocks at all."""
    text = _optional_text(raw, "text", f"message {n}'s text")
    blocks = raw.get("content")
    if blocks is not None and not isinstance(blocks, list):
        raise Unreadable(f"message {n}'s content is {kind(blocks)}, not a list")
    if not blocks:
        return _PLACEHOLDER.sub("", text).strip()
    parts = []
    for block in blocks:
        if not isinstance(block, dict):
            raise Unreadable(f"message {n} has a content block that is {kind(block)}")
        if block.get("type") != "text":
            continue  # thinking, tool_use, tool_result, token_budget, ...
        value = block.get("text")
        if value is not None and not isinstance(value, str):
            raise Unreadable(f"message {n} has a text block whose text is {kind(value)}")
        if value and value.strip():
            parts.append(value.strip())
    return "\n\n".join(parts)


def _objects(raw: dict[str, Any], key: str, n: int, names_allowed: bool = False) -> list[Any]:
    value = raw.get(key)
    if value is None:
        return []
    if not isinstance(value, list):
        raise Unreadable(f"message {n}'s {key} are {kind(value)}, not a list")
    for entry in value:
        if not isinstance(entry, dict) and not (names_allowed and isinstance(entry, str)):
            raise Unreadable(f"message {n} has one of its {key} that is {kind(entry)}")
    return value


def _thread(messages: list[_Message], leaf_uuid: str | None) -> list[_Exchange]:
    """The exchanges along the latest branch, each with the alternatives beside it as versions; the list's own
    order when the messages carry no parent links (older exports) or the links do not make a tree."""
    by_uuid: dict[str | None, _Message] = {m.uuid: m for m in messages if m.uuid}
    children: dict[str | None, list[_Message]] = defaultdict(list)
    for m in messages:
        children[m.parent].append(m)
    linked = bool(messages) and all(m.parent and m.uuid for m in messages)
    path = _path(messages, by_uuid, children, leaf_uuid) if linked else None
    if not path:  # the list's order, or the times' when every message has one (the list is not always sorted)
        timed = all(m.time is not None for m in messages)
        return _pairs(sorted(messages, key=lambda m: m.time or 0.0) if timed else messages)
    on_path = {m.uuid for m in path}
    exchanges = _pairs(path)
    for exchange in exchanges:
        human = exchange.human
        prompt = _prompt(human)
        for alt in children.get(human.uuid, []):
            if not alt.human and alt.uuid not in on_path and alt.text:
                exchange.versions.append((alt.time, _version(prompt, alt.text, alt.at)))
        for sibling in children.get(human.parent, []):
            if sibling.human and sibling.uuid not in on_path:
                answers = [a for a in children.get(sibling.uuid, []) if not a.human and a.text]
                answer = max(answers, key=_recency).text if answers else ""
                if _content(_prompt(sibling), answer):
                    exchange.versions.append((sibling.time, _version(_prompt(sibling), answer, sibling.at)))
    return exchanges


def _path(messages: list[_Message], by_uuid: dict[str | None, _Message],
          children: dict[str | None, list[_Message]], leaf_uuid: str | None) -> list[_Message]:
    node = by_uuid.get(leaf_uuid) if leaf_uuid else None
    if node is None:
        leaves = [m for m in messages if m.uuid not in children]
        if not leaves:
            return []
        node = max(leaves, key=_recency)
    seen: set[str | None] = set()
    while children.get(node.uuid) and node.uuid not in seen:  # a named leaf that has turns after it
        seen.add(node.uuid)
        node = max(children[node.uuid], key=_recency)
    path, seen = [], set()
    current: _Message | None = node
    while current is not None and current.uuid not in seen:
        seen.add(current.uuid)
        path.append(current)
        current = by_uuid.get(current.parent)
    path.reverse()
    return path


def _recency(m: _Message) -> tuple[float, int]:
    return (m.time if m.time is not None else float("-inf"), m.index)


def _pairs(messages: list[_Message]) -> list[_Exchange]:
    exchanges: list[_Exchange] = []
    for m in messages:
        if m.human:
            exchanges.append(_Exchange(m))
        elif exchanges:
            exchanges[-1].answers.append(m)
    return exchanges


def _version(prompt: str, answer: str, at: str | None) -> dict[str, Any]:
    return {"content": _content(prompt, answer), "created_at": at}


def _prompt(m: _Message) -> str:
    parts = [m.text] if m.text else []
    for name, extracted in m.attachments:
        if extracted.strip():
            parts.append(f"[{name or 'attachment'}]\n{_shorten(extracted)}")
        elif name:
            parts.append(f"[{name}]")
    parts += [f"[{name}]" for name in m.files]
    return "\n\n".join(parts)


def _answer(answers: list[_Message]) -> str:
    return "\n\n".join(a.text for a in answers if a.text)


def _content(prompt: str, answer: str) -> str:
    parts = ([f"You: {prompt}"] if prompt else []) + ([f"{APP}: {answer}"] if answer else [])
    return utf8_safe("\n\n".join(parts))


def _shorten(text: str) -> str:
    """An attachment's text, its head when it is huge, saying how long it was."""
    if len(text) <= ATTACHMENT_CHARS:
        return text.strip()
    head = text[:ATTACHMENT_CHARS]
    cut = head.rfind("\n")
    if cut > ATTACHMENT_CHARS * 0.8:
        head = head[:cut]
    return f"{head.strip()}\n[… shortened: {len(text):,} characters in all]"


def _optional_text(raw: dict[str, Any], key: str, what: str) -> str:
    value = raw.get(key)
    if value is None:
        return ""
    if not isinstance(value, str):
        raise Unreadable(f"{what} is {kind(value)}, not text")
    return value
