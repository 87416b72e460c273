"""The engine socket's real mode on disk (issue 29): 0600 (owner read and write; a socket needs no execute bit),
in a 0700 folder, whatever the umask; PRIVACY.md says the same."""

from __future__ import annotations

import os
import stat
import sys
from pathlib import Path

import pytest

from desktop_memory.ipc import address
from desktop_memory.ipc.client import connect
from desktop_memory.ipc.server import IpcServer

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="Unix sockets: Windows uses a named pipe")
PRIVACY = Path(__file__).resolve().parents[2] / "PRIVACY.md"


@pytest.fixture(autouse=True)
def _token_keyring(ring):
    """The engine token lives in the OS keyring: an in-process one here."""
    return ring


def mode(path: str | Path) -> int:
    return stat.S_IMODE(os.lstat(path).st_mode)


@pytest.mark.parametrize("umask", [0o022, 0o077, 0o002], ids=lambda u: f"umask {u:03o}")
def test_the_socket_of_a_running_server_is_0600_in_a_0700_folder(fake_service, data_dir: Path, umask: int) -> None:
    old = os.umask(umask)  # a desktop session's, a careful one's, a shared group's
    try:
        with IpcServer(fake_service, data_dir) as server:
            assert stat.S_ISSOCK(os.lstat(server.address).st_mode)
            assert mode(server.address) == 0o600
            assert mode(Path(server.address).parent) == 0o700
            remote = connect(data_dir)  # its owner still connects
            assert remote is not None and remote.ping()["pid"] == os.getpid()
            remote.close()
    finally:
        assert os.umask(old) == umask  # the server put the process's umask back


def test_a_long_folder_s_socket_in_the_run_folder_is_0600_too(fake_service, tmp_path: Path, monkeypatch) -> None:
    monkeypatch.delenv("XDG_RUNTIME_DIR", raising=False)
    deep = tmp_path / ("x" * 60) / ("y" * 60)  # too long for sun_path: the socket goes to a private run folder
    long_address = address.socket_address(deep)
    monkeypatch.setattr(address, "socket_address", lambda data_dir: long_address)
    with IpcServer(fake_service, fake_service.folder) as server:
        assert server.address == long_address and not long_address.startswith(str(tmp_path))
        assert mode(server.address) == 0o600 and mode(Path(server.address).parent) == 0o700


def test_privacy_md_states_the_socket_s_real_mode() -> None:
    text = PRIVACY.read_text(encoding="utf-8")
    line = next(x for x in text.splitlines() if x.startswith("| `engine.sock`"))
    assert f"mode {address.SOCKET_MODE:04o}" in line, line
