"""The search panel's look: a frameless rounded surface painted from the system palette, sized to its results."""

from __future__ import annotations

from PySide6.QtCore import QPointF, QRect, QRectF, Qt
from PySide6.QtGui import (
    QAction,
    QColor,
    QGuiApplication,
    QIcon,
    QPainter,
    QPainterPath,
    QPalette,
    QPen,
    QPixmap,
    QRegion,
)
from PySide6.QtWidgets import (
    QFrame,
    QLabel,
    QLayout,
    QLineEdit,
    QProxyStyle,
    QSplitter,
    QStackedWidget,
    QStyle,
    QStyleOption,
    QWidget,
)

from .preview import PreviewPane
from .result_list import ResultList
from .result_row import secondary

WIDTH = 760  # logical pixels, at most 92 % of the screen; the same with the preview open (it opens inside)
PREVIEW_SHARE = 0.55  # of the panel's width, when the preview opens
PREVIEW_MIN_BODY = 440  # the preview's parts all open (versions, details, chips) fit in this height
MAX_ROWS = 7  # the panel grows with its results up to the height of this many two-line rows, then it scrolls
RADIUS = 12


class PanelLook:
    """Painting, palette and geometry of the search panel; the panel's widgets are made and laid out by
    SearchWindow, which calls `paint` from its paintEvent, `round_corners` from its resizeEvent and `style` when
    the palette changes."""

    def __init__(self, panel: QWidget, layout: QLayout, *, query: QLineEdit, results: ResultList, empty: QLabel,
                 stack: QStackedWidget, preview: PreviewPane, body: QSplitter, line: QFrame, status: QLabel,
                 footer: QWidget) -> None:
        self.panel, self.layout = panel, layout
        self.query, self.results, self.empty, self.stack = query, results, empty, stack
        self.preview, self.body, self.line, self.status, self.footer = preview, body, line, status, footer
        self.centre_x: int | None = None  # where the panel opened (its centre): it keeps it while it changes size
        self._preview_shown = False
        self._query_style: _QueryStyle | None = None

    def style(self) -> None:
        """Colours from the system palette (light or dark): one surface, a footer band, readable hints."""
        pal = self.panel.palette()
        base = pal.color(QPalette.ColorRole.Base)
        for w in (self.query, self.results, self.results.viewport(), self.empty, self.stack):
            p = w.palette()
            p.setColor(QPalette.ColorRole.Base, base)
            p.setColor(QPalette.ColorRole.Window, base)
            w.setPalette(p)
        self.results.viewport().setAutoFillBackground(False)
        self.results.surface = base  # the rows are painted on it (the list itself is transparent)
        handle = pal.color(QPalette.ColorRole.Mid).name()
        self.results.setStyleSheet(
            "QListView { background: transparent; }"
            "QScrollBar:vertical { width: 10px; background: transparent; margin: 4px 2px 4px 0; }"
            f"QScrollBar::handle:vertical {{ background: {handle}; border-radius: 4px; min-height: 28px; }}"
            "QScrollBar::add-line:vertical, QScrollBar::sub-line:vertical { height: 0; }"
            "QScrollBar::add-page:vertical, QScrollBar::sub-page:vertical { background: transparent; }")
        self.query.setStyleSheet("QLineEdit { background: transparent; border: none; }")
        self._clear_button(pal)
        mid = pal.color(QPalette.ColorRole.Mid).name()
        self.line.setStyleSheet(f"color: {mid};")
        dim = secondary(pal).name()
        self.status.setStyleSheet(f"color: {dim};")

    def _clear_button(self, pal: QPalette) -> None:
        """The query's clear button as large as its text and drawn from the palette (the style's own glyph was a
        dark speck, invisible in a dark theme): a disc in the secondary text colour with a cross cut out."""
        size = max(16, round(self.query.fontMetrics().height() * 0.95))
        if self._query_style is None or self._query_style.icon_size != size:
            # the query box owns its style (a QStyle freed by Python while the widget still used it crashed the
            # app at quit: tests/gui/test_quit_cycles.py); the old one goes only once the new one is in place
            style = _QueryStyle(size)
            style.setParent(self.query)
            self.query.setStyle(style)
            old, self._query_style = self._query_style, style
            if old is not None:
                old.deleteLater()
        action = self.query.findChild(QAction, "_q_qlineeditclearaction")
        if action is None:
            return
        disc = secondary(pal)
        icon = QIcon()
        for scale in (1, 2, 3):
            icon.addPixmap(_clear_glyph(size, scale, disc, pal.color(QPalette.ColorRole.Base)))
        action.setIcon(icon)

    def paint(self) -> None:
        """The rounded surface, its outline and the footer band (during the panel's paint event)."""
        p = QPainter(self.panel)
        p.setRenderHint(QPainter.RenderHint.Antialiasing)
        pal = self.panel.palette()
        rect = QRectF(self.panel.rect()).adjusted(0.5, 0.5, -0.5, -0.5)
        path = QPainterPath()
        path.addRoundedRect(rect, RADIUS, RADIUS)
        p.fillPath(path, pal.color(QPalette.ColorRole.Base))
        band = QRectF(rect.left(), self.footer.geometry().top(), rect.width(), rect.bottom() - self.footer.y())
        clip = QPainterPath()
        clip.addRect(band)
        p.fillPath(path.intersected(clip), pal.color(QPalette.ColorRole.Window))
        outline = QColor(pal.color(QPalette.ColorRole.Mid))
        p.setPen(outline)
        p.drawPath(path)
        p.end()

    def round_corners(self) -> None:
        """Round the corners for window systems without a compositor (a mask; painted edges where there is one)."""
        path = QPainterPath()
        path.addRoundedRect(QRectF(self.panel.rect()), RADIUS, RADIUS)
        self.panel.setMask(QRegion(path.toFillPolygon().toPolygon()))

    def screen_area(self) -> QRect | None:
        """The available area of the screen under the mouse (else the panel's, else the primary one)."""
        screen = (QGuiApplication.screenAt(self.panel.cursor().pos()) or self.panel.screen()
                  or QGuiApplication.primaryScreen())
        return screen.availableGeometry() if screen is not None else None

    def place(self) -> None:
        """Size the panel, then put it on the screen under the mouse: centred, a fifth down from the top."""
        self.fit()
        area = self.screen_area()
        if area is not None:
            self.centre_x = area.center().x()
            self.panel.move(self.centre_x - self.panel.width() // 2, area.top() + area.height() // 5)

    def fit(self) -> None:
        """Size the panel to what it shows: as many rows as there are (up to MAX_ROWS); its width and top never
        change while it is open (the preview opens inside it, beside the results)."""
        panel, area = self.panel, self.screen_area()
        max_w = int(area.width() * 0.92) if area is not None else WIDTH
        max_h = int(area.height() * 0.8) if area is not None else 700
        width = min(WIDTH, max_w)
        preview_open = self.preview.isVisible()
        if preview_open and not self._preview_shown:  # just opened: results and preview share the width
            inner = width - 2
            self.body.setSizes([round(inner * (1 - PREVIEW_SHARE)), round(inner * PREVIEW_SHARE)])
        self._preview_shown = preview_open
        if preview_open:
            body = max(self.results.content_height(MAX_ROWS, full=True) + 8, PREVIEW_MIN_BODY)
        elif self.stack.currentWidget() is self.results:
            body = self.results.content_height(MAX_ROWS) + 8
        else:
            body = max(self.empty.heightForWidth(width - 2), 90)
        chrome = panel.height() - self.body.height() if self.body.height() > 0 else 0
        self.body.setFixedHeight(min(body, max_h - 160))
        self.layout.invalidate()
        self.layout.activate()
        height = min(self.layout.sizeHint().height(), max_h) if chrome >= 0 else max_h
        if panel.size().width() != width or panel.size().height() != height:
            moved = panel.size().width() != width
            panel.resize(width, height)  # the top stays put: the panel grows and shrinks downwards
            if moved and panel.isVisible() and area is not None and self.centre_x is not None:
                left = min(max(area.left(), self.centre_x - width // 2), area.right() - width)
                panel.move(left, panel.y())


class _QueryStyle(QProxyStyle):
    """The application's style with the query's clear button the size of its text (the style's is 16 px)."""

    def __init__(self, icon_size: int) -> None:
        super().__init__()
        self.icon_size = icon_size

    def pixelMetric(self, metric: QStyle.PixelMetric, option: QStyleOption | None = None,  # noqa: N802 - Qt
                    widget: QWidget | None = None) -> int:
        if metric == QStyle.PixelMetric.PM_LineEditIconSize:
            return self.icon_size
        return super().pixelMetric(metric, option, widget)


def _clear_glyph(size: int, scale: int, disc: QColor, cross: QColor) -> QPixmap:
    pix = QPixmap(size * scale, size * scale)
    pix.setDevicePixelRatio(scale)
    pix.fill(Qt.GlobalColor.transparent)
    p = QPainter(pix)
    p.setRenderHint(QPainter.RenderHint.Antialiasing)
    p.setPen(Qt.PenStyle.NoPen)
    p.setBrush(disc)
    p.drawEllipse(QRectF(0.5, 0.5, size - 1, size - 1))
    pen = QPen(cross, max(1.5, size / 9))
    pen.setCapStyle(Qt.PenCapStyle.RoundCap)
    p.setPen(pen)
    a, b = size * 0.34, size * 0.66
    p.drawLine(QPointF(a, a), QPointF(b, b))
    p.drawLine(QPointF(a, b), QPointF(b, a))
    p.end()
    return pix
