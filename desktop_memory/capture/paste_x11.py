"""Paste into the window the person came from, on X11: python-xlib and the XTEST extension.

`foreground()` reads the window manager's `_NET_ACTIVE_WINDOW` (without a window manager: the X input
focus, up to its top-level window). `paste_into(target)` brings the target forward (a `_NET_ACTIVE_WINDOW`
client message with source indication 2, "pager", where a window manager supports it; else
`XSetInputFocus`), waits until it is in front (at most `ACTIVATE_WAIT_S`), releases the modifier keys
still held from the hotkey or from Shift/Alt+Enter (Ctrl, Shift, Alt, Super, AltGr; never Caps/Num Lock),
then sends Ctrl+V with XTest, or Ctrl+Shift+V to a terminal known by its `WM_CLASS` (`TERMINALS`).
The released modifiers are not pressed again: a key the person lets go of meanwhile would stay stuck.
One X connection is kept and shared under a lock (python-xlib's display is not thread-safe).
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
from typing import Any

log = logging.getLogger(__name__)

ACTIVATE_WAIT_S = 0.5
# WM_CLASS names (instance or class, lower case) of terminals whose paste key is Ctrl+Shift+V
TERMINALS = frozenset({
    "gnome-terminal", "gnome-terminal-server", "org.gnome.terminal", "kgx", "org.gnome.console", "ptyxis",
    "org.gnome.ptyxis", "konsole", "org.kde.konsole", "yakuake", "xfce4-terminal", "tilix", "com.gexperts.tilix",
    "terminator", "alacritty", "kitty", "wezterm", "org.wezfurlong.wezterm", "ghostty", "com.mitchellh.ghostty",
    "lxterminal", "mate-terminal", "qterminal", "terminology", "sakura", "guake", "tilda", "st", "st-256color",
    "foot", "footclient", "deepin-terminal", "blackbox", "com.raggesilver.blackbox", "contour", "hyper", "tabby",
    "cool-retro-term", "terminal", "io.elementary.terminal", "rio", "warp",
})
# terminals with no key that pastes the clipboard by default (Shift+Insert pastes the PRIMARY selection)
NO_PASTE_KEY = frozenset({"xterm", "uxterm", "urxvt", "rxvt", "urxvt-unicode", "rxvt-unicode"})
_LOCK_KEYS = {"Caps_Lock", "Num_Lock", "Shift_Lock", "Scroll_Lock"}

NO_XTEST = ("the X server has no XTEST extension, so desktop-memory cannot paste: the context is on the "
            "clipboard; paste it with Ctrl+V (or turn off pasting in Settings)")
GONE = "the window you came from is gone: the context is on the clipboard; paste it with Ctrl+V"
NOT_FORWARD = ("the window you came from did not come to the front: the context is on the clipboard; "
               "paste it with Ctrl+V")
NO_TARGET = "no window was in front when the search opened: the context is on the clipboard; paste it with Ctrl+V"

_lock = threading.Lock()
_display: Any = None


def _conn() -> Any:
    global _display
    if _display is None:
        from Xlib import display  # python-xlib: Linux only, imported where it is used

        _display = display.Display()
    return _display


def _reset() -> None:
    global _display
    if _display is not None:
        with contextlib.suppress(Exception):  # already broken
            _display.close()
    _display = None


def foreground() -> int | None:
    """The X window in front now (the active top-level window), or None when the X server does not say."""
    with _lock:
        try:
            return _foreground(_conn())
        except Exception:  # noqa: BLE001 - no X server, a window closing meanwhile: unknown
            log.debug("cannot read the window in front", exc_info=True)
            _reset()
            return None


def window_manager_running() -> bool:
    """Whether an EWMH window manager runs (it decides who gets the focus); False when unknown."""
    with _lock:
        try:
            return _wm_supports_active(_conn())
        except Exception:  # noqa: BLE001 - no X server
            log.debug("cannot ask for the window manager", exc_info=True)
            _reset()
            return False


def bring_forward(window: int) -> bool:
    """Ask the window manager to raise and focus one of our own windows the person asked for (the search panel
    opened by its hotkey, or back after a failed paste), as a pager asks: a manager's focus stealing prevention
    refuses an application's own request when its last input time is older than another window's. False when
    the X server could not be asked."""
    from Xlib import X, error

    with _lock:
        try:
            d = _conn()
            win = d.create_resource_object("window", window)
            _activate(d, win, _wm_supports_active(d))
            # The manager hands the focus over with WM_TAKE_FOCUS and a time older than the focus it took away,
            # so the toolkit's own XSetInputFocus is ignored by the server: the window is raised and named active
            # while the keys go on to the other window. The server's current time is never too old.
            win.set_input_focus(X.RevertToParent, X.CurrentTime, onerror=error.CatchError(error.BadMatch))
            d.sync()
            return True
        except Exception:  # noqa: BLE001 - no X server, the window gone meanwhile
            log.debug("cannot bring the window forward", exc_info=True)
            _reset()
            return False


def paste_into(target: int | None) -> str | None:
    """Bring `target` forward and send the paste chord (held modifiers released first); None when sent,
    else a one-line problem for a person. Blocks up to ACTIVATE_WAIT_S: call it off the GUI thread."""
    if target is None:
        return NO_TARGET
    try:
        return _paste(target)
    except Exception as exc:  # noqa: BLE001 - a lost X connection or a refused request: said in one line
        log.debug("paste failed", exc_info=True)
        with _lock:
            _reset()
        return f"could not paste ({type(exc).__name__}): the context is on the clipboard; paste it with Ctrl+V"


# -- the parts ---------------------------------------------------------------------------------------
def _atom(d: Any, name: str) -> int:
    return d.intern_atom(name)


def _wm_supports_active(d: Any) -> bool:
    """Whether a running EWMH window manager handles _NET_ACTIVE_WINDOW (a dead one's stale property does not count)."""
    from Xlib import X, error

    root = d.screen().root
    check = root.get_full_property(_atom(d, "_NET_SUPPORTING_WM_CHECK"), X.AnyPropertyType)
    if not check or not check.value:
        return False
    try:
        child = d.create_resource_object("window", int(check.value[0]))
        again = child.get_full_property(_atom(d, "_NET_SUPPORTING_WM_CHECK"), X.AnyPropertyType)
    except error.XError:
        return False
    if not again or not again.value or int(again.value[0]) != int(check.value[0]):
        return False
    supported = root.get_full_property(_atom(d, "_NET_SUPPORTED"), X.AnyPropertyType)
    return bool(supported) and _atom(d, "_NET_ACTIVE_WINDOW") in list(supported.value)


def _active(d: Any) -> int | None:
    from Xlib import X

    prop = d.screen().root.get_full_property(_atom(d, "_NET_ACTIVE_WINDOW"), X.AnyPropertyType)
    return int(prop.value[0]) if prop and prop.value and int(prop.value[0]) else None


def _focused_toplevel(d: Any) -> int | None:
    """The top-level window (a child of the root) holding the input focus, or None (PointerRoot, None, the root)."""
    root = d.screen().root
    focus = d.get_input_focus().focus
    if isinstance(focus, int) or focus.id == root.id:
        return None
    window = focus
    for _ in range(64):
        parent = window.query_tree().parent
        if parent is None or isinstance(parent, int) or parent.id == root.id:
            return int(window.id)
        window = parent
    return None


def _foreground(d: Any) -> int | None:
    if _wm_supports_active(d) and (active := _active(d)):
        return active
    return _focused_toplevel(d)


def _wm_class(window: Any) -> set[str]:
    try:
        names = window.get_wm_class() or ()
    except Exception:  # noqa: BLE001 - no class: an ordinary window
        return set()
    return {str(n).lower() for n in names if n}


def _activate(d: Any, window: Any, wm: bool) -> None:
    from Xlib import X, error
    from Xlib.protocol import event

    if wm:
        message = event.ClientMessage(window=window, client_type=_atom(d, "_NET_ACTIVE_WINDOW"),
                                      data=(32, [2, X.CurrentTime, 0, 0, 0]))  # 2: a pager, obeyed at once
        d.screen().root.send_event(message, event_mask=X.SubstructureRedirectMask | X.SubstructureNotifyMask)
    else:
        catcher = error.CatchError(error.BadMatch, error.BadWindow)
        window.configure(stack_mode=X.Above, onerror=catcher)
        window.set_input_focus(X.RevertToParent, X.CurrentTime, onerror=catcher)
    d.sync()


def _is_front(d: Any, target: int, wm: bool) -> bool:
    return (_active(d) if wm else _focused_toplevel(d)) == target


def _release_modifiers(d: Any) -> list[int]:
    """Send a key release for every modifier key held down now (not the lock keys); the released keycodes."""
    from Xlib import XK, X
    from Xlib.ext import xtest

    locks = {XK.string_to_keysym(name) for name in _LOCK_KEYS}
    keymap = d.query_keymap()
    released: list[int] = []
    for codes in d.get_modifier_mapping():
        for code in codes:
            if not code or not keymap[code // 8] & (1 << (code % 8)) or code in released:
                continue
            if d.keycode_to_keysym(code, 0) in locks:
                continue
            xtest.fake_input(d, X.KeyRelease, code)
            released.append(code)
    return released


def _send_chord(d: Any, shifted: bool) -> str | None:
    from Xlib import XK, X
    from Xlib.ext import xtest

    names = ["Control_L", *(["Shift_L"] if shifted else []), "v"]
    codes = [d.keysym_to_keycode(XK.string_to_keysym(n)) for n in names]
    if not all(codes):
        return "the keyboard map has no Ctrl or V key: the context is on the clipboard; paste it yourself"
    for code in codes:
        xtest.fake_input(d, X.KeyPress, code)
    for code in reversed(codes):
        xtest.fake_input(d, X.KeyRelease, code)
    d.sync()
    return None


def _bring_forward(d: Any, target: int) -> tuple[str | None, bool, bool]:
    """Check the target and ask for it to come forward: (problem, a window manager handles it, a terminal)."""
    from Xlib import X, error

    if not d.has_extension("XTEST"):
        return NO_XTEST, False, False
    window = d.create_resource_object("window", target)
    try:
        attrs = window.get_attributes()
    except error.XError:
        return GONE, False, False
    classes = _wm_class(window)
    if classes & NO_PASTE_KEY:
        return ("xterm and rxvt have no key that pastes the clipboard: the context is on the clipboard; "
                "paste it from there"), False, False
    wm = _wm_supports_active(d)
    if not wm and attrs.map_state != X.IsViewable:
        return GONE, wm, False
    if not _is_front(d, target, wm):
        _activate(d, window, wm)
    return None, wm, bool(classes & TERMINALS)


def _paste(target: int) -> str | None:
    """The steps, each under the lock; the waits between them without it (the GUI thread may ask `foreground`)."""
    with _lock:
        problem, wm, terminal = _bring_forward(_conn(), target)
    if problem:
        return problem
    deadline = time.monotonic() + ACTIVATE_WAIT_S
    while True:
        with _lock:
            d = _conn()
            if _is_front(d, target, wm):
                released = _release_modifiers(d)
                problem = _send_chord(d, shifted=terminal)
                log.debug("paste chord sent (%d held modifier keys released first)", len(released))
                return problem
        if time.monotonic() > deadline:
            return NOT_FORWARD
        time.sleep(0.01)
