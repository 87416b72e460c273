"""The search window: type, pick, paste. Keyboard first; every engine call goes through the bridge."""

from __future__ import annotations

import datetime as dt
import html
import logging

from PySide6.QtCore import QByteArray, QEvent, QItemSelectionModel, QMimeData, QObject, QRectF, Qt, QTimer, Signal
from PySide6.QtGui import (
    QColor,
    QGuiApplication,
    QKeyEvent,
    QKeySequence,
    QPainter,
    QPainterPath,
    QPalette,
    QRegion,
    QShortcut,
)
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
from .result_row import secondary
from .results import MemoryRole, ResultDelegate, ResultsModel, SimilarRole

log = logging.getLogger(__name__)


def put_on_clipboard(text: str) -> None:
    """Our copy, marked with our own format so the clipboard watcher does not store it again."""
    mime = QMimeData()
    mime.setText(text)
    mime.setData(OWN_MIME, QByteArray(b"1"))
    QGuiApplication.clipboard().setMimeData(mime)

RESULT_LIMIT = 30
UNDO_MS = 10_000
TITLE = "desktop-memory search"
WIDTH, WIDTH_WITH_PREVIEW = 760, 1120  # logical pixels, at most 92 % of the screen
MAX_ROWS = 7  # the panel grows with its results up to this many rows, then the list scrolls
RADIUS = 12

