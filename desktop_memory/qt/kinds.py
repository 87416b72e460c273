"""What kind of thing a memory is (core/kinds.py tells it from the text) and its icon, drawn with QPainter (no
image files): a rounded tile tinted per kind with a small glyph, crisp at any device pixel ratio; where the
desktop's icon theme has the source application's own icon, it is a small badge on the tile."""

from __future__ import annotations

import sys
from collections import OrderedDict
from functools import lru_cache

from PySide6.QtCore import QPointF, QRectF, QSize, Qt
from PySide6.QtGui import QColor, QFont, QIcon, QPainter, QPainterPath, QPen, QPixmap

from ..core import kinds as core
from ..core.models import Memory

KINDS = core.KINDS
MONOSPACED = frozenset({"command", "code", "yaml", "json", "trace"})  # kinds whose lines are shown as they are
LANGUAGE_NAMES = {"python": "Python", "javascript": "JavaScript", "typescript": "TypeScript", "sql": "SQL",
                  "shell": "Shell", "rust": "Rust", "go": "Go", "java": "Java", "c": "C", "cpp": "C++",
                  "html": "HTML", "xml": "XML", "css": "CSS"}
_HUES = {"trace": 0, "email": 22, "note": 45, "list": 75, "command": 115, "person": 145, "address": 170,
         "chat": 192, "link": 212, "code": 265, "json": 290, "yaml": 320}
_KNOWN: OrderedDict[tuple[str, str, int, str], core.Kind] = OrderedDict()


def kind_info(m: Memory) -> core.Kind:
    """The kind of a memory and, for code, its language (core/kinds.py), worked out once per text."""
    key = (m.id, m.content_hash, len(m.content), m.content[:64])
    if (known := _KNOWN.get(key)) is None:
        known = _KNOWN[key] = core.classify(m.content)
        if len(_KNOWN) > 1024:
            _KNOWN.popitem(last=False)
    return known


def kind_of(m: Memory) -> str:
    """The kind of a memory (one of KINDS); 'note' when nothing more specific fits."""
    return kind_info(m).name


def label(kind: core.Kind) -> str:
    """How a kind reads in a row's meta and to a screen reader: 'Python', 'command', 'YAML', 'stack trace'."""
    if kind.language and kind.name == "code":
        return LANGUAGE_NAMES.get(kind.language, kind.language)
    return {"yaml": "YAML", "json": "JSON", "trace": "stack trace"}.get(kind.name, kind.name)


def app_icon(app: str) -> QIcon | None:
    """The source application's own icon from the desktop's icon theme (Linux), else None."""
    name = app.strip().lower().replace(" ", "-")
    if not name or not sys.platform.startswith("linux"):
        return None
    return _app_icon(name, QIcon.themeName())


@lru_cache(maxsize=128)
def _app_icon(name: str, _theme: str) -> QIcon | None:
    for candidate in (name, name.removesuffix(".desktop"), name.split(".")[-1]):
        if candidate and QIcon.hasThemeIcon(candidate):
            return QIcon.fromTheme(candidate)
    return None


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


def _command(p: QPainter, s: float) -> None:
    p.drawPolyline([QPointF(s * 0.27, s * 0.34), QPointF(s * 0.42, s / 2), QPointF(s * 0.27, s * 0.66)])
    p.drawLine(QPointF(s * 0.48, s * 0.68), QPointF(s * 0.73, s * 0.68))


def _yaml(p: QPainter, s: float) -> None:
    for i, (x0, x1) in enumerate(((0.26, 0.56), (0.38, 0.74), (0.38, 0.66), (0.26, 0.5))):
        y = s * (0.3 + 0.13 * i)
        p.drawLine(QPointF(s * x0, y), QPointF(s * x1, y))


def _json(p: QPainter, s: float) -> None:
    for side in (1, -1):
        x = s / 2 - side * s * 0.2
        path = QPainterPath()
        path.moveTo(x + side * s * 0.07, s * 0.26)
        path.quadTo(x, s * 0.26, x, s * 0.36)
        path.lineTo(x, s * 0.44)
        path.quadTo(x, s / 2, x - side * s * 0.06, s / 2)
        path.quadTo(x, s / 2, x, s * 0.56)
        path.lineTo(x, s * 0.64)
        path.quadTo(x, s * 0.74, x + side * s * 0.07, s * 0.74)
        p.drawPath(path)
    p.drawPoint(QPointF(s / 2, s / 2))


def _trace(p: QPainter, s: float) -> None:
    path = QPainterPath()
    path.moveTo(s / 2, s * 0.24)
    path.lineTo(s * 0.77, s * 0.72)
    path.lineTo(s * 0.23, s * 0.72)
    path.closeSubpath()
    p.drawPath(path)
    p.drawLine(QPointF(s / 2, s * 0.42), QPointF(s / 2, s * 0.56))
    p.drawPoint(QPointF(s / 2, s * 0.64))


def _address(p: QPainter, s: float) -> None:
    path = QPainterPath()
    path.moveTo(s / 2, s * 0.78)
    path.cubicTo(s * 0.3, s * 0.54, s * 0.28, s * 0.44, s * 0.28, s * 0.42)
    path.arcTo(QRectF(s * 0.28, s * 0.2, s * 0.44, s * 0.44), 180, -180)
    path.cubicTo(s * 0.72, s * 0.44, s * 0.7, s * 0.54, s / 2, s * 0.78)
    p.drawPath(path)
    p.drawEllipse(QPointF(s / 2, s * 0.42), s * 0.07, s * 0.07)


_GLYPHS = {"link": _link, "code": _code, "email": _email, "person": _person, "chat": _chat, "list": _list,
           "note": _note, "command": _command, "yaml": _yaml, "json": _json, "trace": _trace, "address": _address}


def badge(app: str, size: int, dpr: float) -> QPixmap | None:
    """The source application's icon at `size` logical pixels, when the icon theme has it (cached), else None."""
    found = app_icon(app)
    if found is None:
        return None
    return _badge(app.strip().lower(), size, round(dpr * 4) / 4, found)


_BADGES: dict[tuple[str, int, float], QPixmap] = {}


def _badge(key: str, size: int, dpr: float, found: QIcon) -> QPixmap:
    if (known := _BADGES.get((key, size, dpr))) is None:
        if len(_BADGES) > 128:
            _BADGES.clear()
        known = _BADGES[(key, size, dpr)] = found.pixmap(QSize(size, size), dpr)
    return known


def monospace(base: QFont) -> QFont:
    """A fixed-pitch font the size of `base` (the system's fixed font family)."""
    from PySide6.QtGui import QFontDatabase

    font = QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont)
    font.setPointSizeF(base.pointSizeF() * 0.95 if base.pointSizeF() > 0 else font.pointSizeF())
    return font
