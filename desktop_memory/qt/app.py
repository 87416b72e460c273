"""The tray app: starts the engine host process, shows the tray icon and the windows, answers later starts.

The engine runs in a child process (ipc/host.py) that also serves the CLI and MCP; the app reaches it
through the bridge's one thread over the engine socket, so Chroma holding the GIL never stalls the GUI.
"""

from __future__ import annotations

import dataclasses
import logging
import math
import os
import signal
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import QObject, QTimer, QUrl, Signal
from PySide6.QtGui import QClipboard, QDesktopServices, QGuiApplication
from PySide6.QtWidgets import QApplication, QMessageBox, QSystemTrayIcon

from ..core import notices
from ..core.capture import CaptureEvent, RecentCaptures, Snapshot
from ..core.web import UNTIL_RESUMED
from ..engine.settings import Settings
from ..ipc.client import connect
from ..ipc.spawn import HostProcess
from ..ipc.supervisor import Supervisor
from ..service.protocol import MemoryOperations
from ..service.reports import IndexStatus
from . import capture_now, single_instance
from .bridge import ENGINE, EngineBridge
from .clipboard_watcher import ClipboardWatcher
from .hotkeys import GlobalHotkeys
from .queue_watch import QueueWatch
from .search_window import SearchWindow
from .settings_window import SettingsWindow
from .sync_ticker import SyncTicker
from .tray import Tray, icon
from .welcome import WelcomeWindow

log = logging.getLogger(__name__)
PROG = "desktop-memory"
RECENT = 20  # the captures the tray lists (tray.RECENT_SHOWN); the search window has them all


