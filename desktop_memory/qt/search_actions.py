"""What the search panel does with a selection: copy (and paste), pin, forget (with the undo bar), edit.

Each engine call goes through the bridge and answers on the GUI thread; nothing here waits."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Protocol

from PySide6.QtWidgets import QLabel

from ..core.context import Context
from ..core.models import Memory
from ..core.plural import count
from . import display
from .actions_menu import PanelAction
from .bridge import EngineBridge
from .paste_flow import PasteFlow
from .preview_control import PreviewControl
from .result_list import ResultList
from .results import SimilarRole
from .undo_bar import UndoBar

log = logging.getLogger("desktop_memory.qt.search_window")


class Panel(Protocol):
    """What the actions need from the window around them (SearchWindow)."""

    budget: int  # the context pack's token budget and format (settings)
    fmt: str

    def hide(self) -> None: ...

    def bring_back(self) -> None:
        """Show the panel again, in front and focused."""

    def search_again(self, select_id: str | None = None, keep_ids: list[str] | None = None) -> None:
        """Run the query again; the cursor goes to `select_id`, and `keep_ids` stay selected."""

    def show_nothing_left(self) -> None:
        """The list is empty now: say so for the query shown."""

    def update_status(self) -> None:
        """The footer, for the selection now."""


class SearchActions:
    """Copy and paste, pin, forget and undo, and the preview's edits, for the selection of a ResultList.

    `notice(message)` tells the tray (never memory content); `copied(kind, memories, tokens)` reports a copy.
    `open_settings`, when the app sets it, opens the settings window (the actions menu then offers it)."""

    def __init__(self, panel: Panel, bridge: EngineBridge, results: ResultList, paster: PasteFlow,
                 preview: PreviewControl, undo_bar: UndoBar, paste_problem: QLabel, *,
                 notice: Callable[[str], None], copied: Callable[[str, int, int], None]) -> None:
        self.panel, self.bridge, self.list, self.paster = panel, bridge, results, paster
        self.preview, self.undo_bar, self.paste_problem = preview, undo_bar, paste_problem
        self.notice, self.copied = notice, copied
        self._forgotten: list[str] = []  # what Ctrl+Z brings back
        self._pasting = ""  # what is being pasted (for the notice once the paste is sent)
        self.open_settings: Callable[[], None] | None = None
        paster.finished.connect(self._paste_finished)
        undo_bar.undo.clicked.connect(self.undo_forget)
        undo_bar.timer.timeout.connect(self._undo_expired)
        preview.pane.save_requested.connect(self.save_edit)
        preview.pane.restore_requested.connect(self.restore_version)

    @property
    def can_undo(self) -> bool:
        """Whether a forget can still be undone (Ctrl+Z, the undo bar)."""
        return bool(self._forgotten)

    # -- what the selection can do now ---------------------------------------------------------------
    def panel_actions(self) -> list[PanelAction]:
        """Everything the selection can do now, each with its key and the method that key runs: the first is the
        footer's main action, the actions menu (Ctrl+K) lists them all (footer_hints.py, actions_menu.py)."""
        chosen = self.list.selected_memories()
        preview = self.preview
        verb = "Paste" if self.paster.pastes else "Copy"  # paste: into the window the search was opened over
        acts: list[PanelAction] = []
        if chosen:
            acts += [PanelAction(f"{verb} context", "↵", self.copy_context),
                     PanelAction(f"{verb} text", "Ctrl+↵", self.copy_text)]
        if preview.is_open:
            acts.append(PanelAction("Close preview", "Esc", preview.close))
        elif chosen:
            acts.append(PanelAction("Preview", "Shift+Space", preview.toggle))
        if chosen:
            acts += self._similar_actions()
            acts += [PanelAction("Unpin" if all(m.pinned for m in chosen) else "Pin", "Ctrl+P", self.toggle_pin),
                     PanelAction("Restore" if all(m.forgotten for m in chosen) else "Forget", "Del", self.forget)]
        if self.can_undo:
            acts.append(PanelAction("Undo forget", "Ctrl+Z", self.undo_forget))
        if self.open_settings is not None:
            acts.append(PanelAction("Settings…", "", self._settings))
        if not preview.is_open:
            acts.append(PanelAction("Hide", "Esc", self.panel.hide))
        return acts

    def _similar_actions(self) -> list[PanelAction]:
        """Show the current result's look-alikes (Ctrl+→), or hide those open around the cursor (Ctrl+←)."""
        index = self.list.currentIndex()
        if not index.isValid():
            return []
        similar = index.data(SimilarRole)
        if similar and not similar[1]:
            return [PanelAction("Show similar", "Ctrl+→", self.list.expand_similar)]
        model = self.list.results
        lead = model.leader_row(index.row())
        if 0 <= lead < model.rowCount() and model.memories[lead].id in model.expanded:
            return [PanelAction("Hide similar", "Ctrl+←", self.list.collapse_similar)]
        return []

    def _settings(self) -> None:
        self.panel.hide()
        if self.open_settings is not None:
            self.open_settings()

    # -- copy and paste ------------------------------------------------------------------------
    def copy_context(self) -> None:
        ids = [m.id for m in self.list.selected_memories()]
        if not ids:
            return
        budget, fmt, query = self.panel.budget, self.panel.fmt, self.list.results.query
        about = " ".join(t for t in query.split() if t not in display.filter_tokens(query))
        self.bridge.submit(lambda s: s.context(about or None, ids=ids, budget=budget, fmt=fmt), self._context_ready,
                           self.notice)

    def _context_ready(self, ctx: Context) -> None:
        what = f"context: {count(len(ctx.included), 'memory')}, ~{ctx.tokens} tokens"
        self._deliver(ctx.text, what)
        log.info("context copied: %d memories, %d tokens", len(ctx.included), ctx.tokens)
        self.copied("context", len(ctx.included), ctx.tokens)

    def copy_text(self) -> None:
        chosen = self.list.selected_memories()
        if not chosen:
            return
        text = "\n\n".join(m.content for m in chosen)
        self._deliver(text, "")
        log.info("text copied: %d memories", len(chosen))
        self.copied("text", len(chosen), 0)

    def _deliver(self, text: str, what: str) -> None:
        """Copy, hide, then (where it works and is wanted) paste into the window the search was opened over
        (qt/paste_flow.py). A copy that is not pasted says how to paste it; a failed paste brings the window
        back with the problem."""
        self.paste_problem.hide()
        self._pasting = what
        if self.paster.deliver(text):
            self.panel.hide()
            return
        self.panel.hide()
        if what:
            self.notice(f"Copied {what} — paste with {self.paster.support.paste_keys}")

    def _paste_finished(self, problem: str | None) -> None:
        what, self._pasting = self._pasting, ""
        if problem is None:
            if what:
                self.notice(f"Pasted {what}")
            return
        self.paster.target = None  # Enter again copies only (the window it came from did not take the paste)
        self.paste_problem.setText(f"Copied, not pasted: {problem}")
        self.paste_problem.show()
        self.panel.bring_back()

    # -- pin -------------------------------------------------------------------------------------
    def toggle_pin(self) -> None:
        chosen = self.list.selected_memories()
        if not chosen:
            return
        pin = not all(m.pinned for m in chosen)
        ids = [m.id for m in chosen]
        self.bridge.submit(lambda s: [s.set_pinned(i, pin) for i in ids], self._pinned, self.notice)

    def _pinned(self, memories: list[Memory]) -> None:
        """Show the change, then search again so pinned memories move up at once (the cursor stays on its memory)."""
        current = self.list.current_memory()
        keep = [m.id for m in self.list.selected_memories()]
        self._changed(memories)
        self.panel.search_again(current.id if current else None, keep)

    def _changed(self, memories: list[Memory]) -> None:
        for m in memories:
            self.list.results.replace(m)
        self.preview.refresh()
        self.panel.update_status()

    # -- forget, restore, undo -------------------------------------------------------------------
    def forget(self) -> None:
        """Forget the selection (Ctrl+Z brings it back); a selection of forgotten memories (`is:forgotten`) is
        restored instead."""
        chosen = self.list.selected_memories()
        if not chosen:
            return
        ids = [m.id for m in chosen]
        if all(m.forgotten for m in chosen):
            self.bridge.submit(lambda s: [s.set_forgotten(i, False) for i in ids], self._restored, self.notice)
            return
        row = min(self.list.currentIndex().row(), self.list.results.rowCount() - 1)
        self.bridge.submit(lambda s: [s.set_forgotten(i, True) for i in ids],
                           lambda _: self._forgotten_done(ids, row), self.notice)

    def _forgotten_done(self, ids: list[str], row: int) -> None:
        model = self.list.results
        model.remove(set(ids))
        self._forgotten = ids
        self.undo_bar.offer(len(ids))
        if model.rowCount():
            self.list.select_row(min(max(row, 0), model.rowCount() - 1))
        else:
            self.panel.show_nothing_left()
        self.panel.update_status()

    def _restored(self, memories: list[Memory]) -> None:
        self._changed(memories)
        n = len(memories)
        self.notice(f"Restored {n} memor{'y' if n == 1 else 'ies'}")

    def undo_forget(self) -> None:
        ids, self._forgotten = self._forgotten, []
        if not ids:
            return
        self.undo_bar.withdraw()
        self.bridge.submit(lambda s: [s.set_forgotten(i, False) for i in ids],
                           lambda _: self.panel.search_again(ids[0]), self.notice)

    def _undo_expired(self) -> None:
        """After UNDO_MS the forget is final for Ctrl+Z (which then undoes typing again); is:forgotten restores."""
        self._forgotten = []
        self.undo_bar.hide()
        self.panel.update_status()

    # -- the preview's edits ---------------------------------------------------------------------
    def save_edit(self, memory_id: str, text: str) -> None:
        self.bridge.submit(lambda s: [s.edit(memory_id, content=text)], self._edit_saved, self.notice)

    def _edit_saved(self, memories: list[Memory]) -> None:
        self._changed(memories)
        self.notice("Saved the edit")

    def restore_version(self, memory_id: str, seq: int) -> None:
        self.bridge.submit(lambda s: [s.restore_version(memory_id, seq)], self._version_restored, self.notice)

    def _version_restored(self, memories: list[Memory]) -> None:
        self._changed(memories)
        self.notice("Restored the earlier version (the text it replaced is kept as a version)")
