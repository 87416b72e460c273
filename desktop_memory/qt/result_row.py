"""How one result row is drawn, with QPainter (no rich-text documents): a kind icon (with the source app's own icon
as a badge where the icon theme has it), the title, the lines under it, matched words marked in both, and on the
right a code's language, the source app, the relative date and "+N similar".

A memory with nothing more to show than its one line is a one-line row; the others have their title and one or
two lines under it: a structured text (code, a command, YAML, JSON, a stack trace, a list, a chat) keeps its
lines (the one that matched the query when it is further down), prose flows on from where its title stops.
A row's height comes from its text and the fonts, never from the list's width: a height that depended on the
width made a feedback loop once results overflowed: the scrollbar appeared, the viewport narrowed, rows grew
taller, the scrollbar range changed, the scrollbar hid, rows got shorter... ~2,000 times a second (issue 19).

Colours come from `row_colours` alone, each text at 4.5:1 or more on what it is painted on (light and dark)."""

from __future__ import annotations

import re
import textwrap
from collections import OrderedDict
from dataclasses import dataclass, replace
from itertools import islice
from urllib.parse import unquote

from PySide6.QtCore import QPointF, QRect, QRectF, Qt
from PySide6.QtGui import QColor, QFont, QFontMetricsF, QGuiApplication, QPainter, QPalette

from ..core.kinds import Kind
from ..core.models import Memory, Passage
from ..core.query import STOP_WORDS
from . import display, kinds

PAD_X, PAD_Y, ICON, GAP = 12, 8, 28, 10
PAD_Y_COMPACT, ICON_COMPACT, BADGE = 6, 22, 14  # a one-line row; the source app's icon on the kind's
TEXT_CONTRAST = 4.5  # WCAG AA for text
MARK_CONTRAST = 1.4  # a matched word's mark against its row: visible, not loud
MARGIN = 6  # between the row's rounded background and the list's edge
ELLIPSIS = "…"
TITLE_CHARS = 90
SCAN_CHARS = 20_000  # of a memory's text, what its row reads (kind, title, snippet): a huge copy costs no more
CACHED_ROWS = 256  # rows whose text and layout are kept
_TOKEN = re.compile(r"\S+\s*|\s+")
_WORD = re.compile(r"\w+", re.UNICODE)


@dataclass(frozen=True)
class Run:
    text: str
    hit: bool  # a matched query word


@dataclass(frozen=True)
class Piece:
    """One text run of a row: drawn at (x, baseline) in `font`; a matched word has its mark behind it."""

    text: str
    x: float
    baseline: float
    font: QFont
    mark: QRectF | None
    dim: bool  # secondary colour (the snippet), else the text colour (the title)


@dataclass(frozen=True)
class RowLayout:
    """A row without its colours and state (selected, hovered), relative to the row's top-left corner."""

    kind: str
    icon: QPointF
    icon_size: int
    meta: str
    meta_at: QPointF
    label: str  # "+N similar" or ""
    chip: QRectF  # where the label is (empty without one)
    pieces: list[Piece]
    app: str  # whose icon is the badge ("" for none)


def highlight_pattern(query: str) -> re.Pattern[str] | None:
    """Word starts to highlight: each query word (stems, so 'release' marks 'released'; the last word as typed, so
    'lighthou' marks 'lighthouse')."""
    words = []
    for w in display.query_words(query):
        if w not in STOP_WORDS:  # 'retry' marks 'retrying', not 'return'
            words.append(w[: max(4, len(w) - 2)] if len(w) > 5 else w)
    if not words:
        return None
    stems = sorted(set(words), key=len, reverse=True)
    return re.compile(r"\b(" + "|".join(re.escape(s) for s in stems) + r")\w*", re.IGNORECASE | re.UNICODE)


def runs(text: str, pattern: re.Pattern[str] | None) -> list[Run]:
    """Text cut into plain and matched runs."""
    if pattern is None:
        return [Run(text, False)]
    out, last = [], 0
    for m in pattern.finditer(text):
        if m.start() > last:
            out.append(Run(text[last:m.start()], False))
        out.append(Run(m.group(0), True))
        last = m.end()
    if last < len(text):
        out.append(Run(text[last:], False))
    return out


_SUBJECT = re.compile(r"^subject:\s*(.+)$", re.IGNORECASE | re.MULTILINE)
_ERROR_LINE = re.compile(r"^\s*(?:[\w.$]*(?:Error|Exception|Exit|Interrupt)\b|panic:|thread '.*' panicked|Caused by:)")
_TODO = re.compile(r"^(\s*)[-*]\s*\[([ xX])\]\s*")
NOMINAL_WIDTH = 744  # the list's width the line count of a row is worked out for (never the actual width)
STRUCTURED = frozenset({"command", "code", "yaml", "json", "trace", "list", "chat", "person", "address"})
SCAN_LINES = 60  # lines of a memory a row may show (the matching one among them)


