"""The search panel's keys: Enter, Space, arrows, Delete, Ctrl+Z and Esc, before the query box sees them."""

from __future__ import annotations

from PySide6.QtCore import QEvent, QObject, Qt
from PySide6.QtGui import QKeyEvent

from .panel import MAX_ROWS


class SearchKeys:
    """Key handling of SearchWindow (an event filter on the query box and the list); the actions live elsewhere."""

    def eventFilter(self, obj: QObject, event: QEvent) -> bool:  # noqa: N802 - Qt override
        if event.type() == QEvent.Type.KeyPress and isinstance(event, QKeyEvent) and self._key(obj, event):
            return True
        return super().eventFilter(obj, event)

    def _space_previews(self, in_query: bool, shift: bool) -> bool:
        """Space opens the preview, not a space in the query, when it cannot be typing: with Shift, outside the
        query box, in an empty query, in a query shown whole-selected (just reopened), or after moving in the list
        with the arrows (picking, not typing). Typing any character makes Space type again."""
        if not self.model.rowCount() or self.stack.currentWidget() is not self.list:
            return False
        text = self.query.text()
        return (shift or not in_query or not text.strip() or self._navigated
                or (self.query.hasSelectedText() and self.query.selectedText() == text))

    def _key(self, obj: QObject, event: QKeyEvent) -> bool:
        key, mods = event.key(), event.modifiers()
        ctrl = bool(mods & Qt.KeyboardModifier.ControlModifier)
        shift = bool(mods & Qt.KeyboardModifier.ShiftModifier)
        in_query = obj is self.query
        at_end = in_query and self.query.cursorPosition() == len(self.query.text())
        if key == Qt.Key.Key_Escape:
            if self.preview.isVisible():
                self.close_preview()
            else:
                self.hide()
            return True
        if ctrl and key == Qt.Key.Key_Z and self._forgotten:  # before the query box's own undo
            self.undo_forget()
            return True
        if key in (Qt.Key.Key_Return, Qt.Key.Key_Enter):
            self.copy_text() if ctrl else self.copy_context()
            return True
        if key == Qt.Key.Key_Delete and (not in_query or at_end):
            self.forget()
            return True
        if ctrl and key in (Qt.Key.Key_Right, Qt.Key.Key_Left) and (at_end or not in_query):
            done = self.expand_similar() if key == Qt.Key.Key_Right else self.collapse_similar()
            if done or not in_query:
                return True
        if key in (Qt.Key.Key_Up, Qt.Key.Key_Down, Qt.Key.Key_PageUp, Qt.Key.Key_PageDown):
            self._navigated = True
            if in_query:
                step = {Qt.Key.Key_Up: -1, Qt.Key.Key_Down: 1, Qt.Key.Key_PageUp: -MAX_ROWS}.get(key, MAX_ROWS)
                row = self.list.currentIndex().row() + step
                self._select_row(min(max(0, row), self.model.rowCount() - 1), extend=shift)
                return True
            return False
        if key == Qt.Key.Key_Space and not ctrl and self._space_previews(in_query, shift):
            self.toggle_preview()
            return True
        if key == Qt.Key.Key_Right and (at_end or not in_query) and not self.preview.isVisible():
            self.open_preview()
            return True
        if not in_query and key == Qt.Key.Key_Left and self.preview.isVisible():
            self.close_preview()
            return True
        if not in_query and event.text().isprintable() and event.text() and not ctrl:
            self.query.setFocus()
            self.query.insert(event.text())
            return True
        return False

