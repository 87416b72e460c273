"""ChatGPT's "Export data": the .zip OpenAI sends (conversations.json at its top or in a folder, or split into
conversations-000.json, -001.json, ...; chat.html, user.json, images beside it), or a bare conversations.json: an
array (streamed with ijson, one conversation at a time) of conversations holding a tree of messages (`mapping`:
node id -> {message, parent, children}) and `current_node`, the leaf of the branch shown last.

One Item per exchange of that branch: a prompt and all ChatGPT answered to it, content "You: <prompt>\\n\\nChatGPT:
<answer>" (or "You: <prompt>" never answered, "ChatGPT: <answer>" before any prompt). The answer's messages are
joined in order by blank lines: code as fenced Markdown with its language, its output as "Output:" and a fence, a
canvas's document, an image "[image]", an attached file "[file: <name>]"; citation markers
("\\ue200cite\\ue202turn0search1\\ue201", "【11†source】") removed, an entity marker left as the entity's name.
The other branch at a fork (a regenerated answer, an edited prompt) is a `version` of the exchange it stands in
for, in the same form, with the time of its first message there; the later exchanges of an abandoned branch are
not read.
Left out (not shown as the conversation, or not the person's): system and hidden messages, custom instructions
and ChatGPT's memory (user/model_editable_context), reasoning ("thoughts", "reasoning_recap", the "analysis"
channel), tool calls (searches, memory updates, image prompts) and tool results but a code's output.

session "chatgpt:<conversation id>", external_id "chatgpt:<conversation id>:<the prompt's node id>" (the first
answer's without a prompt): node ids never change, so a newer export adds only its new exchanges. A conversation
without an id goes by its first message's node id ("node-<id>").
A broken conversation (not an object, no mapping, a cycle, a current_node not in it) is one Problem, skipped;
damaged parts of a readable one (a bad time, parts of the wrong type, a prompt without text) are one Problem for
it, its readable exchanges still read. A lone surrogate becomes U+FFFD; NaN and Infinity (not JSON, though
json.dumps writes them) are bad values, not a bad file.
"""

from __future__ import annotations

import json
import math
import re
import zipfile
from bisect import bisect_right
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path, PurePosixPath
from typing import IO, Any, NamedTuple

import ijson

from ..core.models import in_range, to_iso
from ..core.text import one_line, utf8_safe
from . import Item, Problem
from ._shared import ZIP_ERRORS, Standard, sniffed

SNIFF_BYTES = 16_384
_SPLIT = re.compile(r"conversations-(\d+)\.json")
_LEFT_OUT = frozenset({"thoughts", "reasoning_recap", "user_editable_context", "model_editable_context",
                       "tether_browsing_display", "tether_quote", "system_error", "sonic_webpage"})
_PYTHON = frozenset({"python", "python_user_visible"})  # the code interpreter: its code is shown to the person
_MARKER = re.compile("([ \t]*)\ue200([^\ue200\ue201]{0,2000})\ue201")  # \ue200cite\ue202turn0search1\ue201
_BRACKET = re.compile("[ \t]*【[^【】\n]{0,200}†[^【】\n]{0,200}】")  # 【11†source】, 【4:0†L1-L9】
_STRAY = re.compile("[\ue200-\ue206]")  # what is left of the markers (they also wrap quoted spans)
_LANGUAGE = re.compile(r"[\w+#.-]{1,30}")
_URL_ID = re.compile(r"[A-Za-z0-9_-]{1,100}")


class _Broken(Exception):
    """A conversation that cannot be read at all (its reason, one line)."""


def sniff(path: Path) -> bool:
    """A .zip holding conversations.json (or its split files) that starts like ChatGPT's, or such a .json."""
    return sniffed(path, _zipped, _looks_like_export, SNIFF_BYTES)


def _zipped(zf: zipfile.ZipFile) -> bool:
    if not (members := _members(zf)):
        return False
    with zf.open(members[0]) as fh:
        head = fh.read(SNIFF_BYTES)
    new_account = head.strip() == b"[]" and any(n.endswith("chat.html") for n in zf.namelist())
    return new_account or _looks_like_export(head)


def _looks_like_export(head: bytes) -> bool:
    """An array of conversations whose first one has ChatGPT's message tree (not Claude's "chat_messages")."""
    text = head.decode("utf-8", "replace").lstrip("\ufeff \t\r\n")
    return (text.startswith("[") and '"mapping"' in text and '"chat_messages"' not in text
            and ('"current_node"' in text or ('"parent"' in text and '"children"' in text)))


