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

import codecs
import datetime as dt
import re
import zipfile
import zlib
from collections import defaultdict
from collections.abc import Callable, Iterator
from contextlib import ExitStack
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path, PurePosixPath
from typing import IO, Any
from urllib.parse import quote

import ijson

from ..core.models import in_range
from ..core.text import one_line, utf8_safe
from . import Item, Problem

APP = "Claude"
ATTACHMENT_CHARS = 20_000  # an attachment's extracted text kept in the prompt; the rest is left out, and said so
TITLE_WORDS = 8
TITLE_CHARS = 60
SNIFF_BYTES = 4096
_BOM = b"\xef\xbb\xbf"
_SPACE = b" \t\r\n"
_CHUNK = 65536
_ESCAPE = re.compile(r"\\\\|\\u[dD][89abAB][0-9a-fA-F]{2}\\u[dD][c-fC-F][0-9a-fA-F]{2}|\\u[dD][89a-fA-F][0-9a-fA-F]{2}")
_PLACEHOLDER = re.compile(r"`{3}\s*This block is not supported on your current device yet\.?\s*`{3}")
# what reading a damaged file or zip raises (ijson's errors, a bad CRC or deflate stream, a cut file, bytes that
# are not UTF-8 for ijson's Python backend, an encrypted or unsupported zip member)
DAMAGE = (ijson.JSONError, zipfile.BadZipFile, zlib.error, EOFError, OSError, ValueError, RuntimeError,
           NotImplementedError)


class Unreadable(Exception):
    """A conversation (or file) that cannot be read; the message says why in one line."""


def sniff(path: Path) -> bool:
    """A .zip with a conversations.json of Claude's shape, or a .json whose first KB are; never a ChatGPT
    export (its conversations carry "mapping" and "current_node")."""
    path = Path(path)
    try:
        if not path.is_file():
            return False
        if path.suffix.lower() == ".zip" or zipfile.is_zipfile(path):
            with zipfile.ZipFile(path) as archive:
                member = _member(archive)
                if member is None:
                    return False
                names = {PurePosixPath(n).name.lower() for n in archive.namelist()}
                with archive.open(member) as f:
                    return _looks_like_claude(f.read(SNIFF_BYTES), names)
        if path.suffix.lower() == ".json":
            with path.open("rb") as f:
                return _looks_like_claude(f.read(SNIFF_BYTES), set())
    except DAMAGE:
        return False
    return False


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
    by_uuid = {m.uuid: m for m in messages if m.uuid}
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


def first_words(text: str) -> str:
    words = text.split()
    title = " ".join(words[:TITLE_WORDS])
    if len(title) > TITLE_CHARS:
        return title[: TITLE_CHARS - 1].rstrip() + "…"
    return title + ("…" if len(words) > TITLE_WORDS else "")


# Shared with the other JSON readers (gemini.py): the elements of an exported array, times, kinds of values


def elements(path: Path, choose: Callable[[zipfile.ZipFile], str | None], wanted: str,
             what: str) -> Iterator[tuple[int, Any] | Problem]:
    """(index from 1, element) of the export's top-level JSON array, streamed from the file or from the zip
    member `choose` picks; one Problem for the file instead when it cannot be read ("the zip holds no
    <wanted>"), or after the elements read when it breaks off. `what` names one element."""
    index = 0
    try:
        with ExitStack() as stack:
            if path.suffix.lower() == ".zip" or (path.is_file() and zipfile.is_zipfile(path)):
                archive = stack.enter_context(zipfile.ZipFile(path))
                if (member := choose(archive)) is None:
                    raise Unreadable(f"the zip holds no {wanted}")
                stream = stack.enter_context(archive.open(member))
            else:
                stream = stack.enter_context(path.open("rb"))
            for raw in ijson.items(json_array(stream, f"{what}s"), "item"):
                index += 1
                yield index, raw
    except Unreadable as e:
        yield Problem(one_line(path.name), one_line(str(e)))
    except DAMAGE as e:
        if isinstance(e, (ijson.JSONError, ValueError)):
            why = "the file is damaged or cut short" if index else "the file is not valid JSON"
        else:
            why = f"the file cannot be read ({shortened(str(e) or type(e).__name__, 80)})"
        after = f" after {what} {index}; the {what}s before it were read" if index else ""
        yield Problem(one_line(path.name), one_line(why + after))


