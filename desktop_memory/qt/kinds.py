"""What kind of thing a memory is (link, code, email, person, chat, list, note) and its icon, drawn with QPainter
(no image files): a rounded tile tinted per kind with a small glyph, crisp at any device pixel ratio."""

from __future__ import annotations

import re
from functools import lru_cache

from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import QColor, QFont, QPainter, QPainterPath, QPen, QPixmap

from ..core.models import Memory

KINDS = ("link", "code", "email", "person", "chat", "list", "note")
_URL = re.compile(r"^\s*(https?://|www\.)\S+\s*$", re.IGNORECASE)
_EMAIL_HEAD = re.compile(r"^(from|to|subject|cc|date):\s", re.IGNORECASE | re.MULTILINE)
_EMAIL_ADDR = re.compile(r"\b[\w.+-]+@[\w-]+\.[\w.-]+\b")
_CHAT = re.compile(r"^\s*\[?\d{1,2}:\d{2}(?::\d{2})?\]?\s*[\w .'-]{1,30}:", re.MULTILINE)
_PHONE = re.compile(r"(\+\d[\d ()-]{7,}\d)")
_POSTCODE = re.compile(r"\b\d{4,5}\b")
_CODE_START = re.compile(  # a line that starts like code or a command
    r"^\s*(def \w+\(|class \w+[(:]|import \w|from \S+ import|return\b|try:|except\b|function\b|"
    r"const \w+ =|let \w+ =|var \w+ =|public |private |#include|SELECT\b|INSERT INTO\b|UPDATE \w+ SET\b|"
    r"git |npm |pip |docker |kubectl |sudo |\$ )",
)
_CODE_LINE = re.compile(  # lines of a block of code
    r"^\s*(if .*:$|for .*:$|while .*:$|FROM\b|WHERE\b|GROUP BY|ORDER BY|LIMIT\b|[}\])];?$)|[;{]\s*$|=>|::|\)\s*\{",
)
_HUES = {"link": 210, "code": 270, "email": 30, "person": 150, "chat": 190, "list": 95, "note": 45}


