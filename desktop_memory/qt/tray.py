"""The tray icon: its states (the engine starting, ready, restarting or stopped; capture paused; working)
and its menu."""

from __future__ import annotations

import time
from collections.abc import Callable
from importlib import resources

from PySide6.QtCore import QObject, Qt, Signal, SignalInstance
from PySide6.QtGui import QAction, QIcon, QKeySequence
from PySide6.QtWidgets import QMenu, QSystemTrayIcon

from ..core import headline
from ..core.capture import CaptureEvent
from . import display

STATES = ("ready", "paused", "working", "starting", "preparing", "restarting", "stopped")
ICONS = {"preparing": "starting"}  # states drawn with another state's icon
TIPS = {"ready": "desktop-memory: ready", "paused": "desktop-memory: capture paused",
        "preparing": "desktop-memory: preparing the search model (the first start takes up to a minute; "
                     "copies are saved meanwhile)",
        "working": "desktop-memory: working on its queue",
        "starting": "desktop-memory: starting the memory engine",
        "restarting": "desktop-memory: restarting the memory engine (copies wait and are saved after)",
        "stopped": "desktop-memory: the memory engine is stopped (Retry is in this menu)"}


def icon(state: str) -> QIcon:
    """The SVG icon for a state, from the package's resources (sharp at any size)."""
    path = resources.files("desktop_memory.resources") / "icons" / f"{state}.svg"
    with resources.as_file(path) as file:
        return QIcon(str(file))



def emitting(signal: SignalInstance, value: object) -> Callable[[], None]:
    """A menu entry's slot: emit `signal(value)` (the entry's own value, not the loop's last)."""
    return lambda: signal.emit(value)

RECENT_SHOWN = 20  # the last captures in Recent captures; "Show all in the search window…" opens the rest


