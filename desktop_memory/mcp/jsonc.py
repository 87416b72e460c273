"""JSONC: JSON with `//` and `/* */` comments and trailing commas (VS Code's, Zed's and Gemini CLI's files).

`loads_jsonc` reads it; `merge_member` sets one member of a top-level object by a textual edit of that member
alone, so every comment, the indentation and the line ends stay (mcp/setup.py checks the result by reading it
again).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any


@dataclass
class _Node:
    """A value in the text: [start, end); for an object its members, and where its closing brace is."""
    start: int
    end: int
    members: list[_Member] | None = None


@dataclass
class _Member:
    key: str
    key_start: int
    value: _Node
    comma: bool  # a comma follows the value


_TOKEN = re.compile(r'\s+|"(?:[^"\\]+|\\.)*"|//[^\n]*|/\*.*?\*/|[{}\[\]:,]|[^\s"{}\[\]:,/]+', re.S)


def _scan(text: str) -> list[tuple[str, int, int]]:
    """The tokens of a JSONC text: (kind, start, end), kind a punctuation character, "str", "lit" or "comment"."""
    tokens, i, n = [], 0, len(text)
    while i < n:
        match = _TOKEN.match(text, i)
        if match is None:
            what = ("unterminated string" if text[i] == '"' else
                    "unterminated comment" if text.startswith("/*", i) else f"unexpected {text[i]!r}")
            raise _jsonc_error(text, i, what)
        j, c = match.end(), text[i]
        if not c.isspace():
            kind = ("str" if c == '"' else "comment" if c == "/" else c if c in "{}[]:," else "lit")
            tokens.append((kind, i, j))
        i = j
    return tokens


def _jsonc_error(text: str, at: int, what: str) -> ValueError:
    line = text.count("\n", 0, at) + 1
    return ValueError(f"{what}: line {line} column {at - (text.rfind(chr(10), 0, at) + 1) + 1} (char {at})")


def loads_jsonc(text: str, empty: Any = ...) -> Any:
    """The value of a JSONC text (comments and trailing commas allowed; otherwise JSON, errors as json's).

    `empty` is returned for a text with nothing but blanks and comments, when given."""
    text = text.removeprefix("\ufeff")
    tokens = _scan(text)
    solid = [t for t in tokens if t[0] != "comment"]
    if not solid and empty is not ...:
        return empty
    edits: list[tuple[int, int, str]] = []
    for kind, start, end in tokens:  # comments become blanks (line breaks kept: json's positions stay right)
        if kind == "comment":
            edits.append((start, end, "".join(ch if ch in "\r\n" else " " for ch in text[start:end])))
    for k, (kind, start, end) in enumerate(solid):  # a comma before a closing bracket: a trailing comma
        if kind == "," and 0 < k < len(solid) - 1 and solid[k + 1][0] in "}]" and solid[k - 1][0] not in "{[,":
            edits.append((start, end, " "))
    pieces, at = [], 0
    for start, end, blank in sorted(edits):
        pieces += [text[at:start], blank]
        at = end
    try:
        return json.loads("".join([*pieces, text[at:]]))
    except RecursionError:
        raise ValueError("nested too deeply") from None


def _parse(text: str, tokens: list[tuple[str, int, int]], k: int) -> tuple[_Node, int]:
    """The value starting at token k (already known to be valid JSONC), and the index after it."""
    kind, start, end = tokens[k]
    if kind not in "{[":
        return _Node(start, end), k + 1
    members: list[_Member] = []
    k += 1
    while tokens[k][0] not in "}]":
        if kind == "{":
            key_start = tokens[k][1]
            key = json.loads(text[tokens[k][1]:tokens[k][2]])
            value, k = _parse(text, tokens, k + 2)  # the key, the colon
            members.append(_Member(key, key_start, value, tokens[k][0] == ","))
        else:
            _value, k = _parse(text, tokens, k)
        if tokens[k][0] == ",":
            k += 1
    return _Node(start, tokens[k][2], members if kind == "{" else None), k + 1


def _line_indent(text: str, at: int) -> str | None:
    """The blanks before `at` on its line, when only blanks are there."""
    prefix = text[text.rfind("\n", 0, at) + 1:at]
    return prefix if not prefix.strip() else None


def _leading_blanks(text: str, at: int) -> str:
    line = text[text.rfind("\n", 0, at) + 1:at]
    return line[:len(line) - len(line.lstrip(" \t"))]


def _dump(value: Any, indent: str, unit: str, newline: str) -> str:
    return json.dumps(value, indent=unit, ensure_ascii=False).replace("\n", newline + indent)


def _insert_member(text: str, obj: _Node, key: str, value: Any, unit: str, newline: str) -> str:
    """`text` with `"key": value` added as the last member of the object `obj`, nothing else touched."""
    assert obj.members is not None
    close = obj.end - 1
    last = obj.members[-1] if obj.members else None
    if last is not None and text.find("\n", obj.start, close) < 0:  # on one line: ours joins that line
        member = f"{json.dumps(key, ensure_ascii=False)}: {json.dumps(value, ensure_ascii=False)}"
        if last.comma:
            return f"{text[:close].rstrip()} {member}{text[close:]}"
        return f"{text[:last.value.end]}, {member}{text[last.value.end:]}"
    indent = _line_indent(text, last.key_start) if last else None
    if indent is None:
        indent = _leading_blanks(text, obj.start) + unit
    member = f"{json.dumps(key, ensure_ascii=False)}: {_dump(value, indent, unit, newline)}"
    line_start = text.rfind("\n", 0, close) + 1
    if not text[line_start:close].strip() and text.rfind("\n", obj.start, close) >= 0:
        # the closing brace on a line of its own: ours goes on the lines before it
        at, insert = line_start, f"{indent}{member}{newline}"
    else:
        at, insert = close, f"{newline}{indent}{member}{newline}{_leading_blanks(text, close)}"
    text = text[:at] + insert + text[at:]
    if last is not None and not last.comma:  # after the last value, before any comment that follows it
        text = text[:last.value.end] + "," + text[last.value.end:]
    return text


def merge_member(raw: str | None, key: str, name: str, entry: dict[str, Any]) -> str:
    """`raw` with `entry` set as member `name` of the top-level object's member `key` (both made when missing),
    comments and layout kept."""
    fresh = json.dumps({key: {name: entry}}, indent=2, ensure_ascii=False) + "\n"
    if raw is None or not raw.strip():
        return fresh
    text = raw
    newline = "\r\n" if "\r\n" in text else "\n"
    solid = [t for t in _scan(text) if t[0] != "comment"]
    if not solid:  # only comments: they stay above the new object
        return text.rstrip() + newline + fresh.replace("\n", newline)
    root, _ = _parse(text, solid, 0)
    assert root.members is not None
    unit = next((i for m in root.members if (i := _line_indent(text, m.key_start))), None) or "  "
    servers = next((m for m in reversed(root.members) if m.key == key), None)  # json.loads: the last one wins
    if servers is None:
        return _insert_member(text, root, key, {name: entry}, unit, newline)
    assert servers.value.members is not None
    ours = next((m for m in reversed(servers.value.members) if m.key == name), None)
    if ours is None:
        return _insert_member(text, servers.value, name, entry, unit, newline)
    indent = _leading_blanks(text, ours.key_start)
    value = _dump(entry, indent, unit, newline)
    return text[:ours.value.start] + value + text[ours.value.end:]
