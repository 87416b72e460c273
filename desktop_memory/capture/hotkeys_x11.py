"""Global hotkeys on X11: XGrabKey on the root window (python-xlib), read on a thread of its own.

A combo is written as Qt writes it ("Ctrl+Alt+M"). Each is grabbed with and without Caps Lock and
Num Lock, so it works whatever their state. A combo another program holds is refused by the X
server (BadAccess): `bind` reports it by name instead of failing silently. Key presses call
`on_press(action)` on the reader thread; the caller hands them to its own thread (the tray app
does it through a Qt signal).
"""

from __future__ import annotations

import logging
import select
import threading
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

log = logging.getLogger(__name__)
T = TypeVar("T")

_MODIFIERS = {"ctrl": "ControlMask", "control": "ControlMask", "alt": "Mod1Mask", "shift": "ShiftMask",
              "meta": "Mod4Mask", "super": "Mod4Mask", "win": "Mod4Mask"}
_KEYSYM_NAMES = {"space": "space", "return": "Return", "enter": "Return", "tab": "Tab", "esc": "Escape",
                 "escape": "Escape", "ins": "Insert", "del": "Delete", "home": "Home", "end": "End",
                 "pgup": "Prior", "pgdown": "Next"}


class HotkeyError(ValueError):
    """A combo that cannot be parsed or bound; the message names it."""


def split(combo: Any, modifiers: Mapping[str, T], *,
          named: str = "Ctrl, Alt, Shift, Meta") -> tuple[list[T], str]:
    """("Ctrl+Alt+M", a backend's modifier table) -> (its values for Ctrl and Alt, "M"): the one reading of a
    combo every backend shares. Qt writes Ctrl and the plus key as "Ctrl++". Raises HotkeyError naming it."""
    if not isinstance(combo, str):
        raise HotkeyError(f"{combo!r}: a hotkey is written like Ctrl+Alt+M")
    text = "".join(combo.split())
    parts = [p for p in text[:-2].split("+") if p] + ["+"] if text.endswith("++") else text.split("+")
    if len(parts) < 2 or not all(parts):
        raise HotkeyError(f"{combo!r}: a global hotkey needs a modifier ({named}) and a key")
    *mods, key = parts
    values = []
    for m in mods:
        value = modifiers.get(m.lower())
        if value is None:
            raise HotkeyError(f"{combo!r}: unknown modifier {m!r}")
        values.append(value)
    return values, key


def parse(combo: str) -> tuple[list[str], str]:
    """("Ctrl+Alt+M") -> (["ControlMask", "Mod1Mask"], "m"); raises HotkeyError when it makes no sense."""
    masks, key = split(combo, _MODIFIERS)
    name = _KEYSYM_NAMES.get(key.lower(), key.lower() if len(key) == 1 else key)
    return masks, name


class X11Hotkeys:
    """Grabs combos on the X server of $DISPLAY; `bind` (re)places them all, `close` ends the reader."""

    def __init__(self, on_press: Callable[[str], None]) -> None:
        from Xlib import XK, X, display  # python-xlib: Linux only, imported where it is used

        self._X, self._XK = X, XK
        self.display = display.Display()
        self.root = self.display.screen().root
        self.on_press = on_press
        self._bound: dict[tuple[int, int], str] = {}
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._read, name="x11-hotkeys", daemon=True)
        self._thread.start()

    def _extra_masks(self) -> list[int]:
        X = self._X
        num_lock = X.Mod2Mask  # Num Lock on practically every X keyboard map
        return [0, X.LockMask, num_lock, X.LockMask | num_lock]

    def bind(self, combos: Mapping[str, str]) -> dict[str, str]:
        """Grab {action: combo}; returns {action: problem} for those that could not be bound."""
        from Xlib import error

        X = self._X
        problems: dict[str, str] = {}
        with self._lock:
            self._ungrab_all()
            for action, combo in combos.items():
                if not combo:
                    continue
                try:
                    masks, name = parse(combo)
                except HotkeyError as exc:
                    problems[action] = str(exc)
                    continue
                keysym = self._XK.string_to_keysym(name)
                keycode = self.display.keysym_to_keycode(keysym) if keysym else 0
                if not keycode:
                    problems[action] = f"{combo!r}: no such key on this keyboard"
                    continue
                mask = 0
                for m in masks:
                    mask |= getattr(X, m)
                catcher = error.CatchError(error.BadAccess)
                for extra in self._extra_masks():
                    self.root.grab_key(keycode, mask | extra, True, X.GrabModeAsync, X.GrabModeAsync,
                                       onerror=catcher)
                self.display.sync()
                if catcher.get_error():
                    for extra in self._extra_masks():
                        self.root.ungrab_key(keycode, mask | extra)
                    problems[action] = f"{combo} is already taken by another program"
                    continue
                self._bound[(keycode, mask)] = action
            self.display.sync()  # every ungrab done when bind returns: a combo given up is free for others at once
        for action, problem in problems.items():
            log.info("hotkey for %s not bound: %s", action, problem)
        return problems

    def _ungrab_all(self) -> None:
        for keycode, mask in self._bound:
            for extra in self._extra_masks():
                self.root.ungrab_key(keycode, mask | extra)
        self._bound.clear()

    def _read(self) -> None:
        X = self._X
        ignored = X.LockMask | X.Mod2Mask
        while not self._stop.is_set():
            ready, _, _ = select.select([self.display.fileno()], [], [], 0.25)
            if not ready and not self.display.pending_events():
                continue
            with self._lock:
                events: list[Any] = []
                while self.display.pending_events():
                    events.append(self.display.next_event())
                found = [self._bound.get((e.detail, e.state & ~ignored)) for e in events if e.type == X.KeyPress]
            for action in found:
                if action:
                    try:
                        self.on_press(action)
                    except Exception:  # noqa: BLE001 - a broken receiver must not end the reader
                        log.debug("hotkey receiver failed", exc_info=True)

    def close(self) -> None:
        self._stop.set()
        self._thread.join(2)
        with self._lock:
            self._ungrab_all()
            self.display.close()
