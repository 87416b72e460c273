"""The settings window: edits the data folder's settings.json (atomically) and applies it at once."""

from __future__ import annotations

import dataclasses
import html
import logging
import re
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import IO, TYPE_CHECKING

from PySide6.QtCore import Qt, QTimer, QUrl, Signal
from PySide6.QtGui import QCursor, QDesktopServices, QGuiApplication, QKeySequence
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDialog,
    QFileDialog,
    QFormLayout,
    QHBoxLayout,
    QKeySequenceEdit,
    QLabel,
    QLayout,
    QLineEdit,
    QMessageBox,
    QPlainTextEdit,
    QPushButton,
    QSpinBox,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from .. import paths
from ..capture import paste
from ..core.context import FORMATS
from ..core.errors import InvalidInput
from ..core.lines import MIN_LINE_LIMIT, Overlong
from ..core.plural import count
from ..engine.settings import Settings
from ..service import ImportReport
from ..service.protocol import MemoryOperations
from ..service.reports import EmbeddingModelStatus
from . import autostart, hotkeys
from .bridge import EngineBridge
from .importing import ChunkedImport
from .rules_editor import RulesEditor
from .sync_section import SyncSection

if TYPE_CHECKING:
    from ..imports.feed import Feed

PROGRESS_S = 5.0  # between two "Importing: N memories so far" notices

log = logging.getLogger(__name__)


def _lines(edit: QPlainTextEdit) -> list[str]:
    return [line.strip() for line in edit.toPlainText().splitlines() if line.strip()]


def _export(service: MemoryOperations, target: Path) -> int:
    """Export every memory to `target`: Markdown for a .md file, else JSON Lines (the engine writes it, 0600)."""
    fmt = "markdown" if target.suffix.lower() in (".md", ".markdown") else "jsonl"
    return service.export_to_file(target, fmt=fmt, include_forgotten=True)


def _page(layout: QLayout) -> QWidget:
    page = QWidget()
    page.setLayout(layout)
    return page


def _open_jsonl(source: Path) -> IO[bytes]:
    try:
        return open(source, "rb")  # noqa: SIM115 - ChunkedImport closes it
    except OSError as exc:
        raise InvalidInput(f"cannot read {source}: {exc.strerror}") from exc