def _members(zf: zipfile.ZipFile) -> list[str]:
    """The conversation files of a zipped export, from the shallowest folder holding one: conversations.json,
    else conversations-000.json, conversations-001.json, ... in their order."""
    found: dict[str, list[str]] = {}
    for name in zf.namelist():
        member = PurePosixPath(name)
        if (member.name == "conversations.json" or _SPLIT.fullmatch(member.name)) and "__MACOSX" not in member.parts:
            found.setdefault(str(member.parent), []).append(name)
    if not found:
        return []
    names = found[min(found, key=lambda f: (0 if f == "." else f.count("/") + 1, f))]
    whole = [n for n in names if PurePosixPath(n).name == "conversations.json"]
    return whole[:1] or sorted(names, key=_split_number)


def _split_number(name: str) -> int:
    """The number of a split file (conversations-012.json -> 12); only names `_SPLIT` matched come here."""
    m = _SPLIT.fullmatch(PurePosixPath(name).name)
    return int(m.group(1)) if m else 0


def inside(zf: zipfile.ZipFile) -> list[str]:
    """The files of a zipped export this reader reads (to say what was found)."""
    return _members(zf)



def read(path: Path) -> Iterator[Item | Problem]:
    """Every exchange of the export, conversation by conversation, in the file's order."""
    path = Path(path)
    counter = [0]  # conversations seen, across split files: a Problem names the conversation by it
    try:
        if path.suffix.lower() == ".zip" or zipfile.is_zipfile(path):
            with zipfile.ZipFile(path) as zf:
                members = _members(zf)
                if not members:
                    yield Problem(path.name, "no conversations.json in this zip: not a ChatGPT export")
                for name in members:
                    yield from _stream(f"{path.name}: {name}", _opener(zf, name), counter)
        else:
            yield from _stream(path.name, lambda: path.open("rb"), counter)
    except OSError as exc:
        yield Problem(one_line(path.name), one_line(f"cannot be read ({exc.strerror or exc})"))
    except ZIP_ERRORS as exc:
        yield Problem(one_line(path.name), one_line(f"a damaged zip file ({exc})"))


def _opener(zf: zipfile.ZipFile, name: str) -> Callable[[], IO[bytes]]:
    return lambda: zf.open(name)


def _stream(where: str, opener: Callable[[], IO[bytes]], counter: list[int]) -> Iterator[Item | Problem]:
    """The conversations of one JSON file, streamed by ijson's C parser; should it stop at what it cannot take (NaN,
    a lone surrogate's escape), by the Python parser over `_shared.Standard` from the conversation it stopped at."""
    where = one_line(where)
    with opener() as fh:
        head = fh.read(4096)
    bom = head.startswith(b"\xef\xbb\xbf")
    if not head[3 if bom else 0:].lstrip(b" \t\r\n").startswith(b"["):
        yield Problem(where, "empty: no conversations" if not head.strip() else
                      "not a ChatGPT export: not a JSON list of conversations")
        return
    done = 0
    for tolerant in (False, True):
        try:
            with opener() as raw:
                if bom:
                    raw.read(3)
                parse = ijson.get_backend("python").items if tolerant else ijson.items
                for n, conversation in enumerate(parse(Standard(raw) if tolerant else raw, "item")):
                    if n >= done:
                        counter[0] += 1
                        done = n + 1
                        yield from _conversation(conversation, counter[0])
            return
        except (ijson.JSONError, ValueError) as exc:  # a UnicodeDecodeError is a ValueError
            reason = one_line(str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__)
            cut = "premature EOF" in reason or "Incomplete JSON" in reason
            if tolerant or cut:
                yield Problem(where, f"the file ends early, after {done} conversation(s) ({reason})" if cut
                              else f"not valid JSON after {done} conversation(s) ({reason})")
                return


def _conversation(conversation: Any, number: int) -> Iterator[Item | Problem]:
    title = _string(conversation.get("title") if isinstance(conversation, dict) else None).strip()
    title = title if len(title) <= 60 else title[:57] + "..."
    where = one_line(f"conversation {number}" + (f' "{title}"' if title else ""))
    try:
        items, notes = _Tree.items_of(conversation)
    except _Broken as exc:
        items, notes = [], [str(exc)]
    except Exception as exc:  # noqa: BLE001 - a reader never raises for bad content; this is the last net
        items, notes = [], [f"could not be read ({type(exc).__name__}: {str(exc)[:200]})"]
    yield from items
    if notes:
        more = f" (and {len(notes) - 1} more problem{'s' if len(notes) > 2 else ''})" if len(notes) > 1 else ""
        yield Problem(where, one_line(notes[0] + more))


