"""What the search panel does with a selection: copy, pin, forget (with the undo bar), preview, edit."""

from __future__ import annotations

import logging

from ..core.context import Context
from ..core.models import Memory
from . import display
from .paste_flow import put_on_clipboard

log = logging.getLogger("desktop_memory.qt.search_window")

UNDO_MS = 10_000

__all__ = ["UNDO_MS", "SearchActions", "put_on_clipboard"]


class SearchActions:
    """The actions of SearchWindow; each engine call goes through its bridge and answers on the GUI thread."""

    def copy_context(self) -> None:
        ids = [m.id for m in self.selected_memories()]
        if not ids:
            return
        budget, fmt = self.budget, self.fmt
        about = " ".join(t for t in self.model.query.split() if t not in display.filter_tokens(self.model.query))
        self.bridge.submit(lambda s: s.context(about or None, ids=ids, budget=budget, fmt=fmt), self._context_ready,
                           self.notice.emit)

    def _context_ready(self, ctx: Context) -> None:
        what = f"context: {len(ctx.included)} memories, ~{ctx.tokens} tokens"
        self._deliver(ctx.text, what)
        log.info("context copied: %d memories, %d tokens", len(ctx.included), ctx.tokens)
        self.copied.emit("context", len(ctx.included), ctx.tokens)

    def copy_text(self) -> None:
        chosen = self.selected_memories()
        if not chosen:
            return
        text = "\n\n".join(m.content for m in chosen)
        self._deliver(text, "")
        log.info("text copied: %d memories", len(chosen))
        self.copied.emit("text", len(chosen), 0)

    def _deliver(self, text: str, what: str) -> None:
        """Copy, hide, then (where it works and is wanted) paste into the window the search was opened over
        (qt/paste_flow.py). A copy that is not pasted says how to paste it; a failed paste brings the window
        back with the problem."""
        self.paste_problem.hide()
        self._pasting = what
        if self.paster.deliver(text):
            self.hide()
            return
        self.hide()
        if what:
            self.notice.emit(f"Copied {what} — paste with {self.paster.support.paste_keys}")

    def _paste_finished(self, problem: str | None) -> None:
        what, self._pasting = self._pasting, ""
        if problem is None:
            if what:
                self.notice.emit(f"Pasted {what}")
            return
        self.paster.target = None  # Enter again copies only (the window it came from did not take the paste)
        self.paste_problem.setText(f"Copied, not pasted: {problem}")
        self.paste_problem.show()
        self.show()
        self.raise_()
        self.activateWindow()

    def toggle_pin(self) -> None:
        chosen = self.selected_memories()
        if not chosen:
            return
        pin = not all(m.pinned for m in chosen)
        ids = [m.id for m in chosen]
        self.bridge.submit(lambda s: [s.set_pinned(i, pin) for i in ids], self._pinned, self.notice.emit)

    def _pinned(self, memories: list[Memory]) -> None:
        """Show the change, then search again so pinned memories move up at once (the cursor stays on its memory)."""
        current = self.current_memory()
        self._keep_ids = [m.id for m in self.selected_memories()]
        self._changed(memories)
        self._want_id = current.id if current else None
        self.run_search()

    def _changed(self, memories: list[Memory]) -> None:
        for m in memories:
            self.model.replace(m)
        if self.preview.isVisible() and (m := self.current_memory()):
            self._preview(m)
        self._update_status()

    def forget(self) -> None:
        """Forget the selection (Ctrl+Z brings it back); a selection of forgotten memories (`is:forgotten`) is
        restored instead."""
        chosen = self.selected_memories()
        if not chosen:
            return
        ids = [m.id for m in chosen]
        if all(m.forgotten for m in chosen):
            self.bridge.submit(lambda s: [s.set_forgotten(i, False) for i in ids], self._restored, self.notice.emit)
            return
        row = min(self.list.currentIndex().row(), self.model.rowCount() - 1)
        self.bridge.submit(lambda s: [s.set_forgotten(i, True) for i in ids],
                           lambda _: self._forgotten_done(ids, row), self.notice.emit)

    def _forgotten_done(self, ids: list[str], row: int) -> None:
        self.model.remove(set(ids))
        self._forgotten = ids
        n = len(ids)
        self.undo_label.setText(f"Forgot {n} memor{'y' if n == 1 else 'ies'}. Ctrl+Z brings "
                                f"{'it' if n == 1 else 'them'} back.")
        self.undo_bar.show()
        self._undo_timer.start()
        if self.model.rowCount():
            self._select_row(min(max(row, 0), self.model.rowCount() - 1))
        else:
            self._show_empty(self.query.text())
        self._update_status()

    def _restored(self, memories: list[Memory]) -> None:
        self._changed(memories)
        n = len(memories)
        self.notice.emit(f"Restored {n} memor{'y' if n == 1 else 'ies'}")

    def undo_forget(self) -> None:
        ids, self._forgotten = self._forgotten, []
        if not ids:
            return
        self.undo_bar.hide()
        self._undo_timer.stop()

        def done(_: object) -> None:
            self._want_id = ids[0]
            self.run_search()

        self.bridge.submit(lambda s: [s.set_forgotten(i, False) for i in ids], done, self.notice.emit)

    def _undo_expired(self) -> None:
        """After UNDO_MS the forget is final for Ctrl+Z (which then undoes typing again); is:forgotten restores."""
        self._forgotten = []
        self.undo_bar.hide()
        self._update_status()

    def open_preview(self) -> None:
        if (m := self.current_memory()) is not None:
            self._preview(m)
            self.preview.show()
            self._fit()
            self._update_status()

    def toggle_preview(self) -> None:
        if self.preview.isVisible():
            self.preview.hide()
            self._fit()
            self._update_status()
        else:
            self.open_preview()

    def close_preview(self) -> None:
        self.preview.hide()
        self._fit()
        self._update_status()
        self.list.setFocus()

    def _save_edit(self, memory_id: str, text: str) -> None:
        self.bridge.submit(lambda s: [s.edit(memory_id, content=text)], self._edit_saved, self.notice.emit)

    def _edit_saved(self, memories: list[Memory]) -> None:
        self._changed(memories)
        self.notice.emit("Saved the edit")

    def _restore_version(self, memory_id: str, seq: int) -> None:
        self.bridge.submit(lambda s: [s.restore_version(memory_id, seq)], self._version_restored, self.notice.emit)

    def _version_restored(self, memories: list[Memory]) -> None:
        self._changed(memories)
        self.notice.emit("Restored the earlier version (the text it replaced is kept as a version)")
