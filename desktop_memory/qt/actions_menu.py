"""The search panel's actions menu (Ctrl+K): everything the selection can do, each with its key.

A small popup list anchored at the footer's right, keyboard first: ↑/↓ move, Enter does it, typing filters,
Esc closes; the keyboard focus then goes back to the query box. Each entry runs the same method its key runs
(the list is SearchActions.panel_actions, which also gives the footer its main action)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from PySide6.QtCore import QEvent, QModelIndex, QObject, QPersistentModelIndex, QPoint, QRect, QSize, Qt
from PySide6.QtGui import QFontMetrics, QGuiApplication, QHideEvent, QKeyEvent, QPainter, QPalette
from PySide6.QtWidgets import (
    QApplication,
    QFrame,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QStyle,
    QStyledItemDelegate,
    QStyleOptionViewItem,
    QVBoxLayout,
    QWidget,
)

from .result_row import secondary

KeyRole = Qt.ItemDataRole.UserRole + 1
MAX_VISIBLE = 12  # rows shown before the list scrolls
PAD = 10  # px around a row's text and between its name and key

AnyIndex = QModelIndex | QPersistentModelIndex


@dataclass(frozen=True)
class PanelAction:
    """Something the selection can do: its name, the key that does it ("" when none), and what it runs (the
    same method the key runs)."""

    label: str
    key: str
    run: Callable[[], object]


class KeyDelegate(QStyledItemDelegate):
    """A row: the action's name on the left, its key on the right in a cap, in the secondary colour."""

    def sizeHint(self, option: QStyleOptionViewItem, index: AnyIndex) -> QSize:  # noqa: N802 - Qt override
        fm = QFontMetrics(option.font)
        name, key = str(index.data(Qt.ItemDataRole.DisplayRole) or ""), str(index.data(KeyRole) or "")
        width = fm.horizontalAdvance(name) + (fm.horizontalAdvance(key) + 3 * PAD if key else 0) + 2 * PAD
        return QSize(width, fm.height() + PAD)

    def paint(self, painter: QPainter, option: QStyleOptionViewItem, index: AnyIndex) -> None:
        opt = QStyleOptionViewItem(option)
        self.initStyleOption(opt, index)
        key = str(index.data(KeyRole) or "")
        opt.text = ""
        widget = opt.widget
        style = widget.style() if widget is not None else None
        if style is not None:
            style.drawControl(QStyle.ControlElement.CE_ItemViewItem, opt, painter, widget)
        rect: QRect = opt.rect.adjusted(PAD, 0, -PAD, 0)
        pal: QPalette = opt.palette
        selected = bool(opt.state & QStyle.StateFlag.State_Selected)
        text_role = QPalette.ColorRole.HighlightedText if selected else QPalette.ColorRole.Text
        fm = QFontMetrics(opt.font)
        painter.save()
        painter.setFont(opt.font)
        key_w = fm.horizontalAdvance(key) + PAD if key else 0
        if key:
            cap = QRect(rect.right() - key_w, rect.top() + 3, key_w, rect.height() - 6)
            painter.setPen(pal.color(text_role) if selected else secondary(pal))
            painter.drawText(cap, Qt.AlignmentFlag.AlignCenter, key)
        painter.setPen(pal.color(text_role))
        name_rect = rect.adjusted(0, 0, -(key_w + PAD), 0)
        name = fm.elidedText(str(index.data(Qt.ItemDataRole.DisplayRole) or ""), Qt.TextElideMode.ElideRight,
                             name_rect.width())
        painter.drawText(name_rect, Qt.AlignmentFlag.AlignVCenter | Qt.AlignmentFlag.AlignLeft, name)
        painter.restore()