class SettingsWindow(QDialog):
    """A compact tabbed dialog (General, Capture, Hotkeys, AI and model, Privacy, Sync), centred on its screen and
    never taller than it: Save and Close stay in view on a 1280x720 laptop."""

    saved = Signal(object)  # the new Settings, already applied by the engine
    notice = Signal(str)
    # the app's trial of changed hotkeys before they are saved: {action: combo} -> {action: why it could not be
    # registered} (the old combo of each of those is still registered); None: nothing to try (a probe)
    hotkey_trial: Callable[[dict[str, str]], dict[str, str]] | None = None

    def __init__(self, bridge: EngineBridge, data_dir: Path) -> None:
        super().__init__()
        self.bridge, self.data_dir = bridge, data_dir
        self.current = Settings()
        self._import: ChunkedImport | None = None
        self.setWindowTitle("desktop-memory settings")
        self.setModal(False)

        self.tabs = QTabWidget()
        self.tabs.setDocumentMode(True)
        self.tabs.addTab(self._general_tab(), "&General")
        self.tabs.addTab(self._capture_tab(), "&Capture")
        self.tabs.addTab(self._hotkeys_tab(), "Hot&keys")
        self.tabs.addTab(self._model_tab(), "AI and &model")
        self.tabs.addTab(self._privacy_tab(), "&Privacy")
        self.sync = SyncSection(bridge)  # its own engine calls; its notices are the window's
        self.sync.notice.connect(self.notice)
        self.tabs.addTab(self.sync, "S&ync")

        self.error = QLabel()
        self.error.setWordWrap(True)
        self.error.setStyleSheet("color: #c0392b")
        self.error.hide()
        save = QPushButton("Save")
        save.setDefault(True)
        save.clicked.connect(self.save)
        close = QPushButton("Close")
        close.setAutoDefault(False)
        close.clicked.connect(self.hide)
        buttons = QHBoxLayout()
        buttons.addWidget(self.error, 1)
        buttons.addStretch(0)  # keeps Save and Close their natural size while no error shows
        buttons.addWidget(save)
        buttons.addWidget(close)

        layout = QVBoxLayout(self)
        layout.addWidget(self.tabs, 1)
        layout.addLayout(buttons)

    def _general_tab(self) -> QWidget:
        self.capture = QCheckBox("&Remember what I copy (clipboard capture)")
        self.notify_all = QCheckBox("&Notify on every capture (otherwise only what needs attention)")
        self.login = QCheckBox("Start desktop-memory when I &log in")
        self.login.setEnabled(autostart.supported())
        self.paste_support = paste.support(QGuiApplication.platformName())
        self.paste = QCheckBox("&Paste into the window I came from when I press Enter in the search")
        self.restore_clipboard = QCheckBox("…then put back what the clipboard held &before")
        self.paste.toggled.connect(lambda on: self.restore_clipboard.setEnabled(on and self.paste.isEnabled()))
        if not self.paste_support.available:  # Wayland (no app may type into another), or no backend here
            self.paste.setText(self.paste_support.note[:1].upper() + self.paste_support.note[1:])
            self.paste.setEnabled(False)
            self.restore_clipboard.setEnabled(False)
        folder = QLabel(str(self.data_dir))
        folder.setWordWrap(True)
        folder.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        open_folder = QPushButton("&Open data folder")
        open_folder.clicked.connect(lambda: QDesktopServices.openUrl(QUrl.fromLocalFile(str(self.data_dir))))
        form = QFormLayout()
        form.addRow(self.capture)
        form.addRow(self.notify_all)
        form.addRow(self.login)
        form.addRow(self.paste)
        form.addRow(self.restore_clipboard)
        form.addRow("Data folder:", folder)
        row = QHBoxLayout()
        row.addWidget(open_folder)
        row.addStretch(1)
        form.addRow("", row)
        return _page(form)

    def _capture_tab(self) -> QWidget:
        self.ignore_patterns = QPlainTextEdit()
        self.ignore_patterns.setPlaceholderText("one regular expression per line, e.g. ^\\d{6}$")
        self.ignore_patterns.setAccessibleName("Ignore text matching")
        self.ignore_patterns.setTabChangesFocus(True)
        self.ignore_apps = QPlainTextEdit()
        self.ignore_apps.setPlaceholderText("one app per line, e.g. keepassxc")
        self.ignore_apps.setAccessibleName("Ignore apps")
        self.ignore_apps.setTabChangesFocus(True)
        for edit in (self.ignore_patterns, self.ignore_apps):
            edit.setFixedHeight(edit.fontMetrics().lineSpacing() * 3 + 12)
        form = QFormLayout()
        form.addRow("Ignore text &matching:", self.ignore_patterns)
        form.addRow("Ignore &apps:", self.ignore_apps)
        self.rules = RulesEditor()
        form.addRow(QLabel("Rules (the first “ignore” that matches wins; every “redact” and “tag” applies):"))
        form.addRow(self.rules)
        return _page(form)

    def _hotkeys_tab(self) -> QWidget:
        self.hotkey_search = self._hotkey_edit("Open the search window")
        self.hotkey_capture = self._hotkey_edit("Capture the clipboard now")
        self.hotkey_selection = self._hotkey_edit("Capture the selected text")
        self.hotkey_edits = {"search": self.hotkey_search, "capture": self.hotkey_capture,
                             "selection": self.hotkey_selection}
        # under each combo: why the combo pressed cannot be a global hotkey (checked as it is pressed)...
        self.hotkey_checks = {name: QLabel(wordWrap=True, textFormat=Qt.TextFormat.PlainText)
                              for name in self.hotkey_edits}
        # ...and why it is not set, or the combo the desktop uses instead (the app fills them in)
        self.hotkey_notes = {name: QLabel(wordWrap=True, textFormat=Qt.TextFormat.PlainText)
                             for name in self.hotkey_edits}
        self.hotkeys_note = QLabel(wordWrap=True, textFormat=Qt.TextFormat.PlainText)
        form = QFormLayout()
        for text, name in (("Open the &search window:", "search"), ("Capture the &clipboard now:", "capture"),
                           ("Capture the selected te&xt:", "selection")):
            edit, check = self.hotkey_edits[name], self.hotkey_checks[name]
            check.setStyleSheet("color: #c0392b")
            check.hide()
            edit.keySequenceChanged.connect(lambda _seq, n=name: self._check_hotkey(n))
            form.addRow(text, edit)
            form.addRow(check)
            form.addRow(self.hotkey_notes[name])
        form.addRow(self.hotkeys_note)
        self.show_hotkeys({})
        return _page(form)

    @staticmethod
    def _hotkey_edit(name: str) -> QKeySequenceEdit:
        """One key combination (a global hotkey is one chord): a second press replaces the first."""
        edit = QKeySequenceEdit()
        edit.setMaximumSequenceLength(1)
        edit.setClearButtonEnabled(True)
        edit.setAccessibleName(name)
        return edit

    def _show_combo(self, name: str, combo: str) -> None:
        """Put a saved combo in its field; one saved as several chords by an older version (a global hotkey is
        one) shows its last chord, the one the person pressed last, and says so until it is saved."""
        sequence = QKeySequence(combo, QKeySequence.SequenceFormat.PortableText)
        if sequence.count() > 1:
            last = QKeySequence(sequence[sequence.count() - 1])  # type: ignore[index]  # operator[] in PySide
            self.hotkey_edits[name].setKeySequence(last)
            shown = last.toString(QKeySequence.SequenceFormat.PortableText)
            self.hotkey_checks[name].setText(f"The saved hotkey “{combo}” was {sequence.count()} combinations; "
                                             f"Save keeps only {shown}.")
            self.hotkey_checks[name].show()
        else:
            self.hotkey_edits[name].setKeySequence(sequence)

    def _hotkey(self, name: str) -> str:
        return self.hotkey_edits[name].keySequence().toString(QKeySequence.SequenceFormat.PortableText)

    def _check_hotkey(self, name: str) -> str:
        """Show under the combo why it cannot be a global hotkey ("" and hidden when it can); returns it."""
        problem = hotkeys.combo_problem(self._hotkey(name))
        self.hotkey_checks[name].setText(problem)
        self.hotkey_checks[name].setVisible(bool(problem))
        return problem

    def show_hotkeys(self, notes: dict[str, str], general: str = "") -> None:
        """What the app knows about the global hotkeys: a line under each combo and one under them all."""
        for name, label in self.hotkey_notes.items():
            label.setText(notes.get(name, ""))
            label.setVisible(bool(notes.get(name)))
        self.hotkeys_note.setText(general)
        self.hotkeys_note.setVisible(bool(general))

    def _model_tab(self) -> QWidget:
        self.budget = QSpinBox(minimum=50, maximum=200_000, singleStep=100, suffix=" tokens")
        self.budget.setAccessibleName("Context budget")
        self.format = QComboBox()
        self.format.addItems(list(FORMATS))
        self.model_path = QLineEdit()
        self.model_path.setPlaceholderText("the bundled SmolLM2-135M model")
        self.model_path.setAccessibleName("Model file")
        browse = QPushButton("&Browse…")
        browse.clicked.connect(self._browse_model)
        model_row = QHBoxLayout()
        model_row.addWidget(self.model_path, 1)
        model_row.addWidget(browse)
        self.threads = QSpinBox()
        self.threads.setRange(0, 64)
        self.threads.setSpecialValueText("automatic")
        self.threads.setAccessibleName("Model threads")
        self.embedding = QComboBox()  # the installed embedding models, from the engine (embedding_model_status)
        self.embedding.setAccessibleName("Search model")
        self.embedding_progress = QLabel()
        self.embedding_progress.setWordWrap(True)
        self._embedding_poll = QTimer(self, singleShot=True, interval=2000)
        self._embedding_poll.timeout.connect(self._ask_embedding)
        form = QFormLayout()
        form.addRow("Context &budget:", self.budget)
        form.addRow("Context &format:", self.format)
        model_label = QLabel("&Model file (GGUF):")
        model_label.setBuddy(self.model_path)
        form.addRow(model_label, model_row)
        form.addRow("Model &threads:", self.threads)
        form.addRow("&Search model:", self.embedding)
        form.addRow("", self.embedding_progress)
        return _page(form)

    def _privacy_tab(self) -> QWidget:
        export = QPushButton("&Export all memories…")
        export.clicked.connect(self._choose_export)
        import_ = QPushButton("&Import a file…")
        import_.setToolTip("A ChatGPT, Claude or Gemini export, a Markdown or text note, or desktop-memory JSON Lines")
        import_.clicked.connect(self._choose_import)
        folder = QPushButton("Import a &folder of notes…")
        folder.setToolTip("A folder of Markdown or text notes, or an Obsidian vault")
        folder.clicked.connect(self._choose_import_folder)
        erase = QPushButton("&Erase everything…")
        erase.clicked.connect(self._confirm_erase)
        box = QVBoxLayout()
        for b in (export, import_, folder, erase):
            box.addWidget(b, 0, Qt.AlignmentFlag.AlignLeft)
        box.addStretch(1)
        return _page(box)

    def place(self) -> None:
        """Size to fit the screen the pointer is on (at most 90 % of it) and centre the window there."""
        screen = QGuiApplication.screenAt(QCursor.pos()) or self.screen() or QGuiApplication.primaryScreen()
        if screen is None:
            return
        area = screen.availableGeometry()
        hint = self.sizeHint().expandedTo(self.minimumSizeHint())
        width = min(max(hint.width(), 660), int(area.width() * 0.9))
        height = min(hint.height(), int(area.height() * 0.9))
        self.resize(width, height)
        frame = self.frameGeometry().size() - self.geometry().size()  # title bar and borders, once shown
        self.move(area.x() + (area.width() - width - frame.width()) // 2,
                  area.y() + (area.height() - height - frame.height()) // 2)

    # -- filling and reading ------------------------------------------------------------------
    def show_settings(self, settings: Settings) -> None:
        """Fill the form from settings and show the window."""
        self.load(settings)
        self.sync.refresh()
        if not self.isVisible():
            self.place()
        self.show()
        self.raise_()
        self.activateWindow()

    def load(self, s: Settings) -> None:
        self.current = s
        self.capture.setChecked(s.capture_enabled)
        self.ignore_patterns.setPlainText("\n".join(map(str, s.capture_ignore_patterns)))
        self.ignore_apps.setPlainText("\n".join(map(str, s.capture_ignore_apps)))
        self.rules.load(s.capture_rules, s.capture_disabled_defaults)
        for name, combo in (("search", s.hotkey_search), ("capture", s.hotkey_capture),
                            ("selection", s.hotkey_selection)):
            self._show_combo(name, combo)
        self.budget.setValue(s.context_budget)
        self.format.setCurrentText(s.context_format if s.context_format in FORMATS else FORMATS[0])
        self.model_path.setText(s.llm_model_path)
        self.threads.setValue(s.llm_threads)
        self.login.setChecked(s.start_at_login or autostart.is_enabled())
        self.notify_all.setChecked(s.notify_every_capture)
        self.paste.setChecked(s.paste_into_previous_window)
        self.restore_clipboard.setChecked(s.restore_clipboard_after_paste)
        self.restore_clipboard.setEnabled(self.paste.isEnabled() and s.paste_into_previous_window)
        if (at := self.embedding.findText(s.embedding_model)) >= 0:
            self.embedding.setCurrentIndex(at)
        self._ask_embedding()
        self.error.hide()

    def read(self) -> Settings:
        """The settings the form describes; InvalidInput says what is wrong."""
        patterns = _lines(self.ignore_patterns)
        for p in patterns:
            try:
                re.compile(p)
            except re.error as exc:
                raise InvalidInput(f"the capture rule {p!r} is not a valid regular expression ({exc})") from None
        try:
            rules, disabled = self.rules.read()
        except (TypeError, ValueError) as exc:
            raise InvalidInput(str(exc)) from None
        model = self.model_path.text().strip()
        if model and not paths.expand(model).is_file():
            raise InvalidInput(f"no model file at {model}")
        for name, what in hotkeys.ACTIONS.items():
            if problem := self._check_hotkey(name):
                raise InvalidInput(f"The hotkey that {what}: {problem}")
        search, capture, selection = (self._hotkey(name) for name in self.hotkey_edits)
        chosen = [k for k in (search, capture, selection) if k]
        if len(set(chosen)) < len(chosen):
            raise InvalidInput("each hotkey must be different")
        return dataclasses.replace(
            self.current, capture_enabled=self.capture.isChecked(), capture_ignore_patterns=patterns,
            capture_ignore_apps=[a.lower() for a in _lines(self.ignore_apps)], capture_rules=rules,
            capture_disabled_defaults=disabled, hotkey_search=search,
            hotkey_capture=capture, hotkey_selection=selection, context_budget=self.budget.value(),
            context_format=self.format.currentText(),
            llm_model_path=str(paths.expand(model)) if model else "", llm_threads=self.threads.value(),
            start_at_login=self.login.isChecked(), notify_every_capture=self.notify_all.isChecked(),
            paste_into_previous_window=self.paste.isChecked(),
            restore_clipboard_after_paste=self.restore_clipboard.isChecked(),
            embedding_model=self.embedding.currentText() or self.current.embedding_model,
        )

    # -- saving -------------------------------------------------------------------------------
    def save(self) -> None:
        """Validate, then let the engine write settings.json atomically and use the new values at once."""
        try:
            new = self.read()
        except InvalidInput as exc:
            self._show_error(str(exc))
            return
        self.error.hide()
        new, refused = self._try_hotkeys(new)

        def apply(service: MemoryOperations) -> Settings:
            return service.save_settings(new)

        tried = new.hotkey_search, new.hotkey_capture, new.hotkey_selection
        self.bridge.submit(apply, lambda saved: self._saved(saved, refused), lambda m: self._not_saved(m, tried))

    def _not_saved(self, message: str, tried: tuple[str, str, str]) -> None:
        """The engine could not save: the hotkeys registered for the trial give way to the saved ones again."""
        saved = self.current.hotkey_search, self.current.hotkey_capture, self.current.hotkey_selection
        if self.hotkey_trial is not None and tried != saved:
            self.hotkey_trial(dict(zip(("search", "capture", "selection"), saved, strict=True)))
        self._show_error(message)

    def _try_hotkeys(self, new: Settings) -> tuple[Settings, str]:
        """Changed hotkeys are registered before they are saved; one the desktop refuses is not saved, its old
        combo stays (registered, in the form) and the line returned says so ("" when all were taken)."""
        fields = {"search": "hotkey_search", "capture": "hotkey_capture", "selection": "hotkey_selection"}
        combos = {name: getattr(new, field) for name, field in fields.items()}
        old = {name: getattr(self.current, field) for name, field in fields.items()}
        if self.hotkey_trial is None or combos == old:
            return new, ""
        problems = self.hotkey_trial(combos)
        refused = {name: problem for name, problem in problems.items() if combos[name] != old[name]}
        lines = []
        for name, problem in refused.items():
            self.hotkey_edits[name].setKeySequence(QKeySequence(old[name], QKeySequence.SequenceFormat.PortableText))
            line = problem[:1].upper() + problem[1:]
            if old[name]:
                line += f"; {old[name]} still {hotkeys.ACTIONS.get(name, 'works')}"
            self.hotkey_checks[name].setText(line + ".")
            self.hotkey_checks[name].show()
            lines.append(line)
        kept = {fields[name]: old[name] for name in refused}
        return dataclasses.replace(new, **kept), "; ".join(lines)

    def _saved(self, new: Settings, refused: str = "") -> None:
        self.current = new
        try:
            autostart.set_enabled(new.start_at_login, self.data_dir)
        except OSError as exc:
            self._show_error(f"settings saved, but the login entry could not be written: {exc.strerror}")
        log.info("settings saved")
        self._ask_embedding()  # another search model: its re-embedding's progress
        self.saved.emit(new)
        self.notice.emit(f"Settings saved, but the hotkey was not changed: {refused}" if refused else "Settings saved")

    # -- the embedding model ------------------------------------------------------------------
    def _ask_embedding(self) -> None:
        if self.bridge is None:  # a layout probe without an engine
            return
        self.bridge.submit(lambda service: service.embedding_model_status(), self._show_embedding,
                           lambda message: self.embedding_progress.setText(message))

    def _show_embedding(self, status: EmbeddingModelStatus) -> None:
        """The installed models in the combo (the chosen one selected when it is filled) and the progress."""
        names = [m.name for m in status.models if m.installed or m.name == status.chosen]
        if names != [self.embedding.itemText(i) for i in range(self.embedding.count())]:
            self.embedding.clear()
            self.embedding.addItems(names)
            self.embedding.setCurrentIndex(max(0, self.embedding.findText(status.chosen)))
        self.embedding_progress.setText(status.message)
        if status.state == "re-embedding" and self.isVisible():
            self._embedding_poll.start()

    def _show_error(self, message: str) -> None:
        self.error.setText(message)
        self.error.show()

    # -- model file ---------------------------------------------------------------------------
    def _browse_model(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "Choose a GGUF model", str(Path.home()), "GGUF models (*.gguf)")
        if path:
            self.model_path.setText(path)

    # -- privacy actions ----------------------------------------------------------------------
    def _choose_export(self) -> None:
        path, _ = QFileDialog.getSaveFileName(self, "Export memories", str(Path.home() / "memories.jsonl"),
                                              "JSON Lines (*.jsonl);;Markdown (*.md)")
        if path:
            self.export_to(Path(path))

    def export_to(self, target: Path) -> None:
        self.bridge.submit(lambda s: _export(s, target),
                           lambda n: self.notice.emit(f"Exported {count(n, 'memory')} to {target.name}"),
                           self._show_error, long=True)

    def _choose_import(self) -> None:
        path, _ = QFileDialog.getOpenFileName(
            self, "Import memories", str(Path.home()),
            "What desktop-memory imports (*.zip *.json *.jsonl *.ndjson *.md *.markdown *.txt);;"
            "ChatGPT, Claude or Gemini export (*.zip *.json);;JSON Lines (*.jsonl);;Notes (*.md *.markdown *.txt);;"
            "All files (*)")
        if path:
            self.import_from(Path(path))

    def _choose_import_folder(self) -> None:
        path = QFileDialog.getExistingDirectory(self, "Import a folder of notes or an Obsidian vault", str(Path.home()))
        if path:
            self.import_from(Path(path))

    def import_from(self, source: Path) -> None:
        """A JSON Lines file, another tool's export, a note or a folder of notes (imports/feed.py recognises it,
        as the CLI's import does); a notice every PROGRESS_S while it runs, then what it did."""
        feeds: list[Feed] = []
        found_as: list[str] = []  # what it was recognised as ("a ChatGPT export (conversations.json in x.zip)")
        last = [time.monotonic()]

        def progress(report: ImportReport) -> None:
            if time.monotonic() - last[0] >= PROGRESS_S:
                last[0] = time.monotonic()
                self.notice.emit(f"Importing: {count(report.added + report.related, 'memory')} so far")

        def done(report: ImportReport) -> None:
            problems = len(feeds[0].problems) + feeds[0].more_problems if feeds else 0
            parts = [f"{report.updated} updated" if report.updated else "",
                     f"{report.duplicates} already there" if report.duplicates else "",
                     f"{count(len(report.errors), 'bad record')} skipped"
                     if report.errors else "",
                     f"{count(problems, 'part')} could not be read" if problems else ""]
            more = ", ".join(p for p in parts if p)
            what = f" from {found_as[0]}" if found_as else ""
            new = report.added + report.related
            self.notice.emit(f"Imported {count(new, 'new memory', 'new memories')}{what}"
                             + (f" ({more})" if more else ""))

        def open_source() -> Iterable[str | bytes | Overlong] | IO[bytes]:
            from ..imports.feed import KNOWN, Feed, recognise  # the readers (ijson, PyYAML) when first used

            if not source.exists():
                raise InvalidInput(f"cannot read {source}: there is no such file or folder")
            found = recognise(source)
            if found is None:
                raise InvalidInput(f"{source.name} is not a format desktop-memory imports; it imports: {KNOWN}")
            found_as.append(found.description)
            if found.jsonl:
                return _open_jsonl(source)
            feeds.append(Feed(found, MIN_LINE_LIMIT))
            return feeds[0].lines()

        self._import = ChunkedImport(self.bridge, open_source, done=done, failed=self._show_error, progress=progress)
        self._import.start()

    def _confirm_erase(self) -> None:
        answer = QMessageBox.warning(
            self, "Erase everything?",
            "<p>This deletes <b>every memory</b> for good, from the database, the full-text index and the "
            f"vector index in<br>{html.escape(str(self.data_dir))}.</p><p>It cannot be undone. Export first if "
            "you may want them back.</p>",
            QMessageBox.StandardButton.Cancel | QMessageBox.StandardButton.Discard, QMessageBox.StandardButton.Cancel)
        if answer == QMessageBox.StandardButton.Discard:
            self.erase_everything()

    def erase_everything(self) -> None:
        self.bridge.submit(lambda s: s.erase_everything(), lambda n: self.notice.emit(f"Erased {count(n, 'memory')}"),
                           self._show_error, long=True)
