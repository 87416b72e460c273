"""Global hotkeys on Wayland: the XDG GlobalShortcuts portal over D-Bus (jeepney), no Qt.

The order the portal wants: `org.freedesktop.host.portal.Registry.Register` with the app id first
(xdg-desktop-portal >= 1.19.4 rejects host apps without one; older portals have no Registry, which is
fine), then `GlobalShortcuts.CreateSession` and, on every start (KDE requires it) and every settings
change, `BindShortcuts` with the three actions and their preferred triggers. Each call answers with a
Request object whose `Response` signal carries the result. `Activated` signals call `on_press(action)`
on the backend's own thread; the caller hands them to its thread (the tray app does it through a Qt
signal, as with X11Hotkeys). A portal without the interface (GNOME < 48, Sway, COSMIC) or no portal at
all raises PortalUnavailable: the tray app then keeps the documented fallback (bind the CLI commands
in the desktop's own shortcut settings).
"""

from __future__ import annotations

import itertools
import logging
import os
import queue
import threading
from collections.abc import Callable, Mapping
from typing import Any

from .hotkeys_x11 import HotkeyError

log = logging.getLogger(__name__)

APP_ID = "desktop-memory"  # the name of installers/linux/desktop-memory.desktop (the portal shows its name)
PORTAL = "org.freedesktop.portal.Desktop"
PORTAL_PATH = "/org/freedesktop/portal/desktop"
SHORTCUTS = "org.freedesktop.portal.GlobalShortcuts"
REGISTRY = "org.freedesktop.host.portal.Registry"
REQUEST = "org.freedesktop.portal.Request"
DESCRIPTIONS = {"search": "Open the desktop-memory search window",
                "capture": "Capture the clipboard into desktop-memory",
                "selection": "Capture the selected text into desktop-memory"}

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


class PortalUnavailable(RuntimeError):
    """No portal, or one without GlobalShortcuts: the message says which, for the log."""


def to_trigger(combo: Any) -> str:
    """Qt's "Ctrl+Alt+Shift+C" -> the XDG shortcuts format "CTRL+ALT+SHIFT+c"; HotkeyError names a bad one."""
    if not isinstance(combo, str):
        raise HotkeyError(f"{combo!r}: a hotkey is written like Ctrl+Alt+M")
    text = "".join(combo.split())
    plus_key = text.endswith("++")  # Qt writes Ctrl and the plus key as "Ctrl++"
    parts = [p for p in text[:-2].split("+") if p] + ["+"] if plus_key else text.split("+")
    if len(parts) < 2 or not all(parts):
        raise HotkeyError(f"{combo!r}: a global hotkey needs a modifier (Ctrl, Alt, Shift, Meta) and a key")
    *mods, key = parts
    names = []
    for m in mods:
        name = _MODIFIERS.get(m.lower())
        if name is None:
            raise HotkeyError(f"{combo!r}: unknown modifier {m!r}")
        names.append(name)
    return "+".join([*names, _keysym(combo, key)])


def _keysym(combo: str, key: str) -> str:
    if key.lower() in _KEYSYMS:
        return _KEYSYMS[key.lower()]
    if len(key) == 1 and key.isascii() and key.isalnum():
        return key.lower()
    if key[0] in "Ff" and key[1:].isdigit() and 1 <= int(key[1:]) <= 35:
        return f"F{int(key[1:])}"
    raise HotkeyError(f"{combo!r}: the key {key!r} cannot be given to the desktop's shortcut portal")


def request_path(unique_name: str, token: str) -> str:
    """Where the portal puts the Request object for `token` ("/…/request/1_42/TOKEN" for ":1.42")."""
    return f"{PORTAL_PATH}/request/{unique_name.lstrip(':').replace('.', '_')}/{token}"


