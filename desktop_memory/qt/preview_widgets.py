"""Small widgets of the preview pane: labels that wrap or elide instead of growing wider, chips (small rounded
labels for tags and entities) in a flowing row, and readable colours (≥ 4.5:1) from any palette."""

from __future__ import annotations

from PySide6.QtCore import QMargins, QPoint, QRect, QRectF, QSize, Qt
from PySide6.QtGui import QColor, QPainter, QPaintEvent, QPalette, QResizeEvent
from PySide6.QtWidgets import QLabel, QLayout, QLayoutItem, QSizePolicy, QWidget

from .preview_text import breakable
from .result_row import contrast

HINT_WIDTH = 300  # the widest a label of the pane asks to be (it wraps or elides beyond)
MIN_WIDTH = 120  # the narrowest it may become
CHIP_CHARS = 28


def blend(a: QColor, b: QColor, t: float) -> QColor:
    """`a` moved a fraction `t` toward `b`."""
    return QColor(round(a.red() + (b.red() - a.red()) * t), round(a.green() + (b.green() - a.green()) * t),
                  round(a.blue() + (b.blue() - a.blue()) * t))


def readable(fg: QColor, grounds: list[QColor], toward: QColor, least: float = 4.6) -> QColor:
    """`fg`, moved toward `toward` (the palette's text colour) until it reads at `least`:1 on every ground."""
    for step in range(11):
        c = blend(fg, toward, step / 10)
        if all(contrast(c, g) >= least for g in grounds):
            return c
    return QColor(toward)


def set_fg(widget: QWidget, colour: QColor, link: QColor | None = None) -> None:
    pal = widget.palette()
    pal.setColor(QPalette.ColorRole.WindowText, colour)
    pal.setColor(QPalette.ColorRole.Text, colour)
    if link is not None:
        pal.setColor(QPalette.ColorRole.Link, link)
    widget.setPalette(pal)


class WrapLabel(QLabel):
    """A word-wrapped label that asks for at most HINT_WIDTH pixels, whatever its text: long words (URLs,
    hashes) get places to break (plain text; rich text is given already made breakable)."""

    def __init__(self, parent: QWidget | None = None, *, rich: bool = False) -> None:
        super().__init__(parent)
        self.setWordWrap(True)
        self.setTextFormat(Qt.TextFormat.RichText if rich else Qt.TextFormat.PlainText)
        self.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Minimum)
        self.rich = rich

    def set_text(self, text: str) -> None:
        self.setText(text if self.rich else breakable(text))

    def sizeHint(self) -> QSize:  # noqa: N802 - Qt override
        return QSize(min(HINT_WIDTH, super().sizeHint().width()), self.heightForWidth(HINT_WIDTH))

    def minimumSizeHint(self) -> QSize:  # noqa: N802 - Qt override
        return QSize(min(MIN_WIDTH, super().minimumSizeHint().width()), self.fontMetrics().height())


class ElidedLabel(QLabel):
    """One line that ends in "…" (or loses its middle) when it does not fit; the whole text is its tooltip.
    With `href` it is a link (http, https or mailto only), followed with the mouse or the keyboard."""

    def __init__(self, mode: Qt.TextElideMode = Qt.TextElideMode.ElideRight, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.mode = mode
        self.full = ""
        self.href = ""
        self.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Fixed)
        self.setTextFormat(Qt.TextFormat.PlainText)

    def set_line(self, text: str, href: str = "", tip: str = "") -> None:
        self.full, self.href = text, href
        self.setToolTip(tip or text)
        self.setTextFormat(Qt.TextFormat.RichText if href else Qt.TextFormat.PlainText)
        self.setOpenExternalLinks(bool(href))
        self.setTextInteractionFlags(Qt.TextInteractionFlag.LinksAccessibleByMouse
                                     | Qt.TextInteractionFlag.LinksAccessibleByKeyboard if href
                                     else Qt.TextInteractionFlag.NoTextInteraction)
        self._elide()

    def _elide(self) -> None:
        import html

        width = max(self.contentsRect().width(), 40) if self.isVisible() or self.width() > 0 else HINT_WIDTH
        shown = self.fontMetrics().elidedText(self.full, self.mode, width)
        if self.href:
            self.setText(f'<a href="{html.escape(self.href, quote=True)}">{html.escape(shown)}</a>')
        else:
            self.setText(shown)

    def resizeEvent(self, event: QResizeEvent) -> None:  # noqa: N802 - Qt override
        super().resizeEvent(event)
        self._elide()

    def sizeHint(self) -> QSize:  # noqa: N802 - Qt override
        fm = self.fontMetrics()
        return QSize(min(HINT_WIDTH, fm.horizontalAdvance(self.full) + 4), fm.height())

    def minimumSizeHint(self) -> QSize:  # noqa: N802 - Qt override
        fm = self.fontMetrics()
        return QSize(min(MIN_WIDTH, fm.horizontalAdvance(self.full) + 4), fm.height())


