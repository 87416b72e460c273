"""A stand-in xdg-desktop-portal for tests: org.freedesktop.portal.Desktop on the session bus, in jeepney.

    python tests/portal_standin.py [--no-registry] [--no-shortcuts] [--refuse ID]... [--bind-delay S]
                                   [--bind-response CODE] [--version N] [--reply-delay S] [--garbage]

Serves /org/freedesktop/portal/desktop with (unless told not to) org.freedesktop.host.portal.Registry
(Register, refused like xdg-desktop-portal >= 1.19.4 once the connection made another portal call) and
org.freedesktop.portal.GlobalShortcuts (version property, CreateSession, BindShortcuts, ListShortcuts;
Request objects answered by their Response signal; Session objects with Close). --reply-delay makes
every portal method answer (and its Response) that much later: a slow or busy portal; --garbage
answers BindShortcuts with results of the wrong types (a broken portal). A control
interface, org.desktop_memory.Standin, lets a test look inside and steer it:
  Calls() -> as                every portal call in order, "Member sender"
  Bound() -> a(ss)             the bound shortcuts of the last BindShortcuts: (id, preferred trigger)
  Activate(s id)               emit Activated (and Deactivated) for that id on the newest session
  Sessions() -> as             the open session handles
  ChangeShortcuts(a(ss))       the person re-binds shortcuts in the desktop's settings: (id, trigger
                               description); emits ShortcutsChanged on the newest session, and later
                               BindShortcuts answers keep them (KDE: the desktop decides, not the app)
  CloseSession()               the desktop ends the newest session: emits Session.Closed on it
  FailSessions(u n)            the next n CreateSession calls are answered with Response code 2
Prints "ready" on stdout once its name is owned.
"""

from __future__ import annotations

import argparse
import sys
import time

from jeepney import DBusAddress, HeaderFields, MessageType, new_error, new_method_return, new_signal
from jeepney.bus_messages import message_bus
from jeepney.io.blocking import open_dbus_connection

NAME = "org.freedesktop.portal.Desktop"
PATH = "/org/freedesktop/portal/desktop"
SHORTCUTS = "org.freedesktop.portal.GlobalShortcuts"
REGISTRY = "org.freedesktop.host.portal.Registry"
CONTROL = "org.desktop_memory.Standin"
PROPS = "org.freedesktop.DBus.Properties"
INTROSPECT = "org.freedesktop.DBus.Introspectable"


