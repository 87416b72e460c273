"""How one result row is drawn, with QPainter (no rich-text documents): a kind icon, a title cut at a word boundary,
a two-line snippet (monospace with its line breaks kept for code), matched words highlighted in both, and on the
right the source app, the relative date and "+N similar".

Every row has the same height, computed from the fonts only. A row height that depends on the list's width made
a feedback loop once results overflowed: the scrollbar appeared, the viewport narrowed, rows grew taller, the
scrollbar range changed, the scrollbar hid, rows got shorter... ~2,000 times a second (issue 19)."""

from __future__ import annotations

import re
import textwrap
from collections import OrderedDict
from dataclasses import dataclass, replace

from PySide6.QtCore import QPointF, QRect, QRectF, Qt
from PySide6.QtGui import QColor, QFont, QFontMetricsF, QPainter, QPalette

from ..core.models import Memory, Passage
from ..core.query import STOP_WORDS
from . import display, kinds

PAD_X, PAD_Y, ICON, GAP = 12, 8, 28, 10
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
    meta: str
    meta_at: QPointF
    label: str  # "+N similar" or ""
    chip: QRectF  # where the label is (empty without one)
    pieces: list[Piece]


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


def snippet_text(m: Memory, title: str, pattern: re.Pattern[str] | None, code: bool, width: int = 420,
                 passage: str | None = None) -> str:
    """The text under the title: for code its next lines as they are; else the flattened text from the first matched
    word's sentence (or the start), enough to fill two lines. `passage`: in a long memory, the part that matched the
    query (core/models.Passage), shown instead of the text after the title ("…" before it)."""
    if passage is not None:
        return _passage_snippet(passage, pattern, code, width)
    if code:
        lines = [ln.rstrip() for ln in m.content.splitlines() if ln.strip()]
        rest = lines[1:] if not m.title else lines
        if pattern:
            hit = next((i for i, ln in enumerate(rest) if pattern.search(ln)), 0)
            rest = rest[max(0, hit - 1):] if hit > 1 else rest
        return textwrap.dedent("\n".join(rest[:2]))
    if not m.title and kinds.kind_of(m) == "email":  # the headers but the subject, then the message
        body = "\n".join(ln for ln in m.content.splitlines() if not _SUBJECT.match(ln))
    else:
        body = m.content if m.title else display.after_title(m.content, title.removesuffix(ELLIPSIS).rstrip())
    flat = " ".join(body.split())
    if pattern and (found := pattern.search(flat)) and found.start() > width // 4:
        start = flat.rfind(" ", 0, found.start() - 40) + 1
        return ELLIPSIS + " " + flat[start:start + width]
    return flat[:width]


def _passage_snippet(passage: str, pattern: re.Pattern[str] | None, code: bool, width: int) -> str:
    """The matched passage of a long memory: from its first matched word's line or sentence, "…" before it."""
    if code:
        lines = [ln.rstrip() for ln in passage.splitlines() if ln.strip()]
        hit = next((i for i, ln in enumerate(lines) if pattern and pattern.search(ln)), 0)
        return textwrap.dedent("\n".join(lines[hit : hit + 2]))
    flat = " ".join(passage.split())
    if pattern and (found := pattern.search(flat)) and found.start() > width // 4:
        start = flat.rfind(" ", 0, found.start() - 40) + 1
        flat = flat[start:]
    return ELLIPSIS + " " + flat[:width]


_SUBJECT = re.compile(r"^subject:\s*(.+)$", re.IGNORECASE | re.MULTILINE)