@dataclass(frozen=True)
class RowText:
    """What a row shows of a memory, before the query and the width are known: its kind, its title, and either
    its lines (structured texts keep them) or the flowing text after the title (prose); `lines_shown` (0-2) is
    how many snippet lines the row has, from the text alone, so the row's height never depends on its width."""

    memory: Memory  # its text cut to SCAN_CHARS
    kind: Kind
    title: str
    mono_title: bool  # the title is the text's first line of code or a command: drawn in monospace
    url_title: bool  # the title is a URL (shortened around its match when it does not fit)
    lines: tuple[str, ...]  # structured: the lines under the title
    body: str  # prose: the text after the title, flattened
    lines_shown: int
    mono: bool  # the lines are drawn in monospace with their spaces


def readable_url(url: str) -> str:
    """A URL as people read it: no scheme, no "www.", no trailing slash, %-escapes decoded."""
    text = re.sub(r"^[a-z][\w+.-]*://", "", url.strip(), flags=re.IGNORECASE)
    text = text.removeprefix("www.").rstrip("/")
    try:
        return unquote(text)
    except ValueError:  # pragma: no cover - unquote is lenient
        return text


def fit_url(url: str, width: float, fm: Metrics, pattern: re.Pattern[str] | None) -> str:
    """A readable URL shortened to `width`: the host stays, path segments in the middle give way to "…", the
    matched part and the end stay visible; cut by characters only as a last resort."""
    if fm.advance(url) <= width:
        return url
    host, _, path = url.partition("/")
    segments = path.split("/")
    hit = next((i for i, seg in enumerate(segments) if pattern and pattern.search(seg)), len(segments) - 1)
    keep_from = 0
    while keep_from < hit:  # drop segments before the match, after the host
        keep_from += 1
        candidate = host + "/" + ELLIPSIS + "/" + "/".join(segments[keep_from:])
        if fm.advance(candidate) <= width:
            return candidate
    lead = host + ("/" + ELLIPSIS if keep_from else "") + "/"
    tail = segments[hit + 1:]
    for parts in ([*segments[keep_from:hit + 1], ELLIPSIS, tail[-1]] if len(tail) > 1 else [],
                  [*segments[keep_from:hit + 1], ELLIPSIS] if tail else []):
        if parts and fm.advance(lead + "/".join(parts)) <= width:
            return lead + "/".join(parts)
    return fm.fm.elidedText(lead + "/".join(segments[keep_from:]), Qt.TextElideMode.ElideRight, width)


def _list_line(line: str) -> str:
    """A to-do item with a box (☐ open, ☑ done), other list lines as they are."""
    if (todo := _TODO.match(line)) is not None:
        return todo.group(1) + ("☑ " if todo.group(2) in "xX" else "☐ ") + line[todo.end():]
    return line


def snippet_text(m: Memory, title: str, pattern: re.Pattern[str] | None, width: int = 420,
                 passage: str | None = None) -> str:
    """The prose under a title: the flattened text after it (or, for an email, its body), from the first matched
    word's sentence when that is further on. `passage`: in a long memory, the part that matched the query
    (core/models.Passage), shown instead ("…" before it)."""
    if passage is not None:
        return _passage_snippet(passage, pattern, width)
    if not m.title and kinds.kind_of(m) == "email":  # the headers but the subject, then the message
        body = "\n".join(ln for ln in m.content.splitlines() if not _SUBJECT.match(ln))
    else:  # the text after its title (an enriched title is left out when the text starts with it too)
        body = display.after_title(m.content, title.removesuffix(ELLIPSIS).rstrip())
        if m.title and body == " ".join(m.content.split()):
            flat, head = body, " ".join(title.split())
            body = flat[len(head):].lstrip(" ,;:—-") if flat.casefold().startswith(head.casefold()) else flat
    return _around(" ".join(body.split()), pattern, width)


def _around(flat: str, pattern: re.Pattern[str] | None, width: int) -> str:
    if pattern and (found := pattern.search(flat)) and found.start() > width // 4:
        start = flat.rfind(" ", 0, found.start() - 40) + 1
        return ELLIPSIS + " " + flat[start:start + width]
    return flat[:width]


