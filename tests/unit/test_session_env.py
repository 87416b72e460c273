"""The login's defaults for a process started with a minimal environment (engine/session_env.py)."""

from __future__ import annotations

import os
import socket
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from desktop_memory.engine import session_env

pytestmark = pytest.mark.skipif(not session_env.applies(), reason="D-Bus and /run/user are Linux/BSD things")
UID = os.getuid() if hasattr(os, "getuid") else -1  # Windows: the module is skipped, but it must import


@pytest.fixture
def run_root(tmp_path: Path) -> Path:
    root = tmp_path / "run-user"
    root.mkdir()
    return root


@pytest.fixture
def login(run_root: Path) -> Path:
    folder = run_root / str(UID)
    folder.mkdir(mode=0o700)
    folder.chmod(0o700)
    return folder


@pytest.fixture
def bus(login: Path) -> Iterator[Path]:
    path = login / "bus"
    with socket.socket(socket.AF_UNIX) as sock:
        sock.bind(str(path))
        yield path


def test_missing_variables_get_the_login_defaults(run_root: Path, login: Path, bus: Path):
    env: dict[str, str] = {"HOME": "/home/x", "PATH": "/usr/bin"}
    added = session_env.apply_defaults(env, uid=UID, run_root=run_root)
    assert added == {"XDG_RUNTIME_DIR": str(login), "DBUS_SESSION_BUS_ADDRESS": f"unix:path={bus}"}
    assert env == {"HOME": "/home/x", "PATH": "/usr/bin", **added}
    assert session_env.apply_defaults(env, uid=UID, run_root=run_root) == {}  # once set, nothing more to do


def test_values_that_are_present_are_never_replaced(run_root: Path, login: Path, bus: Path, tmp_path: Path):
    env = {"XDG_RUNTIME_DIR": str(tmp_path), "DBUS_SESSION_BUS_ADDRESS": "unix:path=/somewhere/else"}
    assert session_env.apply_defaults(env, uid=UID, run_root=run_root) == {}
    assert env == {"XDG_RUNTIME_DIR": str(tmp_path), "DBUS_SESSION_BUS_ADDRESS": "unix:path=/somewhere/else"}
    # only the bus missing: the run folder the process has is asked first, then the login's
    env = {"XDG_RUNTIME_DIR": str(tmp_path)}
    assert session_env.apply_defaults(env, uid=UID, run_root=run_root) == {
        "DBUS_SESSION_BUS_ADDRESS": f"unix:path={bus}"}
    assert env["XDG_RUNTIME_DIR"] == str(tmp_path)
    env = {"XDG_RUNTIME_DIR": "", "DBUS_SESSION_BUS_ADDRESS": ""}  # empty counts as missing
    assert set(session_env.apply_defaults(env, uid=UID, run_root=run_root)) == {"XDG_RUNTIME_DIR",
                                                                                 "DBUS_SESSION_BUS_ADDRESS"}


@pytest.mark.parametrize("mode", [0o755, 0o750, 0o711])
def test_a_run_folder_others_can_enter_is_not_used(run_root: Path, login: Path, bus: Path, mode: int):
    login.chmod(mode)
    env: dict[str, str] = {}
    session_env.apply_defaults(env, uid=UID, run_root=run_root)
    assert "XDG_RUNTIME_DIR" not in env and "DBUS_SESSION_BUS_ADDRESS" not in env


def test_another_users_folder_a_symlink_or_a_plain_file_are_not_used(run_root: Path, login: Path, tmp_path: Path):
    assert session_env.login_runtime_dir(UID + 1, run_root) is None  # not ours (and missing)
    target = tmp_path / "elsewhere"
    target.mkdir(mode=0o700)
    (run_root / str(UID + 2)).symlink_to(target)
    assert session_env.login_runtime_dir(UID + 2, run_root) is None
    (login / "bus").write_text("not a socket")
    env: dict[str, str] = {}
    assert session_env.apply_defaults(env, uid=UID, run_root=run_root) == {"XDG_RUNTIME_DIR": str(login)}


def test_without_a_login_folder_nothing_is_set_and_the_reason_is_clear(run_root: Path):
    env: dict[str, str] = {"HOME": "/home/x"}
    assert session_env.apply_defaults(env, uid=UID, run_root=run_root) == {}
    assert env == {"HOME": "/home/x"}
    reason = session_env.missing_bus_reason(env, uid=UID)
    assert reason is not None and "DBUS_SESSION_BUS_ADDRESS is not set" in reason and f"/run/user/{UID}/bus" in reason
    assert session_env.missing_bus_reason({"DBUS_SESSION_BUS_ADDRESS": "unix:path=/x"}) is None


def test_odd_characters_in_a_bus_path_are_escaped_as_dbus_wants():
    from jeepney.bus import get_connectable_addresses

    path = Path("/run/user/1000/a bus;x=é,y")
    address = session_env.bus_address(path)
    assert " " not in address and ";" not in address and "," not in address and "=é" not in address
    assert next(get_connectable_addresses(address)).encode("latin-1").decode("utf-8") == str(path)
    assert session_env.bus_address(Path("/run/user/1000/bus")) == "unix:path=/run/user/1000/bus"


def test_the_cli_applies_the_defaults_once_at_start_not_at_import(monkeypatch, run_root: Path):
    calls: list[object] = []
    monkeypatch.setattr(session_env, "apply_defaults", lambda *a, **k: calls.append(a) or {})
    import desktop_memory.cli.main as cli_main

    assert calls == []
    with pytest.raises(SystemExit):
        cli_main.main(["--version"])
    assert calls == []  # argparse exits before anything starts
    cli_main.main(["setup-mcp", "--client", "cursor"])
    assert len(calls) == 1


def test_a_long_folders_socket_does_not_depend_on_the_environment(tmp_path: Path, monkeypatch):
    from desktop_memory.ipc import address

    deep = tmp_path / ("x" * 60) / ("y" * 60)
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(tmp_path))
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    with_env = address.socket_address(deep)
    monkeypatch.delenv("XDG_RUNTIME_DIR")
    monkeypatch.delenv("TMPDIR")
    assert address.socket_address(deep) == with_env
    assert not with_env.startswith(str(tmp_path)) and len(with_env) <= address.MAX_UNIX_PATH
    assert stat.S_IMODE(Path(with_env).parent.stat().st_mode) == 0o700


def test_no_keyring_without_a_bus_says_why_in_one_line(monkeypatch):
    import keyring
    import keyring.backends.fail
    import keyring.core

    from desktop_memory.core.errors import KeyringUnavailable
    from desktop_memory.engine import keys

    before = keyring.get_keyring()
    keyring.set_keyring(keyring.backends.fail.Keyring())
    monkeypatch.setattr(keyring.core, "init_backend", lambda *a: None)
    monkeypatch.delenv("DBUS_SESSION_BUS_ADDRESS", raising=False)
    try:
        with pytest.raises(KeyringUnavailable) as caught:
            keys.get_secret("x")
    finally:
        keyring.set_keyring(before)
    message = str(caught.value)
    assert "no usable OS keyring (no D-Bus session bus: DBUS_SESSION_BUS_ADDRESS is not set" in message
    assert "DESKTOP_MEMORY_ENCRYPTION=off" in message and "\n" not in message
