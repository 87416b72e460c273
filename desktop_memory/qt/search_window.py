"""The search window: type, pick, paste. Keyboard first; every engine call goes through the bridge."""

from __future__ import annotations

import gc
import html
import logging
import warnings

from PySide6.QtCore import QEvent, Qt, QTimer, Signal
from PySide6.QtGui import QGuiApplication, QHideEvent, QKeySequence, QPaintEvent, QResizeEvent, QShortcut, QWindow
from PySide6.QtWidgets import (
    QApplication,
    QFrame,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QSplitter,
    QStackedWidget,
    QVBoxLayout,
    QWidget,
)

from ..core.context import build_context
from ..core.models import Hit, Memory
from ..engine.settings import Settings
from . import display
from .bridge import EngineBridge
from .footer_hints import FooterBar, status_wordings
from .panel import WIDTH, PanelLook
from .paste_flow import PasteFlow
from .preview import PreviewPane
from .preview_control import PreviewControl
from .query_chips import render_chips
from .result_list import ResultList
from .results import ResultsModel
from .search_actions import SearchActions
from .search_keys import SearchKeys
from .undo_bar import UndoBar

log = logging.getLogger(__name__)

__all__ = ["RESULT_LIMIT", "SearchWindow"]

RESULT_LIMIT = 30
TITLE = "desktop-memory search"
FOCUS_CHECK_MS = 150  # on X, focus can pass through "no window" between two windows of this app
# After showing: a window manager that refused Qt's activation (focus stealing prevention) is asked again as a
# pager asks; a panel still without the focus then is hidden: never a panel on top that keys do not reach.
ACTIVATE_CHECK_MS, NEVER_ACTIVE_MS = 120, 700

FIRST_RUN = (
    "<h3>Nothing remembered yet</h3>"
    "<p>desktop-memory keeps, on this machine only, what you add with <code>desktop-memory add</code>, "
    "what you import, and (when capture is on in Settings) what you copy. Secrets are redacted first.</p>"
    "<p><b>Search</b> by words or by meaning. Filters: <code>source:clipboard</code> <code>app:firefox</code> "
    "<code>#tag</code> <code>after:2026-01-01</code> <code>before:…</code> <code>is:pinned</code>.</p>"
    "<p><b>Keys</b>: ↑/↓ move · Enter copies the context and pastes it into the window you came from "
    "(Settings › General) · Ctrl+Enter the same with the text · Shift+Space or → preview "
    "(Space too, once you moved with ↑/↓) · "
    "Ctrl+→ / Ctrl+← show / hide a result's similar memories · Ctrl+P pin · Delete forget (Ctrl+Z undoes) · "
    "Esc hide. "
    "The window's global hotkey is set in Settings › Hotkeys "
    "(default {hotkey}).</p>"
)


def freeze_startup_objects() -> None:
    """Once per process, when the first window is built: collect, then put every object alive (modules, Qt wrappers,
    settings) out of the cyclic collector's sight (gc.freeze), so a full collection while typing walks only what
    came later. A full collection of the GUI process took 30-48 ms on the GUI thread, one of the ticks over 50 ms
    while typing (docs/benchmarks.md)."""
    if not gc.get_freeze_count():
        gc.collect()
        gc.freeze()


