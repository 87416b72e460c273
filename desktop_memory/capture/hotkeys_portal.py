"""Global hotkeys on Wayland: the XDG GlobalShortcuts portal over D-Bus (jeepney), no Qt, never blocking.

The order the portal wants: `org.freedesktop.host.portal.Registry.Register` with the app id first
(xdg-desktop-portal >= 1.19.4 rejects host apps without one; older portals have no Registry, which is
fine), then `GlobalShortcuts.CreateSession` and, on every start (KDE requires it) and every settings
change, `BindShortcuts` with the three actions and their preferred triggers. Each call answers with a
Request object whose `Response` signal carries the result.

Everything runs on the backend's own thread, as one event loop over the connection: nothing the caller
does waits for the portal (a slow portal, or the person looking at the desktop's confirmation dialog,
takes seconds to minutes). `bind` checks the combos, hands them to that thread and returns; the answer
comes later through `on_late`, the desktop's triggers through `on_triggers` (also when the person
changes them in the desktop's settings: `ShortcutsChanged`; the desktop decides, the app only shows it),
presses through `on_press`. A session the portal closes, a portal that goes away or a lost bus is
reported once through `on_late` and opened again with backoff. A portal without the interface (GNOME
< 48, Sway, COSMIC), no portal or no bus at the start calls `on_unavailable(reason)`: the tray app then
keeps the documented fallback (bind the CLI commands in the desktop's own shortcut settings). The
callbacks run on the backend's thread; the tray app queues them to the GUI thread with Qt signals.
"""

from __future__ import annotations

import contextlib
import itertools
import logging
import os
import queue
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from .hotkeys_x11 import HotkeyError
from .portal_protocol import NO_ANSWER, PORTAL, PORTAL_PATH, interface_problem, request_path, to_combo, to_trigger

log = logging.getLogger(__name__)

APP_ID = "desktop-memory"  # the name of installers/linux/desktop-memory.desktop (the portal shows its name)
SHORTCUTS = "org.freedesktop.portal.GlobalShortcuts"
REGISTRY = "org.freedesktop.host.portal.Registry"
REQUEST = "org.freedesktop.portal.Request"
SESSION = "org.freedesktop.portal.Session"
BUS_NAME = "org.freedesktop.DBus"
DESCRIPTIONS = {"search": "Open the desktop-memory search window",
                "capture": "Capture the clipboard into desktop-memory",
                "selection": "Capture the selected text into desktop-memory"}
RETRY_DELAYS = (1.0, 3.0, 10.0, 30.0)  # seconds before each new try after a loss; then it waits for a bind
GONE = "the desktop's shortcut portal went away"
ENDED = "the desktop ended the shortcuts session"

class PortalUnavailable(RuntimeError):
    """No bus, no portal, or one without GlobalShortcuts: the message says which, for the log."""