class PortalHotkeys:
    """One portal session on the session bus; `bind` (re)binds the shortcuts, `close` ends it.

    `on_late(problems)` is called (on the backend's thread) when the portal answers a bind after
    `answer_timeout` (GNOME asks the person to confirm the shortcuts first).
    """

    def __init__(self, on_press: Callable[[str], None], *, on_late: Callable[[dict[str, str]], None] | None = None,
                 app_id: str = APP_ID, bus: str = "SESSION", timeout: float = 5.0,
                 answer_timeout: float = 3.0) -> None:
        from jeepney.io.threading import DBusRouter, open_dbus_connection  # imported where it is used

        self.on_press, self.on_late = on_press, on_late
        self.timeout, self.answer_timeout = timeout, answer_timeout
        self.triggers: dict[str, str] = {}  # action -> the trigger the desktop reports for it
        self.session: str | None = None
        self._bound_once = False
        self._tokens = (f"desktop_memory_{os.getpid()}_{n}" for n in itertools.count())
        self._lock = threading.Lock()
        self._waiting: dict[str, Callable[[int, dict], None]] = {}  # request path -> its answer's receiver
        self._early: dict[str, tuple[int, dict]] = {}  # answers that came before their receiver
        self._queue: queue.Queue = queue.Queue(maxsize=256)
        self._stop = threading.Event()
        try:
            self._router = DBusRouter(open_dbus_connection(bus=bus))
        except Exception as exc:  # noqa: BLE001 - no session bus: the fallback
            raise PortalUnavailable(f"no D-Bus session bus ({exc})") from exc
        self._thread: threading.Thread | None = None
        try:
            self._listen()
            self._register(app_id)
            self._check_interface()
            self._thread = threading.Thread(target=self._read, name="portal-hotkeys", daemon=True)
            self._thread.start()
            self.session = self._create_session()
        except PortalUnavailable:
            self.close()
            raise
        except Exception as exc:  # noqa: BLE001 - any other failure of the portal: the fallback, with why
            self.close()
            raise PortalUnavailable(f"the desktop portal failed: {exc!r}") from exc

    # -- D-Bus plumbing ----------------------------------------------------------------------------
    def _call(self, interface: str, member: str, signature: str | None = None, body: tuple = (),
              path: str = PORTAL_PATH) -> tuple:
        from jeepney import DBusAddress, new_method_call
        from jeepney.wrappers import unwrap_msg

        msg = new_method_call(DBusAddress(path, bus_name=PORTAL, interface=interface), member, signature, body)
        return unwrap_msg(self._router.send_and_get_reply(msg, timeout=self.timeout))

    def _listen(self) -> None:
        """Every Response and Activated signal sent to this connection goes to the reader's queue."""
        from jeepney import MatchRule
        from jeepney.bus_messages import message_bus
        from jeepney.wrappers import unwrap_msg

        for rule in (MatchRule(type="signal", interface=REQUEST, member="Response"),
                     MatchRule(type="signal", interface=SHORTCUTS, member="Activated", path=PORTAL_PATH)):
            self._router.filter(rule, queue=self._queue)
            unwrap_msg(self._router.send_and_get_reply(message_bus.AddMatch(rule), timeout=self.timeout))

    def _register(self, app_id: str) -> None:
        from jeepney.wrappers import DBusErrorResponse

        try:
            self._call(REGISTRY, "Register", "sa{sv}", (app_id, {}))
        except DBusErrorResponse as exc:  # an older portal (no Registry) or none at all: CreateSession says
            log.info("portal registry: %s (continuing)", exc.name)
        except TimeoutError:
            raise PortalUnavailable("the desktop portal does not answer") from None

    def _check_interface(self) -> None:
        from jeepney.wrappers import DBusErrorResponse

        try:
            (version,) = self._call("org.freedesktop.DBus.Properties", "Get", "ss", (SHORTCUTS, "version"))
        except DBusErrorResponse as exc:
            if exc.name in ("org.freedesktop.DBus.Error.ServiceUnknown", "org.freedesktop.DBus.Error.NameHasNoOwner"):
                raise PortalUnavailable("no desktop portal is running (xdg-desktop-portal)") from None
            raise PortalUnavailable("the desktop portal has no global shortcuts (GNOME before 48, Sway and "
                                    "COSMIC lack them)") from None
        except TimeoutError:
            raise PortalUnavailable("the desktop portal does not answer") from None
        log.info("global shortcuts portal, version %s", version[1] if isinstance(version, tuple) else version)

    def _request(self, member: str, signature: str, body: tuple, wait: float,
                 late: Callable[[int, dict], None] | None = None) -> tuple[int, dict] | None:
        """Call a portal method that answers through a Request; (code, results), or None after `wait` s."""
        token = next(self._tokens)
        options = body[-1]
        options["handle_token"] = ("s", token)
        done = threading.Event()
        answer: list[tuple[int, dict]] = []

        def receive(code: int, results: dict) -> None:
            with self._lock:
                answer.append((code, results))
                is_late = not waiting.is_set()
            done.set()
            if is_late and late is not None:
                late(code, results)

        waiting = threading.Event()  # set while the caller still waits; a later answer goes to `late`
        waiting.set()
        expected = request_path(self._router.unique_name, token)
        self._expect(expected, receive)
        try:
            (handle,) = self._call(SHORTCUTS, member, signature, body)
        except Exception:
            self._forget(expected)
            raise
        if handle != expected:  # portals before 0.9 chose the path themselves
            self._forget(expected)
            self._expect(handle, receive)
        done.wait(wait)
        with self._lock:  # from here on an answer goes to `late`
            waiting.clear()
            return answer[0] if answer else None

    def _expect(self, path: str, receive: Callable[[int, dict], None]) -> None:
        with self._lock:
            early = self._early.pop(path, None)
            if early is None:
                self._waiting[path] = receive
        if early is not None:
            receive(*early)

    def _forget(self, path: str) -> None:
        with self._lock:
            self._waiting.pop(path, None)

    # -- the session ---------------------------------------------------------------------------------
    def _create_session(self) -> str:
        options = {"session_handle_token": ("s", next(self._tokens))}
        answer = self._request("CreateSession", "a{sv}", (options,), self.timeout)
        if answer is None:
            raise PortalUnavailable("the desktop portal did not open a shortcuts session")
        code, results = answer
        handle = results.get("session_handle", (None, None))[1]
        if code != 0 or not handle:
            raise PortalUnavailable(f"the desktop portal refused a shortcuts session (answer {code})")
        return str(handle)

    def _close_session(self) -> None:
        if self.session:
            try:
                self._call("org.freedesktop.portal.Session", "Close", path=self.session)
            except Exception:  # noqa: BLE001 - the portal may have closed it already
                log.debug("closing the portal session failed", exc_info=True)
            self.session = None

    def bind(self, combos: Mapping[str, str]) -> dict[str, str]:
        """Bind {action: combo} in a fresh session; {action: problem} for the ones the portal did not bind."""
        problems: dict[str, str] = {}
        shortcuts = []
        for action, combo in combos.items():
            props = {"description": ("s", DESCRIPTIONS.get(action, action))}
            if combo:
                try:
                    props["preferred_trigger"] = ("s", to_trigger(combo))
                except HotkeyError as exc:
                    problems[action] = str(exc)
                    continue
            shortcuts.append((action, props))
        wanted = {action: combos[action] for action, _props in shortcuts}
        try:
            problems.update(self._bind(shortcuts, wanted))
        except Exception as exc:  # noqa: BLE001 - the portal went away or stopped answering: say so, go on
            log.info("binding through the portal failed: %r", exc)
            gone = "the desktop's shortcut portal stopped answering"
            problems.update({a: f"{c or a}: {gone}" for a, c in wanted.items()})
        for action, problem in problems.items():
            log.info("hotkey for %s not bound: %s", action, problem)
        return problems

    def _bind(self, shortcuts: list, wanted: Mapping[str, str]) -> dict[str, str]:
        if self.session is not None and self._bound_once:
            self._close_session()  # a session binds once (GNOME); a new one binds the new set
        if self.session is None:
            self.session = self._create_session()
        self._bound_once = True

        def late(code: int, results: dict) -> None:
            later = self._refused(code, results, wanted)
            log.info("the desktop answered the shortcuts later: %s", later or "all bound")
            if later and self.on_late is not None:
                self.on_late(later)

        answer = self._request("BindShortcuts", "oa(sa{sv})sa{sv}", (self.session, shortcuts, "", {}),
                               self.answer_timeout, late)
        if answer is None:
            log.info("the desktop is still asking about the shortcuts; its answer comes later")
            return {}
        return self._refused(*answer, wanted)

    def _refused(self, code: int, results: dict, wanted: Mapping[str, str]) -> dict[str, str]:
        """The wanted actions the portal's answer does not list as bound, each with a reason."""
        if code == 1:
            return {a: f"{c or a}: you declined the shortcuts in the desktop's dialog" for a, c in wanted.items()}
        if code != 0:
            return {a: f"{c or a}: the desktop's shortcut portal refused it" for a, c in wanted.items()}
        bound = {}
        for sid, props in results.get("shortcuts", (None, []))[1]:
            bound[sid] = props.get("trigger_description", ("s", ""))[1]
        self.triggers = {sid: t for sid, t in bound.items() if sid in wanted}
        return {a: f"{c or a} was not bound by the desktop (it may be taken; set it in the desktop's shortcut "
                   f"settings)" for a, c in wanted.items() if a not in bound}

    # -- the reader ----------------------------------------------------------------------------------
    def _read(self) -> None:
        from jeepney import HeaderFields

        while not self._stop.is_set():
            try:
                msg = self._queue.get(timeout=0.25)
            except queue.Empty:
                continue
            fields = msg.header.fields
            try:
                if fields.get(HeaderFields.member) == "Response":
                    self._answer(fields.get(HeaderFields.path), *msg.body)
                elif msg.body[0] == self.session:
                    self.on_press(str(msg.body[1]))
            except Exception:  # noqa: BLE001 - a broken receiver must not end the reader
                log.debug("portal signal handling failed", exc_info=True)

    def _answer(self, path: str, code: int, results: dict) -> None:
        with self._lock:
            receive = self._waiting.pop(path, None)
            if receive is None:
                self._early[path] = (code, results)
                while len(self._early) > 32:
                    self._early.pop(next(iter(self._early)))
        if receive is not None:
            receive(code, results)

    def close(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(2)
        try:
            self._close_session()
        finally:
            self._router.close()
            self._router.conn.close()
