"""How a memory reads in the search window: snippets with highlighted words, relative dates, filter chips.

Plain Python (no Qt), so it is easy to test.
"""

from __future__ import annotations

import html
import re

from ..core.headline import grounded, headline
from ..core.models import Memory
from ..core.models import relative_time as relative_time  # the app says times this way everywhere
from ..core.query import STOP_WORDS

_WORD = re.compile(r"\w+", re.UNICODE)
_FILTER_TOKEN = re.compile(r"^(?:(?:source|app|after|before|is|tag):\S+|#[\w\-/.]+)$", re.UNICODE)
SNIPPET_CHARS = 180


def query_words(query: str) -> list[str]:
    """The words of a query worth highlighting (filter tokens and stop words left out)."""
    words = []
    for token in query.split():
        if _FILTER_TOKEN.match(token):
            continue
        for w in _WORD.findall(token.lower()):
            if w not in STOP_WORDS and len(w) > 1 and w not in words:
                words.append(w)
    return words


def filter_tokens(query: str) -> list[str]:
    """The filter words typed in a query (`source:clipboard`, `#work`, `is:pinned`...), in order."""
    return [t for t in query.split() if _FILTER_TOKEN.match(t)]


def without_token(query: str, token: str) -> str:
    """The query with one filter token removed (a chip's close button)."""
    parts = query.split()
    if token in parts:
        parts.remove(token)
    return " ".join(parts) + (" " if parts else "")


def _stem_pattern(words: list[str]) -> re.Pattern[str] | None:
    if not words:
        return None
    # match word starts so "release" also marks "released", like the search's stemming does
    stems = sorted({w[:max(3, len(w) - 2)] if len(w) > 4 else w for w in words}, key=len, reverse=True)
    return re.compile(r"\b(" + "|".join(re.escape(s) for s in stems) + r")\w*", re.IGNORECASE | re.UNICODE)


def snippet_html(text: str, query: str, width: int = SNIPPET_CHARS) -> str:
    """An escaped one-line excerpt around the first matched word, matched words in bold."""
    flat = " ".join(text.split())
    pattern = _stem_pattern(query_words(query))
    start = 0
    if pattern and (m := pattern.search(flat)) and m.start() > width // 3:
        start = flat.rfind(" ", 0, m.start() - width // 4) + 1
    piece = flat[start:start + width]
    if start + width < len(flat):
        piece = piece.rsplit(" ", 1)[0] + " …"
    prefix = "… " if start > 0 else ""
    if not pattern:
        return prefix + html.escape(piece)
    out, last = [], 0
    for m in pattern.finditer(piece):
        out.append(html.escape(piece[last:m.start()]))
        out.append(f"<b>{html.escape(m.group(0))}</b>")
        last = m.end()
    out.append(html.escape(piece[last:]))
    return prefix + "".join(out)


def title_of(m: Memory) -> str:
    """The headline: the memory's title when grounded in its text (core/headline.py), else its first line."""
    return headline(m.content, m.title)


def summary_of(m: Memory) -> str:
    """The summary when grounded in the text (a model's invented one is not shown), else ""."""
    return m.summary if m.summary and grounded(m.summary, m.content) else ""


def after_title(content: str, title: str) -> str:
    """The content that follows a title made from its first line (nothing when it was all shown)."""
    shown = title.rstrip("…").rstrip()
    flat = " ".join(content.split())
    return flat[len(shown):].lstrip(" ,;:") if flat.startswith(shown) else flat


def origin(m: Memory) -> str:
    """Source and app, e.g. 'clipboard · firefox'."""
    return m.source + (f" · {m.source_app}" if m.source_app else "")


def marks(m: Memory) -> str:
    """Pinned and importance marks shown beside a result."""
    out = "⚑" if m.pinned else ""
    if m.importance >= 0.8:
        out += "★"
    return out