class SearchWindow(QWidget):
    """Spotlight-like search over memories that turns a selection into pasteable context.

    The window makes and lays out its widgets, searches as the query changes, and shows, hides and follows the
    focus. It owns the parts that do the rest, each given only what it works on:
    `look` (panel.py) paints and sizes the panel; `list` (result_list.py) keeps the cursor and the selection;
    `preview_control` (preview_control.py) opens the preview on the current result; `act`
    (search_actions.py) copy and paste, pin, forget and edit; `keys` (search_keys.py) turn keys into those;
    `paster` (paste_flow.py) pastes into the window the search was opened over."""

    search_finished = Signal(str, int)  # query, number of results shown
    copied = Signal(str, int, int)  # "context" or "text", memories, estimated tokens
    notice = Signal(str)  # a short message for the tray (never memory content)

    def __init__(self, bridge: EngineBridge, settings: Settings, hotkey: str = "Ctrl+Alt+M") -> None:
        super().__init__()
        self.bridge = bridge
        self.budget, self.fmt, self.hotkey = settings.context_budget, settings.context_format, hotkey
        self._want_id: str | None = None  # the memory the cursor goes to in the next results
        self._keep_ids: list[str] = []  # a selection to keep across the next results (pinning re-sorts)
        self._focus_in_app = False  # a window of this app took the focus since the panel lost it
        self._was_active = False  # active since shown: only a panel that had the focus hides when it goes elsewhere
        self.setWindowTitle(TITLE)
        # a launcher panel: no title bar, above other windows, rounded (painted, and masked where there is no
        # compositor), sized to its results
        self.setWindowFlags(Qt.WindowType.Window | Qt.WindowType.FramelessWindowHint
                            | Qt.WindowType.WindowStaysOnTopHint)
        self.setAttribute(Qt.WidgetAttribute.WA_TranslucentBackground)
        layout = self._build()

        self.look = PanelLook(self, layout, query=self.query, results=self.list, empty=self.empty, stack=self.stack,
                              preview=self.preview, body=self.splitter, line=self.line, status=self.status,
                              footer=self.footer)
        self.resize(WIDTH, 420)
        self.paster = PasteFlow(self)  # Enter pastes into the window the search was opened over (paste_flow.py)
        self.paster.apply_settings(settings)
        self.preview_control = PreviewControl(self.preview, self.list, bridge, self.notice.emit, self._relayout)
        self.act = SearchActions(self, bridge, self.list, self.paster, self.preview_control, self.undo_bar,
                                     self.paste_problem, notice=self.notice.emit, copied=self.copied.emit)
        self.keys = SearchKeys(self.query, self.list, self.stack, self.preview_control, self.act, self.hide,
                               parent=self)

        self.query.textChanged.connect(self._query_changed)
        # the keys always go to the query box (SearchKeys turns arrows, Enter, Space... into moves and actions): a
        # list or preview with the focus would take Ctrl+A, Backspace and typing away from the query
        self.list.setFocusPolicy(Qt.FocusPolicy.NoFocus)
        self.model.rowsInserted.connect(lambda *_: self.look.fit())  # look-alikes opened or closed
        self.model.rowsRemoved.connect(lambda *_: self.look.fit())
        self.list.selectionModel().selectionChanged.connect(lambda *_: self.update_status())
        self.list.doubleClicked.connect(lambda _: self.act.copy_context())
        QShortcut(QKeySequence("Ctrl+P"), self, self.act.toggle_pin)
        QShortcut(QKeySequence("Ctrl+Z"), self, self.act.undo_forget, context=Qt.ShortcutContext.WindowShortcut)
        QShortcut(QKeySequence("Ctrl+K"), self, self.footer.open_menu)  # the actions menu (actions_menu.py)
        app = QGuiApplication.instance()
        if isinstance(app, QGuiApplication):
            app.focusWindowChanged.connect(self._focus_window_changed)
        self.look.style()
        self._render_chips()
        self.update_status()
        freeze_startup_objects()

    def _build(self) -> QVBoxLayout:
        """Make the widgets and lay them out: the query and its chips, the results (or a message) beside the
        preview, the undo bar, a paste's problem, and the footer (status and key hints)."""
        self.query = QLineEdit()
        self.query.setPlaceholderText("Search memories…")
        self.query.setToolTip("Filters: source:clipboard  app:firefox  #tag  after:2026-01-01  is:pinned  "
                              "is:forgotten")
        self.query.setAccessibleName("Search query")
        self.query.setClearButtonEnabled(True)
        self.query.setFrame(False)
        font = self.query.font()
        font.setPointSizeF(font.pointSizeF() * 1.45)
        self.query.setFont(font)
        self.query.setMinimumHeight(int(self.query.fontMetrics().height() * 1.9))

        self.chips = QHBoxLayout()
        self.chips.setSpacing(4)
        chip_row = QWidget()
        chip_row.setLayout(self.chips)
        self.chips.setContentsMargins(0, 0, 0, 0)

        self.model = ResultsModel()
        self.list = ResultList(self.model)
        self.empty = QLabel()
        self.empty.setWordWrap(True)
        self.empty.setTextFormat(Qt.TextFormat.RichText)
        self.empty.setAlignment(Qt.AlignmentFlag.AlignTop | Qt.AlignmentFlag.AlignLeft)
        self.empty.setMargin(14)
        self.stack = QStackedWidget()
        self.stack.addWidget(self.list)
        self.stack.addWidget(self.empty)

        self.preview = PreviewPane()
        self.preview.hide()
        self.splitter = QSplitter()
        self.splitter.setChildrenCollapsible(False)
        self.splitter.addWidget(self.stack)
        self.splitter.addWidget(self.preview)
        self.splitter.setStretchFactor(0, 3)
        self.splitter.setStretchFactor(1, 2)

        self.undo_bar = UndoBar()

        self.footer = FooterBar(home=self.query)  # status, one main action, "Actions Ctrl+K" (footer_hints.py)
        self.status = self.footer.status
        self.paste_problem = QLabel()  # a paste that failed: the one-line problem (the text is on the clipboard)
        self.paste_problem.setWordWrap(True)
        self.paste_problem.setAccessibleName("Paste problem")
        self.paste_problem.setContentsMargins(14, 2, 14, 2)
        self.paste_problem.hide()

        top = QVBoxLayout()
        top.setContentsMargins(14, 8, 14, 4)
        top.setSpacing(2)
        top.addWidget(self.query)
        top.addWidget(chip_row)
        self.line = QFrame()
        self.line.setFrameShape(QFrame.Shape.HLine)
        self.line.setFrameShadow(QFrame.Shadow.Plain)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(1, 1, 1, 1)
        layout.setSpacing(0)
        layout.addLayout(top)
        layout.addWidget(self.line)
        layout.addWidget(self.splitter, 1)
        layout.addWidget(self.undo_bar)
        layout.addWidget(self.paste_problem)
        layout.addWidget(self.footer)
        return layout

    # -- showing ----------------------------------------------------------------------------
    def show_and_focus(self, select_id: str | None = None) -> None:
        """Open centred on the active screen (the one under the mouse), above other windows, ready to type; the
        cursor starts on the first result (or on `select_id`)."""
        self._want_id = select_id
        self.keys.navigated = False
        if select_id:
            self.query.setText("")
        if not self.isVisible():
            self.paster.remember_target()  # the window in front before ours takes the focus
            self.paste_problem.hide()
            self.preview.hide()
            self.look.place()
        self._bring_forward()
        self.query.setFocus()
        self.query.selectAll()
        if self.model.rowCount():
            self.list.select_row(0)  # until the fresh results arrive: never an older cursor row
        self.run_search()
        log.info("search window shown")

    def toggle(self) -> None:
        if self.isVisible() and self.isActiveWindow():
            self.hide()
        else:
            self.show_and_focus()

    def bring_back(self) -> None:
        """Show the panel again as it was, in front and focused (a paste that failed says why in it)."""
        self._bring_forward()
        self.query.setFocus()

    def _bring_forward(self) -> None:
        self.show()
        self.raise_()
        self.activateWindow()
        QTimer.singleShot(ACTIVATE_CHECK_MS, self._activation_check)

    def _activation_check(self) -> None:
        """Still not active: on X11 the window manager refused Qt's request; ask as a pager does. Elsewhere the
        platform decides (and Qt may only have missed its answer: nothing is done there)."""
        if not self.isVisible() or self.isActiveWindow() or self._other_window_of_ours_focused():
            return
        if QGuiApplication.platformName() != "xcb":
            return
        from ..capture import paste_x11

        if not paste_x11.window_manager_running():  # a bare X server: Qt's own request sets the focus
            return
        log.info("search window: the window manager did not focus it; asking again")
        paste_x11.bring_forward(int(self.winId()))
        QTimer.singleShot(NEVER_ACTIVE_MS, self._hide_if_never_active)

    def _other_window_of_ours_focused(self) -> bool:
        """Whether a window of this app other than the panel has the focus (welcome, settings, a message box);
        Qt can go on naming the panel as its focus window after the window manager moved the focus away."""
        window = QGuiApplication.focusWindow()
        return window is not None and window is not self.windowHandle()

    def _hide_if_never_active(self) -> None:
        """X11: a panel the window manager keeps without the focus would cover other windows while keys go to
        them: hide it (a paste's problem goes to the tray instead). The X server says where the focus is: Qt (xcb)
        keeps no record of a focus-in on a window that was hidden while active (it stays Qt's focus window)."""
        if not self.isVisible() or self.isActiveWindow() or self._other_window_of_ours_focused():
            return
        from ..capture import paste_x11

        front = paste_x11.foreground()
        if front is None:  # the X server does not say: leave the panel as it is
            return
        if front == int(self.winId()):
            with warnings.catch_warnings():  # deprecated for activateWindow(), which cannot set Qt's record right
                warnings.simplefilter("ignore", DeprecationWarning)
                QApplication.setActiveWindow(self)
            self.query.setFocus()
            return
        log.info("search window hidden: the window manager kept the focus elsewhere")
        if self.paste_problem.isVisible():
            self.notice.emit(self.paste_problem.text())
        self.hide()

    def apply_settings(self, settings: Settings, hotkey: str | None = None) -> None:
        self.budget, self.fmt = settings.context_budget, settings.context_format
        self.hotkey = hotkey or self.hotkey
        self.paster.apply_settings(settings)
        self.update_status()

    # -- searching --------------------------------------------------------------------------
    def _query_changed(self, _text: str) -> None:
        self._render_chips()
        self.run_search()  # every keystroke at once: the search lane drops the ones the engine has not started

    def run_search(self) -> None:
        query = self.query.text()
        self.bridge.submit(lambda s: s.search(query, limit=RESULT_LIMIT, record_access=False),
                           lambda hits: self._show_results(query, hits), self._show_error, lane="search")

    def search_again(self, select_id: str | None = None, keep_ids: list[str] | None = None) -> None:
        """Run the query again; the cursor goes to `select_id`, and `keep_ids` stay selected."""
        self._want_id = select_id
        if keep_ids is not None:
            self._keep_ids = keep_ids
        self.run_search()

    def _show_results(self, query: str, hits: list[Hit]) -> None:
        want, self._want_id = self._want_id, None  # a fresh query starts at the first row
        keep, self._keep_ids = set(self._keep_ids), []
        self.model.set_results(query, [h.memory for h in hits], {h.memory.id: h.similar for h in hits},
                               {h.memory.id: h.passage for h in hits if h.passage is not None},
                               {h.memory.id for h in hits if h.weak})
        if hits:
            self.stack.setCurrentWidget(self.list)
            rows = [i for i, h in enumerate(hits) if h.memory.id == want]
            self.list.select_row(rows[0] if rows else 0)
            for i, h in enumerate(hits):
                if h.memory.id in keep and h.memory.id != want:
                    self.list.add_to_selection(i)
        else:
            self._show_empty(query)
        self.look.fit()
        self.update_status()
        self.search_finished.emit(query, len(hits))
        log.info("search finished: %d results (a query of %d characters)", len(hits), len(query))  # no text

    def show_nothing_left(self) -> None:
        """The list became empty (its memories were forgotten): say so, and how to undo it."""
        self.empty.setText("<h3>Forgotten</h3><p>Nothing else matches. Ctrl+Z brings it back.</p>")
        self.stack.setCurrentWidget(self.empty)
        self.preview.hide()
        self.look.fit()

    def _show_empty(self, query: str) -> None:
        tokens = display.filter_tokens(query)
        if not query.strip():
            text = FIRST_RUN.format(hotkey=self.hotkey)
        elif tokens:
            text = ("<h3>No results</h3><p>Try removing a filter: "
                    + " ".join(f"<code>{html.escape(t)}</code>" for t in tokens)
                    + " (click its chip above).</p>")
        else:
            text = ("<h3>No results</h3><p>Nothing matches these words. Try other words: search also "
                    "finds memories by meaning.</p>")
        self.empty.setText(text)
        self.stack.setCurrentWidget(self.empty)
        self.preview.hide()
        self.look.fit()

    def _show_error(self, message: str) -> None:
        self.empty.setText(f"<h3>Search failed</h3><p>{html.escape(message)}</p>")
        self.stack.setCurrentWidget(self.empty)
        self.look.fit()
        self.notice.emit(message)

    # -- filter chips -----------------------------------------------------------------------
    def _render_chips(self) -> None:
        render_chips(self.chips, self.query.text, self._set_query)

    def _set_query(self, text: str) -> None:
        self.query.setText(text)
        self.query.setFocus()

    # -- the footer: the selection's context pack and its keys ------------------------------------
    def _relayout(self) -> None:
        """After the preview opened or closed: the panel's size and the footer's keys; typing goes on in the query."""
        self.look.fit()
        self.update_status()
        if self.isVisible():
            self.query.setFocus()

    def update_status(self) -> None:
        """The footer for the selection now: the status (in fewer words when space is short, never clipped) and
        the actions (the main one shown, all of them in the Ctrl+K menu)."""
        chosen = self.list.selected_memories()
        self._update_hints(chosen)
        if not chosen:
            self.footer.show_status(status_wordings(0, 0, self.budget, 0, 0))
            return
        ctx = build_context(chosen, budget=self.budget, fmt=self.fmt)
        shortened = len(ctx.summarised) + len(ctx.truncated)
        self.footer.show_status(status_wordings(len(chosen), ctx.tokens, self.budget, shortened, len(ctx.left_out)))

    def _update_hints(self, chosen: list[Memory]) -> None:
        """The footer's main action and the actions menu, for what is selected now (SearchActions.panel_actions)."""
        self.footer.show_actions(self.act.panel_actions())

    # -- painting (panel.py) ----------------------------------------------------------------------
    def paintEvent(self, event: QPaintEvent) -> None:  # noqa: N802 - Qt override
        self.look.paint()

    def resizeEvent(self, event: QResizeEvent) -> None:  # noqa: N802 - Qt override
        self.look.round_corners()
        super().resizeEvent(event)

    # -- focus: hide on a click elsewhere ---------------------------------------------------------
    def changeEvent(self, event: QEvent) -> None:  # noqa: N802 - Qt override
        if event.type() == QEvent.Type.ActivationChange and self.isVisible():
            self._focus_in_app = False
            if self.isActiveWindow():
                self._was_active = True
            elif self._was_active:  # a late deactivation of the previous opening never hides a new one
                QTimer.singleShot(FOCUS_CHECK_MS, self._hide_if_focus_left_the_app)
        elif event.type() == QEvent.Type.PaletteChange:
            self.look.style()
            self.update_status()
        super().changeEvent(event)

    def _focus_window_changed(self, window: QWindow | None) -> None:
        if window is not None and window is not self.windowHandle():
            self._focus_in_app = True

    def _hide_if_focus_left_the_app(self) -> None:
        """Hide when the focus went to another application (a click elsewhere), as Raycast and Alfred do; a window
        of this app taking it (welcome, settings, a message box) leaves the panel open, even once it closes."""
        if (self.isVisible() and self._was_active and not self.isActiveWindow() and not self._focus_in_app
                and QGuiApplication.focusWindow() is None):
            log.info("search window hidden: another application took the focus")
            self.hide()

    def hideEvent(self, event: QHideEvent) -> None:  # noqa: N802 - Qt override
        self.preview.hide()
        self.keys.navigated = False
        self._was_active = False
        super().hideEvent(event)
