"""The search window: type, pick, paste. Keyboard first; every engine call goes through the bridge."""

from __future__ import annotations

import gc
import html
import logging

from PySide6.QtCore import QEvent, QItemSelectionModel, Qt, QTimer, Signal
from PySide6.QtGui import QGuiApplication, QKeySequence, QShortcut, QWindow
from PySide6.QtWidgets import (
    QAbstractItemView,
    QFrame,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListView,
    QPushButton,
    QSizePolicy,
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
from .footer_hints import hint_keys, hints_html
from .panel import MAX_ROWS, RADIUS, WIDTH, WIDTH_WITH_PREVIEW, PanelLook
from .paste_flow import PasteFlow
from .preview import PreviewPane
from .query_chips import render_chips
from .results import MemoryRole, ResultDelegate, ResultsModel, SimilarRole
from .search_actions import UNDO_MS, SearchActions, put_on_clipboard
from .search_keys import SearchKeys

log = logging.getLogger(__name__)

__all__ = ["MAX_ROWS", "RADIUS", "RESULT_LIMIT", "UNDO_MS", "WIDTH", "WIDTH_WITH_PREVIEW", "SearchWindow",
           "put_on_clipboard"]

RESULT_LIMIT = 30
TITLE = "desktop-memory search"
FOCUS_CHECK_MS = 150  # on X, focus can pass through "no window" between two windows of this app

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


class SearchWindow(SearchKeys, SearchActions, PanelLook):
    """Spotlight-like search over memories that turns a selection into pasteable context. Its keys
    (search_keys.py), actions on a selection (search_actions.py) and look (panel.py) live in their own modules."""

    search_finished = Signal(str, int)  # query, number of results shown
    copied = Signal(str, int, int)  # "context" or "text", memories, estimated tokens
    notice = Signal(str)  # a short message for the tray (never memory content)

    def __init__(self, bridge: EngineBridge, settings: Settings, hotkey: str = "Ctrl+Alt+M") -> None:
        super().__init__()
        self.bridge = bridge
        self.budget, self.fmt, self.hotkey = settings.context_budget, settings.context_format, hotkey
        self._forgotten: list[str] = []
        self._want_id: str | None = None
        self._keep_ids: list[str] = []  # a selection to keep across the next results (pinning re-sorts)
        self._navigated = False  # moved in the list with the arrows since the last typed character
        self._focus_in_app = False  # a window of this app took the focus since the panel lost it
        self._was_active = False  # active since shown: only a panel that had the focus hides when it goes elsewhere
        self._pasting = ""  # what is being pasted (for the notice once the paste is sent)
        self.paster = PasteFlow(self)  # Enter pastes into the window the search was opened over (paste_flow.py)
        self.paster.apply_settings(settings)
        self.paster.finished.connect(self._paste_finished)
        self.setWindowTitle(TITLE)
        # a launcher panel: no title bar, above other windows, rounded (painted, and masked where there is no
        # compositor), sized to its results
        self.setWindowFlags(Qt.WindowType.Window | Qt.WindowType.FramelessWindowHint
                            | Qt.WindowType.WindowStaysOnTopHint)
        self.setAttribute(Qt.WidgetAttribute.WA_TranslucentBackground)
        self.resize(WIDTH, 420)

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
        self.list = QListView()
        self.list.setModel(self.model)
        self.delegate = ResultDelegate(self.list)
        self.delegate.similar_clicked.connect(self.toggle_similar)
        self.list.setItemDelegate(self.delegate)
        self.list.setSelectionMode(QAbstractItemView.SelectionMode.ExtendedSelection)
        # every row is as high as the fonts make it, never as the width makes it (see result_row.py)
        self.list.setUniformItemSizes(True)
        self.list.setFrameShape(QFrame.Shape.NoFrame)
        self.list.setMouseTracking(True)
        self.list.setAccessibleName("Results")
        self.list.setVerticalScrollMode(QAbstractItemView.ScrollMode.ScrollPerPixel)
        self.list.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
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
        self.preview.save_requested.connect(self._save_edit)
        self.preview.restore_requested.connect(self._restore_version)
        self.preview.closed.connect(self.close_preview)
        self.splitter = QSplitter()
        self.splitter.setChildrenCollapsible(False)
        self.splitter.addWidget(self.stack)
        self.splitter.addWidget(self.preview)
        self.splitter.setStretchFactor(0, 3)
        self.splitter.setStretchFactor(1, 2)

        self.undo_bar = QFrame()
        self.undo_label = QLabel()
        undo = QPushButton("&Undo")
        undo.setToolTip("Bring the forgotten memories back (Ctrl+Z)")
        undo.clicked.connect(self.undo_forget)
        bar = QHBoxLayout(self.undo_bar)
        bar.setContentsMargins(14, 2, 14, 2)
        bar.addWidget(self.undo_label, 1)
        bar.addWidget(undo)
        self.undo_bar.hide()
        self._undo_timer = QTimer(self, singleShot=True, interval=UNDO_MS, timeout=self._undo_expired)

        self.status = QLabel()
        self.status.setAccessibleName("Selection and token count")
        self.hints = QLabel()
        self.hints.setTextFormat(Qt.TextFormat.RichText)
        self.hints.setAccessibleName("Keys for the selection")
        self.hints.setAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        self.hints.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)  # never widens the panel
        self.status.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        self.paste_problem = QLabel()  # a paste that failed: the one-line problem (the text is on the clipboard)
        self.paste_problem.setWordWrap(True)
        self.paste_problem.setAccessibleName("Paste problem")
        self.paste_problem.setContentsMargins(14, 2, 14, 2)
        self.paste_problem.hide()
        self.footer = QWidget()
        bottom = QHBoxLayout(self.footer)
        bottom.setContentsMargins(14, 6, 14, 6)
        bottom.addWidget(self.status, 2)
        bottom.addWidget(self.hints, 5)

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

        self.query.textChanged.connect(self._query_changed)
        self.list.selectionModel().selectionChanged.connect(self._selection_changed)
        self.list.selectionModel().currentChanged.connect(self._current_changed)
        self.list.doubleClicked.connect(lambda _: self.copy_context())
        for widget in (self.query, self.list):
            widget.installEventFilter(self)
        QShortcut(QKeySequence("Ctrl+P"), self, self.toggle_pin)
        QShortcut(QKeySequence("Ctrl+Z"), self, self.undo_forget, context=Qt.ShortcutContext.WindowShortcut)
        app = QGuiApplication.instance()
        if isinstance(app, QGuiApplication):
            app.focusWindowChanged.connect(self._focus_window_changed)
        self._style()
        self._render_chips()
        self._update_status()
        freeze_startup_objects()

    # -- showing ----------------------------------------------------------------------------
    def show_and_focus(self, select_id: str | None = None) -> None:
        """Open centred on the active screen (the one under the mouse), above other windows, ready to type; the
        cursor starts on the first result (or on `select_id`)."""
        self._want_id = select_id
        self._navigated = False
        if select_id:
            self.query.setText("")
        if not self.isVisible():
            self.paster.remember_target()  # the window in front before ours takes the focus
            self.paste_problem.hide()
            self.preview.hide()
            self._fit()
            area = self._screen_area()
            if area is not None:
                self.move(area.center().x() - self.width() // 2, area.top() + area.height() // 5)
        self.show()
        self.raise_()
        self.activateWindow()
        self.query.setFocus()
        self.query.selectAll()
        if self.model.rowCount():
            self._select_row(0)  # until the fresh results arrive: never an older cursor row
        self.run_search()
        log.info("search window shown")

    def toggle(self) -> None:
        if self.isVisible() and self.isActiveWindow():
            self.hide()
        else:
            self.show_and_focus()

    def apply_settings(self, settings: Settings, hotkey: str | None = None) -> None:
        self.budget, self.fmt = settings.context_budget, settings.context_format
        self.hotkey = hotkey or self.hotkey
        self.paster.apply_settings(settings)
        self._update_status()

    # -- searching --------------------------------------------------------------------------
    def _query_changed(self, _text: str) -> None:
        self._navigated = False
        self._render_chips()
        self.run_search()  # every keystroke at once: the search lane drops the ones the engine has not started

    def run_search(self) -> None:
        query = self.query.text()
        self.bridge.submit(lambda s: s.search(query, limit=RESULT_LIMIT, record_access=False),
                           lambda hits: self._show_results(query, hits), self._show_error, lane="search")

    def _show_results(self, query: str, hits: list[Hit]) -> None:
        want, self._want_id = self._want_id, None  # a fresh query starts at the first row
        keep, self._keep_ids = set(self._keep_ids), []
        self.model.set_results(query, [h.memory for h in hits], {h.memory.id: h.similar for h in hits})
        if hits:
            self.stack.setCurrentWidget(self.list)
            rows = [i for i, h in enumerate(hits) if h.memory.id == want]
            self._select_row(rows[0] if rows else 0)
            for i, h in enumerate(hits):
                if h.memory.id in keep and h.memory.id != want:
                    self.list.selectionModel().select(self.model.index(i), QItemSelectionModel.SelectionFlag.Select)
        else:
            self._show_empty(query)
        self._fit()
        self._update_status()
        self.search_finished.emit(query, len(hits))
        log.info("search finished: %d results (a query of %d characters)", len(hits), len(query))  # no text

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
        self._fit()

    def _show_error(self, message: str) -> None:
        self.empty.setText(f"<h3>Search failed</h3><p>{html.escape(message)}</p>")
        self.stack.setCurrentWidget(self.empty)
        self._fit()
        self.notice.emit(message)

    # -- filter chips -----------------------------------------------------------------------
    def _render_chips(self) -> None:
        render_chips(self.chips, self.query.text, self._set_query)

    def _set_query(self, text: str) -> None:
        self.query.setText(text)
        self.query.setFocus()

    # -- selection and the context pack ---------------------------------------------------------
    def _select_row(self, row: int, extend: bool = False) -> None:
        if not 0 <= row < self.model.rowCount():
            return
        index = self.model.index(row)
        flags = QItemSelectionModel.SelectionFlag
        mode = flags.Select if extend else flags.ClearAndSelect
        self.list.selectionModel().setCurrentIndex(index, mode)
        self.list.scrollTo(index)

    def current_memory(self) -> Memory | None:
        index = self.list.currentIndex()
        return index.data(MemoryRole) if index.isValid() else None

    def selected_memories(self) -> list[Memory]:
        rows = sorted(i.row() for i in self.list.selectionModel().selectedRows())
        chosen = [self.model.memories[r] for r in rows if r < len(self.model.memories)]
        if not chosen and (m := self.current_memory()):
            chosen = [m]
        return chosen

    def _selection_changed(self, *_: object) -> None:
        self._update_status()

    def _current_changed(self, *_: object) -> None:
        if self.preview.isVisible() and (m := self.current_memory()):
            self._preview(m)

    def _preview(self, m: Memory) -> None:
        """Show a memory in the preview, then its earlier versions once the engine has them."""
        self.preview.show_memory(m)
        mid = m.id
        self.bridge.submit(lambda s: s.versions(mid), lambda vs: self.preview.show_versions(mid, vs),
                           self.notice.emit, lane="versions")

    # -- look-alikes grouped under a result ------------------------------------------------------
    def toggle_similar(self, row: int | None = None) -> None:
        """Show (or hide) the look-alike memories of a result as rows under it."""
        row = self.list.currentIndex().row() if row is None else row
        lead = self.model.leader_row(row)
        opened = self.model.memories[lead].id not in self.model.expanded if 0 <= lead < self.model.rowCount() else 0
        self.model.toggle(row)
        self._select_row(lead + 1 if opened and self.model.memories[lead].id in self.model.expanded else lead)

    def expand_similar(self) -> bool:
        index = self.list.currentIndex()
        if not index.isValid() or not index.data(SimilarRole) or index.data(SimilarRole)[1]:
            return False
        self.toggle_similar(index.row())
        return True

    def collapse_similar(self) -> bool:
        index = self.list.currentIndex()
        if not index.isValid():
            return False
        lead = self.model.leader_row(index.row())
        if self.model.memories[lead].id not in self.model.expanded:
            return False
        self._select_row(self.model.collapse(lead))
        return True

    def _update_status(self) -> None:
        chosen = self.selected_memories()
        self._update_hints(chosen)
        if not chosen:
            self.status.setText(f"Context budget {self.budget} tokens")
            return
        ctx = build_context(chosen, budget=self.budget, fmt=self.fmt)
        note = ""
        if ctx.summarised or ctx.truncated or ctx.left_out:
            note = f" · {len(ctx.summarised) + len(ctx.truncated)} shortened, {len(ctx.left_out)} left out"
        self.status.setText(f"{len(chosen)} selected · ~{ctx.tokens} / {self.budget} tokens{note}")

    def _update_hints(self, chosen: list[Memory]) -> None:
        """The footer's keys for what is selected now (pin or unpin, forget or restore, preview open or not)."""
        keys = hint_keys(chosen, self.preview.isVisible(), bool(self._forgotten), paste=self.paster.pastes)
        self.hints.setText(hints_html(keys, self.palette()))

    # -- focus: hide on a click elsewhere ---------------------------------------------------------
    def changeEvent(self, event: QEvent) -> None:  # noqa: N802 - Qt override
        if event.type() == QEvent.Type.ActivationChange and self.isVisible():
            self._focus_in_app = False
            if self.isActiveWindow():
                self._was_active = True
            elif self._was_active:  # a late deactivation of the previous opening never hides a new one
                QTimer.singleShot(FOCUS_CHECK_MS, self._hide_if_focus_left_the_app)
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

    def hideEvent(self, event: object) -> None:  # noqa: N802 - Qt override
        self.preview.hide()
        self._navigated = False
        self._was_active = False
        super().hideEvent(event)  # type: ignore[arg-type]