def _passage_snippet(passage: str, pattern: re.Pattern[str] | None, width: int) -> str:
    """The matched passage of a long memory: from its first matched word's line or sentence, "…" before it."""
    flat = " ".join(passage.split())
    if pattern and (found := pattern.search(flat)) and found.start() > width // 4:
        start = flat.rfind(" ", 0, found.start() - 40) + 1
        flat = flat[start:]
    return ELLIPSIS + " " + flat[:width]


def title_text(m: Memory) -> str:
    """The headline: the memory's title, an email's subject, else its first line (up to 200 characters; a row
    cuts it at a word where its line ends and, when there is more, goes on with it on the next line)."""
    if not m.title and (subject := _SUBJECT.search(m.content)) and kinds.kind_of(m) == "email":
        return " ".join(subject.group(1).split())[:200]
    if m.title:
        return " ".join(m.title.split())
    line = next((" ".join(ln.split()) for ln in m.content.splitlines() if ln.strip()), "")
    if len(line) <= 200:
        return line or "(empty)"
    cut = line.rfind(" ", 100, 200)
    return line[: cut if cut > 0 else 200].rstrip(" ,;:") + " " + ELLIPSIS


def _same(a: str, b: str) -> bool:
    return " ".join(a.split()).casefold() == " ".join(b.split()).casefold()


class Metrics:
    """QFontMetricsF that keeps the advance of each text it measured (words repeat from row to row and keystroke to
    keystroke; measuring one costs a few microseconds, looking it up a few dozen nanoseconds)."""

    _fonts: dict[str, Metrics] = {}

    def __init__(self, font: QFont) -> None:
        self.fm = QFontMetricsF(font)
        self._advances: dict[str, float] = {}

    @classmethod
    def of(cls, font: QFont) -> Metrics:
        if (known := cls._fonts.get(key := font.key())) is None:
            known = cls._fonts[key] = cls(font)
        return known

    def advance(self, text: str) -> float:
        if (known := self._advances.get(text)) is None:
            if len(self._advances) >= 20_000:
                self._advances.clear()
            known = self._advances[text] = self.fm.horizontalAdvance(text)
        return known


def layout_flow(items: list[Run], fonts: tuple[QFont, QFont], width: float, max_lines: int,
                ellipsis: bool = True) -> list[list[tuple[str, bool, float]]]:
    """Words placed on at most `max_lines` lines of `width`, cut at a word boundary with "…" when the text goes on
    (without it when `ellipsis` is False: the next line goes on with the rest). A matched part of a longer word (a
    path, a URL) stays on its word's line, the word cut by characters. Returns per line (text, matched, x)."""
    plain, bold = Metrics.of(fonts[0]), Metrics.of(fonts[1])
    lines: list[list[tuple[str, bool, float]]] = [[]]
    x, cut, glued = 0.0, False, False
    tokens = [(t, r.hit) for r in items for t in _TOKEN.findall(r.text)]
    for i, (tok, hit) in enumerate(tokens):
        fm = bold if hit else plain
        word = tok.rstrip()
        if not word:
            if lines[-1]:
                x += fm.advance(tok)
            glued = False
            continue
        w = fm.advance(word)
        if glued and lines[-1] and x + w > width:  # the rest of a word split at a match: cut by characters
            if width - x > fm.advance(ELLIPSIS) * 2:
                lines[-1].append((fm.fm.elidedText(word, Qt.TextElideMode.ElideRight, width - x), hit, x))
            elif lines[-1][-1][0] != ELLIPSIS:
                lines[-1].append((ELLIPSIS, False, x))
            return lines
        glued = tok == word
        if x > 0 and x + w > width:
            if len(lines) == max_lines:
                cut = True
                break
            lines.append([])
            x = 0.0
        if w > width - x:  # one word longer than the line (a URL, a path): cut it by characters
            text = fm.fm.elidedText(word, Qt.TextElideMode.ElideRight, width - x)
            lines[-1].append((text, hit, x))
            x += fm.advance(text)
            if i + 1 < len(tokens) and len(lines) == max_lines:
                return lines
            if len(lines) == max_lines:
                return lines
            lines.append([])
            x = 0.0
            continue
        lines[-1].append((word, hit, x))
        x += fm.advance(tok)
    if not lines[-1] and len(lines) > 1:
        lines.pop()
    if cut and ellipsis:
        last = lines[-1]
        ell = plain.advance(" " + ELLIPSIS)

        def end_of(item: tuple[str, bool, float]) -> float:
            return item[2] + (bold if item[1] else plain).advance(item[0])

        while len(last) > 1 and end_of(last[-1]) + ell > width:
            last.pop()
        end = end_of(last[-1]) if last else 0.0
        last.append((ELLIPSIS, False, end + plain.advance(" ")))
    return lines


