"""Every text of a result row reads at 4.5:1 (WCAG AA) on what it is painted on, matched words' marks can be seen,
in the Fusion light palette and the dark palette of the screenshots, selected or not; the query's clear button is
the size of its text and visible in dark."""

from __future__ import annotations

import itertools
import time

import pytest
from PySide6.QtCore import QPoint, QRect
from PySide6.QtGui import QColor, QImage, QPainter, QPalette
from PySide6.QtWidgets import QApplication, QStyleFactory

from desktop_memory.core.models import Memory
from desktop_memory.qt import result_row
from tests.gui.make_screenshots import dark_palette

STATES = [dict(zip(("selected", "current", "hovered"), s, strict=True))
          for s in itertools.product((False, True), repeat=3)]


def luminance(c: QColor) -> float:
    def ch(v: int) -> float:
        x = v / 255
        return x / 12.92 if x <= 0.04045 else ((x + 0.055) / 1.055) ** 2.4
    return 0.2126 * ch(c.red()) + 0.7152 * ch(c.green()) + 0.0722 * ch(c.blue())


def ratio(a: QColor, b: QColor) -> float:
    hi, lo = sorted((luminance(a), luminance(b)), reverse=True)
    return (hi + 0.05) / (lo + 0.05)


def light_palette() -> QPalette:
    return QStyleFactory.create("Fusion").standardPalette()


PALETTES = {"light": light_palette, "dark": dark_palette}


@pytest.mark.parametrize("theme", PALETTES)
@pytest.mark.parametrize("state", STATES, ids=lambda s: "-".join(k for k, v in s.items() if v) or "plain")
def test_every_row_text_reads_at_4_5_to_1(qapp, theme, state) -> None:
    c = result_row.row_colours(PALETTES[theme](), **state)
    assert c.background.alpha() == 255 and c.mark.alpha() == 255
    checks = {"title": (c.text, c.background), "snippet and meta": (c.dim, c.background),
              "matched word": (c.hit, c.mark), "+N similar": (c.chip_text, c.chip)}
    low = {name: round(ratio(*pair), 2) for name, pair in checks.items() if ratio(*pair) < 4.5}
    assert not low, f"{theme} {state}: {low}"
    assert ratio(c.mark, c.background) >= 1.35, f"a matched word's mark can hardly be seen ({theme} {state})"


@pytest.mark.parametrize("theme", PALETTES)
def test_the_painter_draws_text_only_in_those_colours(qapp, theme, monkeypatch) -> None:
    palette = PALETTES[theme]()
    m = Memory(id="m", content="Decision: the beta ships on March 3rd; Priya owns the release notes and the changelog "
               "for the beta, and the signed installers.", source="clipboard", source_app="slack",
               created_at=time.time() - 90)
    painter = result_row.RowPainter(QApplication.font())
    used: list[tuple[str, QColor]] = []
    real = QPainter.drawText

    def record(self, *a):  # type: ignore[no-untyped-def]
        used.append((str(a[-1]), self.pen().color()))
        return real(self, *a)

    monkeypatch.setattr(QPainter, "drawText", record)
    for state in STATES:
        image = QImage(740, painter.height_of(m), QImage.Format.Format_ARGB32)
        p = QPainter(image)
        painter.paint(p, QRect(QPoint(0, 0), image.size()), palette, m, "beta release", indent=0,
                      similar=([m], False), dpr=1.0, **state)
        p.end()
        c = result_row.row_colours(palette, **state)
        allowed = {c.text.name(), c.dim.name(), c.hit.name(), c.chip_text.name()}
        stray = [(t, col.name()) for t, col in used if col.name() not in allowed]
        assert not stray and used, stray
        used.clear()


def test_the_clear_button_is_as_large_as_the_query_text_and_visible_in_dark(qtbot) -> None:
    from unittest.mock import MagicMock

    from PySide6.QtWidgets import QToolButton

    from desktop_memory.engine.settings import Settings
    from desktop_memory.qt.search_window import SearchWindow

    app = QApplication.instance()
    old = app.palette()
    app.setPalette(dark_palette())
    try:
        w = SearchWindow(MagicMock(), Settings())
        qtbot.addWidget(w)
        w.show()
        w.query.setText("beta")
        qtbot.wait(400)  # the button fades in
        button = next(b for b in w.query.findChildren(QToolButton) if b.isVisible())
        text_h = w.query.fontMetrics().height()
        image = button.grab().toImage()
        base = w.palette().color(QPalette.ColorRole.Base)
        seen = [(x, y, ratio(image.pixelColor(x, y), base)) for x in range(image.width())
                for y in range(image.height()) if image.pixelColor(x, y).alpha() == 255]
        glyph = [(x, y) for x, y, r in seen if r >= 1.5]
        assert glyph, "the clear button cannot be seen on the dark query box"
        wide = max(x for x, _ in glyph) - min(x for x, _ in glyph) + 1
        high = max(y for _, y in glyph) - min(y for _, y in glyph) + 1
        assert min(wide, high) >= 0.85 * text_h, f"a {wide}x{high} px glyph beside {text_h} px high text"
        best = max(r for _x, _y, r in seen)
        assert best >= 3.0, f"the clear button's glyph reads at {best:.2f}:1 on the dark query box"
    finally:
        app.setPalette(old)
