"""The engine's named pipe on Windows is private (ipc/pipe_windows.py), checked with fakes (issue 18).

What CPython 3.11 does by default (the reason for all this) is read from its own source: PipeListener
passes NULL security attributes and no PIPE_REJECT_REMOTE_CLIENTS. Here a fake `_winapi` and a stand-in
PipeListener record what our listener asks CreateNamedPipe for; a fake advapi32/kernel32 answers the
token and security descriptor calls. Whether Windows then refuses another user's client is only shown on
real Windows (tests/unit/test_windows_pipe.py::test_on_windows_*, skipped elsewhere).
"""

from __future__ import annotations

import ctypes
import inspect
import sys
import types
from multiprocessing import connection

import pytest

from desktop_memory.ipc import address, pipe_windows

SID = "S-1-5-21-1004336348-1177238915-682003330-1001"


class FakeSecurity:
    """advapi32 + kernel32 for the SID and the security descriptor."""

    def __init__(self) -> None:
        self.freed: list[int] = []
        self.descriptors: list[str] = []
        self._sid = ctypes.create_string_buffer(b"fake-sid", 16)
        self._keep: list[object] = []
        self.closed: list[object] = []

    def GetCurrentProcess(self):  # noqa: N802
        return -1

    def OpenProcessToken(self, process, access, token_ref):  # noqa: N802
        assert access == pipe_windows.TOKEN_QUERY
        token_ref._obj.value = 0x44
        return 1

    def GetTokenInformation(self, token, klass, buf, size, size_ref):  # noqa: N802
        assert klass == pipe_windows.TOKEN_USER_CLASS
        size_ref._obj.value = 16
        if buf is None:
            return 0
        ctypes.c_void_p.from_buffer(buf).value = ctypes.addressof(self._sid)
        return 1

    def ConvertSidToStringSidW(self, sid, text_ref):  # noqa: N802
        assert sid == ctypes.addressof(self._sid)
        text_ref._obj.value = SID
        return 1

    def ConvertStringSecurityDescriptorToSecurityDescriptorW(self, sddl, revision, out_ref, size_ref):  # noqa: N802
        assert revision == pipe_windows.SDDL_REVISION_1
        self.descriptors.append(sddl)
        buf = ctypes.create_string_buffer(64)
        self._keep.append(buf)
        out_ref._obj.value = ctypes.addressof(buf)
        return 1

    def LocalFree(self, pointer):  # noqa: N802
        self.freed.append(pointer)

    def CloseHandle(self, handle):  # noqa: N802
        self.closed.append(getattr(handle, "value", handle))
        return 1


@pytest.fixture
def sec(monkeypatch):
    fake = FakeSecurity()
    monkeypatch.setitem(pipe_windows._DLLS, "advapi32", fake)
    monkeypatch.setitem(pipe_windows._DLLS, "kernel32", fake)
    pipe_windows.user_sid.cache_clear()
    yield fake
    pipe_windows.user_sid.cache_clear()


def test_the_user_sid_comes_from_the_process_token(sec):
    assert pipe_windows.user_sid() == SID
    assert sec.closed == [0x44]  # the token handle is closed
    assert len(sec.freed) == 1  # and the string Windows allocated is freed


def test_the_descriptor_allows_this_user_only_and_inherits_nothing():
    text = pipe_windows.sddl(SID)
    assert text == f"D:P(A;;GA;;;{SID})"
    assert "WD" not in text and "AN" not in text  # not Everyone, not Anonymous


def test_the_pipe_name_carries_the_user(sec, monkeypatch, tmp_path):
    assert pipe_windows.pipe_name("0123456789abcdef") == rf"\\.\pipe\desktop-memory-{SID}-0123456789abcdef"
    monkeypatch.setattr(address.sys, "platform", "win32")
    name = address.socket_address(tmp_path)
    assert name.startswith(rf"\\.\pipe\desktop-memory-{SID}-") and name == address.socket_address(tmp_path)


def test_without_a_sid_the_name_still_works(monkeypatch):
    def broken():
        raise OSError("OpenProcessToken failed (Windows error 5)")

    monkeypatch.setattr(pipe_windows, "user_sid", broken)
    assert pipe_windows.pipe_name("k") == r"\\.\pipe\desktop-memory-k"


class FakeWinapi(types.ModuleType):
    """The `_winapi` constants PipeListener uses and a CreateNamedPipe that records its arguments."""

    PIPE_ACCESS_DUPLEX, FILE_FLAG_OVERLAPPED, FILE_FLAG_FIRST_PIPE_INSTANCE = 0x3, 0x40000000, 0x80000
    PIPE_TYPE_MESSAGE, PIPE_READMODE_MESSAGE, PIPE_WAIT = 0x4, 0x2, 0x0
    PIPE_UNLIMITED_INSTANCES, NMPWAIT_WAIT_FOREVER, NULL = 255, 0xFFFFFFFF, 0

    def __init__(self) -> None:
        super().__init__("_winapi")
        self.created: list[tuple] = []

    def CreateNamedPipe(self, *args):  # noqa: N802
        self.created.append(args)
        return 0x500 + len(self.created)


