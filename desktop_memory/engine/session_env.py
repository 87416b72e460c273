"""The freedesktop defaults for a process started with a minimal environment.

AI apps start MCP servers with only HOME, LOGNAME, PATH, SHELL, TERM and USER (the MCP SDK's
`get_default_environment()`), and `env -i` leaves even less. Without DBUS_SESSION_BUS_ADDRESS the keyring
cannot be reached; without XDG_RUNTIME_DIR other libraries lose the per-user run folder. A Linux login
(systemd-logind) provides both at fixed places: `/run/user/<uid>` and its `bus` socket. `apply_defaults()`
sets the missing ones from there, once at process start (never at import, never over a value that is set).
"""

from __future__ import annotations

import logging
import os
import stat
import sys
from collections.abc import MutableMapping
from pathlib import Path

log = logging.getLogger(__name__)
RUN_ROOT = Path("/run/user")
RUNTIME_VAR = "XDG_RUNTIME_DIR"
BUS_VAR = "DBUS_SESSION_BUS_ADDRESS"
_BUS_SAFE = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_/.\\*")


def applies() -> bool:
    """Only where D-Bus and the XDG run folder are the desktop's own (Linux and the BSDs)."""
    return os.name == "posix" and sys.platform != "darwin"


def _uid() -> int:
    return os.getuid()


def login_runtime_dir(uid: int | None = None, run_root: Path = RUN_ROOT) -> Path | None:
    """`/run/user/<uid>` when it is what logind makes: a real folder of this user, mode 0700; else None."""
    uid = _uid() if uid is None else uid
    folder = run_root / str(uid)
    try:
        info = folder.lstat()
    except OSError:
        return None
    if not stat.S_ISDIR(info.st_mode) or info.st_uid != uid or stat.S_IMODE(info.st_mode) != 0o700:
        return None
    return folder


def _bus_socket(folder: Path, uid: int) -> Path | None:
    path = folder / "bus"
    try:
        info = path.lstat()
    except OSError:
        return None
    return path if stat.S_ISSOCK(info.st_mode) and info.st_uid == uid else None


def bus_address(path: Path) -> str:
    """A D-Bus address for a Unix socket path (bytes outside the safe set are %-escaped, as the spec says)."""
    return "unix:path=" + "".join(c if c in _BUS_SAFE else "".join(f"%{b:02x}" for b in c.encode()) for c in str(path))


def default_bus_path(environ: MutableMapping[str, str] | None = None, uid: int | None = None,
                     run_root: Path = RUN_ROOT) -> Path | None:
    """The session bus socket a login provides: `$XDG_RUNTIME_DIR/bus`, else `/run/user/<uid>/bus`, or None."""
    environ = os.environ if environ is None else environ
    uid = _uid() if uid is None else uid
    folders = [Path(environ[RUNTIME_VAR])] if environ.get(RUNTIME_VAR) else []
    if (login := login_runtime_dir(uid, run_root)) is not None:
        folders.append(login)
    for folder in folders:
        if (found := _bus_socket(folder, uid)) is not None:
            return found
    return None


def apply_defaults(environ: MutableMapping[str, str] | None = None, *, uid: int | None = None,
                   run_root: Path = RUN_ROOT) -> dict[str, str]:
    """Set XDG_RUNTIME_DIR and DBUS_SESSION_BUS_ADDRESS to the login's defaults where they are missing.

    Returns what was set (nothing when both are present, on macOS and Windows, or without a login folder).
    """
    environ = os.environ if environ is None else environ
    if not applies():
        return {}
    uid = _uid() if uid is None else uid
    added: dict[str, str] = {}
    if not environ.get(RUNTIME_VAR) and (login := login_runtime_dir(uid, run_root)) is not None:
        added[RUNTIME_VAR] = str(login)
        environ[RUNTIME_VAR] = str(login)
    if not environ.get(BUS_VAR) and (bus := default_bus_path(environ, uid, run_root)) is not None:
        added[BUS_VAR] = bus_address(bus)
        environ[BUS_VAR] = added[BUS_VAR]
    if added:
        log.debug("a minimal environment: using the login's defaults %s", added)
    return added


def missing_bus_reason(environ: MutableMapping[str, str] | None = None, uid: int | None = None) -> str | None:
    """Why no session bus can be reached (for the keyring's error message), or None when an address is set."""
    environ = os.environ if environ is None else environ
    if not applies() or environ.get(BUS_VAR):
        return None
    uid = _uid() if uid is None else uid
    return (f"no D-Bus session bus: {BUS_VAR} is not set and {RUN_ROOT / str(uid) / 'bus'} does not exist "
            "(is this process outside your desktop login?)")