class Tray(QObject):
    """Menu: Search…, Capture clipboard now, Capture selected text (each with its hotkey), Pause capture,
    Recent captures, Settings…, Open data folder, Quit; the sync line at the top while sync is set up;
    "Retry starting the memory engine" at the top while it is stopped. Every entry of a menu has its own
    accelerator (tests/gui/test_menus.py checks every menu of the app)."""

    search_requested = Signal()
    capture_requested = Signal()
    selection_requested = Signal()  # capture the selected text
    pause_requested = Signal(int)  # minutes; 0 means until resumed
    resume_requested = Signal()
    recent_chosen = Signal(str)  # memory id
    recent_wanted = Signal()  # the menu is about to show: refresh the recent list
    recent_all_requested = Signal(str)  # "Show all…": the search window, on this memory id (the newest; "" none)
    settings_requested = Signal()
    folder_requested = Signal()
    retry_requested = Signal()  # start the stopped engine again
    model_retry_requested = Signal()  # try the stopped local model again
    quit_requested = Signal()

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.state = "ready"
        self.last: CaptureEvent | None = None
        self.icons = {s: icon(ICONS.get(s, s)) for s in STATES}
        self.menu = QMenu()
        self.retry_action = QAction("Retry starting the memory &engine", self)
        self.retry_action.triggered.connect(self.retry_requested.emit)
        self.retry_action.setVisible(False)
        self.menu.addAction(self.retry_action)
        self.model_line = QAction("", self)  # the local model's problem, in one line (hidden when none)
        self.model_line.setEnabled(False)
        self.model_retry_action = QAction("Retry the local &model", self)
        self.model_retry_action.triggered.connect(self.model_retry_requested.emit)
        for action in (self.model_line, self.model_retry_action):
            action.setVisible(False)
            self.menu.addAction(action)
        self.sync_line = QAction("", self)  # "Synced 2 min ago with 1 other machine" (hidden while sync is off)
        self.sync_line.setEnabled(False)
        self.sync_line.setVisible(False)
        self.menu.addAction(self.sync_line)
        self.search_action = self.menu.addAction("&Search…", self.search_requested.emit)
        self.capture_action = self.menu.addAction("&Capture clipboard now", self.capture_requested.emit)
        self.selection_action = self.menu.addAction("Capture se&lected text", self.selection_requested.emit)
        self.set_hotkeys({"search": "Ctrl+Alt+M", "capture": "Ctrl+Alt+C", "selection": "Ctrl+Alt+Shift+C"})
        self.pause_menu = self.menu.addMenu("&Pause capture")
        for label, minutes in (("For &15 minutes", 15), ("For 1 &hour", 60), ("&Until resumed", 0)):
            self.pause_menu.addAction(label, emitting(self.pause_requested, minutes))
        self.resume_action = QAction("Res&ume capture", self)
        self.resume_action.triggered.connect(self.resume_requested.emit)
        self.resume_action.setVisible(False)
        self.menu.addAction(self.resume_action)
        self.recent_menu = self.menu.addMenu("&Recent captures")
        self.recent_menu.aboutToShow.connect(self.recent_wanted.emit)
        self.menu.addSeparator()
        self.menu.addAction("Se&ttings…", self.settings_requested.emit)
        self.menu.addAction("&Open data folder", self.folder_requested.emit)
        self.menu.addSeparator()
        self.menu.addAction("&Quit", self.quit_requested.emit)
        self.icon = QSystemTrayIcon(self.icons["ready"], self)
        self.icon.setContextMenu(self.menu)
        self.set_recent([])  # and the tooltip
        self.icon.activated.connect(self._activated)
        self.icon.messageClicked.connect(self._message_clicked)

    def show(self) -> bool:
        """Show the icon; False when this desktop has no system tray."""
        self.icon.show()
        return QSystemTrayIcon.isSystemTrayAvailable()

    def hide(self) -> None:
        self.icon.hide()

    def set_hotkeys(self, combos: dict[str, str]) -> None:
        """Show the global hotkeys beside their actions (the global grab, not the menu, reacts to them)."""
        for name, action in (("search", self.search_action), ("capture", self.capture_action),
                             ("selection", self.selection_action)):
            action.setShortcut(QKeySequence(combos.get(name, "")))
            action.setShortcutContext(Qt.ShortcutContext.WidgetShortcut)

    def set_state(self, *, paused: bool, working: bool, engine: str = "ready") -> None:
        """The engine's state wins (starting, preparing, restarting, stopped); with it ready: working, paused
        or ready."""
        if engine != "ready":
            self.state = engine
        else:
            self.state = "working" if working else "paused" if paused else "ready"
        self.icon.setIcon(self.icons[self.state])
        self._show_tip()
        self.pause_menu.menuAction().setVisible(not paused)
        self.resume_action.setVisible(paused)
        self.retry_action.setVisible(engine == "stopped")

    def set_model_problem(self, problem: str) -> None:
        """What stopped the local model ("" when it runs): a line at the top of the menu, and Retry."""
        what = problem.split("; ")[0]  # the reason; the notice gives the whole line
        self.model_line.setText(headline.cut(what[:1].upper() + what[1:], 90).replace("&", "&&"))
        self.model_line.setToolTip(problem)
        self.model_line.setVisible(bool(problem))
        self.model_retry_action.setVisible(bool(problem))

    def set_sync_line(self, line: str) -> None:
        """Sync's state in one line ("" while sync is off: hidden)."""
        self.sync_line.setText(headline.cut(line, 90).replace("&", "&&"))
        self.sync_line.setToolTip(line)
        self.sync_line.setVisible(bool(line))

    def set_recent(self, events: list[CaptureEvent]) -> None:
        """What the last copies became: saved ones open in the search window; skipped ones say why only."""
        self.recent_menu.clear()
        self.last = events[0] if events else None
        self._show_tip()
        if not events:
            self.recent_menu.addAction("Nothing captured since the app started").setEnabled(False)
        for e in events[:RECENT_SHOWN]:
            when = display.relative_time(e.at)
            if e.stored:
                label = f"Saved: {headline.cut(e.title, 60)}  ({when})".replace("&", "&&")  # cut at a word
                self.recent_menu.addAction(label, emitting(self.recent_chosen, e.memory_id))
            else:
                label = f"Skipped: {e.reason}" + (f" · {e.app}" if e.app else "") + f"  ({when})"
                self.recent_menu.addAction(label.replace("&", "&&")).setEnabled(False)
        newest = next((e.memory_id for e in events if e.stored and e.memory_id), "")
        self.recent_menu.addSeparator()
        self.recent_menu.addAction("&Show all in the search window…", emitting(self.recent_all_requested, newest))

    def _show_tip(self) -> None:
        """The state, and what the last copy became at what time (a clock time: it stays true)."""
        tip = TIPS[self.state]
        if self.last is not None:
            what = "saved" if self.last.stored else f"skipped ({self.last.reason})"
            tip += f"\nLast copy {what} at {time.strftime('%H:%M', time.localtime(self.last.at))}"
        self.icon.setToolTip(tip)

    def notify(self, message: str) -> None:
        """A small balloon; callers pass status text only, never memory content."""
        if self.icon.isVisible() and QSystemTrayIcon.supportsMessages():
            self.icon.showMessage("desktop-memory", message, self.icons[self.state], 3000)

    def _message_clicked(self) -> None:
        """The "could not start" notice says: click here to retry."""
        if self.state == "stopped":
            self.retry_requested.emit()

    def _activated(self, reason: QSystemTrayIcon.ActivationReason) -> None:
        if reason in (QSystemTrayIcon.ActivationReason.Trigger, QSystemTrayIcon.ActivationReason.DoubleClick):
            self.search_requested.emit()
