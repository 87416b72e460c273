"""The search window: type, pick, paste. Keyboard first; every engine call goes through the bridge."""

from __future__ import annotations

import datetime as dt
import html
import logging

from PySide6.QtCore import QByteArray, QEvent, QItemSelectionModel, QMimeData, QObject, Qt, QTimer, Signal
from PySide6.QtGui import QGuiApplication, QKeyEvent, QKeySequence, QShortcut
from PySide6.QtWidgets import (
    QAbstractItemView,
    QFrame,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListView,
    QPushButton,
    QSplitter,
    QStackedWidget,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from ..core.capture import OWN_MIME
from ..core.context import Context, build_context
from ..core.models import Hit, Memory
from ..engine.settings import Settings
from . import display
from .bridge import EngineBridge
from .preview import PreviewPane
from .results import MemoryRole, ResultDelegate, ResultsModel, SimilarRole

log = logging.getLogger(__name__)


def put_on_clipboard(text: str) -> None:
    """Our copy, marked with our own format so the clipboard watcher does not store it again."""
    mime = QMimeData()
    mime.setText(text)
    mime.setData(OWN_MIME, QByteArray(b"1"))
    QGuiApplication.clipboard().setMimeData(mime)

DEBOUNCE_MS = 120
RESULT_LIMIT = 30
UNDO_MS = 10_000
TITLE = "desktop-memory search"

FIRST_RUN = (
    "<h3>Nothing remembered yet</h3>"
    "<p>desktop-memory keeps, on this machine only, what you add with <code>desktop-memory add</code>, "
    "what you import, and (when capture is on in Settings) what you copy. Secrets are redacted first.</p>"
    "<p><b>Search</b> by words or by meaning. Filters: <code>source:clipboard</code> <code>app:firefox</code> "
    "<code>#tag</code> <code>after:2026-01-01</code> <code>before:…</code> <code>is:pinned</code>.</p>"
    "<p><b>Keys</b>: ↑/↓ move · Enter copies context · Ctrl+Enter copies the text · Space or → preview · "
    "Ctrl+→ / Ctrl+← show / hide a result's similar memories · Ctrl+P pin · Delete forget · Esc hide. "
    "The window's global hotkey is set in Settings › Hotkeys "
    "(default {hotkey}).</p>"
)


class SearchWindow(QWidget):
    """Spotlight-like search over memories that turns a selection into pasteable context."""

    search_finished = Signal(str, int)  # query, number of results shown
    copied = Signal(str, int, int)  # "context" or "text", memories, estimated tokens
    notice = Signal(str)  # a short message for the tray (never memory content)

    def __init__(self, bridge: EngineBridge, settings: Settings, hotkey: str = "Ctrl+Alt+M") -> None:
        super().__init__()
        self.bridge = bridge
        self.budget, self.fmt, self.hotkey = settings.context_budget, settings.context_format, hotkey
        self._forgotten: list[str] = []
        self._want_id: str | None = None
        self.setWindowTitle(TITLE)
        self.setWindowFlag(Qt.WindowType.WindowStaysOnTopHint)
        self.resize(860, 560)

        self.query = QLineEdit()
        self.query.setPlaceholderText("Search memories…   source:clipboard  app:firefox  #tag  after:2026-01-01  "
                                      "is:pinned")
        self.query.setAccessibleName("Search query")
        self.query.setClearButtonEnabled(True)
        font = self.query.font()
        font.setPointSizeF(font.pointSizeF() * 1.3)
        self.query.setFont(font)

        self.chips = QHBoxLayout()
        self.chips.setSpacing(4)
        chip_row = QWidget()
        chip_row.setLayout(self.chips)
        self.chips.setContentsMargins(0, 0, 0, 0)

        self.model = ResultsModel()
        self.list = QListView()
        self.list.setModel(self.model)
        delegate = ResultDelegate(self.list)
        delegate.similar_clicked.connect(self.toggle_similar)
        self.list.setItemDelegate(delegate)
        self.list.setSelectionMode(QAbstractItemView.SelectionMode.ExtendedSelection)
        self.list.setUniformItemSizes(False)
        self.list.setWordWrap(True)
        # each row is a laid-out rich-text document: lay 50 rows out in batches across event-loop turns,
        # not in one go (on a busy machine the first results took the GUI thread ~100 ms)
        self.list.setLayoutMode(QListView.LayoutMode.Batched)
        self.list.setBatchSize(8)
        self.list.setAccessibleName("Results")
        self.list.setVerticalScrollMode(QAbstractItemView.ScrollMode.ScrollPerPixel)
        self.empty = QLabel()
        self.empty.setWordWrap(True)
        self.empty.setTextFormat(Qt.TextFormat.RichText)
        self.empty.setAlignment(Qt.AlignmentFlag.AlignTop | Qt.AlignmentFlag.AlignLeft)
        self.empty.setMargin(12)
        self.stack = QStackedWidget()
        self.stack.addWidget(self.list)
        self.stack.addWidget(self.empty)

        self.preview = PreviewPane()
        self.preview.hide()
        self.preview.save_requested.connect(self._save_edit)
        self.preview.restore_requested.connect(self._restore_version)
        self.preview.closed.connect(self.close_preview)
        splitter = QSplitter()
        splitter.addWidget(self.stack)
        splitter.addWidget(self.preview)
        splitter.setStretchFactor(0, 3)
        splitter.setStretchFactor(1, 2)

        self.undo_bar = QFrame()
        self.undo_bar.setFrameShape(QFrame.Shape.StyledPanel)
        self.undo_label = QLabel()
        undo = QPushButton("&Undo")
        undo.setToolTip("Bring the forgotten memories back (Ctrl+Z)")
        undo.clicked.connect(self.undo_forget)
        bar = QHBoxLayout(self.undo_bar)
        bar.setContentsMargins(8, 2, 8, 2)
        bar.addWidget(self.undo_label, 1)
        bar.addWidget(undo)
        self.undo_bar.hide()
        self._undo_timer = QTimer(self, singleShot=True, interval=UNDO_MS, timeout=self.undo_bar.hide)

        self.status = QLabel()
        self.status.setAccessibleName("Selection and token count")
        hints = QLabel("Enter copy context · Ctrl+Enter copy text · Space preview · Ctrl+P pin · Del forget")
        hints.setEnabled(False)
        bottom = QHBoxLayout()
        bottom.addWidget(self.status, 1)
        bottom.addWidget(hints)

        layout = QVBoxLayout(self)
        layout.addWidget(self.query)
        layout.addWidget(chip_row)
        layout.addWidget(splitter, 1)
        layout.addWidget(self.undo_bar)
        layout.addLayout(bottom)

        self._debounce = QTimer(self, singleShot=True, interval=DEBOUNCE_MS, timeout=self.run_search)
        self.query.textChanged.connect(self._query_changed)
        self.list.selectionModel().selectionChanged.connect(self._selection_changed)
        self.list.selectionModel().currentChanged.connect(self._current_changed)
        self.list.doubleClicked.connect(lambda _: self.copy_context())
        for widget in (self.query, self.list):
            widget.installEventFilter(self)
        QShortcut(QKeySequence("Ctrl+P"), self, self.toggle_pin)
        QShortcut(QKeySequence("Ctrl+Z"), self, self.undo_forget, context=Qt.ShortcutContext.WindowShortcut)
        self._render_chips()
        self._update_status()

    # -- showing ----------------------------------------------------------------------------
    def show_and_focus(self, select_id: str | None = None) -> None:
        """Open centred on the screen under the mouse, above other windows, ready to type."""
        self._want_id = select_id
        if select_id:
            self.query.setText("")
        screen = QGuiApplication.screenAt(self.cursor().pos()) or QGuiApplication.primaryScreen()
        if screen is not None:
            area = screen.availableGeometry()
            self.move(area.center().x() - self.width() // 2, area.top() + max(0, (area.height() - self.height()) // 3))
        self.show()
        self.raise_()
        self.activateWindow()
        self.query.setFocus()
        self.query.selectAll()
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
        self._update_status()

    # -- searching --------------------------------------------------------------------------
    def _query_changed(self, _text: str) -> None:
        self._render_chips()
        self._debounce.start()

    def run_search(self) -> None:
        self._debounce.stop()
        query = self.query.text()
        self.bridge.submit(lambda s: s.search(query, limit=RESULT_LIMIT, record_access=False),
                           lambda hits: self._show_results(query, hits), self._show_error, lane="search")

    def _show_results(self, query: str, hits: list[Hit]) -> None:
        current = self.current_memory()
        want = self._want_id or (current.id if current else None)
        self._want_id = None
        self.model.set_results(query, [h.memory for h in hits], {h.memory.id: h.similar for h in hits})
        if hits:
            rows = [i for i, h in enumerate(hits) if h.memory.id == want]
            self._select_row(rows[0] if rows else 0)
            self.stack.setCurrentWidget(self.list)
        else:
            self._show_empty(query)
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

    def _show_error(self, message: str) -> None:
        self.empty.setText(f"<h3>Search failed</h3><p>{html.escape(message)}</p>")
        self.stack.setCurrentWidget(self.empty)
        self.notice.emit(message)

    # -- filter chips -----------------------------------------------------------------------
    def _render_chips(self) -> None:
        while (item := self.chips.takeAt(0)) is not None:
            if item.widget():
                item.widget().deleteLater()
        query = self.query.text()
        active = display.filter_tokens(query)
        for token in active:
            chip = QToolButton(text=f"{token}  ✕", toolTip=f"Remove the filter {token}")
            chip.setAutoRaise(False)
            chip.clicked.connect(lambda _=False, t=token: self._set_query(display.without_token(self.query.text(), t)))
            self.chips.addWidget(chip)
        week = (dt.date.today() - dt.timedelta(days=7)).isoformat()
        for label, token in (("Pinned", "is:pinned"), ("Clipboard", "source:clipboard"),
                             ("Last 7 days", f"after:{week}")):
            if token not in active:
                chip = QToolButton(text=f"+ {label}", toolTip=f"Add the filter {token}")
                chip.setAutoRaise(True)
                chip.clicked.connect(lambda _=False, t=token: self._set_query(f"{self.query.text().rstrip()} {t} "
                                                                               .lstrip()))
                self.chips.addWidget(chip)
        self.chips.addStretch(1)

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
        if not chosen:
            self.status.setText(f"Context budget {self.budget} tokens")
            return
        ctx = build_context(chosen, budget=self.budget, fmt=self.fmt)
        note = ""
        if ctx.summarised or ctx.truncated or ctx.left_out:
            note = f" · {len(ctx.summarised) + len(ctx.truncated)} shortened, {len(ctx.left_out)} left out"
        self.status.setText(f"{len(chosen)} selected · ~{ctx.tokens} / {self.budget} tokens{note}")

    # -- actions ------------------------------------------------------------------------------
    def copy_context(self) -> None:
        ids = [m.id for m in self.selected_memories()]
        if not ids:
            return
        budget, fmt = self.budget, self.fmt
        about = " ".join(t for t in self.model.query.split() if t not in display.filter_tokens(self.model.query))
        self.bridge.submit(lambda s: s.context(about or None, ids=ids, budget=budget, fmt=fmt), self._context_ready,
                           self.notice.emit)

    def _context_ready(self, ctx: Context) -> None:
        put_on_clipboard(ctx.text)
        self.hide()
        log.info("context copied: %d memories, %d tokens", len(ctx.included), ctx.tokens)
        self.copied.emit("context", len(ctx.included), ctx.tokens)
        self.notice.emit(f"Copied context: {len(ctx.included)} memories, ~{ctx.tokens} tokens")

    def copy_text(self) -> None:
        chosen = self.selected_memories()
        if not chosen:
            return
        text = "\n\n".join(m.content for m in chosen)
        put_on_clipboard(text)
        self.hide()
        log.info("text copied: %d memories", len(chosen))
        self.copied.emit("text", len(chosen), 0)

    def toggle_pin(self) -> None:
        chosen = self.selected_memories()
        if not chosen:
            return
        pin = not all(m.pinned for m in chosen)
        ids = [m.id for m in chosen]
        self.bridge.submit(lambda s: [s.set_pinned(i, pin) for i in ids], self._changed, self.notice.emit)

    def _changed(self, memories: list[Memory]) -> None:
        for m in memories:
            self.model.replace(m)
        if self.preview.isVisible() and (m := self.current_memory()):
            self._preview(m)
        self._update_status()

    def forget(self) -> None:
        chosen = self.selected_memories()
        if not chosen:
            return
        ids = [m.id for m in chosen]
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

    def undo_forget(self) -> None:
        ids, self._forgotten = self._forgotten, []
        if not ids:
            return
        self.undo_bar.hide()
        self.bridge.submit(lambda s: [s.set_forgotten(i, False) for i in ids], lambda _: self.run_search(),
                           self.notice.emit)

    def open_preview(self) -> None:
        if (m := self.current_memory()) is not None:
            self._preview(m)
            self.preview.show()

    def close_preview(self) -> None:
        self.preview.hide()
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

    # -- keys ---------------------------------------------------------------------------------
    def eventFilter(self, obj: QObject, event: QEvent) -> bool:  # noqa: N802 - Qt override
        if event.type() == QEvent.Type.KeyPress and isinstance(event, QKeyEvent) and self._key(obj, event):
            return True
        return super().eventFilter(obj, event)

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
        if in_query and key in (Qt.Key.Key_Up, Qt.Key.Key_Down):
            step = -1 if key == Qt.Key.Key_Up else 1
            self._select_row(max(0, self.list.currentIndex().row() + step), extend=shift)
            return True
        if (key == Qt.Key.Key_Right and (at_end or not in_query)) or (key == Qt.Key.Key_Space and not in_query):
            if key == Qt.Key.Key_Space and self.preview.isVisible():
                self.close_preview()
            else:
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

    def hideEvent(self, event: object) -> None:  # noqa: N802 - Qt override
        self.preview.hide()
        super().hideEvent(event)  # type: ignore[arg-type]
