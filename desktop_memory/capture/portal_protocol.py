"""What the XDG GlobalShortcuts portal's protocol fixes: its bus names and paths, where a Request object
appears, hotkey combos as the app writes them (Qt's "Ctrl+Alt+M") and as the portal takes and reports them
("CTRL+ALT+m"), and its errors told to a person. The backend's event loop is in hotkeys_portal.py."""

from __future__ import annotations

from typing import Any

from .hotkeys_x11 import HotkeyError, split

PORTAL = "org.freedesktop.portal.Desktop"
PORTAL_PATH = "/org/freedesktop/portal/desktop"
NO_ANSWER = "timeout"  # the error name for a call the portal did not answer in time

_MODIFIERS = {"ctrl": "CTRL", "control": "CTRL", "alt": "ALT", "shift": "SHIFT", "meta": "LOGO", "super": "LOGO",
              "win": "LOGO"}
# Qt's key names (QKeySequence.toString) -> xkbcommon keysym names, for the keys whose names differ
_KEYSYMS = {"space": "space", "return": "Return", "enter": "Return", "tab": "Tab", "esc": "Escape",
            "escape": "Escape", "backspace": "BackSpace", "ins": "Insert", "insert": "Insert", "del": "Delete",
            "delete": "Delete", "home": "Home", "end": "End", "pgup": "Page_Up", "pgdown": "Page_Down",
            "left": "Left", "right": "Right", "up": "Up", "down": "Down", "print": "Print", "pause": "Pause",
            "menu": "Menu", ",": "comma", ".": "period", "/": "slash", "\\": "backslash", ";": "semicolon",
            "'": "apostrophe", "[": "bracketleft", "]": "bracketright", "-": "minus", "=": "equal",
            "`": "grave", "+": "plus", "*": "asterisk", "#": "numbersign"}
# and back, for showing a trigger the desktop reports in the XDG format the way the app writes combos
_QT_MODIFIERS = {"CTRL": "Ctrl", "ALT": "Alt", "SHIFT": "Shift", "LOGO": "Meta"}
_QT_KEYS = {"space": "Space", "Escape": "Esc", "BackSpace": "Backspace", "Insert": "Ins", "Delete": "Del",
            "Page_Up": "PgUp", "Page_Down": "PgDown", "comma": ",", "period": ".", "slash": "/",
            "backslash": "\\", "semicolon": ";", "apostrophe": "'", "bracketleft": "[", "bracketright": "]",
            "minus": "-", "equal": "=", "grave": "`", "plus": "+", "asterisk": "*", "numbersign": "#"}


def to_trigger(combo: Any) -> str:
    """Qt's "Ctrl+Alt+Shift+C" -> the XDG shortcuts format "CTRL+ALT+SHIFT+c"; HotkeyError names a bad one."""
    names, key = split(combo, _MODIFIERS)
    return "+".join([*names, _keysym(combo, key)])


def _keysym(combo: str, key: str) -> str:
    if key.lower() in _KEYSYMS:
        return _KEYSYMS[key.lower()]
    if len(key) == 1 and key.isascii() and key.isalnum():
        return key.lower()
    if key[0] in "Ff" and key[1:].isdigit() and 1 <= int(key[1:]) <= 35:
        return f"F{int(key[1:])}"
    raise HotkeyError(f"{combo!r}: the key {key!r} cannot be given to the desktop's shortcut portal")


def to_combo(trigger: Any) -> str:
    """The desktop's trigger as the app writes combos: the XDG format's "CTRL+ALT+m" -> "Ctrl+Alt+M";
    anything else (KDE's "Meta+Shift+K", another desktop's own label) as it is, trimmed."""
    if not isinstance(trigger, str):
        return ""
    *mods, key = trigger.strip().split("+")
    if not mods or not key or any(m not in _QT_MODIFIERS for m in mods):
        return trigger.strip()
    if key in _QT_KEYS:
        key = _QT_KEYS[key]
    elif len(key) == 1:
        key = key.upper()
    return "+".join([*(_QT_MODIFIERS[m] for m in mods), key])


def request_path(unique_name: str, token: str) -> str:
    """Where the portal puts the Request object for `token` ("/…/request/1_42/TOKEN" for ":1.42")."""
    return f"{PORTAL_PATH}/request/{unique_name.lstrip(':').replace('.', '_')}/{token}"


def interface_problem(error: str) -> str:
    """Why the GlobalShortcuts interface's version could not be read, for a person."""
    if error in ("org.freedesktop.DBus.Error.ServiceUnknown", "org.freedesktop.DBus.Error.NameHasNoOwner"):
        return "no desktop portal is running (xdg-desktop-portal)"
    if error == NO_ANSWER:
        return "the desktop portal does not answer"
    return "the desktop portal has no global shortcuts (GNOME before 48, Sway and COSMIC lack them)"
