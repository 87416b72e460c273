"""How one result row is drawn, with QPainter (no rich-text documents): a kind icon, a title cut at a word boundary,
a two-line snippet (monospace with its line breaks kept for code), matched words highlighted in both, and on the
right the source app, the relative date and "+N similar".

Every row has the same height, computed from the fonts only. A row height that depends on the list's width made
a feedback loop once results overflowed: the scrollbar appeared, the viewport narrowed, rows grew taller, the
scrollbar range changed, the scrollbar hid, rows got shorter... ~2,000 times a second (issue 19)."""

from __future__ import annotations

import re
import textwrap
from dataclasses import dataclass

from PySide6.QtCore import QPointF, QRect, QRectF, Qt
from PySide6.QtGui import QColor, QFont, QFontMetricsF, QPainter, QPalette

from ..core.models import Memory
from ..core.query import STOP_WORDS
from . import display, kinds

PAD_X, PAD_Y, ICON, GAP = 12, 8, 28, 10
MARGIN = 6  # between the row's rounded background and the list's edge
ELLIPSIS = "…"
TITLE_CHARS = 90
_TOKEN = re.compile(r"\S+\s*|\s+")
_WORD = re.compile(r"\w+", re.UNICODE)


@dataclass(frozen=True)
class Run:
    text: str
    hit: bool  # a matched query word


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


def snippet_text(m: Memory, title: str, pattern: re.Pattern[str] | None, code: bool, width: int = 420) -> str:
    """The text under the title: for code its next lines as they are; else the flattened text from the first matched
    word's sentence (or the start), enough to fill two lines."""
    if code:
        lines = [ln.rstrip() for ln in m.content.splitlines() if ln.strip()]
        rest = lines[1:] if not m.title else lines
        if pattern:
            hit = next((i for i, ln in enumerate(rest) if pattern.search(ln)), 0)
            rest = rest[max(0, hit - 1):] if hit > 1 else rest
        return textwrap.dedent("\n".join(rest[:2]))
    if not m.title and kinds.kind_of(m) == "email":  # the headers but the subject, then the message
        rest = "\n".join(ln for ln in m.content.splitlines() if not _SUBJECT.match(ln))
    else:
        rest = m.content if m.title else display.after_title(m.content, title.removesuffix(ELLIPSIS).rstrip())
    flat = " ".join(rest.split())
    if pattern and (hit := pattern.search(flat)) and hit.start() > width // 4:
        start = flat.rfind(" ", 0, hit.start() - 40) + 1
        return ELLIPSIS + " " + flat[start:start + width]
    return flat[:width]


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


def layout_flow(items: list[Run], fonts: tuple[QFont, QFont], width: float, max_lines: int
                ) -> list[list[tuple[str, bool, float]]]:
    """Words placed on at most `max_lines` lines of `width`, cut at a word boundary with "…" when the text goes on.
    Returns per line (text, matched, x)."""
    plain, bold = QFontMetricsF(fonts[0]), QFontMetricsF(fonts[1])
    lines: list[list[tuple[str, bool, float]]] = [[]]
    x, cut = 0.0, False
    tokens = [(t, r.hit) for r in items for t in _TOKEN.findall(r.text)]
    for i, (tok, hit) in enumerate(tokens):
        fm = bold if hit else plain
        word = tok.rstrip()
        if not word:
            if lines[-1]:
                x += fm.horizontalAdvance(tok)
            continue
        w = fm.horizontalAdvance(word)
        if x > 0 and x + w > width:
            if len(lines) == max_lines:
                cut = True
                break
            lines.append([])
            x = 0.0
        if w > width - x:  # one word longer than the line (a URL, a path): cut it by characters
            text = fm.elidedText(word, Qt.TextElideMode.ElideRight, width - x)
            lines[-1].append((text, hit, x))
            x += fm.horizontalAdvance(text)
            if i + 1 < len(tokens) and len(lines) == max_lines:
                return lines
            if len(lines) == max_lines:
                return lines
            lines.append([])
            x = 0.0
            continue
        lines[-1].append((word, hit, x))
        x += fm.horizontalAdvance(tok)
    if not lines[-1] and len(lines) > 1:
        lines.pop()
    if cut:
        last = lines[-1]
        ell = plain.horizontalAdvance(" " + ELLIPSIS)

        def end_of(item: tuple[str, bool, float]) -> float:
            return item[2] + (bold if item[1] else plain).horizontalAdvance(item[0])

        while len(last) > 1 and end_of(last[-1]) + ell > width:
            last.pop()
        end = end_of(last[-1]) if last else 0.0
        last.append((ELLIPSIS, False, end + plain.horizontalAdvance(" ")))
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
    return QColor(*(int(a * 0.7 + b * 0.3) for a, b in zip(text.getRgb()[:3], base.getRgb()[:3], strict=True)))