def json_array(stream: IO[bytes], what: str) -> _Clean:
    """The stream past a byte order mark and white space, checked to open a JSON array, made safe for ijson."""
    head = b""
    while len(head) < len(_BOM) and (more := stream.read(len(_BOM) - len(head))):
        head += more
    if head.startswith(_BOM):
        head = head[len(_BOM):]
    while not (rest := head.lstrip(_SPACE)):
        head = stream.read(256)
        if not head:
            raise Unreadable("the file is empty")
    if rest[:1] != b"[":
        raise Unreadable(f"not a list of {what} (the file is not a JSON array)")
    return _Clean(rest, stream)


class _Clean:
    """A JSON byte stream made safe for ijson's C backend (yajl): bytes that are not UTF-8 become U+FFFD, and so
    does the escape of a lone surrogate ("\\udc00", a "\\ud83d" without its pair), which yajl turns into bytes
    Python cannot decode, losing the rest of the file."""

    _KEEP = 11  # held back at a chunk's end: a surrogate pair's escape is 12 characters

    def __init__(self, head: bytes, stream: IO[bytes]) -> None:
        self._stream = stream
        self._pending = head
        self._decoder = codecs.getincrementaldecoder("utf-8")("replace")
        self._carry = ""
        self._done = False

    def read(self, size: int = -1) -> bytes:
        if size == 0:
            return b""
        out = ""
        while not out and not self._done:
            chunk, self._pending = self._pending or self._stream.read(_CHUNK), b""
            self._done = not chunk
            text = self._carry + self._decoder.decode(chunk, final=self._done)
            out, self._carry = _escapes_fixed(text, len(text) if self._done else max(0, len(text) - self._KEEP))
        return out.encode("utf-8")


def _escapes_fixed(text: str, cut: int) -> tuple[str, str]:
    """(text up to about `cut` with every lone surrogate escape made "\\ufffd", the rest to carry over).
    Escapes are matched from the start, so "\\\\udc00" (an escaped backslash, then "udc00") stays."""
    if "\\" not in text:
        return text[:cut], text[cut:]
    parts, pos = [], 0
    for match in _ESCAPE.finditer(text):
        if match.start() >= cut:
            break
        escape = match.group()
        parts += [text[pos:match.start()], escape if escape == "\\\\" or len(escape) == 12 else "\\ufffd"]
        pos = match.end()
    end = max(cut, pos)
    parts.append(text[pos:end])
    return "".join(parts), text[end:]


def _optional_text(raw: dict[str, Any], key: str, what: str) -> str:
    value = raw.get(key)
    if value is None:
        return ""
    if not isinstance(value, str):
        raise Unreadable(f"{what} is {kind(value)}, not text")
    return value


def parse_time(value: Any, what: str) -> tuple[float | None, str | None]:
    """(epoch seconds, the source's text) of an ISO 8601 time; (None, None) when there is none. A time without
    a zone is taken as UTC (exports write UTC), so that an id or a session never depends on the machine."""
    if value is None:
        return None, None
    if not isinstance(value, str):
        raise Unreadable(f"{what} is {kind(value)}, not a time")
    try:
        moment = dt.datetime.fromisoformat(value.strip())
        if moment.tzinfo is None:
            moment = moment.replace(tzinfo=dt.UTC)
        ts = moment.timestamp()
    except (ValueError, OverflowError):
        ts = None
    if ts is None or not in_range(ts):
        raise Unreadable(f'{what} "{shortened(value, 40)}" is not a time from 1970 to 2999')
    return ts, utf8_safe(value.strip())


def kind(value: Any) -> str:
    """What a JSON value is, for a Problem ("a number", "a list", ...)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    # ijson reads a number with a fraction or exponent as a Decimal (a float could overflow)
    kinds = ((type(None), "null"), ((int, float, Decimal), "a number"), (str, "a string"), (list, "a list"))
    return next((name for types, name in kinds if isinstance(value, types)), "an object")


def shortened(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"
