"""The search panel's look: a frameless rounded surface painted from the system palette, sized to its results."""

from __future__ import annotations

from PySide6.QtCore import QEvent, QRectF
from PySide6.QtGui import QColor, QGuiApplication, QPainter, QPainterPath, QPalette, QRegion
from PySide6.QtWidgets import QFrame, QLabel, QLineEdit, QListView, QSplitter, QStackedWidget, QWidget

from .preview import PreviewPane
from .result_row import secondary
from .results import ResultDelegate, ResultsModel

WIDTH, WIDTH_WITH_PREVIEW = 760, 1120  # logical pixels, at most 92 % of the screen
MAX_ROWS = 7  # the panel grows with its results up to this many rows, then the list scrolls
RADIUS = 12


class PanelLook(QWidget):
    """Painting, palette and geometry of the search panel (the widgets are made by SearchWindow)."""

    query: QLineEdit
    list: QListView
    empty: QLabel
    stack: QStackedWidget
    preview: PreviewPane
    splitter: QSplitter
    line: QFrame
    status: QLabel
    undo_label: QLabel
    footer: QWidget
    model: ResultsModel
    delegate: ResultDelegate

    def _update_status(self) -> None:  # the status line's text: SearchWindow's
        """Redraw the footer's words (after a palette change)."""

    def _style(self) -> None:
        """Colours from the system palette (light or dark): one surface, a footer band, readable hints."""
        pal = self.palette()
        base = pal.color(QPalette.ColorRole.Base)
        for w in (self.query, self.list, self.list.viewport(), self.empty, self.stack):
            p = w.palette()
            p.setColor(QPalette.ColorRole.Base, base)
            p.setColor(QPalette.ColorRole.Window, base)
            w.setPalette(p)
        self.list.viewport().setAutoFillBackground(False)
        handle = pal.color(QPalette.ColorRole.Mid).name()
        self.list.setStyleSheet(
            "QListView { background: transparent; }"
            "QScrollBar:vertical { width: 10px; background: transparent; margin: 4px 2px 4px 0; }"
            f"QScrollBar::handle:vertical {{ background: {handle}; border-radius: 4px; min-height: 28px; }}"
            "QScrollBar::add-line:vertical, QScrollBar::sub-line:vertical { height: 0; }"
            "QScrollBar::add-page:vertical, QScrollBar::sub-page:vertical { background: transparent; }")
        self.query.setStyleSheet("QLineEdit { background: transparent; border: none; }")
        mid = pal.color(QPalette.ColorRole.Mid).name()
        self.line.setStyleSheet(f"color: {mid};")
        dim = secondary(pal).name()
        self.status.setStyleSheet(f"color: {dim};")
        self.undo_label.setStyleSheet("")

    def paintEvent(self, event: object) -> None:  # noqa: N802 - Qt override
        """The rounded surface, its outline and the footer band."""
        p = QPainter(self)
        p.setRenderHint(QPainter.RenderHint.Antialiasing)
        pal = self.palette()
        rect = QRectF(self.rect()).adjusted(0.5, 0.5, -0.5, -0.5)
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

    def resizeEvent(self, event: object) -> None:  # noqa: N802 - Qt override
        """Round the corners for window systems without a compositor (a mask; painted edges where there is one)."""
        path = QPainterPath()
        path.addRoundedRect(QRectF(self.rect()), RADIUS, RADIUS)
        self.setMask(QRegion(path.toFillPolygon().toPolygon()))
        super().resizeEvent(event)  # type: ignore[arg-type]

    def changeEvent(self, event: QEvent) -> None:  # noqa: N802 - Qt override
        if event.type() == QEvent.Type.PaletteChange:
            self._style()
            self._update_status()
        super().changeEvent(event)

    def _screen_area(self) -> object:
        screen = (QGuiApplication.screenAt(self.cursor().pos()) or self.screen()
                  or QGuiApplication.primaryScreen())
        return screen.availableGeometry() if screen is not None else None

    def _fit(self) -> None:
        """Size the panel to what it shows: as many rows as there are (up to MAX_ROWS), wider with the preview."""
        area = self._screen_area()
        max_w = int(area.width() * 0.92) if area is not None else WIDTH_WITH_PREVIEW
        max_h = int(area.height() * 0.8) if area is not None else 700
        width = min(WIDTH_WITH_PREVIEW if self.preview.isVisible() else WIDTH, max_w)
        row_h = self.delegate.rows(self.list.viewOptions() if hasattr(self.list, "viewOptions")
                                   else self._row_option()).row_height
        if self.preview.isVisible():
            body = MAX_ROWS * row_h + 8
        elif self.stack.currentWidget() is self.list:
            body = max(1, min(self.model.rowCount(), MAX_ROWS)) * row_h + 8
        else:
            body = max(self.empty.heightForWidth(width - 2), 90)
        chrome = self.height() - self.splitter.height() if self.splitter.height() > 0 else 0
        self.splitter.setFixedHeight(min(body, max_h - 160))
        self.layout().invalidate()
        self.layout().activate()
        height = min(self.layout().sizeHint().height(), max_h) if chrome >= 0 else max_h
        if self.size().width() != width or self.size().height() != height:
            centre = self.geometry().center().x()
            self.resize(width, height)  # the top stays put: the panel grows and shrinks downwards
            if self.isVisible() and area is not None:
                left = min(max(area.left(), centre - width // 2), area.right() - width)
                self.move(left, self.y())

    def _row_option(self) -> object:
        from PySide6.QtWidgets import QStyleOptionViewItem

        option = QStyleOptionViewItem()
        option.initFrom(self.list)
        return option