def is_dark(palette: QPalette) -> bool:
    return palette.color(QPalette.ColorRole.Base).lightness() < 128


class RowPainter:
    """Fonts and metrics for rows drawn in one widget's font; row_height is the same for every row."""

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
        self.title_h = QFontMetricsF(self.title_bold).height()
        self.line_h = max(QFontMetricsF(self.font).lineSpacing(), QFontMetricsF(self.mono).lineSpacing())
        self.row_height = int(2 * PAD_Y + self.title_h + 2 + 2 * self.line_h + 2 * MARGIN / 3) + 1

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

    def similar_rect(self, rect: QRect, m: Memory, similar: tuple[list[Memory], bool] | None, query: str
                     ) -> QRectF:
        """Where "+N similar" is drawn in a row (empty when there is none)."""
        label, meta = self.meta_parts(m, similar)
        if not label:
            return QRectF()
        chip_left, title_right = self._title_right(rect, m, similar)
        return QRectF(chip_left, self._title_top(QRectF(rect), m, query, title_right) - 1,
                      QFontMetricsF(self.small).horizontalAdvance(label) + 12, self.title_h + 2)

    def _title_right(self, rect: QRect | QRectF, m: Memory, similar: tuple[list[Memory], bool] | None
                     ) -> tuple[float, float]:
        """(where the "+N similar" chip starts, where the title must end) on a row's first line."""
        label, meta = self.meta_parts(m, similar)
        fm = QFontMetricsF(self.small)
        right = self._box(rect, 0).right() - PAD_X - fm.horizontalAdvance(meta) - GAP
        if not label:
            return right, right
        chip_left = right - fm.horizontalAdvance(label) - 12
        return chip_left, chip_left - GAP

    def _box(self, rect: QRect | QRectF, indent: int) -> QRectF:
        return QRectF(rect).adjusted(MARGIN + indent, MARGIN / 3, -MARGIN, -MARGIN / 3)

    def _title_top(self, rect: QRectF, m: Memory, query: str, title_right: float) -> float:
        """The title line's top: at the top, or in the middle of the row when the title is all there is (no snippet,
        and it fits the line)."""
        box = self._box(rect, 0)
        title = title_text(m)
        left = box.left() + PAD_X - 4 + ICON + GAP
        too_long = QFontMetricsF(self.title_bold).horizontalAdvance(title) > title_right - left
        if too_long or title.endswith(ELLIPSIS) or snippet_text(m, title, highlight_pattern(query),
                                                                  kinds.kind_of(m) == "code").strip():
            return box.top() + PAD_Y
        return box.top() + (box.height() - self.title_h) / 2

    def paint(self, p: QPainter, rect: QRect, palette: QPalette, m: Memory, query: str, *, selected: bool,
              current: bool, hovered: bool, indent: int, similar: tuple[list[Memory], bool] | None,
              dpr: float) -> None:
        p.save()
        p.setRenderHint(QPainter.RenderHint.Antialiasing)
        p.setRenderHint(QPainter.RenderHint.TextAntialiasing)
        dark = is_dark(palette)
        text = palette.color(QPalette.ColorRole.Text)
        dim = secondary(palette)
        accent = palette.color(QPalette.ColorRole.Highlight)
        box = self._box(rect, indent)
        if selected or current or hovered:
            fill = QColor(accent)
            fill.setAlphaF(0.30 if (selected and current) else 0.17 if selected else 0.07)
            p.setPen(Qt.PenStyle.NoPen)
            p.setBrush(fill)
            p.drawRoundedRect(box, 7, 7)
            if current and selected:  # the cursor row: an accent bar at its left edge
                p.setBrush(accent)
                p.drawRoundedRect(QRectF(box.left() + 2, box.top() + 8, 3, box.height() - 16), 1.5, 1.5)
        kind = kinds.kind_of(m)
        left = box.left() + PAD_X - 4 + ICON + GAP
        right = box.right() - PAD_X
        pattern = highlight_pattern(query)
        # right-hand side of the title line: "+N similar", then app and date
        label, meta = self.meta_parts(m, similar)
        small = QFontMetricsF(self.small)
        code = kind == "code"
        body = snippet_text(m, title_text(m), pattern, code)
        _chip_left, title_right = self._title_right(rect, m, similar)
        top = self._title_top(QRectF(rect), m, query, title_right)  # a title alone sits in the middle of its row
        centred = top > box.top() + PAD_Y
        icon_y = box.top() + (box.height() - ICON) / 2 if centred else box.top() + PAD_Y + 1
        p.drawPixmap(QPointF(box.left() + PAD_X - 4, icon_y), kinds.icon(kind, ICON, dpr, dark))
        p.setFont(self.small)
        p.setPen(dim)
        meta_w = small.horizontalAdvance(meta)
        base = top + (self.title_h - small.height()) / 2 + small.ascent()
        p.drawText(QPointF(right - meta_w, base), meta)
        if label:
            chip = self.similar_rect(rect, m, similar, query)
            pill = QColor(accent)
            pill.setAlphaF(0.22)
            p.setPen(Qt.PenStyle.NoPen)
            p.setBrush(pill)
            p.drawRoundedRect(chip, chip.height() / 2, chip.height() / 2)
            p.setPen(text)
            p.drawText(chip, Qt.AlignmentFlag.AlignCenter, label)
        # the title: one line, cut at a word boundary, matched words bold and marked
        title = title_text(m)
        shown = self._flow(p, runs(title, pattern), (self.title_font, self.title_bold), left, top,
                           title_right - left, 1, self.title_h, text, accent, strike=m.forgotten)
        if not centred and not code and not body.startswith(ELLIPSIS) and not m.title and kind != "email":
            body = continued(title, shown, body)
        # the snippet: two lines; code keeps its lines, in monospace
        y = top + self.title_h + 2
        if code:
            for i, line in enumerate(body.splitlines()[:2]):
                self._flow(p, runs(line.replace("\t", "    "), pattern), (self.mono, self.mono_bold), left,
                           y + i * self.line_h, right - left, 1, self.line_h, dim, accent, keep_spaces=True)
        elif body:
            self._flow(p, runs(body, pattern), (self.font, self.bold), left, y, right - left, 2, self.line_h, dim,
                       accent)
        p.restore()

    def _flow(self, p: QPainter, items: list[Run], fonts: tuple[QFont, QFont], left: float, top: float, width: float,
              max_lines: int, line_h: float, color: QColor, accent: QColor, *, strike: bool = False,
              keep_spaces: bool = False) -> list[list[tuple[str, bool, float]]]:
        if width <= 20:
            return []
        # code keeps its indentation and is cut by characters at the right edge
        lines = _code_line(items, fonts, width) if keep_spaces else layout_flow(items, fonts, width, max_lines)
        mark = QColor(accent)
        mark.setAlphaF(0.18)
        for n, line in enumerate(lines):
            base = top + n * line_h
            for word, hit, x in line:
                font = fonts[1] if hit else fonts[0]
                fm = QFontMetricsF(font)
                if hit:
                    p.setPen(Qt.PenStyle.NoPen)
                    p.setBrush(mark)
                    p.drawRoundedRect(QRectF(left + x - 1.5, base + 1, fm.horizontalAdvance(word) + 3, line_h - 2),
                                      3, 3)
                font.setStrikeOut(strike)
                p.setFont(font)
                p.setPen(color)
                p.drawText(QPointF(left + x, base + (line_h - fm.height()) / 2 + fm.ascent()), word)
                font.setStrikeOut(False)
        return lines


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