class PortalHotkeys:
    """One portal session on the session bus, run by the backend's own thread; no method waits for the portal.

    Callbacks, each called on the backend's thread:
      on_press(action)        an `Activated` signal for this session
      on_late(problems)       {action: problem} when the desktop answered a bind ({} when it bound all), and
                              once when the session, the portal or the bus is lost (then retried with backoff)
      on_triggers(triggers)   {action: the combo the desktop uses}, from a bind's answer or `ShortcutsChanged`
      on_unavailable(reason)  the portal cannot give global shortcuts here (the thread then ends)
    """

    def __init__(self, on_press: Callable[[str], None], *, on_late: Callable[[dict[str, str]], None] | None = None,
                 on_triggers: Callable[[dict[str, str]], None] | None = None,
                 on_unavailable: Callable[[str], None] | None = None, app_id: str = APP_ID, bus: str = "SESSION",
                 timeout: float = 25.0, retry_delays: Sequence[float] = RETRY_DELAYS) -> None:
        self.on_press, self.on_late, self.on_triggers, self.on_unavailable = on_press, on_late, on_triggers, \
            on_unavailable
        self.app_id, self.bus, self.timeout, self.retry_delays = app_id, bus, timeout, tuple(retry_delays)
        self.triggers: dict[str, str] = {}  # action -> the combo the desktop reports for it
        self.session: str | None = None
        self.pending = False  # a bind was asked for and the desktop has not answered it yet
        self._tokens = (f"desktop_memory_{os.getpid()}_{n}" for n in itertools.count())
        self._inbox: queue.SimpleQueue = queue.SimpleQueue()  # the newest bind, from the caller's thread
        self._stop, self._wake = threading.Event(), threading.Event()
        # everything below is touched by the backend's thread only
        self._conn: Any = None
        self._calls: dict[int, tuple[float, int, Callable, Callable]] = {}  # serial -> deadline, epoch, done, failed
        self._requests: dict[str, Callable[[int, dict], None]] = {}  # request path -> its answer's receiver
        self._early: dict[str, tuple[int, dict]] = {}  # answers that came before their receiver
        self._timers: list[tuple[float, int, Callable[[], None]]] = []  # due, epoch, what
        self._epoch = 0  # raised by every loss: answers and timers of an older try are dropped
        self._wanted: tuple[list, dict[str, str]] | None = None  # the newest bind: shortcuts, {action: combo}
        self._generation = 0  # the newest BindShortcuts sent; an older one's answer is dropped
        self._session_used = False  # a session binds once (GNOME); a new set needs a new session
        self._phase = "starting"  # starting, open, waiting (a retry is due), idle (gave up until the next bind)
        self._started = False  # a session was opened once: later failures are retried, not the fallback
        self._needs_register = True
        self._attempt = 0
        self._lost = False  # the loss was reported; cleared when the desktop answers a bind again
        self._thread = threading.Thread(target=self._run, name="portal-hotkeys", daemon=True)
        self._thread.start()

    # -- the caller's side -----------------------------------------------------------------------------
    def bind(self, combos: Mapping[str, str]) -> dict[str, str]:
        """Ask for {action: combo}; returns at once with the combos the portal cannot take (by name). What the
        desktop says about the rest comes later through `on_late`."""
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
        for action, problem in problems.items():
            log.info("hotkey for %s not bound: %s", action, problem)
        self.pending = True
        self._post((shortcuts, {action: combos[action] for action, _props in shortcuts}))
        return problems

    def close(self) -> None:
        """End the session and the thread (waits at most a second)."""
        self._stop.set()
        self._post(None)
        if self._thread is not threading.current_thread():
            self._thread.join(1.0)

    def _post(self, item: object) -> None:
        self._inbox.put(item)
        self._wake.set()
        conn = self._conn
        if conn is not None:
            with contextlib.suppress(OSError):
                conn.interrupt()  # its receive() stops waiting

    # -- the backend's thread: one loop ------------------------------------------------------------------
    def _run(self) -> None:
        try:
            self._later(0.0, self._connect)  # inside the loop: a bus lost while starting is handled like later
            while not self._stop.is_set():
                self._step()
        except PortalUnavailable as exc:
            log.info("global shortcuts portal not used: %s", exc)
            self._emit(self.on_unavailable, str(exc))
        except Exception:  # noqa: BLE001 - a bug here must not print a traceback into the person's terminal
            log.warning("the shortcut portal's thread stopped", exc_info=True)
        finally:
            self._drop_connection(close_session=True)

    def _step(self) -> None:
        from jeepney.io.threading import ReceiveStopped

        try:
            self._take_binds()
            self._fire_timers()
            if self._stop.is_set():
                return
            wait = self._next_wait()
            if self._conn is None:
                self._wake.wait(wait)
                self._wake.clear()
                return
            try:
                msg = self._conn.receive(timeout=wait)
            except TimeoutError:
                return
            except ReceiveStopped:
                self._conn.reset_interrupt()
                return
            self._dispatch(msg)
        except PortalUnavailable:
            raise
        except (OSError, ValueError, RuntimeError) as exc:  # the bus went away (or sent garbage)
            log.info("the session bus connection failed: %r", exc)
            self._drop_connection(close_session=False)
            self._fail(GONE)

    def _take_binds(self) -> None:
        newest = None
        while True:
            try:
                item = self._inbox.get_nowait()
            except queue.Empty:
                break
            if item is not None:
                newest = item
        if newest is None:
            return
        self._wanted, self._lost, self.pending = newest, False, True  # an older bind's answer may have cleared it
        if self._phase == "open":
            self._send_bind()
        elif self._phase == "idle":  # it gave up after a loss: a new bind tries again
            self._attempt = 0
            self._restart()

    def _emit(self, callback: Callable[[Any], None] | None, value: object) -> None:
        if callback is not None:
            try:
                callback(value)
            except Exception:  # noqa: BLE001 - a broken receiver must not end the loop
                log.debug("a portal hotkey callback failed", exc_info=True)

    # -- timers and calls --------------------------------------------------------------------------------
    def _later(self, delay: float, what: Callable[[], None]) -> None:
        self._timers.append((time.monotonic() + delay, self._epoch, what))

    def _fire_timers(self) -> None:
        now = time.monotonic()
        due = [t for t in self._timers if t[0] <= now]
        self._timers = [t for t in self._timers if t[0] > now]
        expired = [s for s, c in self._calls.items() if c[0] <= now]
        for serial in expired:
            _deadline, epoch, _done, failed = self._calls.pop(serial)
            if epoch == self._epoch:
                failed(NO_ANSWER, "no answer")
        for _due, epoch, what in sorted(due, key=lambda t: t[0]):
            if epoch == self._epoch:
                what()

    def _next_wait(self) -> float | None:
        dues = [t[0] for t in self._timers] + [c[0] for c in self._calls.values()]
        return max(0.0, min(dues) - time.monotonic()) if dues else None

    def _send(self, msg: Any, done: Callable[[tuple], None] | None = None,
              failed: Callable[[str, str], None] | None = None) -> None:
        """Send a method call; `done(body)` or `failed(error name, text)` runs when it is answered (or not)."""
        serial = next(self._conn.outgoing_serial)
        self._calls[serial] = (time.monotonic() + self.timeout, self._epoch, done or (lambda _body: None),
                               failed or (lambda name, _text: log.debug("portal call failed: %s", name)))
        self._conn.send(msg, serial=serial)

    def _call(self, interface: str, member: str, signature: str | None = None, body: tuple = (),
              done: Callable[[tuple], None] | None = None, failed: Callable[[str, str], None] | None = None,
              path: str = PORTAL_PATH) -> None:
        from jeepney import DBusAddress, new_method_call

        self._send(new_method_call(DBusAddress(path, bus_name=PORTAL, interface=interface), member, signature,
                                   body), done, failed)

    def _request(self, member: str, signature: str, body: tuple, answer: Callable[[int, dict], None],
                 timeout: float | None = None) -> None:
        """Call a portal method that answers through a Request: `answer(code, results)` once; code -1 when the
        call failed or (with `timeout`) no answer came."""
        token = next(self._tokens)
        body[-1]["handle_token"] = ("s", token)
        expected = request_path(self._conn.unique_name, token)
        paths = [expected]
        answered = False

        def once(code: int, results: dict) -> None:
            nonlocal answered
            if not answered:
                answered = True
                for path in paths:
                    self._requests.pop(path, None)
                try:
                    answer(code, results)
                except (TypeError, ValueError, AttributeError, IndexError, KeyError):  # not what the spec says
                    log.info("the portal's answer to %s could not be read", member, exc_info=True)
                    answer(-1, {"error": "unreadable"})

        def replied(out: tuple) -> None:
            if out and str(out[0]) != expected:  # portals before 0.9 chose the path themselves
                paths.append(str(out[0]))
                self._expect(str(out[0]), once)

        self._expect(expected, once)
        self._call(SHORTCUTS, member, signature, body, replied, lambda name, _text: once(-1, {"error": name}))
        if timeout is not None:
            self._later(timeout, lambda: once(-1, {"error": NO_ANSWER}))

    def _expect(self, path: str, receive: Callable[[int, dict], None]) -> None:
        early = self._early.pop(path, None)
        if early is not None:
            receive(*early)
        else:
            self._requests[path] = receive

    # -- starting, losing, starting again ----------------------------------------------------------------
    def _connect(self) -> None:
        try:
            from jeepney import MatchRule
            from jeepney.bus_messages import message_bus
            from jeepney.io.threading import open_dbus_connection
        except ImportError as exc:
            raise PortalUnavailable(f"jeepney is missing ({exc})") from None
        try:
            self._conn = open_dbus_connection(bus=self.bus, auth_timeout=5)  # a busy login session is slow
        except Exception as exc:  # noqa: BLE001 - no session bus (or it does not answer)
            self._fail(f"no D-Bus session bus ({exc})")
            return
        owner = MatchRule(type="signal", sender=BUS_NAME, interface=BUS_NAME, member="NameOwnerChanged")
        owner.add_arg_condition(0, PORTAL)
        for rule in (MatchRule(type="signal", interface=REQUEST, member="Response"),
                     MatchRule(type="signal", interface=SHORTCUTS, path=PORTAL_PATH),
                     MatchRule(type="signal", interface=SESSION, member="Closed"), owner):
            self._send(message_bus.AddMatch(rule))
        self._needs_register = True
        self._restart()

    def _restart(self) -> None:
        """The next step towards an open session: a connection, the app id, the interface, the session."""
        self._phase = "starting"
        if self._conn is None:
            self._connect()
        elif self._needs_register:
            self._call(REGISTRY, "Register", "sa{sv}", (self.app_id, {}), lambda _b: self._registered(""),
                       lambda name, _text: self._registered(name))
        else:
            self._open_session()

    def _registered(self, error: str) -> None:
        if error == NO_ANSWER:
            self._fail("the desktop portal does not answer")
            return
        if error:  # an older portal (no Registry), or this connection registered already: CreateSession says
            log.info("portal registry: %s (continuing)", error)
        self._needs_register = False
        self._call("org.freedesktop.DBus.Properties", "Get", "ss", (SHORTCUTS, "version"), self._has_interface,
                   lambda name, _text: self._fail(interface_problem(name)))

    def _has_interface(self, body: tuple) -> None:
        version = body[0][1] if body and isinstance(body[0], tuple) else body
        log.info("global shortcuts portal, version %s", version)
        self._open_session()

    def _open_session(self) -> None:
        options = {"session_handle_token": ("s", next(self._tokens))}
        self._request("CreateSession", "a{sv}", (options,), self._session_answer, self.timeout)

    def _session_answer(self, code: int, results: dict) -> None:
        handle = results.get("session_handle", ("s", ""))[1]
        if code == -1 and results.get("error") in (NO_ANSWER, "org.freedesktop.DBus.Error.ServiceUnknown"):
            self._fail("the desktop portal did not open a shortcuts session")
            return
        if code != 0 or not handle or not isinstance(handle, str):
            self._fail(f"the desktop portal refused a shortcuts session (answer {code})")
            return
        self.session, self._session_used, self._phase = str(handle), False, "open"
        self._started, self._attempt = True, 0
        log.info("global shortcuts session open")
        if self._wanted is not None:
            self._send_bind()

    def _fail(self, reason: str) -> None:
        """A step failed: at the first start that is the fallback; after a session was open, a loss."""
        if not self._started:
            raise PortalUnavailable(reason)
        self._lose(reason)

    def _lose(self, reason: str) -> None:
        """The session (or the portal, or the bus) is gone: say so once, try again after a while."""
        self._epoch += 1
        self._timers.clear()
        self.session, self._session_used = None, False
        log.info("global shortcuts lost: %s", reason)
        if self._wanted is not None and not self._lost:
            self._lost, self.pending = True, False
            self._emit(self.on_late, {a: f"{c or a}: {reason}" for a, c in self._wanted[1].items()})
        if self._attempt < len(self.retry_delays):
            self._phase = "waiting"
            self._later(self.retry_delays[self._attempt], self._restart)
            self._attempt += 1
        else:
            self._phase = "idle"
            log.info("global shortcuts: gave up after %d tries; saving the settings tries again", self._attempt)

    def _drop_connection(self, close_session: bool) -> None:
        conn, self._conn = self._conn, None
        if conn is None:
            return
        if close_session and self.session:
            from jeepney import DBusAddress, new_method_call

            try:  # not waited for: the portal also ends a session whose owner left the bus
                conn.send(new_method_call(DBusAddress(self.session, bus_name=PORTAL, interface=SESSION), "Close"))
            except Exception:  # noqa: BLE001 - the bus may be gone already
                log.debug("closing the portal session failed", exc_info=True)
        self.session = None
        self._calls.clear()
        self._requests.clear()
        with contextlib.suppress(OSError):
            conn.close()

    # -- binding -------------------------------------------------------------------------------------
    def _send_bind(self) -> None:
        if self._session_used:  # a session binds once (GNOME): a new one binds the new set
            self._call(SESSION, "Close", path=str(self.session))
            self.session, self._phase = None, "starting"
            self._open_session()
            return
        assert self._wanted is not None
        shortcuts, wanted = self._wanted
        self._session_used = True
        self._generation += 1
        generation = self._generation

        def answered(code: int, results: dict) -> None:
            if generation != self._generation:
                return  # a newer bind was sent meanwhile
            self.pending, self._lost = False, False
            problems = self._refused(code, results, wanted)
            log.info("the desktop answered the shortcuts: %s", problems or "all bound")
            self._emit(self.on_late, problems)

        # no time limit: the desktop may be asking the person first
        self._request("BindShortcuts", "oa(sa{sv})sa{sv}", (self.session, shortcuts, "", {}), answered)

    def _refused(self, code: int, results: dict, wanted: Mapping[str, str]) -> dict[str, str]:
        """The wanted actions the portal's answer does not list as bound, each with a reason."""
        if code == 1:
            return {a: f"{c or a}: you declined the shortcuts in the desktop's dialog" for a, c in wanted.items()}
        if code != 0:
            return {a: f"{c or a}: the desktop's shortcut portal refused it" for a, c in wanted.items()}
        bound = results.get("shortcuts", (None, []))[1]
        self._set_triggers(bound, {a: "" for a in wanted}, replace=True)
        ids = {sid for sid, _props in bound}
        return {a: f"{c or a} was not bound by the desktop (it may be taken; set it in the desktop's shortcut "
                   f"settings)" for a, c in wanted.items() if a not in ids}

    def _set_triggers(self, shortcuts: list, wanted: Mapping[str, str], replace: bool = False) -> None:
        """Keep (and report when they change) the combos the desktop says it uses for our actions."""
        triggers = {} if replace else dict(self.triggers)
        for sid, props in shortcuts:
            if sid in wanted:
                triggers[sid] = to_combo(props.get("trigger_description", ("s", ""))[1])
        if triggers != self.triggers:
            self.triggers = triggers
            self._emit(self.on_triggers, dict(triggers))

    # -- what the bus sends -------------------------------------------------------------------------------
    def _dispatch(self, msg: Any) -> None:
        from jeepney import HeaderFields, MessageType

        fields, kind = msg.header.fields, msg.header.message_type
        if kind in (MessageType.method_return, MessageType.error):
            call = self._calls.pop(fields.get(HeaderFields.reply_serial), None)
            if call is not None and call[1] == self._epoch:
                if kind == MessageType.error:
                    call[3](str(fields.get(HeaderFields.error_name)), str(msg.body[0]) if msg.body else "")
                else:
                    call[2](msg.body)
            return
        if kind != MessageType.signal:
            return
        interface, member = fields.get(HeaderFields.interface), fields.get(HeaderFields.member)
        try:
            self._signal(interface, member, fields.get(HeaderFields.path), fields.get(HeaderFields.sender), msg.body)
        except (IndexError, TypeError, ValueError, AttributeError):  # a malformed signal: not ours to trust
            log.debug("a malformed portal signal was ignored", exc_info=True)

    def _signal(self, interface: str, member: str, path: str, sender: str, body: tuple) -> None:
        if interface == REQUEST and member == "Response":
            try:
                code, results = int(body[0]), dict(body[1])
            except (IndexError, TypeError, ValueError):  # not what the spec says: its request still ends
                code, results = -1, {"error": "unreadable"}
            self._answer(path, code, results)
        elif interface == SHORTCUTS and member == "Activated" and self.session and body[0] == self.session:
            self._emit(self.on_press, str(body[1]))
        elif interface == SHORTCUTS and member == "ShortcutsChanged" and self.session and body[0] == self.session:
            log.info("the shortcuts were changed in the desktop's settings")
            self._set_triggers(list(body[1]), self._wanted[1] if self._wanted else self.triggers)
        elif interface == SESSION and member == "Closed" and self.session and path == self.session:
            self.session = None  # closed already: not closed again
            self._lose(ENDED)
        elif interface == BUS_NAME and member == "NameOwnerChanged" and sender == BUS_NAME and body[0] == PORTAL:
            self._portal_owner(bool(body[2]))

    def _portal_owner(self, present: bool) -> None:
        """The portal left the bus (a loss), or came back while a retry waits (try now)."""
        if not self._started:
            return
        if not present and self._phase in ("open", "starting"):
            self._needs_register = True  # a new portal does not know the app id
            self.session = None
            self._lose(GONE)
        elif present and self._phase in ("waiting", "idle"):
            log.info("the desktop portal is back")
            self._epoch += 1  # the waiting retry is dropped
            self._timers.clear()
            self._attempt, self._needs_register = 0, True
            self._restart()

    def _answer(self, path: str, code: int, results: dict) -> None:
        receive = self._requests.pop(path, None)
        if receive is not None:
            receive(code, results)
            return
        self._early[path] = (code, results)
        while len(self._early) > 32:
            self._early.pop(next(iter(self._early)))