class Standin:
    """The portal's state and its answers; `pending` holds (due time, message) signals still to send."""

    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args
        self.calls: list[str] = []
        self.registered: dict[str, str] = {}
        self.used: set[str] = set()  # senders that made a portal call (Register is refused after that)
        self.sessions: dict[str, str] = {}  # session handle -> owner (unique name)
        self.bound: list[tuple[str, str]] = []
        self.pending: list[tuple[float, object]] = []
        self.chosen: dict[str, str] = {}  # id -> the trigger the person set in the desktop's settings
        self.fail_sessions = 0

    def interfaces(self) -> list[str]:
        out = [PROPS, INTROSPECT, CONTROL]
        if not self.args.no_registry:
            out.append(REGISTRY)
        if not self.args.no_shortcuts:
            out.append(SHORTCUTS)
        return out

    def handle(self, msg) -> object | None:
        """The reply (or error) to one method call; signals to send later go to `pending`."""
        h = msg.header.fields
        iface, member = h.get(HeaderFields.interface), h.get(HeaderFields.member)
        sender, path = h.get(HeaderFields.sender, ""), h.get(HeaderFields.path)
        if iface == CONTROL:
            return self.control(msg, member)
        if iface in (SHORTCUTS, REGISTRY) and iface not in self.interfaces():
            return new_error(msg, "org.freedesktop.DBus.Error.UnknownMethod", "s", (f"No such interface {iface}",))
        if iface == INTROSPECT:
            xml = "<node>" + "".join(f'<interface name="{i}"/>' for i in self.interfaces()) + "</node>"
            return new_method_return(msg, "s", (xml,))
        if iface == PROPS:
            return self.properties(msg, member)
        if iface == "org.freedesktop.portal.Session" and member == "Close":
            self.calls.append(f"Close {sender}")
            self.sessions.pop(path, None)
            return new_method_return(msg)
        if iface == REGISTRY and member == "Register":
            self.calls.append(f"Register {sender}")
            if sender in self.used:
                return new_error(msg, "org.freedesktop.portal.Error.Failed", "s",
                                 ("Connection already associated with an application ID",))
            self.registered[sender] = msg.body[0]
            return new_method_return(msg)
        if iface == SHORTCUTS:
            self.used.add(sender)
            self.calls.append(f"{member} {sender}")
            return self.shortcuts(msg, member, sender)
        return new_error(msg, "org.freedesktop.DBus.Error.UnknownMethod", "s", (f"no {iface}.{member}",))

    def properties(self, msg, member: str):
        iface = msg.body[0]
        if iface != SHORTCUTS or SHORTCUTS not in self.interfaces():
            return new_error(msg, "org.freedesktop.DBus.Error.InvalidArgs", "s", (f"No such interface {iface}",))
        if member == "Get" and msg.body[1] == "version":
            return new_method_return(msg, "v", (("u", self.args.version),))
        if member == "GetAll":
            return new_method_return(msg, "a{sv}", ({"version": ("u", self.args.version)},))
        return new_error(msg, "org.freedesktop.DBus.Error.InvalidArgs", "s", ("No such property",))

    def shortcuts(self, msg, member: str, sender: str):
        who = sender.lstrip(":").replace(".", "_")
        if member == "CreateSession":
            options = msg.body[0]
            token = options["handle_token"][1]
            session = f"{PATH}/session/{who}/{options['session_handle_token'][1]}"
            request = f"{PATH}/request/{who}/{token}"
            if self.fail_sessions > 0:
                self.fail_sessions -= 1
                self.respond(request, sender, 2, {}, 0.0)
                return new_method_return(msg, "o", (request,))
            self.sessions[session] = sender
            self.respond(request, sender, 0, {"session_handle": ("s", session)}, 0.0)
            return new_method_return(msg, "o", (request,))
        if member == "BindShortcuts":
            session, shortcuts, _parent, options = msg.body
            if session not in self.sessions:
                return new_error(msg, "org.freedesktop.portal.Error.NotFound", "s", ("Invalid session",))
            request = f"{PATH}/request/{who}/{options['handle_token'][1]}"
            kept = [(sid, props) for sid, props in shortcuts if sid not in self.args.refuse]
            self.bound = [(sid, props.get("preferred_trigger", ("s", ""))[1]) for sid, props in kept]
            answer = [(sid, {"description": props["description"], "trigger_description": (
                "s", self.chosen.get(sid, props.get("preferred_trigger", ("s", ""))[1]))}) for sid, props in kept]
            results = {"shortcuts": ("a(sa{sv})", answer)}
            if self.args.garbage:
                results = {"shortcuts": ("s", "nonsense"), "session_handle": ("u", 7)}
            self.respond(request, sender, self.args.bind_response, results, self.args.bind_delay)
            return new_method_return(msg, "o", (request,))
        if member == "ListShortcuts":
            session, options = msg.body
            request = f"{PATH}/request/{who}/{options['handle_token'][1]}"
            answer = [(sid, {"description": ("s", sid), "trigger_description": ("s", t)}) for sid, t in self.bound]
            self.respond(request, sender, 0, {"shortcuts": ("a(sa{sv})", answer)}, 0.0)
            return new_method_return(msg, "o", (request,))
        return new_error(msg, "org.freedesktop.DBus.Error.UnknownMethod", "s", (f"no {member}",))

    def respond(self, request: str, dest: str, code: int, results: dict, delay: float) -> None:
        """The Response signal, sent `delay` s after the method's own answer (which may be delayed too)."""
        sig = new_signal(DBusAddress(request, interface="org.freedesktop.portal.Request"), "Response", "ua{sv}",
                         (code, results))
        sig.header.fields[HeaderFields.destination] = dest
        self.pending.append((time.monotonic() + self.args.reply_delay + delay + 0.001, sig))

    def delayed(self, msg) -> bool:
        """Whether this call's answer waits --reply-delay (portal calls do; the control interface does not)."""
        iface = msg.header.fields.get(HeaderFields.interface)
        return self.args.reply_delay > 0 and iface in (SHORTCUTS, REGISTRY, PROPS)

    def signal(self, path: str, iface: str, member: str, signature: str, body: tuple, dest: str) -> None:
        sig = new_signal(DBusAddress(path, interface=iface), member, signature, body)
        sig.header.fields[HeaderFields.destination] = dest
        self.pending.append((time.monotonic(), sig))

    def control(self, msg, member: str):
        if member == "Calls":
            return new_method_return(msg, "as", (self.calls,))
        if member == "Bound":
            return new_method_return(msg, "a(ss)", (self.bound,))
        if member == "Sessions":
            return new_method_return(msg, "as", (list(self.sessions),))
        if member == "Activate":
            if not self.sessions:
                return new_error(msg, "org.freedesktop.portal.Error.NotFound", "s", ("no session",))
            session = list(self.sessions)[-1]
            addr = DBusAddress(PATH, interface=SHORTCUTS)
            for name in ("Activated", "Deactivated"):
                sig = new_signal(addr, name, "osta{sv}", (session, msg.body[0], int(time.time() * 1000), {}))
                sig.header.fields[HeaderFields.destination] = self.sessions[session]
                self.pending.append((time.monotonic(), sig))
            return new_method_return(msg)
        if member in ("ChangeShortcuts", "CloseSession") and not self.sessions:
            return new_error(msg, "org.freedesktop.portal.Error.NotFound", "s", ("no session",))
        if member == "ChangeShortcuts":
            self.chosen.update(dict(msg.body[0]))
            session = list(self.sessions)[-1]
            changed = [(sid, {"description": ("s", sid), "trigger_description": ("s", self.chosen.get(sid, t))})
                       for sid, t in self.bound]
            self.signal(PATH, SHORTCUTS, "ShortcutsChanged", "oa(sa{sv})", (session, changed), self.sessions[session])
            return new_method_return(msg)
        if member == "CloseSession":
            session = list(self.sessions)[-1]
            self.signal(session, "org.freedesktop.portal.Session", "Closed", "a{sv}", ({},), self.sessions.pop(session))
            return new_method_return(msg)
        if member == "FailSessions":
            self.fail_sessions = msg.body[0]
            return new_method_return(msg)
        return new_error(msg, "org.freedesktop.DBus.Error.UnknownMethod", "s", (f"no {member}",))