class _Message(NamedTuple):
    role: str  # "user" or "assistant" (the answer's parts, a code's output included)
    text: str
    time: float | None
    model: str


@dataclass
class _Exchange:
    start: int  # the position of its first message in the branch it was read from
    key: str  # the prompt's node id, or the first answer's when there is no prompt
    prompt: str = ""
    time: float | None = None  # the prompt's (or the first answer's)
    model: str = ""
    answers: list[str] = field(default_factory=list)
    answered_by: list[tuple[str, float | None]] = field(default_factory=list)  # (node id, time) of each answer

    def content(self) -> str:
        answer = "\n\n".join(self.answers)
        return "\n\n".join(x for x in (self.prompt and f"You: {self.prompt}", answer and f"ChatGPT: {answer}") if x)


class _Tree:
    """One conversation's message tree: its branches read as exchanges, its problems noted."""

    def __init__(self, mapping: dict[str, Any]):
        self.mapping = mapping
        self.notes: dict[str, None] = {}  # what was wrong, in order, once each
        self._messages: dict[str, _Message | None] = {}

    @classmethod
    def items_of(cls, conversation: Any) -> tuple[list[Item], list[str]]:
        if not isinstance(conversation, dict):
            raise _Broken(f"not a conversation (a JSON {_kind(conversation)})")
        mapping = conversation.get("mapping")
        if not isinstance(mapping, dict):
            raise _Broken('no "mapping" (the tree of its messages)' if mapping is None
                          else f'its "mapping" is not an object but a JSON {_kind(mapping)}')
        tree = cls(mapping)
        path = tree.active_path(conversation.get("current_node"))
        if not (exchanges := tree.exchanges(path)):
            return [], list(tree.notes)
        versions = tree.versions(path, exchanges)
        when = tree.time(conversation.get("create_time"), "its create_time")
        cid = next((utf8_safe(v.strip()) for v in (conversation.get("conversation_id"), conversation.get("id"))
                    if isinstance(v, str) and v.strip()), "")
        key = cid or "node-" + next((n for n in path if isinstance(mapping[n].get("message"), dict)), path[0])
        title = utf8_safe(_string(conversation.get("title")).strip())
        default_model, gizmo = (_string(conversation.get(k)) for k in ("default_model_slug", "gizmo_id"))
        items = []
        for n, ex in enumerate(exchanges):
            text = ex.content()
            if not text:
                tree.note(f"message {ex.key} has no text")
                continue
            meta = {"conversation_id": cid} if cid else {}
            meta.update({k: v for k, v in (("model", ex.model or default_model), ("gizmo_id", gizmo)) if v})
            items.append(Item(
                content=text, external_id=utf8_safe(f"chatgpt:{key}:{ex.key}"), session=utf8_safe(f"chatgpt:{key}"),
                title=title, created_at=when if ex.time is None else ex.time, source_app="ChatGPT",
                source_url=f"https://chatgpt.com/c/{cid}" if _URL_ID.fullmatch(cid) else "", metadata=meta,
                versions=versions.get(n, [])))
        return items, list(tree.notes)

    def note(self, problem: str) -> None:
        self.notes[problem] = None

    def children(self, nid: str) -> list[str]:
        node = self.mapping.get(nid)
        kids = node.get("children") if isinstance(node, dict) else None
        return [k for k in kids if isinstance(k, str) and k in self.mapping] if isinstance(kids, list) else []

    def active_path(self, current: Any) -> list[str]:
        """Node ids from the root to `current_node` (to the newest leaf when the export gives none)."""
        if current is None:  # none given: the newest leaf
            roots = [n for n, node in self.mapping.items() if isinstance(node, dict) and node.get("parent") is None]
            if not roots and self.mapping:
                raise _Broken("it has no current_node and no first message")
            current = list(self.newest(roots[0]))[-1] if roots else None
            if current is None:
                return []
        elif not isinstance(current, str) or current not in self.mapping:
            raise _Broken(f"its current_node ({_shown(current)}) is not one of its messages")
        path, seen, nid = [], set(), current
        while isinstance(nid, str) and nid in self.mapping:
            if nid in seen:
                raise _Broken("the parents of its messages form a cycle")
            node = self.mapping[nid]
            if not isinstance(node, dict):
                raise _Broken(f"its message node {nid} is not an object")
            seen.add(nid)
            path.append(nid)
            nid = node.get("parent")
        if nid is not None:
            self.note(f"message {path[-1]} has a parent that is not one of its messages")
        path.reverse()
        return path

    def newest(self, nid: str) -> Iterator[str]:
        """From `nid` down, taking the newest (last) child at each fork."""
        seen: set[str] = set()
        at: str | None = nid
        while at is not None and at not in seen:
            seen.add(at)
            yield at
            kids = self.children(at)
            at = kids[-1] if kids else None

    def exchanges(self, ids: Iterable[str], limit: int = 0) -> list[_Exchange]:
        """The exchanges along a branch: each visible prompt starts one (`limit`: stop after that many)."""
        out: list[_Exchange] = []
        for pos, nid in enumerate(ids):
            msg = self.message(nid)
            if msg is None:
                continue
            if msg.role == "user":
                if limit and len(out) >= limit:
                    break
                out.append(_Exchange(pos, nid, msg.text, msg.time))
            elif msg.text:
                if not out:
                    out.append(_Exchange(pos, nid, time=msg.time))
                out[-1].answers.append(msg.text)
                out[-1].answered_by.append((nid, msg.time))
                out[-1].model = out[-1].model or msg.model
        return out

    def versions(self, path: list[str], exchanges: list[_Exchange]) -> dict[int, list[dict[str, Any]]]:
        """Exchange index -> the other branches' readings of it: at each fork on the path, the exchange that
        takes its place on the other branch (from its own prompt, or from the shared prompt for an answer)."""
        out: dict[int, list[dict[str, Any]]] = {}
        starts = [ex.start for ex in exchanges]
        on_path = set(path)
        for i, nid in enumerate(path[:-1] if exchanges else []):
            others = [c for c in self.children(nid) if c != path[i + 1] and c not in on_path]
            if not others:
                continue
            target = max(bisect_right(starts, i + 1) - 1, 0)
            shared = path[starts[target]:i + 1] if starts[target] <= i else []
            for child in others:
                ex = next(iter(self.exchanges([*shared, *self.newest(child)], limit=1)), None)
                if ex is None or (ex.key in shared and all(n in shared for n, _ in ex.answered_by)):
                    continue  # nothing of the other branch in it
                text, kept = ex.content(), out.setdefault(target, [])
                if text and text != exchanges[target].content() and all(v["content"] != text for v in kept):
                    when = ex.time if ex.key not in shared else next(
                        (t for n, t in ex.answered_by if n not in shared), None)
                    kept.append({"content": text, "created_at": to_iso(when)})
        return out

    def message(self, nid: str) -> _Message | None:
        return self._messages[nid] if nid in self._messages else self._messages.setdefault(nid, self._read(nid))

    def _read(self, nid: str) -> _Message | None:
        """A message as the person saw it, or None when it is left out."""
        node = self.mapping.get(nid)
        msg = node.get("message") if isinstance(node, dict) else None
        if msg is None:
            return None
        if not isinstance(msg, dict):
            self.note(f"message {nid} is not an object but a JSON {_kind(msg)}")
            return None
        meta, body, author = (_dict(msg.get(k)) for k in ("metadata", "content", "author"))
        role, kind = _string(author.get("role")), _string(body.get("content_type"))
        to = _string(msg.get("recipient")) or "all"
        if meta.get("is_visually_hidden_from_conversation") or kind in _LEFT_OUT or msg.get("channel") == "analysis":
            return None
        if role == "user":
            text = "\n\n".join(x for x in (self._parts(nid, body), _files(meta.get("attachments"))) if x)
        elif role == "assistant" and kind == "code" and (to == "all" or to in _PYTHON):
            text = self._code(nid, body, "python" if to in _PYTHON else "")
        elif role == "assistant" and to == "canmore.create_textdoc":
            text = _canvas(body)
        elif role == "assistant" and to == "all":
            text = _uncited(self._parts(nid, body))
        elif role == "tool" and kind == "execution_output":
            output = self._code(nid, body, "")
            text = output and "Output:\n" + output
        else:
            return None
        return _Message("user" if role == "user" else "assistant", utf8_safe(text).strip(),
                        self.time(msg.get("create_time"), f"message {nid}: its create_time"),
                        _string(meta.get("model_slug")))

    def _parts(self, nid: str, body: dict[str, Any]) -> str:
        parts = body.get("parts")
        if parts is None:
            return _string(body.get("text"))
        if not isinstance(parts, list):
            self.note(f'message {nid}: its "parts" are not a list but a JSON {_kind(parts)}')
            return ""
        out = []
        for part in parts:
            if isinstance(part, dict):  # an image, an audio clip and its transcription, ...
                part = "[image]" if part.get("content_type") == "image_asset_pointer" else _string(part.get("text"))
            if not isinstance(part, str):
                self.note(f"message {nid} has a part that is not text but a JSON {_kind(part)}")
            elif part.strip():
                out.append(part)
        return "\n\n".join(out)

    def _code(self, nid: str, body: dict[str, Any], default: str) -> str:
        text, language = body.get("text"), _string(body.get("language"))
        if not isinstance(text, str):
            self.note(f"message {nid}: its code is not text but a JSON {_kind(text)}")
            return ""
        language = language if language != "unknown" and _LANGUAGE.fullmatch(language) else default
        return _fence(text, language) if text.strip() else ""

    def time(self, value: Any, what: str) -> float | None:
        """Epoch seconds, or None (noted when the value is there but not a time from 1970 to 2999)."""
        if value is None:
            return None
        number = _kind(value) == "number"
        if number and math.isfinite(seconds := float(Decimal(value))) and in_range(seconds):  # 10**400: inf
            return seconds
        self.note(f"{what} is {'out of range' if number else 'not a time'} ({_shown(value)})")
        return None