def title_text(m: Memory) -> str:
    """The headline: the memory's title, an email's subject, else its first line (up to 90 characters, cut at a
    word; the snippet goes on from there)."""
    if not m.title and (subject := _SUBJECT.search(m.content)) and kinds.kind_of(m) == "email":
        return " ".join(subject.group(1).split())[:200]
    if m.title:
        return " ".join(m.title.split())
    line = next((" ".join(ln.split()) for ln in m.content.splitlines() if ln.strip()), "")
    if len(line) <= TITLE_CHARS:
        return line or "(empty)"
    cut = line.rfind(" ", TITLE_CHARS // 2, TITLE_CHARS)
    return line[: cut if cut > 0 else TITLE_CHARS].rstrip(" ,;:") + " " + ELLIPSIS


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


def layout_flow(items: list[Run], fonts: tuple[QFont, QFont], width: float, max_lines: int
                ) -> list[list[tuple[str, bool, float]]]:
    """Words placed on at most `max_lines` lines of `width`, cut at a word boundary with "…" when the text goes on.
    Returns per line (text, matched, x)."""
    plain, bold = Metrics.of(fonts[0]), Metrics.of(fonts[1])
    lines: list[list[tuple[str, bool, float]]] = [[]]
    x, cut = 0.0, False
    tokens = [(t, r.hit) for r in items for t in _TOKEN.findall(r.text)]
    for i, (tok, hit) in enumerate(tokens):
        fm = bold if hit else plain
        word = tok.rstrip()
        if not word:
            if lines[-1]:
                x += fm.advance(tok)
            continue
        w = fm.advance(word)
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
    if cut:
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
    drawn = sum(1 for line in shown for word, _hit, _x in line if word != ELLIPSIS)
    rest = " ".join(words[drawn:])
    return f"{rest} {body}" if rest else body


def secondary(palette: QPalette) -> QColor:
    """Secondary text: the text colour blended 30 % toward the background (contrast stays above 4.5:1)."""
    text, base = palette.color(QPalette.ColorRole.Text), palette.color(QPalette.ColorRole.Base)
    rgb = zip((text.red(), text.green(), text.blue()), (base.red(), base.green(), base.blue()), strict=True)
    return QColor(*(int(a * 0.7 + b * 0.3) for a, b in rgb))


def is_dark(palette: QPalette) -> bool:
    return palette.color(QPalette.ColorRole.Base).lightness() < 128


class RowPainter:
    """Fonts and metrics for rows drawn in one widget's font; row_height is the same for every row.

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
        self.struck = {id(f): _struck(f) for f in (self.title_font, self.title_bold)}
        self.title_h = QFontMetricsF(self.title_bold).height()
        self.line_h = max(QFontMetricsF(self.font).lineSpacing(), QFontMetricsF(self.mono).lineSpacing())
        self.row_height = int(2 * PAD_Y + self.title_h + 2 + 2 * self.line_h + 2 * MARGIN / 3) + 1
        self._texts: OrderedDict[tuple[object, ...], tuple[Memory, str, str]] = OrderedDict()
        self._layouts: OrderedDict[tuple[object, ...], RowLayout] = OrderedDict()

    def meta_parts(self, m: Memory, similar: tuple[list[Memory], bool] | None) -> tuple[str, str]:
        """(the "+N similar" label or "", the right-hand meta: app or source and date)."""
        app = m.source_app or m.source
        parts = [p for p in (("Forgotten" if m.forgotten else ""), ("Pinned" if m.pinned else ""), app,
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

    def text_of(self, m: Memory) -> tuple[Memory, str, str]:
        """(the memory with its text cut to SCAN_CHARS, its kind, its title), worked out once per memory text."""
        key = (m.id, m.content_hash, len(m.content), m.updated_at, m.title)
        if (known := self._texts.get(key)) is not None:
            self._texts.move_to_end(key)
            return known
        short = m if len(m.content) <= SCAN_CHARS else replace(m, content=str(m.content[:SCAN_CHARS]))
        known = (short, kinds.kind_of(short), title_text(short))
        self._texts[key] = known
        if len(self._texts) > CACHED_ROWS:
            self._texts.popitem(last=False)
        return known

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
        short, kind, title = self.text_of(m)
        box, box0 = self._box(rect, indent), self._box(rect, 0)
        left = box.left() + PAD_X - 4 + ICON + GAP
        right = box.right() - PAD_X
        pattern = highlight_pattern(query)
        code = kind == "code"
        body = snippet_text(short, title, pattern, code, passage=passage)
        small = QFontMetricsF(self.small)
        # right-hand side of the title line: "+N similar", then app and date
        title_right = box0.right() - PAD_X - small.horizontalAdvance(meta) - GAP
        chip_left = title_right
        if label:
            chip_left = title_right - small.horizontalAdvance(label) - 12
            title_right = chip_left - GAP
        # a title alone (no snippet, and it fits its line) sits in the middle of its row
        left0 = box0.left() + PAD_X - 4 + ICON + GAP
        too_long = QFontMetricsF(self.title_bold).horizontalAdvance(title) > title_right - left0
        top = box.top() + PAD_Y
        if not (too_long or title.endswith(ELLIPSIS) or body.strip()):
            top = box.top() + (box.height() - self.title_h) / 2
        centred = top > box.top() + PAD_Y
        icon_y = box.top() + (box.height() - ICON) / 2 if centred else box.top() + PAD_Y + 1
        base = top + (self.title_h - small.height()) / 2 + small.ascent()
        chip = QRectF(chip_left, top - 1, small.horizontalAdvance(label) + 12, self.title_h + 2) if label else QRectF()
        pieces: list[Piece] = []
        # the title: one line, cut at a word boundary, matched words bold and marked
        fonts = (self.title_font, self.title_bold)
        if m.forgotten:
            fonts = (self.struck[id(self.title_font)], self.struck[id(self.title_bold)])
        shown = self._flow(pieces, runs(title, pattern), fonts, left, top, title_right - left, 1, self.title_h,
                           dim=False)
        if not centred and not code and not body.startswith(ELLIPSIS) and not short.title and kind != "email":
            body = continued(title, shown, body)
        # the snippet: two lines; code keeps its lines, in monospace
        y = top + self.title_h + 2
        if code:
            for i, line in enumerate(body.splitlines()[:2]):
                self._flow(pieces, runs(line.replace("\t", "    "), pattern), (self.mono, self.mono_bold), left,
                           y + i * self.line_h, right - left, 1, self.line_h, dim=True, keep_spaces=True)
        elif body:
            self._flow(pieces, runs(body, pattern), (self.font, self.bold), left, y, right - left, 2, self.line_h,
                       dim=True)
        return RowLayout(kind, QPointF(box.left() + PAD_X - 4, icon_y), meta,
                         QPointF(right - small.horizontalAdvance(meta), base), label, chip, pieces)

    def paint(self, p: QPainter, rect: QRect, palette: QPalette, m: Memory, query: str, *, selected: bool,
              current: bool, hovered: bool, indent: int, similar: tuple[list[Memory], bool] | None,
              dpr: float, passage: Passage | None = None) -> None:
        lay = self.layout(rect.width(), rect.height(), m, query, indent, similar, passage)
        p.save()
        p.translate(QPointF(rect.topLeft()))
        p.setRenderHint(QPainter.RenderHint.Antialiasing)
        p.setRenderHint(QPainter.RenderHint.TextAntialiasing)
        dark = is_dark(palette)
        text = palette.color(QPalette.ColorRole.Text)
        dim = secondary(palette)
        accent = palette.color(QPalette.ColorRole.Highlight)
        box = self._box(QRectF(0, 0, rect.width(), rect.height()), indent)
        if selected or current or hovered:
            fill = QColor(accent)
            fill.setAlphaF(0.30 if (selected and current) else 0.17 if selected else 0.07)
            p.setPen(Qt.PenStyle.NoPen)
            p.setBrush(fill)
            p.drawRoundedRect(box, 7, 7)
            if current and selected:  # the cursor row: an accent bar at its left edge
                p.setBrush(accent)
                p.drawRoundedRect(QRectF(box.left() + 2, box.top() + 8, 3, box.height() - 16), 1.5, 1.5)
        p.drawPixmap(lay.icon, kinds.icon(lay.kind, ICON, dpr, dark))
        p.setFont(self.small)
        p.setPen(dim)
        p.drawText(lay.meta_at, lay.meta)
        if lay.label:
            pill = QColor(accent)
            pill.setAlphaF(0.22)
            p.setPen(Qt.PenStyle.NoPen)
            p.setBrush(pill)
            p.drawRoundedRect(lay.chip, lay.chip.height() / 2, lay.chip.height() / 2)
            p.setPen(text)
            p.drawText(lay.chip, Qt.AlignmentFlag.AlignCenter, lay.label)
        mark = QColor(accent)
        mark.setAlphaF(0.18)
        p.setPen(Qt.PenStyle.NoPen)
        p.setBrush(mark)
        for piece in lay.pieces:
            if piece.mark is not None:
                p.drawRoundedRect(piece.mark, 3, 3)
        for piece in lay.pieces:
            p.setFont(piece.font)
            p.setPen(dim if piece.dim else text)
            p.drawText(QPointF(piece.x, piece.baseline), piece.text)
        p.restore()

    def _flow(self, pieces: list[Piece], items: list[Run], fonts: tuple[QFont, QFont], left: float, top: float,
              width: float, max_lines: int, line_h: float, *, dim: bool, keep_spaces: bool = False
              ) -> list[list[tuple[str, bool, float]]]:
        """Lay out `items` (see layout_flow) and add their text runs to `pieces`; returns the lines."""
        if width <= 20:
            return []
        # code keeps its indentation and is cut by characters at the right edge
        lines = _code_line(items, fonts, width) if keep_spaces else layout_flow(items, fonts, width, max_lines)
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
