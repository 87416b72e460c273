"""The search panel's footer: the status on the left, one main action and "Actions Ctrl+K" on the right.

What the selection can do is one list of PanelAction (SearchActions.panel_actions): its first entry is the
footer's main action, and the actions menu (actions_menu.py, Ctrl+K) lists them all with their keys."""

from __future__ import annotations

from PySide6.QtCore import QEvent, Qt, Signal
from PySide6.QtGui import QFontMetrics, QHideEvent, QMouseEvent, QPalette, QResizeEvent
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QSizePolicy, QWidget

from .actions_menu import ActionsMenu, PanelAction
from .result_row import secondary

__all__ = ["MENU_KEY", "FooterBar", "PanelAction", "hint_keys", "status_wordings"]

MENU_KEY = "Ctrl+K"


def hint_keys(actions: list[PanelAction]) -> list[tuple[str, str]]:
    """(key, what it does) pairs, for the actions that have a key."""
    return [(a.key, a.label) for a in actions if a.key]


def _count(n: int) -> str:
    """A token count short enough for a footer: 950, 12.3k, 1.2M."""
    if n < 10_000:
        return str(n)
    if n < 1_000_000:
        return f"{n / 1000:.1f}k".replace(".0k", "k")
    return f"{n / 1_000_000:.1f}M".replace(".0M", "M")


def status_wordings(selected: int, tokens: int, budget: int, shortened: int, left_out: int) -> list[str]:
    """The footer's status, fullest first; each later wording says the same in fewer words (the selection, the
    tokens, and what the pack shortened or left out are kept longest)."""
    if not selected:
        return [f"Context budget {budget} tokens", f"Budget {budget} tokens", f"Budget {_count(budget)}"]
    long_note = ", ".join([f"{shortened} shortened"] * bool(shortened) + [f"{left_out} left out"] * bool(left_out))
    short_note = ", ".join([f"{shortened} shortened"] * bool(shortened) + [f"{left_out} out"] * bool(left_out))
    tiny_note = " ".join([f"{shortened} short"] * bool(shortened) + [f"{left_out} out"] * bool(left_out))

    def join(*parts: str) -> str:
        return " · ".join(p for p in parts if p)

    n, t, b = selected, tokens, budget
    wordings = [
        join(f"{n} selected", f"~{t} / {b} tokens", long_note),
        join(f"{n} selected", f"~{t}/{b} tokens", long_note),
        join(f"{n} selected", f"~{t} tokens", long_note),
        join(f"{n} selected", f"~{_count(t)} tok", short_note),
        join(f"{n} sel.", f"~{_count(t)} tok", tiny_note),
        join(f"~{_count(t)} tok", tiny_note),
    ]
    return list(dict.fromkeys(wordings))


def fit_wording(wordings: list[str], metrics: QFontMetrics, width: int) -> str:
    """The fullest wording that fits `width`; else as many whole words of the shortest as fit, then "…"."""
    for text in wordings:
        if metrics.horizontalAdvance(text) <= width:
            return text
    words = wordings[-1].split() if wordings else []
    while words:
        words.pop()
        text = " ".join(words) + "…"
        if words and metrics.horizontalAdvance(text) <= width:
            return text
    return ""


