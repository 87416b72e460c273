"""Global hotkeys for the tray app: the OS backend's key presses arrive on the GUI thread as `pressed`.

X11: XGrabKey (desktop_memory/capture/hotkeys_x11.py). Wayland: the XDG GlobalShortcuts portal over
D-Bus (desktop_memory/capture/hotkeys_portal.py; KDE Plasma, GNOME 48+, Hyprland), on the backend's own
thread: `bind` returns at once, the desktop's answer comes later as `late_problems`, the combos it uses as
`triggers_changed`. Where the portal lacks it (GNOME before 48, Sway, COSMIC) the app says so and the
README explains binding `desktop-memory toggle` / `capture-selection` in the desktop's own shortcut
settings. macOS: Carbon's
RegisterEventHotKey (desktop_memory/capture/hotkeys_macos.py; its handler runs on the GUI thread).
Windows: RegisterHotKey with hwnd NULL on the GUI thread (desktop_memory/capture/hotkeys_windows.py, no
keyboard hook); WM_HOTKEY comes out of that thread's queue through a native event filter on the
QApplication (qt/native_hotkeys.py). A combo another program registered is reported by name.
"""

from __future__ import annotations

import logging
import os
import sys
from collections.abc import Callable, Mapping
from typing import Protocol

from PySide6.QtCore import QObject, Signal

log = logging.getLogger(__name__)
WAYLAND_HINT = ("global hotkeys are not available on Wayland here: bind `desktop-memory toggle` and "
                "`desktop-memory capture-selection` in your desktop's keyboard shortcut settings")


def desktop_mode() -> str:
    """'x11', 'wayland', 'macos', 'windows' or 'unsupported' (no display) for this session."""
    if sys.platform == "darwin":
        return "macos"
    if sys.platform == "win32":
        return "windows"
    if not sys.platform.startswith("linux"):
        return "unsupported"
    if os.environ.get("WAYLAND_DISPLAY") or os.environ.get("XDG_SESSION_TYPE") == "wayland":
        return "wayland"
    return "x11" if os.environ.get("DISPLAY") else "unsupported"


ACTIONS = {"search": "opens the search window", "capture": "captures the clipboard",
           "selection": "captures the selected text"}  # what each hotkey does, in the person's words


def registration_parser(mode: str | None = None) -> Callable[[str], object]:
    """The function this desktop's hotkey backend reads a combo with (raises HotkeyError naming a bad one):
    the one `bind` uses, so a combo it accepts is one the backend can at least read."""
    mode = mode or desktop_mode()
    if mode == "macos":
        from ..capture.hotkeys_macos import parse as carbon

        return carbon
    if mode == "wayland":
        from ..capture.portal_protocol import to_trigger

        return to_trigger
    if mode == "windows":
        from ..capture.hotkeys_windows import to_registration

        return to_registration
    from ..capture.hotkeys_x11 import parse

    return parse


def combo_problem(combo: str, mode: str | None = None) -> str:
    """Why `combo` (as Qt writes it, "Ctrl+Alt+M") cannot be a global hotkey, in one line; "" when it can.

    A global hotkey is one chord ("Ctrl+A, Ctrl+Alt+K" is two), with a modifier besides Shift (a bare
    letter or Shift+letter would fire while typing), read by this desktop's own parser."""
    from ..capture.hotkeys_x11 import HotkeyError

    text = "".join(combo.split())
    if not text:
        return ""
    if "," in text.replace("+,", "+<comma>"):
        return f"{combo} is more than one key combination: press just one, like Ctrl+Alt+M"
    *mods, _key = text[:-2].split("+") + ["+"] if text.endswith("++") else text.split("+")
    if not mods:
        return f"{combo} alone would fire while you type: add Ctrl, Alt or Meta, like Ctrl+Alt+{combo}"
    if all(m.lower() == "shift" for m in mods):
        return f"{combo} would fire while you type: add Ctrl, Alt or Meta"
    try:
        registration_parser(mode)(combo)
    except HotkeyError as exc:
        return f"{combo} cannot be a global hotkey here ({str(exc).split(': ', 1)[-1]})"
    except Exception as exc:  # noqa: BLE001 - a backend's key table that needs the OS (Windows punctuation)
        log.info("hotkey %s not checked: %s", combo, exc)
    return ""


class HotkeyBackend(Protocol):
    """An OS backend: X11Hotkeys, PortalHotkeys, MacHotkeys or WindowsGlobalHotkeys."""

    def bind(self, combos: Mapping[str, str]) -> dict[str, str]: ...

    def close(self) -> None: ...