class Chip(QLabel):
    """A small rounded label: a tag or an entity (its palette's Window is its ground, WindowText its text)."""

    def __init__(self, text: str, tip: str = "", kind: str = "entity", parent: QWidget | None = None) -> None:
        shown = text if len(text) <= CHIP_CHARS else text[: CHIP_CHARS - 1].rstrip() + "…"
        super().__init__(shown, parent)
        self.kind = kind
        self.setTextFormat(Qt.TextFormat.PlainText)
        self.setToolTip(tip or text)
        self.setAccessibleName(f"{kind}: {text}")
        self.setContentsMargins(8, 1, 8, 1)
        self.setSizePolicy(QSizePolicy.Policy.Fixed, QSizePolicy.Policy.Fixed)

    def colour(self, surface: QPalette) -> None:
        """Colours for the pane's palette: a ground a little off the surface (tinted for tags), readable text."""
        base, text = surface.color(QPalette.ColorRole.Base), surface.color(QPalette.ColorRole.Text)
        ground = (blend(base, surface.color(QPalette.ColorRole.Highlight), 0.16) if self.kind == "tag"
                  else blend(base, text, 0.09))
        pal = self.palette()
        pal.setColor(QPalette.ColorRole.Window, ground)
        pal.setColor(QPalette.ColorRole.WindowText, readable(text, [ground], text))
        pal.setColor(QPalette.ColorRole.Mid, blend(ground, text, 0.18))
        self.setPalette(pal)

    def paintEvent(self, event: QPaintEvent) -> None:  # noqa: N802 - Qt override
        p = QPainter(self)
        p.setRenderHint(QPainter.RenderHint.Antialiasing)
        p.setPen(self.palette().color(QPalette.ColorRole.Mid))
        p.setBrush(self.palette().color(QPalette.ColorRole.Window))
        r = QRectF(self.rect()).adjusted(0.5, 0.5, -0.5, -0.5)
        p.drawRoundedRect(r, r.height() / 2, r.height() / 2)
        p.end()
        super().paintEvent(event)


class FlowLayout(QLayout):
    """Items left to right, wrapping to new lines (Qt's flow layout example, trimmed)."""

    def __init__(self, parent: QWidget | None = None, spacing: int = 4) -> None:
        super().__init__(parent)
        self._items: list[QLayoutItem] = []
        self._spacing = spacing
        self.setContentsMargins(0, 0, 0, 0)

    def addItem(self, item: QLayoutItem) -> None:  # noqa: N802 - Qt override
        self._items.append(item)

    def count(self) -> int:
        return len(self._items)

    def itemAt(self, index: int) -> QLayoutItem | None:  # noqa: N802 - Qt override
        return self._items[index] if 0 <= index < len(self._items) else None

    def takeAt(self, index: int) -> QLayoutItem | None:  # noqa: N802 - Qt override
        return self._items.pop(index) if 0 <= index < len(self._items) else None

    def expandingDirections(self) -> Qt.Orientation:  # noqa: N802 - Qt override
        return Qt.Orientation(0)

    def hasHeightForWidth(self) -> bool:  # noqa: N802 - Qt override
        return True

    def heightForWidth(self, width: int) -> int:  # noqa: N802 - Qt override
        return self._place(QRect(0, 0, width, 0), move=False)

    def setGeometry(self, rect: QRect) -> None:  # noqa: N802 - Qt override
        super().setGeometry(rect)
        self._place(rect, move=True)

    def sizeHint(self) -> QSize:  # noqa: N802 - Qt override
        return self.minimumSize()

    def minimumSize(self) -> QSize:  # noqa: N802 - Qt override
        size = QSize()
        for item in self._items:
            size = size.expandedTo(item.minimumSize())
        m = self.contentsMargins()
        return size + QSize(m.left() + m.right(), m.top() + m.bottom())

    def _place(self, rect: QRect, move: bool) -> int:
        m: QMargins = self.contentsMargins()
        area = rect.adjusted(m.left(), m.top(), -m.right(), -m.bottom())
        x, y, line = area.x(), area.y(), 0
        for item in self._items:
            hint = item.sizeHint()
            if x + hint.width() > area.right() + 1 and line > 0:
                x, y, line = area.x(), y + line + self._spacing, 0
            if move:
                item.setGeometry(QRect(QPoint(x, y), hint))
            x += hint.width() + self._spacing
            line = max(line, hint.height())
        return y + line - rect.y() + m.bottom()


class ChipRow(QWidget):
    """Chips in a flowing row; replaced whole when the memory shown changes."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.flow = FlowLayout(self)
        self.key: object = None
        self.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Minimum)

    def set_chips(self, chips: list[Chip], surface: QPalette) -> None:
        while (item := self.flow.takeAt(0)) is not None:
            if (w := item.widget()) is not None:
                w.deleteLater()
        for chip in chips:
            chip.colour(surface)
            self.flow.addWidget(chip)
        self.setVisible(bool(chips))
        self.updateGeometry()

    def recolour(self, surface: QPalette) -> None:
        for chip in self.findChildren(Chip):
            chip.colour(surface)

    def sizeHint(self) -> QSize:  # noqa: N802 - Qt override
        return QSize(min(HINT_WIDTH, self.flow.minimumSize().width()), self.flow.heightForWidth(HINT_WIDTH))

    def minimumSizeHint(self) -> QSize:  # noqa: N802 - Qt override
        return QSize(min(MIN_WIDTH, self.flow.minimumSize().width()), self.flow.minimumSize().height())
