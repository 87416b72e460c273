"""Normalising captured text before it is stored."""

from __future__ import annotations

import hashlib
import re
import unicodedata
from collections.abc import Iterable

from .errors import InvalidInput

DEFAULT_MAX_BYTES = 1_000_000
_SURROGATE = re.compile("[\ud800-\udfff]")
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
_BREAKS = re.compile(r"[\x00-\x1f\x7f\x85\u2028\u2029]")  # what a terminal or a log shows as a new line, or hides
_TRAILING_WS = re.compile(r"[ \t]+\n")
_MANY_BLANK_LINES = re.compile(r"\n{4,}")


def decode(data: bytes) -> str:
    """Decode bytes as UTF-8 (BOM tolerated), replacing invalid sequences with U+FFFD."""
    return data.decode("utf-8-sig", errors="replace")


def utf8_safe(text: str) -> str:
    """Lone surrogates (a cut emoji's escape, undecodable bytes in argv), which UTF-8 cannot hold, become U+FFFD."""
    return _SURROGATE.sub("\ufffd", text)


def one_line(message: str) -> str:
    """A message on one line, whatever it quotes: control characters and line breaks (a file name with a
    newline, a pasted id) shown as escapes; lone surrogates as U+FFFD."""
    return _BREAKS.sub(lambda m: repr(m.group())[1:-1], utf8_safe(message))


def normalise(text: str | bytes) -> str:
    """Unify line endings, drop NUL and other control characters, NFC-normalise, trim; valid UTF-8 (`utf8_safe`)."""
    if isinstance(text, bytes):
        text = decode(text)
    text = utf8_safe(text)
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    text = _CONTROL.sub("", text)
    text = unicodedata.normalize("NFC", text)
    text = _TRAILING_WS.sub("\n", text)
    text = _MANY_BLANK_LINES.sub("\n\n\n", text)
    return text.strip()


def check_content(text: str, max_bytes: int = DEFAULT_MAX_BYTES) -> str:
    """Return normalised text or raise InvalidInput with a clear reason."""
    clean = normalise(text)
    if not clean:
        raise InvalidInput("nothing to remember: the text is empty or only whitespace")
    size = len(clean.encode("utf-8"))
    if size > max_bytes:
        raise InvalidInput(
            f"text is too large to remember ({size:,} bytes; the limit is {max_bytes:,} bytes)"
        )
    return clean


def content_hash(text: str) -> str:
    """Stable hash used to spot exact duplicates (whitespace-insensitive, case-sensitive)."""
    canonical = " ".join(text.split())
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def first_line(text: str, width: int = 80) -> str:
    """The first non-empty line, shortened to width characters."""
    for line in text.splitlines():
        line = line.strip()
        if line:
            return line if len(line) <= width else line[: width - 1].rstrip() + "…"
    return ""


def normalise_tag(tag: object) -> str:
    """One tag as stored and filtered on: whitespace collapsed, no leading '#', lower case, at most 64 chars,
    valid UTF-8."""
    return utf8_safe(" ".join(str(tag).split()).lstrip("# ").lower()[:64].rstrip())


def clean_tags(tags: Iterable[object]) -> list[str]:
    """Tags normalised (`normalise_tag`), empty ones dropped, each once, in their first order."""
    out: list[str] = []
    for tag in tags:
        if (tag := normalise_tag(tag)) and tag not in out:
            out.append(tag)
    return out