FIRST_RUN = (
    "<h3>Nothing remembered yet</h3>"
    "<p>desktop-memory keeps, on this machine only, what you add with <code>desktop-memory add</code>, "
    "what you import, and (when capture is on in Settings) what you copy. Secrets are redacted first.</p>"
    "<p><b>Search</b> by words or by meaning. Filters: <code>source:clipboard</code> <code>app:firefox</code> "
    "<code>#tag</code> <code>after:2026-01-01</code> <code>before:…</code> <code>is:pinned</code>.</p>"
    "<p><b>Keys</b>: ↑/↓ move · Enter copies context · Ctrl+Enter copies the text · Shift+Space or → preview "
    "(Space too, once you moved with ↑/↓) · "
    "Ctrl+→ / Ctrl+← show / hide a result's similar memories · Ctrl+P pin · Delete forget (Ctrl+Z undoes) · "
    "Esc hide. "
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
        self._keep_ids: list[str] = []  # a selection to keep across the next results (pinning re-sorts)
        self._navigated = False  # moved in the list with the arrows since the last typed character
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
        layout.addWidget(self.footer)

        self.query.textChanged.connect(self._query_changed)
        self.list.selectionModel().selectionChanged.connect(self._selection_changed)
        self.list.selectionModel().currentChanged.connect(self._current_changed)
        self.list.doubleClicked.connect(lambda _: self.copy_context())
        for widget in (self.query, self.list):
            widget.installEventFilter(self)
        QShortcut(QKeySequence("Ctrl+P"), self, self.toggle_pin)
        QShortcut(QKeySequence("Ctrl+Z"), self, self.undo_forget, context=Qt.ShortcutContext.WindowShortcut)
        self._style()
        self._render_chips()
        self._update_status()

    # -- the panel --------------------------------------------------------------------------
    def _style(self) -> None:
        """Colours from the system palette (light or dark): one surface, a footer band, readable hints."""
        pal = self.palette()
        base = pal.color(QPalette.ColorRole.Base)
        for w in (self.query, self.list, self.list.viewport(), self.empty, self.stack):
            p = w.palette()
            p.setColor(QPalette.ColorRole.Base, base)
            p.setColor(QPalette.ColorRole.Window, base)
            w.setPalette(p)
        self.list.viewport().setAutoFillBackground(False)
        handle = pal.color(QPalette.ColorRole.Mid).name()
        self.list.setStyleSheet(
            "QListView { background: transparent; }"
            "QScrollBar:vertical { width: 10px; background: transparent; margin: 4px 2px 4px 0; }"
            f"QScrollBar::handle:vertical {{ background: {handle}; border-radius: 4px; min-height: 28px; }}"
            "QScrollBar::add-line:vertical, QScrollBar::sub-line:vertical { height: 0; }"
            "QScrollBar::add-page:vertical, QScrollBar::sub-page:vertical { background: transparent; }")
        self.query.setStyleSheet("QLineEdit { background: transparent; border: none; }")
        mid = pal.color(QPalette.ColorRole.Mid).name()
        self.line.setStyleSheet(f"color: {mid};")
        dim = secondary(pal).name()
        self.status.setStyleSheet(f"color: {dim};")
        self.undo_label.setStyleSheet("")

    def paintEvent(self, event: object) -> None:  # noqa: N802 - Qt override
        """The rounded surface, its outline and the footer band."""
        p = QPainter(self)
        p.setRenderHint(QPainter.RenderHint.Antialiasing)
        pal = self.palette()
        rect = QRectF(self.rect()).adjusted(0.5, 0.5, -0.5, -0.5)
        path = QPainterPath()
        path.addRoundedRect(rect, RADIUS, RADIUS)
        p.fillPath(path, pal.color(QPalette.ColorRole.Base))
        band = QRectF(rect.left(), self.footer.geometry().top(), rect.width(), rect.bottom() - self.footer.y())
        clip = QPainterPath()
        clip.addRect(band)
        p.fillPath(path.intersected(clip), pal.color(QPalette.ColorRole.Window))
        outline = QColor(pal.color(QPalette.ColorRole.Mid))
        p.setPen(outline)
        p.drawPath(path)
        p.end()

    def resizeEvent(self, event: object) -> None:  # noqa: N802 - Qt override
        """Round the corners for window systems without a compositor (a mask; painted edges where there is one)."""
        path = QPainterPath()
        path.addRoundedRect(QRectF(self.rect()), RADIUS, RADIUS)
        self.setMask(QRegion(path.toFillPolygon().toPolygon()))
        super().resizeEvent(event)  # type: ignore[arg-type]

    def changeEvent(self, event: QEvent) -> None:  # noqa: N802 - Qt override
        if event.type() == QEvent.Type.PaletteChange:
            self._style()
            self._update_status()
        super().changeEvent(event)

    def _screen_area(self) -> object:
        screen = (QGuiApplication.screenAt(self.cursor().pos()) or self.screen()
                  or QGuiApplication.primaryScreen())
        return screen.availableGeometry() if screen is not None else None

    def _fit(self) -> None:
        """Size the panel to what it shows: as many rows as there are (up to MAX_ROWS), wider with the preview."""
        area = self._screen_area()
        max_w = int(area.width() * 0.92) if area is not None else WIDTH_WITH_PREVIEW
        max_h = int(area.height() * 0.8) if area is not None else 700
        width = min(WIDTH_WITH_PREVIEW if self.preview.isVisible() else WIDTH, max_w)
        row_h = self.delegate.rows(self.list.viewOptions() if hasattr(self.list, "viewOptions")
                                   else self._row_option()).row_height
        if self.preview.isVisible():
            body = MAX_ROWS * row_h + 8
        elif self.stack.currentWidget() is self.list:
            body = max(1, min(self.model.rowCount(), MAX_ROWS)) * row_h + 8
        else:
            body = max(self.empty.heightForWidth(width - 2), 90)
        chrome = self.height() - self.splitter.height() if self.splitter.height() > 0 else 0
        self.splitter.setFixedHeight(min(body, max_h - 160))
        self.layout().invalidate()
        self.layout().activate()
        height = min(self.layout().sizeHint().height(), max_h) if chrome >= 0 else max_h
        if self.size().width() != width or self.size().height() != height:
            centre = self.geometry().center().x()
            self.resize(width, height)  # the top stays put: the panel grows and shrinks downwards
            if self.isVisible() and area is not None:
                left = min(max(area.left(), centre - width // 2), area.right() - width)
                self.move(left, self.y())

    def _row_option(self) -> object:
        from PySide6.QtWidgets import QStyleOptionViewItem

        option = QStyleOptionViewItem()
        option.initFrom(self.list)
        return option

    # -- showing ----------------------------------------------------------------------------
    def show_and_focus(self, select_id: str | None = None) -> None:
        """Open centred on the active screen (the one under the mouse), above other windows, ready to type; the
        cursor starts on the first result (or on `select_id`)."""
        self._want_id = select_id
        self._navigated = False
        if select_id:
            self.query.setText("")
        if not self.isVisible():
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
        keys: list[tuple[str, str]] = []
        if chosen:
            keys = [("↵", "copy context"), ("Ctrl+↵", "copy text"),
                    *([] if self.preview.isVisible() else [("Shift+Space", "preview")]),
                    ("Ctrl+P", "unpin" if all(m.pinned for m in chosen) else "pin"),
                    ("Del", "restore" if all(m.forgotten for m in chosen) else "forget")]
        if self._forgotten:
            keys.append(("Ctrl+Z", "undo forget"))
        if not chosen or self.preview.isVisible():
            keys.append(("Esc", "close preview" if self.preview.isVisible() else "hide"))
        pal = self.palette()
        text, dim = pal.color(QPalette.ColorRole.Text).name(), secondary(pal).name()
        cap = pal.color(QPalette.ColorRole.Base).name()
        self.hints.setText("&nbsp;&nbsp;".join(
            f"<span style='color:{text}; background:{cap}'>&nbsp;{html.escape(k)}&nbsp;</span>"
            f"<span style='color:{dim}'>&nbsp;{html.escape(v)}</span>" for k, v in keys))

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

    # -- keys ---------------------------------------------------------------------------------
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

    def hideEvent(self, event: object) -> None:  # noqa: N802 - Qt override
        self.preview.hide()
        self._navigated = False
        super().hideEvent(event)  # type: ignore[arg-type]