class SessionBus:
    """A private `dbus-daemon --session` for a test (tests import this; the stand-in runs as a process)."""

    def __init__(self, address: str | None = None) -> None:
        """`address` ("unix:path=/…"): listen there, e.g. to start a bus again where a killed one was."""
        import subprocess

        where = [f"--address={address}"] if address else []
        self.proc = subprocess.Popen(["dbus-daemon", "--session", *where, "--nofork", "--print-address=1"],
                                     stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        self.address = self.proc.stdout.readline().strip()

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            self.proc.wait(5)
        self.proc.stdout.close()


class Portal:
    """This stand-in as a process on the bus at `address`, and a control connection to it (for tests)."""

    def __init__(self, address: str, *flags: str) -> None:
        import os
        import subprocess

        env = {**os.environ, "DBUS_SESSION_BUS_ADDRESS": address}
        self.proc = subprocess.Popen([sys.executable, __file__, *flags], stdout=subprocess.PIPE, text=True, env=env)
        assert self.proc.stdout.readline().strip() == "ready"
        self.conn = open_dbus_connection(bus=address, auth_timeout=10)
        self.addr = DBusAddress(PATH, bus_name=NAME, interface=CONTROL)

    def call(self, member: str, signature: str | None = None, body: tuple = ()) -> tuple:
        from jeepney import new_method_call

        reply = self.conn.send_and_get_reply(new_method_call(self.addr, member, signature, body), timeout=5)
        return reply.body

    def calls(self) -> list[str]:
        return [c.split()[0] for c in self.call("Calls")[0]]

    def close(self) -> None:
        self.conn.close()
        if self.proc.poll() is None:
            self.proc.terminate()
            self.proc.wait(5)
        self.proc.stdout.close()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--no-registry", action="store_true")
    parser.add_argument("--no-shortcuts", action="store_true")
    parser.add_argument("--refuse", action="append", default=[])
    parser.add_argument("--bind-delay", type=float, default=0.0)
    parser.add_argument("--bind-response", type=int, default=0)
    parser.add_argument("--version", type=int, default=1)
    parser.add_argument("--reply-delay", type=float, default=0.0)
    parser.add_argument("--garbage", action="store_true")
    args = parser.parse_args(argv)
    state = Standin(args)
    conn = open_dbus_connection(bus="SESSION", auth_timeout=10)  # a loaded test machine can be slow
    reply = conn.send_and_get_reply(message_bus.RequestName(NAME, 4))  # 4: do not queue
    if reply.body[0] != 1:
        print(f"could not own {NAME}", file=sys.stderr)
        return 1
    print("ready", flush=True)
    while True:
        now = time.monotonic()
        due = sorted((p for p in state.pending if p[0] <= now), key=lambda p: p[0])
        state.pending = [p for p in state.pending if p[0] > now]
        for _when, sig in due:
            conn.send(sig)
        wait = min((p[0] for p in state.pending), default=now + 0.5) - now
        try:
            msg = conn.receive(timeout=max(0.01, wait))
        except TimeoutError:
            continue
        if msg.header.message_type != MessageType.method_call:
            continue
        answer = state.handle(msg)
        if answer is not None and state.delayed(msg):
            state.pending.append((time.monotonic() + args.reply_delay, answer))
        elif answer is not None:
            conn.send(answer)
    return 0


if __name__ == "__main__":
    sys.exit(main())