def continued(title: str, shown: list[list[tuple[str, bool, float]]], body: str) -> str:
    """The snippet going on where the drawn title stopped (a first line too long for the row's width)."""
    words = title.removesuffix(ELLIPSIS).split()
    drawn = sum(len(word.split()) for line in shown for word, _hit, _x in line if word != ELLIPSIS)
    rest = " ".join(words[drawn:])
    return f"{rest} {body}".strip() if rest else body


def secondary(palette: QPalette) -> QColor:
    """Secondary text: the text colour blended 30 % toward the background (contrast stays above 4.5:1)."""
    text, base = palette.color(QPalette.ColorRole.Text), palette.color(QPalette.ColorRole.Base)
    return ensure_contrast(_blend(text, base, 0.7), base)


def is_dark(palette: QPalette) -> bool:
    return palette.color(QPalette.ColorRole.Base).lightness() < 128


def luminance(c: QColor) -> float:
    """WCAG relative luminance of an opaque colour."""
    def channel(v: int) -> float:
        x = v / 255
        return x / 12.92 if x <= 0.04045 else ((x + 0.055) / 1.055) ** 2.4
    return 0.2126 * channel(c.red()) + 0.7152 * channel(c.green()) + 0.0722 * channel(c.blue())


def contrast(a: QColor, b: QColor) -> float:
    """WCAG contrast ratio of two opaque colours (1 to 21)."""
    hi, lo = sorted((luminance(a), luminance(b)), reverse=True)
    return (hi + 0.05) / (lo + 0.05)


def _blend(a: QColor, b: QColor, share: float) -> QColor:
    """`share` of `a` over `b`, opaque."""
    return QColor(*(round(x * share + y * (1 - share)) for x, y in
                    ((a.red(), b.red()), (a.green(), b.green()), (a.blue(), b.blue()))))


def ensure_contrast(fg: QColor, bg: QColor, ratio: float = TEXT_CONTRAST) -> QColor:
    """`fg`, moved toward black or white (whichever the background allows) until it reads at `ratio` on `bg`."""
    fg = _blend(fg, bg, 1.0)
    if contrast(fg, bg) >= ratio:
        return fg
    target = QColor("white") if contrast(QColor("white"), bg) >= contrast(QColor("black"), bg) else QColor("black")
    for step in range(1, 21):
        moved = _blend(target, fg, step / 20)
        if contrast(moved, bg) >= ratio:
            return moved
    return target


@dataclass(frozen=True)
class RowColours:
    """The opaque colours a row is painted with in one state; every text colour reads at TEXT_CONTRAST (4.5:1,
    WCAG AA) on what it is painted on: title, snippet and meta on `background`, matched words on `mark`, the
    "+N similar" label on `chip`."""

    background: QColor  # the row's surface: the list's base with the row's tint (selected, cursor, hover)
    tinted: bool  # the row has a tint of its own (else the list's base shows through)
    text: QColor  # titles
    dim: QColor  # snippets and the meta (app, date)
    mark: QColor  # behind a matched word
    hit: QColor  # a matched word
    chip: QColor
    chip_text: QColor
    accent: QColor  # the cursor row's bar


def row_colours(palette: QPalette, *, selected: bool, current: bool, hovered: bool) -> RowColours:
    """The colours of a row in a palette and state (the one place the painter takes them from). A transparent
    base (a style sheet's "background: transparent") is the application palette's."""
    base = palette.color(QPalette.ColorRole.Base)
    if base.alpha() < 255:
        base = _blend(base, QGuiApplication.palette().color(QPalette.ColorRole.Base), base.alphaF())
    accent = palette.color(QPalette.ColorRole.Highlight)
    dark = is_dark(palette)
    share = 0.30 if (selected and current) else 0.17 if selected else 0.07 if (hovered or current) else 0.0
    background = _blend(accent, base, share)
    text = ensure_contrast(palette.color(QPalette.ColorRole.Text), background)
    dim = ensure_contrast(_blend(palette.color(QPalette.ColorRole.Text), base, 0.7), background)
    # a matched word's mark: the accent, strong enough to be seen on the row (1.4:1), never so strong that the
    # word on it gets hard to read
    mark = background
    for step in range(5, 15):
        mark = _blend(accent, background, step * (0.05 if dark else 0.04))
        if contrast(mark, background) >= MARK_CONTRAST:
            break
    hit = ensure_contrast(text, mark)
    chip = _blend(accent, background, 0.28)
    return RowColours(background, share > 0, text, dim, mark, hit, chip, ensure_contrast(text, chip),
                      accent)


