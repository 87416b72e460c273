"""The engine socket on Windows: a named pipe only this user can open, and never from another machine.

CPython 3.11's `multiprocessing.connection.PipeListener` creates every pipe instance with
`CreateNamedPipe(..., security_attributes=NULL)` and without `PIPE_REJECT_REMOTE_CLIENTS`. The default
security descriptor of a named pipe gives full control to LocalSystem, the administrators and the
creator, and read access to Everyone and Anonymous; and a client on another machine may reach it over
SMB. The token handshake keeps all of those out of the engine, but they could still open the pipe,
hold its instances and read what the server says first. So here each instance is created with an
explicit, protected DACL that allows this user's SID only (`D:P(A;;GA;;;<SID>)`, nothing inherited),
and with `PIPE_REJECT_REMOTE_CLIENTS`; the first instance keeps `FILE_FLAG_FIRST_PIPE_INSTANCE`, so a
pipe another program created first under our name is refused (the host then fails to start, it never
shares). The pipe's name carries the user's SID as well (`pipe_name`), so two people on one machine
never meet on one name, even for the same data folder path.

Everything Windows-only is imported or loaded when called (this module imports on Linux for the tests).
"""

from __future__ import annotations

import ctypes
import functools
import importlib
import logging
import weakref
from ctypes import wintypes
from typing import Any

from .. import winapi

log = logging.getLogger(__name__)

PIPE_REJECT_REMOTE_CLIENTS = 0x00000008
SDDL_REVISION_1 = 1
TOKEN_QUERY = 0x0008
TOKEN_USER_CLASS = 1  # TokenUser
_H, _B, _D, _P = wintypes.HANDLE, wintypes.BOOL, wintypes.DWORD, ctypes.c_void_p
PROTOTYPES: dict[str, dict[str, tuple[Any, list[Any]]]] = {
    "advapi32": {
        "OpenProcessToken": (_B, [_H, _D, ctypes.POINTER(_H)]),
        "GetTokenInformation": (_B, [_H, ctypes.c_int, _P, _D, ctypes.POINTER(_D)]),
        "ConvertSidToStringSidW": (_B, [_P, ctypes.POINTER(wintypes.LPWSTR)]),
        "ConvertStringSecurityDescriptorToSecurityDescriptorW":
            (_B, [wintypes.LPCWSTR, _D, ctypes.POINTER(_P), ctypes.POINTER(ctypes.c_ulong)]),
    },
    "kernel32": {"GetCurrentProcess": (_H, []), "CloseHandle": (_B, [_H]), "LocalFree": (_P, [_P])},
}
_DLLS: dict[str, Any] = {}


class SECURITY_ATTRIBUTES(ctypes.Structure):  # noqa: N801 - Windows' name
    _fields_ = [("nLength", _D), ("lpSecurityDescriptor", _P), ("bInheritHandle", _B)]


def dll(name: str) -> Any:
    """advapi32 or kernel32 with prototypes, loaded on first use (tests put fakes in `_DLLS`)."""
    return winapi.load(name, PROTOTYPES, _DLLS)


def _fail(what: str) -> OSError:
    code = ctypes.get_last_error() if hasattr(ctypes, "get_last_error") else 0
    return OSError(f"{what} failed (Windows error {code})")


@functools.cache
def user_sid() -> str:
    """This process's user as a SID string ("S-1-5-21-..."), from its access token."""
    advapi32, kernel32 = dll("advapi32"), dll("kernel32")
    token = wintypes.HANDLE()
    if not advapi32.OpenProcessToken(kernel32.GetCurrentProcess(), TOKEN_QUERY, ctypes.byref(token)):
        raise _fail("OpenProcessToken")
    try:
        size = wintypes.DWORD(0)
        advapi32.GetTokenInformation(token, TOKEN_USER_CLASS, None, 0, ctypes.byref(size))
        buf = ctypes.create_string_buffer(max(size.value, ctypes.sizeof(ctypes.c_void_p)))
        if not advapi32.GetTokenInformation(token, TOKEN_USER_CLASS, buf, len(buf), ctypes.byref(size)):
            raise _fail("GetTokenInformation")
        sid = ctypes.c_void_p.from_buffer(buf).value  # TOKEN_USER.User.Sid, the structure's first field
        text = wintypes.LPWSTR()
        if not advapi32.ConvertSidToStringSidW(sid, ctypes.byref(text)):
            raise _fail("ConvertSidToStringSidW")
        try:
            return str(text.value)
        finally:
            kernel32.LocalFree(text)
    finally:
        kernel32.CloseHandle(token)


def sddl(sid: str) -> str:
    """The pipe's security descriptor: a protected DACL with one entry, full access for `sid`."""
    return f"D:P(A;;GA;;;{sid})"


def pipe_name(key: str) -> str:
    """The engine pipe of a data folder (its key) for this user."""
    try:
        sid = user_sid()
    except OSError:
        log.debug("no user SID for the pipe name (its DACL still names the user)", exc_info=True)
        return rf"\\.\pipe\desktop-memory-{key}"
    return rf"\\.\pipe\desktop-memory-{sid}-{key}"


class PrivateSecurity:
    """SECURITY_ATTRIBUTES for `sddl(user_sid())`; the descriptor is freed when this object goes."""

    def __init__(self) -> None:
        pointer = ctypes.c_void_p()
        if not dll("advapi32").ConvertStringSecurityDescriptorToSecurityDescriptorW(
                sddl(user_sid()), SDDL_REVISION_1, ctypes.byref(pointer), None):
            raise _fail("ConvertStringSecurityDescriptorToSecurityDescriptorW")
        self.attributes = SECURITY_ATTRIBUTES(ctypes.sizeof(SECURITY_ATTRIBUTES), pointer.value, False)
        weakref.finalize(self, dll("kernel32").LocalFree, pointer.value)

    @property
    def address(self) -> int:
        return ctypes.addressof(self.attributes)


def listener(address: str, backlog: int = 16) -> Any:
    """A `multiprocessing.connection.Listener` on `address` whose pipe instances are private (see above)."""
    from multiprocessing import connection

    winapi = importlib.import_module("_winapi")
    security = PrivateSecurity()

    class PrivatePipeListener(connection.PipeListener):  # type: ignore[name-defined]  # Windows only
        def _new_handle(self, first: bool = False) -> int:
            flags = winapi.PIPE_ACCESS_DUPLEX | winapi.FILE_FLAG_OVERLAPPED
            if first:
                flags |= winapi.FILE_FLAG_FIRST_PIPE_INSTANCE
            mode = winapi.PIPE_TYPE_MESSAGE | winapi.PIPE_READMODE_MESSAGE | winapi.PIPE_WAIT
            buffer = connection.BUFSIZE  # type: ignore[attr-defined]  # defined on Windows only
            return winapi.CreateNamedPipe(
                self._address, flags, mode | PIPE_REJECT_REMOTE_CLIENTS, winapi.PIPE_UNLIMITED_INSTANCES,
                buffer, buffer, winapi.NMPWAIT_WAIT_FOREVER, security.address)

    class PrivateListener(connection.Listener):
        def __init__(self) -> None:  # what Listener.__init__ does for AF_PIPE, with our pipe listener
            self._security = security  # alive as long as the listener makes instances
            self._listener = PrivatePipeListener(address, backlog)
            self._authkey = None

    return PrivateListener()