class StandInPipeListener:
    """What CPython's PipeListener.__init__ and accept do with `_new_handle` (the rest needs Windows)."""

    def __init__(self, address, backlog=None):
        self._address = address
        self._handle_queue = [self._new_handle(first=True)]

    def accept(self):
        self._handle_queue.append(self._new_handle())
        return self._handle_queue.pop(0)


@pytest.fixture
def winapi(monkeypatch, sec):
    fake = FakeWinapi()
    monkeypatch.setitem(sys.modules, "_winapi", fake)
    monkeypatch.setattr(connection, "PipeListener", StandInPipeListener, raising=False)
    monkeypatch.setattr(connection, "BUFSIZE", 8192, raising=False)
    return fake


def test_every_pipe_instance_is_private_and_local(winapi, sec):
    listener = pipe_windows.listener(r"\\.\pipe\desktop-memory-x", backlog=16)
    assert isinstance(listener, connection.Listener)
    assert listener._listener.accept() == 0x501
    assert len(winapi.created) == 2  # the first instance and the one made ready at accept
    for n, (name, open_mode, pipe_mode, instances, *_sizes_timeout, attributes) in enumerate(winapi.created):
        assert name == r"\\.\pipe\desktop-memory-x" and instances == winapi.PIPE_UNLIMITED_INSTANCES
        assert bool(open_mode & winapi.FILE_FLAG_FIRST_PIPE_INSTANCE) is (n == 0)  # a squatter's pipe is refused
        assert open_mode & winapi.FILE_FLAG_OVERLAPPED and open_mode & winapi.PIPE_ACCESS_DUPLEX
        assert pipe_mode & pipe_windows.PIPE_REJECT_REMOTE_CLIENTS
        assert pipe_mode & winapi.PIPE_TYPE_MESSAGE and pipe_mode & winapi.PIPE_READMODE_MESSAGE
        assert attributes != winapi.NULL
        sa = pipe_windows.SECURITY_ATTRIBUTES.from_address(attributes)
        assert sa.nLength == ctypes.sizeof(pipe_windows.SECURITY_ATTRIBUTES)
        assert sa.lpSecurityDescriptor and not sa.bInheritHandle
    assert sec.descriptors == [f"D:P(A;;GA;;;{SID})"]


def test_the_server_listens_through_the_private_pipe_on_windows(monkeypatch, tmp_path):
    """ipc/server.py asks pipe_windows for its listener when the family is AF_PIPE."""
    from desktop_memory.ipc import server

    made: list[tuple[str, int]] = []

    class Sentinel(Exception):
        pass

    def fake_listener(where: str, backlog: int = 16):
        made.append((where, backlog))
        raise Sentinel

    monkeypatch.setattr(address, "family", lambda: "AF_PIPE")
    monkeypatch.setattr(address, "store_token", lambda data_dir: b"t" * 64)
    monkeypatch.setattr(pipe_windows, "listener", fake_listener)
    srv = server.IpcServer(service=None, data_dir=tmp_path)  # type: ignore[arg-type]
    with pytest.raises(Sentinel):
        srv.start()
    assert made == [(srv.address, 16)]


def test_cpython_pipelistener_is_what_we_replace():
    """Our _new_handle mirrors CPython's: same arguments but the security attributes and the remote flag."""
    if sys.platform == "win32":
        source = inspect.getsource(connection.PipeListener)
    else:
        with open(connection.__file__, encoding="utf-8") as f:
            source = f.read()
    assert "_winapi.NMPWAIT_WAIT_FOREVER, _winapi.NULL" in source  # NULL security attributes by default
    assert "REJECT_REMOTE" not in source


@pytest.mark.skipif(sys.platform != "win32", reason="real named pipes: Windows only")
def test_on_windows_a_client_of_this_user_connects(tmp_path):
    pipe_windows.user_sid.cache_clear()
    pipe_windows._DLLS.clear()
    name = pipe_windows.pipe_name("unit-test-" + tmp_path.name[-8:])
    listener = pipe_windows.listener(name)
    try:
        import threading

        got: list[bytes] = []

        def serve():
            conn = listener.accept()
            got.append(conn.recv_bytes())
            conn.close()

        t = threading.Thread(target=serve)
        t.start()
        client = connection.Client(name, family="AF_PIPE")
        client.send_bytes(b"hello")
        client.close()
        t.join(10)
        assert got == [b"hello"]
    finally:
        listener.close()