class RowPainter:
    """Fonts and metrics for rows drawn in one widget's font.

    A row is one line (`compact_height`) for a memory that has nothing more to show, else the title and one or
    two lines under it (`height_of`), worked out from the text and the fonts, never from the list's width.
    What a row shows is worked out once and kept (a few hundred rows): its text per memory (from at most
    SCAN_CHARS of it), its layout per memory, query and width. A repaint (the cursor moved, the mouse hovered, the
    next keystroke's results hold the same memory) only draws: a few text runs per row, not one per word."""

    def __init__(self, font: QFont) -> None:
        self.font = QFont(font)
        self.bold = QFont(font)
        self.bold.setWeight(QFont.Weight.DemiBold)
        self.title_font = QFont(font)
        self.title_font.setPointSizeF(font.pointSizeF() * 1.06 if font.pointSizeF() > 0 else 10)
        self.title_bold = QFont(self.title_font)
        self.title_bold.setWeight(QFont.Weight.Bold)
        self.title_font.setWeight(QFont.Weight.DemiBold)
        self.small = QFont(font)
        self.small.setPointSizeF(font.pointSizeF() * 0.9 if font.pointSizeF() > 0 else 9)
        self.mono = kinds.monospace(font)
        self.mono_bold = QFont(self.mono)
        self.mono_bold.setWeight(QFont.Weight.Bold)
        self.mono_title = kinds.monospace(self.title_font)
        self.mono_title.setWeight(QFont.Weight.DemiBold)
        self.mono_title_bold = QFont(self.mono_title)
        self.mono_title_bold.setWeight(QFont.Weight.Bold)
        self.struck = {id(f): _struck(f) for f in (self.title_font, self.title_bold, self.mono_title,
                                                   self.mono_title_bold)}
        self.title_h = max(QFontMetricsF(self.title_bold).height(), QFontMetricsF(self.mono_title_bold).height())
        self.line_h = max(QFontMetricsF(self.font).lineSpacing(), QFontMetricsF(self.mono).lineSpacing())
        self.compact_height = self.height(0)
        self.row_height = self.height(2)  # the tallest row
        self._texts: OrderedDict[tuple[object, ...], RowText] = OrderedDict()
        self._layouts: OrderedDict[tuple[object, ...], RowLayout] = OrderedDict()

    def height(self, lines: int) -> int:
        """The height of a row with a title and `lines` lines under it (0: a one-line row)."""
        if lines <= 0:
            return int(2 * PAD_Y_COMPACT + max(self.title_h, ICON_COMPACT) + 2 * MARGIN / 3) + 1
        return int(2 * PAD_Y + self.title_h + 2 + lines * self.line_h + 2 * MARGIN / 3) + 1

    def height_of(self, m: Memory, passage: Passage | None = None) -> int:
        """The height of a memory's row (its title and as many lines as it has more to show, up to two)."""
        return self.height(2 if passage is not None else self.text_of(m).lines_shown)

    def meta_parts(self, m: Memory, similar: tuple[list[Memory], bool] | None) -> tuple[str, str]:
        """(the "+N similar" label or "", the right-hand meta: a code's language, app or source, and date)."""
        app = m.source_app or m.source
        kind = kinds.kind_info(m)
        language = kinds.label(kind) if kind.name == "code" and kind.language else ""
        parts = [p for p in (("Forgotten" if m.forgotten else ""), ("Pinned" if m.pinned else ""), language, app,
                             display.relative_time(m.created_at)) if p]
        label = ""
        if similar:
            others, opened = similar
            label = f"− {len(others)} similar" if opened else f"+{len(others)} similar"
        return label, " · ".join(parts)

    def similar_rect(self, rect: QRect, m: Memory, similar: tuple[list[Memory], bool] | None, query: str,
                     passage: Passage | None = None) -> QRectF:
        """Where "+N similar" is drawn in a row (empty when there is none)."""
        lay = self.layout(rect.width(), rect.height(), m, query, 0, similar, passage)
        return lay.chip.translated(QPointF(rect.topLeft())) if lay.label else QRectF()

    def _box(self, rect: QRect | QRectF, indent: int) -> QRectF:
        return QRectF(rect).adjusted(MARGIN + indent, MARGIN / 3, -MARGIN, -MARGIN / 3)

    def text_of(self, m: Memory) -> RowText:
        """What a memory's row shows before the query and the width are known, worked out once per memory text."""
        key = (m.id, m.content_hash, len(m.content), m.updated_at, m.title)
        if (known := self._texts.get(key)) is not None:
            self._texts.move_to_end(key)
            return known
        short = m if len(m.content) <= SCAN_CHARS else replace(m, content=str(m.content[:SCAN_CHARS]))
        known = self._row_text(short)
        self._texts[key] = known
        if len(self._texts) > CACHED_ROWS:
            self._texts.popitem(last=False)
        return known

    def _lines_for(self, text: str, font: QFont, width: float) -> int:
        """About how many lines `text` wraps to at `width` (words do not fill a line to its end)."""
        if not text:
            return 0
        advance = Metrics.of(font).advance(text[:400]) if len(text) <= 400 else width * 3
        return 1 if advance <= width else 1 + int((advance - width) // (width * 0.9)) + 1

    def _row_text(self, m: Memory) -> RowText:
        kind = kinds.kind_info(m)
        title = title_text(m)
        text_w = NOMINAL_WIDTH - 2 * MARGIN - 2 * PAD_X - ICON - GAP
        title_w = text_w - QFontMetricsF(self.small).averageCharWidth() * 24  # the meta on the title's line
        lines = [ln.rstrip() for ln in islice(m.content.splitlines(), SCAN_LINES) if ln.strip()]
        if kind.name == "link":
            url, _, after = m.content.strip().partition(" ")
            desc = after.strip().lstrip("-–—|:").strip()
            if m.title:
                return RowText(m, kind, title, False, False, (readable_url(url),), "", 1, False)
            return RowText(m, kind, readable_url(url), False, True, (), " ".join(desc.split()), 1 if desc else 0,
                           False)
        if kind.name in STRUCTURED and not (kind.name == "json" and len(lines) == 1):
            own = bool(m.title)
            rest = lines if own else lines[1:]
            if own and rest and _same(rest[0], title):
                rest = rest[1:]
            mono = kind.name in kinds.MONOSPACED
            if kind.name == "code":
                rest = textwrap.dedent("\n".join(rest)).splitlines()
            elif kind.name == "list":
                rest = [_list_line(ln) for ln in rest]
                title = _list_line(title) if not own else title
            elif kind.name in ("person", "address"):
                rest = [" · ".join(" ".join(ln.split()) for ln in rest)] if rest else []
            if not own and kind.name in kinds.MONOSPACED:
                title = next((ln.strip() for ln in lines), title)
            if kind.name == "trace":  # the error is the headline, the frames nearest to it under it
                error = next((ln for ln in reversed(lines) if _ERROR_LINE.match(ln)), None)
                if error is not None and not own:
                    title = error.strip()
                    rest = [ln for ln in lines if ln is not error and not ln.startswith("Traceback (")][-2:]
            return RowText(m, kind, title, not own and mono, False, tuple(rest), "", min(2, len(rest)), mono)
        # prose: the title, then the text after it, flowing
        body = snippet_text(m, title, None, width=2000)
        if not m.title and kind.name != "email":
            first = next((" ".join(ln.split()) for ln in lines), "")
            spill = max(0, self._lines_for(first, self.title_bold, title_w) - 1)
            more = len(lines) > 1
            shown = min(2, spill + (self._lines_for(" ".join(" ".join(lines[1:3]).split()), self.font, text_w)
                                    if more else 0))
            return RowText(m, kind, title, False, False, (), body, shown, False)
        return RowText(m, kind, title, False, False, (), body, min(2, self._lines_for(body, self.font, text_w)),
                       False)

    def layout(self, width: int, height: int, m: Memory, query: str, indent: int,
               similar: tuple[list[Memory], bool] | None, passage: Passage | None = None) -> RowLayout:
        """Where everything of a row goes (relative to its top-left corner), kept per memory, query, size and
        the passage that matched (a long memory's snippet shows it)."""
        label, meta = self.meta_parts(m, similar)
        key = (m.id, m.content_hash, len(m.content), m.updated_at, m.title, query, width, height, indent, label,
               meta, m.forgotten, passage)
        if (known := self._layouts.get(key)) is not None:
            self._layouts.move_to_end(key)
            return known
        shown = passage.of(m) if passage is not None else None
        lay = self._make_layout(QRectF(0, 0, width, height), m, query, indent, label, meta, shown)
        self._layouts[key] = lay
        if len(self._layouts) > CACHED_ROWS:
            self._layouts.popitem(last=False)
        return lay

    def _make_layout(self, rect: QRectF, m: Memory, query: str, indent: int, label: str, meta: str,
                     passage: str | None) -> RowLayout:
        row = self.text_of(m)
        kind, title = row.kind.name, row.title
        box, box0 = self._box(rect, indent), self._box(rect, 0)
        n = 2 if passage is not None else row.lines_shown
        compact = n == 0
        icon_size = ICON_COMPACT if compact else ICON
        left = box.left() + PAD_X - 4 + ICON + GAP
        right = box.right() - PAD_X
        pattern = highlight_pattern(query)
        small = QFontMetricsF(self.small)
        # right-hand side of the title line: "+N similar", then app and date
        title_right = box0.right() - PAD_X - small.horizontalAdvance(meta) - GAP
        chip_left = title_right
        if label:
            chip_left = title_right - small.horizontalAdvance(label) - 12
            title_right = chip_left - GAP
        top = box.top() + (box.height() - self.title_h) / 2 if compact else box.top() + PAD_Y
        icon_y = box.top() + (box.height() - icon_size) / 2 if compact else box.top() + PAD_Y + 1
        icon_x = box.left() + PAD_X - 4 + (ICON - icon_size) / 2
        base = top + (self.title_h - small.height()) / 2 + small.ascent()
        chip = QRectF(chip_left, top - 1, small.horizontalAdvance(label) + 12, self.title_h + 2) if label else QRectF()
        pieces: list[Piece] = []
        # the title: one line, cut at a word boundary (going on below when there is more), matched words marked
        fonts = (self.mono_title, self.mono_title_bold) if row.mono_title else (self.title_font, self.title_bold)
        if m.forgotten:
            fonts = (self.struck[id(fonts[0])], self.struck[id(fonts[1])])
        flows_on = n > 0 and not row.lines and not row.memory.title and kind != "email" and passage is None
        if row.url_title:
            title = fit_url(title, title_right - left, Metrics.of(fonts[1]), pattern)
        shown = self._flow(pieces, runs(title, pattern), fonts, left, top, title_right - left, 1, self.title_h,
                           dim=False, ellipsis=not flows_on)
        y = top + self.title_h + 2
        if passage is not None or not row.lines:  # prose: the text after the title, flowing over its lines
            body = (snippet_text(row.memory, title, pattern, passage=passage) if passage is not None or pattern
                    else row.body)
            if flows_on and not body.startswith(ELLIPSIS):
                body = continued(title, shown, body)
            if row.url_title or kind == "link":
                body = row.body
            if body and n:
                self._flow(pieces, runs(body, pattern), (self.font, self.bold), left, y, right - left, n,
                           self.line_h, dim=True)
        else:  # structured: its lines as they are (the one that matched when it is further down)
            lines = list(row.lines)
            start = 0
            if pattern and not pattern.search(title) and not any(pattern.search(ln) for ln in lines[:n]):
                start = next((i for i, ln in enumerate(lines) if pattern.search(ln)), 0)
                start = max(0, start - (1 if n > 1 else 0))
            for i, line in enumerate(lines[start:start + n]):
                if kind == "link" and row.memory.title:
                    line = fit_url(line, right - left, Metrics.of(self.font), pattern)
                text = line.replace("\t", "    ")
                if start and i == 0 and not row.mono:
                    text = ELLIPSIS + " " + text.lstrip()
                if row.mono:
                    self._flow(pieces, runs(text, pattern), (self.mono, self.mono_bold), left, y + i * self.line_h,
                               right - left, 1, self.line_h, dim=True, keep_spaces=True)
                else:
                    self._flow(pieces, runs(text, pattern), (self.font, self.bold), left, y + i * self.line_h,
                               right - left, 1, self.line_h, dim=True)
        return RowLayout(kind, QPointF(icon_x, icon_y), icon_size, meta,
                         QPointF(right - small.horizontalAdvance(meta), base), label, chip, pieces,
                         m.source_app or "")

    def paint(self, p: QPainter, rect: QRect, palette: QPalette, m: Memory, query: str, *, selected: bool,
              current: bool, hovered: bool, indent: int, similar: tuple[list[Memory], bool] | None,
              dpr: float, passage: Passage | None = None) -> None:
        lay = self.layout(rect.width(), rect.height(), m, query, indent, similar, passage)
        p.save()
        p.translate(QPointF(rect.topLeft()))
        p.setRenderHint(QPainter.RenderHint.Antialiasing)
        p.setRenderHint(QPainter.RenderHint.TextAntialiasing)
        dark = is_dark(palette)
        colours = row_colours(palette, selected=selected, current=current, hovered=hovered)
        box = self._box(QRectF(0, 0, rect.width(), rect.height()), indent)
        if colours.tinted:
            p.setPen(Qt.PenStyle.NoPen)
            p.setBrush(colours.background)
            p.drawRoundedRect(box, 7, 7)
            if current and selected:  # the cursor row: an accent bar at its left edge
                p.setBrush(colours.accent)
                inset = min(8.0, box.height() / 4)
                p.drawRoundedRect(QRectF(box.left() + 2, box.top() + inset, 3, box.height() - 2 * inset), 1.5, 1.5)
        p.drawPixmap(lay.icon, kinds.icon(lay.kind, lay.icon_size, dpr, dark))
        if lay.app and (badge := kinds.badge(lay.app, BADGE, dpr)) is not None:
            p.drawPixmap(QPointF(lay.icon.x() + lay.icon_size - BADGE + 3, lay.icon.y() + lay.icon_size - BADGE + 3),
                         badge)
        p.setFont(self.small)
        p.setPen(colours.dim)
        p.drawText(lay.meta_at, lay.meta)
        if lay.label:
            p.setPen(Qt.PenStyle.NoPen)
            p.setBrush(colours.chip)
            p.drawRoundedRect(lay.chip, lay.chip.height() / 2, lay.chip.height() / 2)
            p.setPen(colours.chip_text)
            p.drawText(lay.chip, Qt.AlignmentFlag.AlignCenter, lay.label)
        p.setPen(Qt.PenStyle.NoPen)
        p.setBrush(colours.mark)
        for piece in lay.pieces:
            if piece.mark is not None:
                p.drawRoundedRect(piece.mark, 3, 3)
        for piece in lay.pieces:
            p.setFont(piece.font)
            p.setPen(colours.hit if piece.mark is not None else colours.dim if piece.dim else colours.text)
            p.drawText(QPointF(piece.x, piece.baseline), piece.text)
        p.restore()

    def _flow(self, pieces: list[Piece], items: list[Run], fonts: tuple[QFont, QFont], left: float, top: float,
              width: float, max_lines: int, line_h: float, *, dim: bool, keep_spaces: bool = False,
              ellipsis: bool = True) -> list[list[tuple[str, bool, float]]]:
        """Lay out `items` (see layout_flow) and add their text runs to `pieces`; returns the lines."""
        if width <= 20:
            return []
        # code keeps its indentation and is cut by characters at the right edge
        lines = (_code_line(items, fonts, width) if keep_spaces
                 else layout_flow(items, fonts, width, max_lines, ellipsis))
        metrics = (Metrics.of(fonts[0]), Metrics.of(fonts[1]))
        space = metrics[0].advance(" ")
        for n, line in enumerate(lines):
            base = top + n * line_h
            run: list[str] = []  # plain words drawn as one text: x of its first word, where it ends
            run_x = run_end = 0.0
            for word, hit, x in [*line, ("", True, 0.0)]:  # a final empty hit flushes the last plain run
                fm = metrics[1 if hit else 0]
                if not hit and run and abs(x - (run_end + space)) < 0.01:
                    run.append(word)
                    run_end = x + fm.advance(word)
                    continue
                if run:
                    pieces.append(self._piece(" ".join(run), left + run_x, base, fonts[0], metrics[0], line_h, dim))
                    run = []
                if not word:
                    continue
                if not hit:
                    run, run_x, run_end = [word], x, x + fm.advance(word)
                    continue
                mark = QRectF(left + x - 1.5, base + 1, fm.advance(word) + 3, line_h - 2)
                pieces.append(self._piece(word, left + x, base, fonts[1], fm, line_h, dim, mark))
        return lines

    @staticmethod
    def _piece(text: str, x: float, top: float, font: QFont, fm: Metrics, line_h: float, dim: bool,
               mark: QRectF | None = None) -> Piece:
        return Piece(text, x, top + (line_h - fm.fm.height()) / 2 + fm.fm.ascent(), font, mark, dim)


def _struck(font: QFont) -> QFont:
    out = QFont(font)
    out.setStrikeOut(True)
    return out


def _code_line(items: list[Run], fonts: tuple[QFont, QFont], width: float) -> list[list[tuple[str, bool, float]]]:
    """One code line as it is (spaces kept), cut with "…" at the right edge."""
    out: list[tuple[str, bool, float]] = []
    x = 0.0
    for r in items:
        fm = QFontMetricsF(fonts[1] if r.hit else fonts[0])
        w = fm.horizontalAdvance(r.text)
        if x + w > width:
            out.append((fm.elidedText(r.text, Qt.TextElideMode.ElideRight, width - x), r.hit, x))
            break
        out.append((r.text, r.hit, x))
        x += w
    return [out]