def kind_of(m: Memory) -> str:
    """The kind of a memory, from its text (and source URL); 'note' when nothing more specific fits."""
    text = m.content.strip()
    if _URL.match(text):
        return "link"
    lines = [ln for ln in text.splitlines() if ln.strip()]
    if len(_EMAIL_HEAD.findall(text)) >= 2 or (_EMAIL_ADDR.search(text) and _EMAIL_HEAD.search(text)):
        return "email"
    if len(_CHAT.findall(text)) >= 2:
        return "chat"
    starts = sum(1 for ln in lines if _CODE_START.search(ln))
    code = sum(1 for ln in lines if _CODE_START.search(ln) or _CODE_LINE.search(ln))
    if starts and (len(lines) == 1 or code >= max(2, (len(lines) + 1) // 2)
                   or (code >= 2 and any(ln.startswith(("    ", "\t")) for ln in lines))):
        return "code"
    if 2 <= len(lines) <= 7 and all(len(ln) < 60 for ln in lines) and (_PHONE.search(text) or
                                                                        (_POSTCODE.search(text) and len(lines) >= 3)):
        return "person"
    if len(_EMAIL_ADDR.findall(text)) == 1 and len(text) < 80:
        return "person"
    head, _, rest = text.partition(":")
    if len(head) < 20 and rest.count(",") >= 3 and "\n" not in text:
        return "list"
    return "note"


def tint(kind: str, dark: bool) -> QColor:
    """The kind's colour: saturated enough to tell kinds apart, readable on light and dark backgrounds."""
    return QColor.fromHsl(_HUES.get(kind, 45), 150 if dark else 170, 150 if dark else 110)


def icon(kind: str, size: int, dpr: float, dark: bool) -> QPixmap:
    """The icon of a kind at `size` logical pixels for a device pixel ratio (cached)."""
    return _icon(kind, size, round(dpr * 4) / 4, dark)


@lru_cache(maxsize=64)
def _icon(kind: str, size: int, dpr: float, dark: bool) -> QPixmap:
    pix = QPixmap(int(size * dpr), int(size * dpr))
    pix.setDevicePixelRatio(dpr)
    pix.fill(Qt.GlobalColor.transparent)
    p = QPainter(pix)
    p.setRenderHint(QPainter.RenderHint.Antialiasing)
    color = tint(kind, dark)
    tile = QColor(color)
    tile.setAlpha(60 if dark else 38)
    p.setPen(Qt.PenStyle.NoPen)
    p.setBrush(tile)
    p.drawRoundedRect(QRectF(0, 0, size, size), size * 0.25, size * 0.25)
    pen = QPen(color, max(1.4, size / 16))
    pen.setCapStyle(Qt.PenCapStyle.RoundCap)
    pen.setJoinStyle(Qt.PenJoinStyle.RoundJoin)
    p.setPen(pen)
    p.setBrush(Qt.BrushStyle.NoBrush)
    _GLYPHS.get(kind, _note)(p, size)
    p.end()
    return pix


def _link(p: QPainter, s: float) -> None:
    p.save()
    p.translate(s / 2, s / 2)
    p.rotate(-45)
    w, h = s * 0.34, s * 0.2
    p.drawRoundedRect(QRectF(-w + s * 0.02, -h / 2, w, h), h / 2, h / 2)
    p.drawRoundedRect(QRectF(-s * 0.02, -h / 2, w, h), h / 2, h / 2)
    p.restore()


def _code(p: QPainter, s: float) -> None:
    m = s * 0.3
    p.drawPolyline([QPointF(s * 0.42, m), QPointF(s * 0.26, s / 2), QPointF(s * 0.42, s - m)])
    p.drawPolyline([QPointF(s * 0.58, m), QPointF(s * 0.74, s / 2), QPointF(s * 0.58, s - m)])


def _email(p: QPainter, s: float) -> None:
    r = QRectF(s * 0.22, s * 0.3, s * 0.56, s * 0.4)
    p.drawRoundedRect(r, s * 0.05, s * 0.05)
    p.drawPolyline([r.topLeft(), QPointF(r.center().x(), r.top() + r.height() * 0.55), r.topRight()])


def _person(p: QPainter, s: float) -> None:
    p.drawEllipse(QPointF(s / 2, s * 0.38), s * 0.11, s * 0.11)
    path = QPainterPath()
    path.moveTo(s * 0.28, s * 0.74)
    path.cubicTo(s * 0.3, s * 0.52, s * 0.7, s * 0.52, s * 0.72, s * 0.74)
    p.drawPath(path)


def _chat(p: QPainter, s: float) -> None:
    path = QPainterPath()
    path.addRoundedRect(QRectF(s * 0.22, s * 0.27, s * 0.56, s * 0.36), s * 0.08, s * 0.08)
    p.drawPath(path)
    p.drawPolyline([QPointF(s * 0.36, s * 0.63), QPointF(s * 0.33, s * 0.75), QPointF(s * 0.47, s * 0.63)])


def _list(p: QPainter, s: float) -> None:
    for i in range(3):
        y = s * (0.34 + 0.16 * i)
        p.drawPoint(QPointF(s * 0.28, y))
        p.drawLine(QPointF(s * 0.38, y), QPointF(s * 0.72, y))


def _note(p: QPainter, s: float) -> None:
    p.drawRoundedRect(QRectF(s * 0.28, s * 0.22, s * 0.44, s * 0.56), s * 0.05, s * 0.05)
    for i in range(3):
        y = s * (0.36 + 0.12 * i)
        p.drawLine(QPointF(s * 0.36, y), QPointF(s * (0.64 if i < 2 else 0.54), y))


_GLYPHS = {"link": _link, "code": _code, "email": _email, "person": _person, "chat": _chat, "list": _list,
           "note": _note}


def monospace(base: QFont) -> QFont:
    """A fixed-pitch font the size of `base` (the system's fixed font family)."""
    from PySide6.QtGui import QFontDatabase

    font = QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont)
    font.setPointSizeF(base.pointSizeF() * 0.95 if base.pointSizeF() > 0 else font.pointSizeF())
    return font