class ActionsMenu(QFrame):
    """The popup. `set_actions` fills it, `open_at` shows it anchored at a point's right; `entries()` is what it
    lists now (name, key), in order."""

    def __init__(self, parent: QWidget, home: QWidget | None = None) -> None:
        super().__init__(parent, Qt.WindowType.Popup)
        self.home = home  # where the keyboard focus goes when the menu closes (the query box)
        self.setFrameShape(QFrame.Shape.StyledPanel)
        self.setAccessibleName("Actions")
        self.list = QListWidget()
        self.list.setFrameShape(QFrame.Shape.NoFrame)
        self.list.setFocusPolicy(Qt.FocusPolicy.NoFocus)
        self.list.setUniformItemSizes(True)
        self.list.setItemDelegate(KeyDelegate(self.list))
        self.list.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.list.setAccessibleName("Actions for the selection")
        self.list.itemClicked.connect(lambda item: self.trigger(self.list.row(item)))
        self.filter = QLineEdit()
        self.filter.setPlaceholderText("Search actions…")
        self.filter.setAccessibleName("Search actions")
        self.filter.setFrame(False)
        self.filter.textChanged.connect(self._filter)
        self.filter.installEventFilter(self)
        box = QVBoxLayout(self)
        box.setContentsMargins(4, 4, 4, 4)
        box.setSpacing(4)
        box.addWidget(self.list)
        box.addWidget(self.filter)
        self.listed: list[PanelAction] = []
        self._give_back = False  # closed from the keyboard or a choice: the focus goes back to `home`

    # -- contents --------------------------------------------------------------------------------
    def set_actions(self, actions: list[PanelAction]) -> None:
        current = self.list.currentItem()
        keep = current.text() if current is not None else None
        self.listed = list(actions)
        self.list.clear()
        for a in self.listed:
            item = QListWidgetItem(a.label)
            item.setData(KeyRole, a.key)
            item.setToolTip(f"{a.label} ({a.key})" if a.key else a.label)
            self.list.addItem(item)
        self._filter(self.filter.text(), keep)

    def entries(self) -> list[tuple[str, str]]:
        """(name, key) of each action the menu lists now (after the filter), top to bottom."""
        return [(a.label, a.key) for row, a in enumerate(self.listed) if not self.list.isRowHidden(row)]

    def _visible_rows(self) -> list[int]:
        return [row for row in range(self.list.count()) if not self.list.isRowHidden(row)]

    def _filter(self, text: str, keep: str | None = None) -> None:
        """Show the actions whose name holds every typed word; the cursor goes to the first (or stays)."""
        words = text.lower().split()
        for row, a in enumerate(self.listed):
            self.list.setRowHidden(row, not all(w in a.label.lower() for w in words))
        rows = self._visible_rows()
        kept = [r for r in rows if self.listed[r].label == keep]
        if rows:
            self.list.setCurrentRow((kept or rows)[0])
        else:
            self.list.setCurrentRow(-1)

    # -- showing ---------------------------------------------------------------------------------
    def open_at(self, top_right: QPoint, bottom_right: QPoint) -> None:
        """Show with the right edge at `top_right`, above it (below `bottom_right` when there is no room above),
        inside the screen; the keyboard focus in the filter."""
        self.filter.clear()
        self._filter("")
        fm = self.list.fontMetrics()
        option = QStyleOptionViewItem()
        option.initFrom(self.list)
        delegate = self.list.itemDelegate()
        hints = [delegate.sizeHint(option, self.list.model().index(r, 0)) for r in range(self.list.count())]
        row_h = max((h.height() for h in hints), default=fm.height() + PAD)
        rows = max(1, min(len(hints), MAX_VISIBLE))
        width = max([h.width() for h in hints] + [fm.horizontalAdvance("Search actions…") + 4 * PAD,
                                                  fm.averageCharWidth() * 36])
        margins = self.contentsMargins().left() + self.contentsMargins().right() + 8
        self.list.setFixedHeight(rows * row_h + 2 * self.list.frameWidth())
        self.setFixedWidth(width + margins + self.list.verticalScrollBar().sizeHint().width() * (len(hints) > rows))
        self.adjustSize()
        size = QSize(self.minimumWidth(), self.sizeHint().height())
        x, y = top_right.x() - size.width() + 1, top_right.y() - size.height()
        screen = QGuiApplication.screenAt(top_right) or self.screen()
        if screen is not None:
            area = screen.availableGeometry()
            if y < area.top():
                y = bottom_right.y() + 1
            x = max(area.left(), min(x, area.right() - size.width() + 1))
            y = max(area.top(), min(y, area.bottom() - size.height() + 1))
        self.move(x, y)
        self.resize(size)
        self.show()  # a popup: it takes the keyboard without taking the activation from the panel
        self.filter.setFocus()

    def trigger(self, row: int) -> None:
        """Close the menu (the focus back in the query box), then do the action."""
        if not 0 <= row < len(self.listed) or self.list.isRowHidden(row):
            return
        action = self.listed[row]
        self.dismiss()
        action.run()

    def dismiss(self) -> None:
        """Close from the keyboard or a choice: the focus goes back to the query box (a click elsewhere closes the
        menu without taking the focus back)."""
        self._give_back = True
        self.close()

    def hideEvent(self, event: QHideEvent) -> None:  # noqa: N802 - Qt override
        super().hideEvent(event)
        if self._give_back:
            self._give_back = False
            self._focus_home()

    def changeEvent(self, event: QEvent) -> None:  # noqa: N802 - Qt override
        super().changeEvent(event)
        if (event.type() == QEvent.Type.ActivationChange and not self.isVisible()
                and QApplication.activeWindow() is self):
            self._focus_home()  # a late activation of the closed popup (seen offscreen) never keeps the keyboard

    def _focus_home(self) -> None:
        home = self.home
        if home is None or not home.isVisible() or self.isVisible():
            return
        if QApplication.activeWindow() in (self, None):
            home.activateWindow()
        home.setFocus(Qt.FocusReason.PopupFocusReason)

    # -- keys ------------------------------------------------------------------------------------
    def eventFilter(self, obj: QObject, event: QEvent) -> bool:  # noqa: N802 - Qt override
        if obj is self.filter and event.type() == QEvent.Type.KeyPress and isinstance(event, QKeyEvent):
            return self._key(event)
        return super().eventFilter(obj, event)

    def _key(self, event: QKeyEvent) -> bool:
        key = event.key()
        rows = self._visible_rows()
        if key == Qt.Key.Key_Escape:
            self.dismiss()
            return True
        if key in (Qt.Key.Key_Return, Qt.Key.Key_Enter):
            self.trigger(self.list.currentRow())
            return True
        if key == Qt.Key.Key_K and event.modifiers() & Qt.KeyboardModifier.ControlModifier:
            self.dismiss()  # Ctrl+K again closes, as it opened
            return True
        moves = {Qt.Key.Key_Up: -1, Qt.Key.Key_Down: 1, Qt.Key.Key_PageUp: -MAX_VISIBLE,
                 Qt.Key.Key_PageDown: MAX_VISIBLE}
        if key in moves and rows:
            at = rows.index(self.list.currentRow()) if self.list.currentRow() in rows else -1
            step = moves[Qt.Key(key)]
            # ↑ on the first goes to the last, as in a menu; a page stops at the ends
            at = (at + step) % len(rows) if abs(step) == 1 else min(max(at + step, 0), len(rows) - 1)
            self.list.setCurrentRow(rows[at])
            return True
        return False