def _fence(text: str, language: str) -> str:
    """Fenced Markdown; the fence longer than any run of backticks inside."""
    fence = "`" * (max((len(run) for run in re.findall("`{3,}", text)), default=2) + 1)
    return f"{fence}{language}\n{text.strip(chr(10))}\n{fence}"


def _canvas(body: dict[str, Any]) -> str:
    """The document a canvas was created with ({"name", "type", "content"} as JSON, in the code's text)."""
    raw, parts = body.get("text"), body.get("parts")
    raw = raw if isinstance(raw, str) else parts[0] if isinstance(parts, list) and parts else ""
    if not isinstance(doc := _json(raw), dict) or not isinstance(doc.get("content"), str):
        return ""
    kind, name = _string(doc.get("type")), _string(doc.get("name")).strip()
    language = kind[5:] if kind.startswith("code/") and _LANGUAGE.fullmatch(kind[5:]) else ""
    text = _fence(doc["content"], language) if kind.startswith("code/") else doc["content"]
    return f"{name}\n\n{text}" if name else text


def _files(attachments: Any) -> str:
    """"[file: report.pdf]" for each attached file but images (those are "[image]" parts already)."""
    names = [a["name"] for a in (attachments if isinstance(attachments, list) else []) if isinstance(a, dict)
             and _string(a.get("name")).strip() and not _string(a.get("mime_type")).startswith("image/")]
    return "\n".join(f"[file: {name.strip()}]" for name in names)