class StatusLabel(QLabel):
    """A label that shows the fullest of its wordings that fits its width (again at each resize), never clipped;
    the fullest is its tooltip. It never asks for width: the panel's width is the panel's."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.wordings: list[str] = []
        self.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        self.setTextFormat(Qt.TextFormat.PlainText)

    def set_wordings(self, wordings: list[str]) -> None:
        self.wordings = wordings
        self.setToolTip(wordings[0] if wordings else "")
        self.setAccessibleDescription(wordings[0] if wordings else "")
        self.refit()

    def refit(self) -> None:
        text = fit_wording(self.wordings, self.fontMetrics(), self.contentsRect().width())
        if text != self.text():
            self.setText(text)

    def resizeEvent(self, event: QResizeEvent) -> None:  # noqa: N802 - Qt override
        super().resizeEvent(event)
        self.refit()

    def changeEvent(self, event: QEvent) -> None:  # noqa: N802 - Qt override
        super().changeEvent(event)
        if event.type() == QEvent.Type.FontChange:
            self.refit()


class KeyHint(QWidget):
    """"Paste context ↵": a name and its key cap, shown whole (it never shrinks); a click does it."""

    clicked = Signal()

    def __init__(self, name: str = "", key: str = "", parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.name, self.key = QLabel(name), QLabel(key)
        for label in (self.name, self.key):
            label.setTextFormat(Qt.TextFormat.PlainText)
        self.key.setAlignment(Qt.AlignmentFlag.AlignCenter)
        row = QHBoxLayout(self)
        row.setContentsMargins(4, 0, 4, 0)
        row.setSpacing(6)
        row.addWidget(self.name)
        row.addWidget(self.key)
        self.setSizePolicy(QSizePolicy.Policy.Fixed, QSizePolicy.Policy.Preferred)
        self.setCursor(Qt.CursorShape.PointingHandCursor)
        self.set(name, key)

    def set(self, name: str, key: str) -> None:
        if (name, key) == (self.name.text(), self.key.text()):
            return
        self.name.setText(name)
        self.key.setText(key)
        self.key.setVisible(bool(key))
        self.setAccessibleName(f"{name} ({key})" if key else name)
        self.updateGeometry()

    def mouseReleaseEvent(self, event: QMouseEvent) -> None:  # noqa: N802 - Qt override
        if event.button() == Qt.MouseButton.LeftButton and self.rect().contains(event.position().toPoint()):
            self.clicked.emit()
            event.accept()
            return
        super().mouseReleaseEvent(event)


class FooterBar(QWidget):
    """The panel's footer. `show_status(wordings)` sets the status, `show_actions(actions)` the main action (the
    first) and what the actions menu lists; `open_menu` (Ctrl+K, or a click on "Actions") opens that menu, which
    gives the keyboard focus back to `home` (the query box) when it closes."""

    def __init__(self, home: QWidget | None = None, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.status = StatusLabel()
        self.status.setAccessibleName("Selection and token count")
        self.main = KeyHint()
        self.more = KeyHint("Actions", MENU_KEY)
        self.more.setToolTip("Everything the selection can do, with its keys")
        self.divider = QFrame()
        self.divider.setFrameShape(QFrame.Shape.VLine)
        self.divider.setFrameShadow(QFrame.Shadow.Plain)
        row = QHBoxLayout(self)
        row.setContentsMargins(14, 6, 10, 6)
        row.setSpacing(8)
        row.addWidget(self.status, 1)
        row.addWidget(self.main)
        row.addWidget(self.divider)
        row.addWidget(self.more)
        self.shown: list[PanelAction] = []
        self.menu = ActionsMenu(self, home)
        self.main.clicked.connect(self.run_main)
        self.more.clicked.connect(self.open_menu)
        self._style_key = ""

    def show_status(self, wordings: list[str]) -> None:
        self.status.set_wordings(wordings)

    def show_actions(self, actions: list[PanelAction]) -> None:
        self.shown = actions
        main = actions[0] if actions else None
        self.main.setVisible(main is not None)
        self.divider.setVisible(main is not None)
        if main is not None:
            self.main.set(main.label, main.key)
            self.main.setToolTip(f"{main.label} ({main.key})" if main.key else main.label)
        self.more.setToolTip("\n".join(f"{k}  {v}" for k, v in hint_keys(actions)) or "Actions")
        self._restyle()
        if self.menu.isVisible():
            self.menu.set_actions(actions)

    def text(self) -> str:
        """What the footer shows, in words: the status, the main action and its key, "Actions Ctrl+K"."""
        parts = [self.status.text()]
        if self.main.isVisibleTo(self):
            parts.append(f"{self.main.name.text()} {self.main.key.text()}".strip())
        parts.append(f"{self.more.name.text()} {self.more.key.text()}")
        return "  ".join(p for p in parts if p)

    def run_main(self) -> None:
        if self.shown:
            self.shown[0].run()

    def open_menu(self) -> None:
        """The actions menu, anchored at the footer's right edge (above it when there is room)."""
        if self.menu.isVisible():
            self.menu.dismiss()
            return
        self.menu.set_actions(self.shown)
        self.menu.open_at(self.mapToGlobal(self.rect().topRight()), self.mapToGlobal(self.rect().bottomRight()))

    def hideEvent(self, event: QHideEvent) -> None:  # noqa: N802 - Qt override
        self.menu.close()  # the panel hid (a click elsewhere, the hotkey): its menu goes with it
        super().hideEvent(event)

    def _restyle(self) -> None:
        """Names in the text colour, key caps on the base colour with a thin border, from the palette now."""
        pal = self.palette()
        text, base = pal.color(QPalette.ColorRole.Text).name(), pal.color(QPalette.ColorRole.Base).name()
        mid, dim = pal.color(QPalette.ColorRole.Mid).name(), secondary(pal).name()
        key = f"{text}{base}{mid}{dim}"
        if key == self._style_key:
            return
        self._style_key = key
        cap = (f"QLabel {{ color: {text}; background: {base}; border: 1px solid {mid}; border-radius: 4px; "
               "padding: 0px 5px; }")
        for hint in (self.main, self.more):
            hint.key.setStyleSheet(cap)
            hint.name.setStyleSheet(f"QLabel {{ color: {text}; }}")
        self.more.name.setStyleSheet(f"QLabel {{ color: {dim}; }}")
        self.divider.setStyleSheet(f"color: {mid};")
