"""What the JSON readers share (claude.py, gemini.py, chatgpt.py): the elements of an exported array streamed
from a file or a zip member, the errors a damaged file or zip raises, times, kinds of values, short titles."""

from __future__ import annotations

import codecs
import datetime as dt
import re
import zipfile
import zlib
from collections.abc import Callable, Iterator
from contextlib import ExitStack
from decimal import Decimal
from pathlib import Path
from typing import IO, Any

import ijson

from ..core.models import in_range
from ..core.text import one_line, utf8_safe
from . import Problem

TITLE_WORDS = 8
TITLE_CHARS = 60
_BOM = b"\xef\xbb\xbf"
_SPACE = b" \t\r\n"
_CHUNK = 65536
_ESCAPE = re.compile(r"\\\\|\\u[dD][89abAB][0-9a-fA-F]{2}\\u[dD][c-fC-F][0-9a-fA-F]{2}|\\u[dD][89a-fA-F][0-9a-fA-F]{2}")
# what reading a damaged zip raises (a bad CRC or deflate stream, a cut file, an encrypted or unsupported member)
ZIP_ERRORS = (zipfile.BadZipFile, zlib.error, EOFError, NotImplementedError, RuntimeError)
# what reading a damaged file or zip raises: ijson's errors, bytes that are not UTF-8 for ijson's Python backend,
# a file that cannot be read, and ZIP_ERRORS
DAMAGE = (ijson.JSONError, OSError, ValueError, *ZIP_ERRORS)


class Unreadable(Exception):
    """A conversation (or file) that cannot be read; the message says why in one line."""


def sniffed(path: Path | str, zipped: Callable[[zipfile.ZipFile], bool], head: Callable[[bytes], bool],
            size: int) -> bool:
    """Whether a reader takes `path` (each reader's `sniff`): a zip (by its name or its bytes) that `zipped`
    takes, or a .json whose first `size` bytes `head` takes. A few KB read; a damaged or unreadable file is not
    taken, never an error."""
    path = Path(path)
    try:
        if not path.is_file():
            return False
        if path.suffix.lower() == ".zip" or zipfile.is_zipfile(path):
            with zipfile.ZipFile(path) as archive:
                return zipped(archive)
        if path.suffix.lower() == ".json":
            with path.open("rb") as fh:
                return head(fh.read(size))
    except DAMAGE:
        return False
    return False


def first_words(text: str) -> str:
    words = text.split()
    title = " ".join(words[:TITLE_WORDS])
    if len(title) > TITLE_CHARS:
        return title[: TITLE_CHARS - 1].rstrip() + "…"
    return title + ("…" if len(words) > TITLE_WORDS else "")




class Standard:
    """A JSON byte stream with Python's NaN, Infinity and -Infinity (which json.dumps writes) made standard for
    ijson: NaN becomes the string "NaN", an infinity 1e999; both are then refused where a time is expected."""

    _OUTSIDE, _INSIDE = re.compile(rb'"|-?Infinity|NaN'), re.compile(rb'["\\]')
    _FIX = {b'"': b'"', b"NaN": b'"NaN"', b"Infinity": b"1e999", b"-Infinity": b"-1e999"}

    def __init__(self, raw: IO[bytes] | _Clean):
        self._chunks, self._rest = self._convert(raw), b""

    def read(self, size: int = -1) -> bytes:
        while not self._rest:
            if (chunk := next(self._chunks, None)) is None:
                return b""
            self._rest = chunk
        size = len(self._rest) if size is None or size < 0 else size
        out, self._rest = self._rest[:size], self._rest[size:]
        return out

    def _convert(self, raw: IO[bytes] | _Clean) -> Iterator[bytes]:
        in_string, carry, chunk = False, b"", b"start"
        while chunk:
            chunk = raw.read(1 << 16)
            data, pos, out = carry + chunk, 0, []
            end = max(len(data) - 9, 0) if chunk else len(data)  # a token or an escape may go on in the next chunk
            while (m := (self._INSIDE if in_string else self._OUTSIDE).search(data, pos)) and m.start() < end:
                out.append(data[pos:m.start()])
                if (token := m.group()) == b"\\":
                    out.append(data[m.start():m.start() + 2])
                    pos = m.start() + 2
                else:
                    out.append(self._FIX[token])
                    in_string, pos = in_string != (token == b'"'), m.end()
            out.append(data[pos:end])
            carry = data[max(pos, end):]
            yield b"".join(out)


def elements(path: Path, choose: Callable[[zipfile.ZipFile], str | None], wanted: str,
             what: str) -> Iterator[tuple[int, Any] | Problem]:
    """(index from 1, element) of the export's top-level JSON array, streamed from the file or from the zip
    member `choose` picks; one Problem for the file instead when it cannot be read ("the zip holds no
    <wanted>"), or after the elements read when it breaks off. `what` names one element."""
    index = 0
    for tolerant in (False, True):  # should yajl stop at NaN or Infinity, the Python parser over `Standard`
        try:
            with ExitStack() as stack:
                if path.suffix.lower() == ".zip" or (path.is_file() and zipfile.is_zipfile(path)):
                    archive = stack.enter_context(zipfile.ZipFile(path))
                    if (member := choose(archive)) is None:
                        raise Unreadable(f"the zip holds no {wanted}")
                    stream = stack.enter_context(archive.open(member))
                else:
                    stream = stack.enter_context(path.open("rb"))
                clean = json_array(stream, f"{what}s")
                parse = ijson.get_backend("python").items if tolerant else ijson.items
                for n, raw in enumerate(parse(Standard(clean) if tolerant else clean, "item"), start=1):
                    if n > index:  # the tolerant pass goes on from the element the first one stopped at
                        index = n
                        yield index, raw
            return
        except Unreadable as e:
            yield Problem(one_line(path.name), one_line(str(e)))
            return
        except DAMAGE as e:
            if isinstance(e, (ijson.JSONError, ValueError)):
                cut = any(s in str(e) for s in ("premature EOF", "Incomplete JSON"))
                if not tolerant and not cut:
                    continue
                why = "the file is damaged or cut short" if index else "the file is not valid JSON"
            else:
                why = f"the file cannot be read ({shortened(str(e) or type(e).__name__, 80)})"
            after = f" after {what} {index}; the {what}s before it were read" if index else ""
            yield Problem(one_line(path.name), one_line(why + after))
            return


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