def _uncited(text: str) -> str:
    return _STRAY.sub("", _BRACKET.sub("", _MARKER.sub(_marker, text)))


def _marker(m: re.Match[str]) -> str:
    """A citation marker goes (with the space before it); an entity marker leaves the entity's name."""
    body = m.group(2)
    if body.startswith("entity"):
        value = _json(body[6:].lstrip("\ue202"))
        if isinstance(value, list) and len(value) > 1 and isinstance(value[1], str):
            return m.group(1) + value[1]
    return ""


def _json(text: str) -> Any:
    try:
        return json.loads(text)
    except (ValueError, TypeError, RecursionError):
        return None


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _string(value: Any) -> str:
    return value if isinstance(value, str) else ""


def _kind(value: Any) -> str:
    names = {bool: "boolean", int: "number", float: "number", Decimal: "number", dict: "object", list: "list"}
    return names.get(type(value), "string" if isinstance(value, str) else "null" if value is None else "value")


def _shown(value: Any) -> str:
    """A short description of a bad value for a Problem."""
    if _kind(value) == "number":
        return f"{float(Decimal(value)):g}".replace("inf", "infinity").replace("nan", "NaN")
    if isinstance(value, (str, bool)) or value is None:
        text = json.dumps(value, ensure_ascii=False)
        return text if len(text) <= 40 else text[:37] + "..."
    return f"a JSON {_kind(value)}"
