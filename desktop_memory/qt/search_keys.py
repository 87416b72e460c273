"""The search panel's keys: Enter, Space, arrows, Delete, Ctrl+Z and Esc, before the query box sees them."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QEvent, QObject, Qt
from PySide6.QtGui import QKeyEvent
from PySide6.QtWidgets import QLineEdit, QStackedWidget

from .panel import MAX_ROWS
from .preview_control import PreviewControl
from .result_list import ResultList
from .search_actions import SearchActions


class SearchKeys(QObject):
    """An event filter on the query box and the result list that turns keys into moves and actions.

    `navigated`: moved in the list with the arrows since the last typed character (then Space previews)."""

    def __init__(self, query: QLineEdit, results: ResultList, stack: QStackedWidget, preview: PreviewControl,
                 actions: SearchActions, hide_panel: Callable[[], None], parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.query, self.list, self.stack = query, results, stack
        self.preview, self.actions, self.hide_panel = preview, actions, hide_panel
        self.navigated = False
        query.textChanged.connect(self._typed)
        for widget in (query, results):
            widget.installEventFilter(self)

    def _typed(self, _text: str) -> None:
        self.navigated = False

    def eventFilter(self, obj: QObject, event: QEvent) -> bool:  # noqa: N802 - Qt override
        if event.type() == QEvent.Type.KeyPress and isinstance(event, QKeyEvent) and self._key(obj, event):
            return True
        if (event.type() == QEvent.Type.ShortcutOverride and isinstance(event, QKeyEvent)
                and event.key() == Qt.Key.Key_K and event.modifiers() & Qt.KeyboardModifier.ControlModifier):
            return True  # the panel's Ctrl+K (the actions menu) wins over a line edit's delete-to-end-of-line
        return super().eventFilter(obj, event)

    def _space_previews(self, in_query: bool, shift: bool) -> bool:
        """Space opens the preview, not a space in the query, when it cannot be typing: with Shift, outside the
        query box, in an empty query, in a query shown whole-selected (just reopened), or after moving in the list
        with the arrows (picking, not typing). Typing any character makes Space type again."""
        if not self.list.results.rowCount() or self.stack.currentWidget() is not self.list:
            return False
        text = self.query.text()
        return (shift or not in_query or not text.strip() or self.navigated
                or (self.query.hasSelectedText() and self.query.selectedText() == text))

    def _key(self, obj: QObject, event: QKeyEvent) -> bool:
        key, mods = event.key(), event.modifiers()
        ctrl = bool(mods & Qt.KeyboardModifier.ControlModifier)
        shift = bool(mods & Qt.KeyboardModifier.ShiftModifier)
        in_query = obj is self.query
        at_end = in_query and self.query.cursorPosition() == len(self.query.text())
        actions, preview = self.actions, self.preview
        if key == Qt.Key.Key_Escape:
            if preview.is_open:
                preview.close()
            else:
                self.hide_panel()
            return True
        if ctrl and key == Qt.Key.Key_Z and actions.can_undo:  # before the query box's own undo
            actions.undo_forget()
            return True
        if key in (Qt.Key.Key_Return, Qt.Key.Key_Enter):
            if ctrl:
                actions.copy_text()
            else:
                actions.copy_context()
            return True
        if key == Qt.Key.Key_Delete and (not in_query or at_end):
            actions.forget()
            return True
        if ctrl and key in (Qt.Key.Key_Right, Qt.Key.Key_Left) and (at_end or not in_query):
            done = self.list.expand_similar() if key == Qt.Key.Key_Right else self.list.collapse_similar()
            if done or not in_query:
                return True
        if key in (Qt.Key.Key_Up, Qt.Key.Key_Down, Qt.Key.Key_PageUp, Qt.Key.Key_PageDown):
            self.navigated = True
            if in_query:
                steps: dict[int, int] = {Qt.Key.Key_Up: -1, Qt.Key.Key_Down: 1, Qt.Key.Key_PageUp: -MAX_ROWS}
                step = steps.get(key, MAX_ROWS)
                row = self.list.currentIndex().row() + step
                self.list.select_row(min(max(0, row), self.list.results.rowCount() - 1), extend=shift)
                return True
            return False
        if key == Qt.Key.Key_Space and not ctrl and self._space_previews(in_query, shift):
            preview.toggle()
            return True
        if key == Qt.Key.Key_Right and (at_end or not in_query) and not preview.is_open:
            preview.open()
            return True
        if not in_query and key == Qt.Key.Key_Left and preview.is_open:
            preview.close()
            return True
        if not in_query and event.text().isprintable() and event.text() and not ctrl:
            self.query.setFocus()
            self.query.insert(event.text())
            return True
        return False