def has_display() -> bool:
    """Whether a GUI can start here (an X11/Wayland display, another OS, or an explicit Qt platform)."""
    if not sys.platform.startswith("linux") or os.environ.get("QT_QPA_PLATFORM"):
        return True
    return bool(os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"))


class DesktopApp(QObject):
    """Wires the engine bridge, the tray, the windows and the sockets together; holds no business logic."""

    engine_ready = Signal()  # the engine is open and its settings are applied
    failed = Signal(str)
    engine_state_changed = Signal(str)  # starting, ready, restarting, stopped

    def __init__(self, data_dir: Path, *, opener: Callable[[Path], MemoryOperations] | None = None) -> None:
        """Without `opener` the engine runs in a host process; with one, in this process (tests)."""
        super().__init__()
        self.data_dir = data_dir
        self.exit_code = 0
        self.paused_until: float | None = None  # math.inf: until resumed
        self.enrich_pending = 0
        self.recent = RecentCaptures(RECENT)
        settings = Settings.load(data_dir)
        self.notify_every = settings.notify_every_capture
        self._first_saved = False  # the first automatic save of this run is told; later ones go quietly
        self._quitting = False  # a hotkey press still queued after quit must not reach the stopped bridge
        self.engine_state = "starting"
        self.host = None if opener else HostProcess(data_dir, on_exit=lambda code: self.bridge.host_exited(code))
        if self.host is not None:  # supervised: restarted when it dies or hangs (ipc/supervisor.py)
            supervisor = Supervisor(self.host)
            self.bridge = EngineBridge(supervisor.open, supervisor=supervisor)
        else:
            assert opener is not None
            self.bridge = EngineBridge(lambda: opener(data_dir))
        self.search = SearchWindow(self.bridge, settings, settings.hotkey_search)
        self.search.act.open_settings = self.open_settings  # "Settings…" in its actions menu (Ctrl+K)
        self._settings_window: SettingsWindow | None = None  # built when first opened (~8 MB of widgets)
        self.tray = Tray(self)
        self.watcher = ClipboardWatcher(self)
        self.hotkeys = GlobalHotkeys(self)
        self._hotkey_problems: dict[str, str] = {}  # the ones last told about
        self._hotkey_combos: dict[str, str] = {}  # the settings' combos, as last bound
        self._hotkey_triggers: dict[str, str] = {}  # Wayland: the combos the desktop says it uses
        self._settings_problem: str | None = None  # the damaged settings.json last told about
        self._index_told = ""  # the vector index repair last told about
        self.model_problem = ""  # the local model's problem, as the engine last said it
        self.welcome: WelcomeWindow | None = None
        self.instance = single_instance.InstanceServer(single_instance.server_name(data_dir), self)
        self._resume = QTimer(self, singleShot=True)
        self._resume.timeout.connect(self.resume_capture)
        self.queue_watch = QueueWatch(lambda: connect(data_dir), self)  # the queue's length, pushed by the engine
        self._tray_watch = QTimer(self, interval=1000)
        self.sync = SyncTicker(self.bridge, self)  # sync every minute while set up; the tray's sync line
        self._tray_watch.timeout.connect(self._check_tray)

        self.bridge.engine_state.connect(self._engine_state)
        self.bridge.opened.connect(self._opened)
        self.bridge.open_failed.connect(self._open_failed)
        self.bridge.job_failed.connect(self.notify)
        self.bridge.busy_changed.connect(lambda _: self._update_tray())
        self.search.notice.connect(self.notify)
        self.watcher.copy_settled.connect(self.capture_copy)
        self.hotkeys.pressed.connect(self._hotkey)
        self.hotkeys.late_problems.connect(self._show_hotkeys)  # Wayland: the desktop answers a bind later
        self.hotkeys.triggers_changed.connect(self._hotkeys_changed)  # re-bound in the desktop's own settings
        self.instance.command_received.connect(self._command)
        self.queue_watch.queued.connect(self._queue_changed)
        self.queue_watch.model_problem.connect(self._model_problem)
        self.sync.line.connect(self.tray.set_sync_line)
        t = self.tray
        t.search_requested.connect(self.search.toggle)
        t.capture_requested.connect(self.capture_clipboard)
        t.selection_requested.connect(self.capture_selection)
        t.pause_requested.connect(self.pause_capture)
        t.resume_requested.connect(self.resume_capture)
        t.recent_chosen.connect(lambda mid: self.search.show_and_focus(select_id=mid))
        t.recent_wanted.connect(lambda: self.tray.set_recent(list(self.recent)))  # times true when opened
        t.recent_all_requested.connect(lambda mid: self.search.show_and_focus(select_id=mid or None))
        t.settings_requested.connect(self.open_settings)
        t.folder_requested.connect(lambda: QDesktopServices.openUrl(QUrl.fromLocalFile(str(self.data_dir))))
        t.retry_requested.connect(self.bridge.retry)
        t.model_retry_requested.connect(lambda: self.bridge.submit(lambda s: s.retry_failed_enrichment(),
                                                                   lambda _: None, self.notify))
        t.quit_requested.connect(self.quit)
        t.menu.aboutToShow.connect(lambda: t.set_sync_line(self.sync.current_line()))  # "N min ago" true when shown

    # -- start and stop -----------------------------------------------------------------------
    def start(self) -> bool:
        if not self.instance.listen():
            print(f"{PROG}: cannot listen on the local socket: {self.instance.error()}", file=sys.stderr)
            return False
        self._set_engine_state("starting")
        self.bridge.start()
        if sys.platform == "darwin" and getattr(sys, "frozen", False):  # a disk image has no install step
            threading.Thread(target=_register_browser_host, name="browser-host", daemon=True).start()
        available = self.tray.show()
        log.info("tray icon shown (system tray available: %s)", available)
        if not available:
            self.search.show_and_focus()  # no tray to click (yet): show the window instead
            self._tray_watch.start()
        return True

    def _check_tray(self) -> None:
        """A tray host that starts after the app gets the icon (Qt docks it); say so once."""
        if QSystemTrayIcon.isSystemTrayAvailable():
            self._tray_watch.stop()
            log.info("tray icon shown (system tray available: True)")

    def _opened(self) -> None:
        log.info("engine ready: %s", self.data_dir)  # open; the tray says "preparing" until the model is loaded
        self._set_engine_state("preparing")  # the search model loads (the first start also converts it)
        self.bridge.submit(lambda s: s.settings, self._first_settings)
        self.bridge.submit(lambda s: s.search("warm up", limit=1, record_access=False),  # load the model now
                           self._prepared, self._prepared)
        self.bridge.submit(lambda s: s.index_status(), self._index_checked)  # after the warm-up opened the index
        self._start_enrichment()

    def _index_checked(self, status: IndexStatus) -> None:
        """A damaged or missing vector index was moved aside and is rebuilt from the database: say so once."""
        if status.message and status.message != self._index_told:
            self._index_told = status.message
            self.notify(status.message)

    def _prepared(self, result: object) -> None:
        """The warm-up search is done (the model is loaded): the tray says ready only now."""
        if isinstance(result, str):  # it failed: the engine still answers (keywords at least); say why once
            self.notify(result)
        else:
            log.info("embedding model loaded")
        if self.engine_state == "preparing":
            self._set_engine_state("ready")
        self.sync.start()  # with the model loaded: memories from the other machines are embedded at once

    def _first_settings(self, settings: Settings) -> None:
        """The engine is open and its settings applied (the clipboard watcher, the hotkeys): ready."""
        self._settings_loaded(settings)
        self.engine_ready.emit()
        if not settings.welcome_shown and not settings.problem:
            self.show_welcome(settings)

    def show_welcome(self, settings: Settings) -> None:
        """The first start's welcome, once: remembered in settings.json (read, changed and written by the
        engine in one job, so a save from the settings window is not undone)."""
        self.welcome = WelcomeWindow(settings, self.data_dir)
        self.welcome.search_requested.connect(self.search.show_and_focus)
        self.welcome.show_centred()

        def remember(s: MemoryOperations) -> Settings:
            return s.save_settings(dataclasses.replace(s.settings, welcome_shown=True))

        def remembered(new: Settings) -> None:
            if self._settings_window is not None:  # an open form must not write welcome_shown back as false
                self._settings_window.current = dataclasses.replace(self._settings_window.current, welcome_shown=True)

        self.bridge.submit(remember, remembered, lambda _m: None)

    def _start_enrichment(self) -> None:
        """Background enrichment (llama.cpp on its own thread, owned by the engine) while the app runs."""
        if self.host is None:  # the host process starts it itself
            self.bridge.submit(lambda s: s.start_enrichment())
        self.queue_watch.start()

    def _engine_state(self, state: str, message: str) -> None:
        """The supervised engine restarted, is restarting or stopped: the tray shows it, one notice says it."""
        self._set_engine_state(state)
        if message:
            log.info("notice shown")
            self.tray.notify(notices.plain(message))
        if state == "ready":  # a restarted host loads the embedding model on its first search: now
            if self.capture_paused:  # and knows nothing of the pause
                self._tell_engine_pause()
            self.bridge.submit(lambda s: s.search("warm up", limit=1, record_access=False), lambda _: None,
                               lambda _m: None)

    def _set_engine_state(self, state: str) -> None:
        self.engine_state = state
        log.info("engine state: %s", state)
        self._update_tray()
        self.engine_state_changed.emit(state)

    def _queue_changed(self, queued: int) -> None:
        """The engine said how many memories wait for enrichment (qt/queue_watch.py): the tray shows "working"."""
        self.enrich_pending = queued
        self._update_tray()

    def _model_problem(self, problem: str) -> None:
        """The engine says the local model stopped (or runs again): the menu says it, one notice says it once."""
        self.tray.set_model_problem(problem)
        if problem and problem != self.model_problem:
            self.notify(problem[:1].upper() + problem[1:])
        self.model_problem = problem

    def _open_failed(self, message: str) -> None:
        message = notices.plain(message)
        print(f"{PROG}: {message}", file=sys.stderr)
        log.info("engine failed to open")
        self.exit_code = 1
        self.failed.emit(message)
        box = QMessageBox(QMessageBox.Icon.Critical, PROG, message)
        box.finished.connect(lambda _: self.quit())
        box.open()

    def _settings_loaded(self, settings: Settings) -> None:
        self.notify_every = settings.notify_every_capture
        self.search.apply_settings(settings, settings.hotkey_search)
        if self._settings_window is not None:
            self._settings_window.load(settings)
        if settings.capture_enabled:
            self.watcher.start()
        else:
            self.watcher.stop()
        refused = self.apply_hotkeys({"search": settings.hotkey_search, "capture": settings.hotkey_capture,
                                      "selection": settings.hotkey_selection})
        if refused:  # settings.json changed elsewhere (the settings window tries its combos before saving)
            self.notify("Hotkey not changed: " + "; ".join(f"{p}; {self._hotkey_combos[a]} still works"
                                                           for a, p in refused.items()))
        problem = capture_now.settings_notice(settings)
        if problem and problem != self._settings_problem:
            self.notify(problem)  # once per problem; capture stays off until settings are valid again
        self._settings_problem = problem

    def quit(self) -> None:
        if self._quitting:  # Quit chosen twice, or a quit while quitting: once is enough
            return
        log.info("quitting")
        self._quitting = True
        self.watcher.stop()
        self.hotkeys.close()
        self.queue_watch.stop()
        self.sync.stop()
        self._tray_watch.stop()
        self.instance.close()
        self.tray.hide()
        if self.bridge.is_open and self.host is None:
            self.bridge.submit(lambda s: s.stop_enrichment())
        self.bridge.stop()
        if self.host is not None:
            self.host.stop()  # closes its stdin: it stops enrichment, closes the engine, removes the socket
        QApplication.exit(self.exit_code)

    def apply_hotkeys(self, combos: dict[str, str]) -> dict[str, str]:
        """Register {action: combo}. A new combo the desktop refuses gives way to the action's old one while that
        one worked (registered again, it stays): {action: why the new combo could not be registered} for those;
        every other problem is shown as before (the menu, the settings window)."""
        old, old_problems = dict(self._hotkey_combos), dict(self._hotkey_problems)
        problems = self.hotkeys.bind(combos)
        refused = {a: p for a, p in problems.items()
                   if old.get(a) and old[a] != combos.get(a) and a not in old_problems}
        if refused:
            log.info("hotkeys kept: %s", ", ".join(refused))
            combos = {**combos, **{a: old[a] for a in refused}}
            problems = self.hotkeys.bind(combos)
        self._hotkey_combos = dict(combos)
        self._show_hotkeys(problems)
        return refused

    def _show_hotkeys(self, problems: dict[str, str]) -> None:
        """`bind`'s problems, or the ones the Wayland portal reported later ({}: all set): the menu shows only the
        combos that work here (the desktop's own where it said so), a new problem is told once, and the settings
        window says it beside the combo."""
        combos, active = self._hotkey_combos, self.hotkeys.active
        self.tray.set_hotkeys({k: self._hotkey_triggers.get(k) or v for k, v in combos.items()
                               if active and k not in problems})
        if problems and problems != self._hotkey_problems:
            self.notify("Hotkey not set: " + "; ".join(dict.fromkeys(problems.values())))
        if problems or not getattr(self.hotkeys, "pending", False):  # a bind still waiting has said nothing yet
            self._hotkey_problems = problems
        if self._settings_window is not None:
            self._settings_window.show_hotkeys(*self._hotkey_notes(problems))

    def _hotkeys_changed(self, triggers: dict[str, str]) -> None:
        """The desktop uses other combos than the settings' (the person changed them there): show those."""
        self._hotkey_triggers = dict(triggers)
        self._show_hotkeys(self._hotkey_problems)

    def _hotkey_notes(self, problems: dict[str, str]) -> tuple[dict[str, str], str]:
        """The settings window's lines: per action why it is not set or the desktop's own combo; and one for all."""
        notes = dict(problems)
        for action, combo in self._hotkey_combos.items():
            used = self._hotkey_triggers.get(action, "")
            if action not in notes and used and used.replace(" ", "").lower() != combo.replace(" ", "").lower():
                notes[action] = f"Your desktop uses {used} for this; change it in the desktop's shortcut settings."
        if not self.hotkeys.active:
            return notes, getattr(self.hotkeys, "note", "")
        if getattr(self.hotkeys, "pending", False):
            return notes, "Waiting for your desktop to confirm the shortcuts…"
        return notes, ""

    # -- commands from other starts -----------------------------------------------------------
    def _command(self, command: str) -> None:
        log.info("command from another start: %s", command)
        if command == "show":
            self.search.show_and_focus()
        elif command == "toggle":
            self.search.toggle()
        elif command == "capture":
            self.capture_clipboard()
        elif command == "selection":
            self.capture_selection()

    def _hotkey(self, action: str) -> None:
        if self._quitting:
            log.info("hotkey pressed while quitting: ignored")
            return
        log.info("hotkey pressed: %s", action)
        {"search": self.search.toggle, "capture": self.capture_clipboard,
         "selection": self.capture_selection}.get(action, lambda: None)()

    # -- tray actions -------------------------------------------------------------------------
    def notify(self, message: str) -> None:
        """A balloon; an engine incident's per-job messages are not (the incident has its one notice)."""
        if message.startswith(ENGINE):
            log.info("notice folded into the engine's own")
            return
        log.info("notice shown")
        self.tray.notify(notices.plain(message))

    def capture_clipboard(self) -> None:
        """Capture clipboard now (an explicit request: not stopped by pause or capture being off)."""
        app, window = self.watcher.windows.current()
        snap = capture_now.snapshot(QGuiApplication.clipboard().mimeData(QClipboard.Mode.Clipboard), app, window)
        self.bridge.submit(lambda s: capture_now.capture(s, snap), self._captured, hold=True)

    def capture_selection(self) -> None:
        """Capture the selected text: X11's PRIMARY selection; Windows / macOS: a Ctrl+C / Cmd+C of ours, the
        clipboard put back (capture/selection_windows.py, selection_macos.py); elsewhere the clipboard."""
        if sys.platform in ("win32", "darwin"):
            self._capture_copied_selection()
            return
        clipboard = QGuiApplication.clipboard()
        mode = QClipboard.Mode.Selection if clipboard.supportsSelection() else QClipboard.Mode.Clipboard
        app, window = self.watcher.windows.current()
        snap = capture_now.snapshot(clipboard.mimeData(mode), app, window)
        self.bridge.submit(lambda s: capture_now.capture(s, snap, source="hotkey"), self._captured, hold=True)

    def _capture_copied_selection(self) -> None:
        """Windows / macOS: the selection copied by a Ctrl+C / Cmd+C of ours (GUI thread, up to 0.5 s), sent as
        the hotkey's. macOS asks for the Accessibility grant the first time; without it the notice says how."""
        if sys.platform == "darwin":
            from ..capture.selection_macos import copy_selection
        else:
            from ..capture.selection_windows import copy_selection
        from ..core.errors import CaptureUnavailable

        app, window = self.watcher.windows.current()  # the window in front, before anything changes
        try:
            text = copy_selection()
        except CaptureUnavailable as exc:
            self.notify(f"Selection not captured: {exc}")
            return
        if text is None:
            self.notify("Nothing selected: select some text, then press the hotkey again")
            return
        snap = Snapshot(text, app=app, window=window, at=time.time())
        self.bridge.submit(lambda s: capture_now.capture(s, snap, source="hotkey"), self._captured, hold=True)

    def capture_copy(self, snap: Snapshot) -> None:
        """A copy the watcher saw settle: stored unless paused, off, marked secret or ruled out."""
        paused = self.capture_paused
        self.bridge.submit(lambda s: capture_now.capture(s, snap, automatic=True, paused=paused),
                           lambda outcome: self._captured(outcome, automatic=True), hold=True)

    def _captured(self, outcome: tuple[str, CaptureEvent], automatic: bool = False) -> None:
        """Recent captures and the tooltip always; a notification only when it needs attention (core/notices)."""
        message, event = outcome
        if event.reason == "our own copy":  # the context we just copied: not news
            return
        self.recent.add(event)
        log.info("capture finished: %s", message.split(" (")[0])
        first = automatic and event.stored and not self._first_saved
        if notices.needs_attention(message, event, automatic=automatic, first=first, every=self.notify_every):
            self.notify(notices.FIRST_SAVED if first and message == "Saved" and not self.notify_every else message)
        self._first_saved = self._first_saved or first
        self.tray.set_recent(list(self.recent))

    def pause_capture(self, minutes: int) -> None:
        self.paused_until = time.time() + minutes * 60 if minutes else math.inf
        if minutes:
            self._resume.start(minutes * 60_000)
        log.info("capture paused")
        self._tell_engine_pause()
        self._update_tray()

    def resume_capture(self) -> None:
        self.paused_until = None
        self._resume.stop()
        log.info("capture resumed")
        self._tell_engine_pause()
        self._update_tray()

    def _tell_engine_pause(self) -> None:
        """The engine holds the pause too: the browser's captures (service/web.py) honour it."""
        until = self.paused_until
        if until is not None and not math.isfinite(until):
            until = UNTIL_RESUMED
        self.bridge.submit(lambda s: s.pause_capture(until), lambda _: None, lambda _m: None)

    @property
    def capture_paused(self) -> bool:
        return self.paused_until is not None and time.time() < self.paused_until

    def _update_tray(self) -> None:
        working = self.bridge.busy or self.enrich_pending > 0
        self.tray.set_state(paused=self.capture_paused, working=working, engine=self.engine_state)

    @property
    def settings_window(self) -> SettingsWindow:
        """The settings dialog, built the first time it is wanted (the idle app stays smaller)."""
        if self._settings_window is None:
            self._settings_window = SettingsWindow(self.bridge, self.data_dir)
            self._settings_window.notice.connect(self.notify)
            self._settings_window.saved.connect(self._settings_loaded)
            self._settings_window.sync.status_changed.connect(self.sync.show)  # the tray follows the Sync tab
            self._settings_window.hotkey_trial = self.apply_hotkeys  # changed combos are tried before saving
            self._settings_window.show_hotkeys(*self._hotkey_notes(self._hotkey_problems))
        return self._settings_window

    def open_settings(self) -> None:
        self.bridge.submit(lambda s: s.settings, self.settings_window.show_settings)


def run_app(data_dir: Path, argv: list[str] | None = None) -> int:
    """Start the tray app (or show the running one's search window); returns the exit code."""
    if not has_display():
        print(f"{PROG}: no display found (DISPLAY and WAYLAND_DISPLAY are unset): the tray app needs a desktop "
              "session; the command line works without one (desktop-memory --help)", file=sys.stderr)
        return 1
    logging.getLogger("desktop_memory.qt").setLevel(logging.INFO)
    app = QApplication.instance() or QApplication(argv or [sys.argv[0] or PROG])
    assert isinstance(app, QApplication)
    app.setApplicationName(PROG)
    app.setApplicationDisplayName(PROG)
    app.setDesktopFileName(PROG)
    app.setQuitOnLastWindowClosed(False)
    app.setWindowIcon(icon("ready"))
    if single_instance.send_command(single_instance.server_name(data_dir), "show"):
        print(f"{PROG}: already running: showed its search window", file=sys.stderr)
        return 0
    desktop = DesktopApp(data_dir)
    if not desktop.start():
        return 1
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: QTimer.singleShot(0, desktop.quit))
    wake = QTimer(interval=250)  # lets Python run its signal handlers
    wake.timeout.connect(lambda: None)
    wake.start()
    log.info("app started (pid %d)", os.getpid())
    return app.exec()


def _register_browser_host() -> None:
    """The browser companion's host registered for the browsers used here (browser/manifests.py), off the GUI
    thread: on macOS only the app can (the disk image is copied, no installer runs)."""
    from ..browser.manifests import register_on_start

    for line in register_on_start():
        log.info("browser companion: %s", line)