class GlobalHotkeys(QObject):
    pressed = Signal(str)  # the action name ("search", "capture", "selection")
    late_problems = Signal(dict)  # {action: problem} the Wayland portal reported after `bind` returned ({}: all set)
    triggers_changed = Signal(dict)  # {action: combo} the desktop uses (Wayland: the person may change them there)
    _portal_lost = Signal(str)  # the portal turned out to have no global shortcuts: the documented fallback

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.mode = desktop_mode()
        self._backend: HotkeyBackend | None = None
        self.note = ""
        if self.mode == "x11" and os.environ.get("QT_QPA_PLATFORM", "xcb") == "xcb":
            try:
                from ..capture.hotkeys_x11 import X11Hotkeys

                self._backend = X11Hotkeys(self.pressed.emit)  # emitted from the reader thread: queued
            except Exception as exc:  # noqa: BLE001 - no X server, no python-xlib: the app still works
                self.note = f"global hotkeys are not available: {exc}"
        elif self.mode == "wayland":
            self._backend = self._portal()
        elif self.mode == "windows":
            self._backend = self._windows()
        elif self.mode == "macos":
            try:
                from ..capture.hotkeys_macos import MacHotkeys

                self._backend = MacHotkeys(self.pressed.emit)  # Carbon calls it on the GUI thread
            except Exception as exc:  # noqa: BLE001 - no Carbon framework: the tray menu still works
                self.note = f"global hotkeys are not available: {exc}"
        else:
            self.note = "global hotkeys are not available on this system yet; use the tray menu"
        names = {"X11Hotkeys": "X11 grabs", "PortalHotkeys": "the XDG GlobalShortcuts portal",
                 "MacHotkeys": "Carbon hot keys", "WindowsGlobalHotkeys": "RegisterHotKey"}
        used = names.get(type(self._backend).__name__, "") if self._backend else ""
        log.info("global hotkeys: %s", used or self.note)

    def _portal(self) -> HotkeyBackend | None:
        """The GlobalShortcuts portal backend (it starts on its own thread: nothing here waits for D-Bus), or
        None with the documented fallback in `note`; no bus, no portal or no GlobalShortcuts come later."""
        try:
            from ..capture.hotkeys_portal import PortalHotkeys

            self._portal_lost.connect(self._portal_unavailable)
            # every callback runs on the backend's thread: the signals queue them to the GUI thread
            return PortalHotkeys(self.pressed.emit, on_late=self.late_problems.emit,
                                 on_triggers=self.triggers_changed.emit, on_unavailable=self._portal_lost.emit)
        except Exception as exc:  # noqa: BLE001 - the backend could not even start: the fallback
            log.info("global shortcuts portal not used: %s", exc)
            self.note = WAYLAND_HINT
            return None

    def _portal_unavailable(self, reason: str) -> None:
        """The portal has no global shortcuts here (found out on its thread): the fallback, shown by the app
        through an empty `late_problems` (nothing to report, but the combos are no longer promised)."""
        log.info("global hotkeys: the documented fallback (%s)", reason)
        backend, self._backend = self._backend, None
        if backend is not None:
            backend.close()
        self.note = WAYLAND_HINT
        self.late_problems.emit({})

    def _windows(self) -> HotkeyBackend | None:
        """RegisterHotKey for the GUI thread, WM_HOTKEY through a native event filter (qt/native_hotkeys.py)."""
        try:
            from .native_hotkeys import WindowsGlobalHotkeys

            return WindowsGlobalHotkeys(self.pressed.emit)  # called on the GUI thread: a direct emit
        except Exception as exc:  # noqa: BLE001 - no user32 (a stripped system): the tray menu still works
            self.note = f"global hotkeys are not available: {exc}"
            return None

    @property
    def active(self) -> bool:
        return self._backend is not None

    @property
    def pending(self) -> bool:
        """Wayland: the desktop has not answered the last `bind` yet (it may be asking the person)."""
        return bool(getattr(self._backend, "pending", False))

    def bind(self, combos: Mapping[str, str]) -> dict[str, str]:
        """Grab {action: combo}; {action: problem} for the ones that could not be bound."""
        if self._backend is None:
            return {}
        return self._backend.bind(combos)

    def close(self) -> None:
        if self._backend is not None:
            self._backend.close()
            self._backend = None
