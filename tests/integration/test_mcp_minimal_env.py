"""MCP and the CLI started the way AI apps start them: with a minimal environment.

The MCP SDK's stdio client passes only HOME, LOGNAME, PATH, SHELL, TERM and USER to the server it starts
(`get_default_environment()`): no DBUS_SESSION_BUS_ADDRESS, no XDG_RUNTIME_DIR, no XDG_DATA_HOME. The
server must still reach the keyring (at the freedesktop default address) and the running app's socket.

`freedesktop_session()` provides what a Linux login provides: `/run/user/<uid>` (0700) with a D-Bus session
bus listening at `/run/user/<uid>/bus` and an unlocked gnome-keyring on it. Creating `/run/user/<uid>` needs
root (or an existing login directory); the tests are skipped with the reason otherwise, and never touch a
bus that is already there.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import stat
import subprocess
import sys
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters

from desktop_memory.engine import encryption
from desktop_memory.ipc import address
from desktop_memory.ipc.client import connect
from desktop_memory.ipc.service_start import stop_service
from desktop_memory.service import MemoryService
from desktop_memory.service.vector_sync import release_process_cache as release_vector_index
from tests.mcp_stdio import mcp_session

from .test_ipc import HOST, start, stop
from .test_keyring_session import BUS_CONFIG, PASSWORD, _reset_keyring_backend, _wait_for_secret_service

pytestmark = pytest.mark.integration
BIN = Path(sys.executable).parent  # .venv/bin
DM = str(BIN / "desktop-memory")
TOOLS = {"search_memories", "get_context", "add_memory", "pin_memory", "forget_memory"}
_ENV_KEYS = ("DBUS_SESSION_BUS_ADDRESS", "XDG_RUNTIME_DIR")


def _stop(proc: subprocess.Popen[Any] | None) -> None:
    if proc is None or proc.poll() is not None:
        return
    proc.send_signal(signal.SIGTERM)
    try:
        proc.wait(5)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def _login_runtime_dir() -> tuple[Path, bool]:
    """`/run/user/<uid>` as logind makes it (0700, ours); whether we created it. Skips when that cannot be."""
    uid = os.getuid()
    run = Path(f"/run/user/{uid}")
    if (run / "bus").exists():
        pytest.skip(f"{run / 'bus'} already exists (a real login session): not replacing it")
    created = False
    if not run.exists():
        try:
            run.mkdir(mode=0o700)
        except OSError as exc:
            pytest.skip(f"cannot create {run} ({exc.strerror}): these tests need root or a login session")
        created = True
        run.chmod(0o700)
    info = run.lstat()
    if not stat.S_ISDIR(info.st_mode) or info.st_uid != uid or info.st_mode & 0o777 != 0o700:
        pytest.skip(f"{run} is not a private 0700 folder of this user")
    return run, created


@contextmanager
def freedesktop_session(home: Path) -> Iterator[dict[str, str]]:
    """A D-Bus session bus at `/run/user/<uid>/bus` with an unlocked gnome-keyring; yields the app's environment."""
    run, created = _login_runtime_dir()
    bus_socket = run / "bus"
    home.mkdir(parents=True, exist_ok=True)
    (home / "keyring-data").mkdir(mode=0o700)
    (home / "keyring-control").mkdir(mode=0o700)
    (home / "bus.conf").write_text(BUS_CONFIG.format(listen=f"unix:path={bus_socket}"))
    env = {**os.environ, "DBUS_SESSION_BUS_ADDRESS": f"unix:path={bus_socket}", "XDG_RUNTIME_DIR": str(run)}
    saved = {k: os.environ.get(k) for k in _ENV_KEYS}
    bus = daemon = None
    try:
        bus = subprocess.Popen(["dbus-daemon", f"--config-file={home / 'bus.conf'}", "--nofork", "--print-address=1"],
                               stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=env)
        assert bus.stdout is not None
        assert bus.stdout.readline().strip().startswith(f"unix:path={bus_socket}")
        log = open(home / "keyring.log", "w")  # noqa: SIM115 - closed right after the start
        # its keyring file in a temp folder, not in this user's real ~/.local/share/keyrings
        daemon = subprocess.Popen(["gnome-keyring-daemon", "--foreground", "--unlock", "--components=secrets",
                                   f"--control-directory={home / 'keyring-control'}"],
                                  stdin=subprocess.PIPE, stdout=log, stderr=log, text=True,
                                  env={**env, "XDG_DATA_HOME": str(home / "keyring-data")})
        log.close()
        assert daemon.stdin is not None
        daemon.stdin.write(PASSWORD)
        daemon.stdin.close()
        os.environ.update({k: env[k] for k in _ENV_KEYS})
        _wait_for_secret_service(30.0, daemon, home / "keyring.log")
        _reset_keyring_backend()
        yield env
    finally:
        _stop(daemon)
        _stop(bus)
        if bus is not None and bus.stdout is not None:
            bus.stdout.close()
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
        _reset_keyring_backend()
        bus_socket.unlink(missing_ok=True)
        if created:
            shutil.rmtree(run, ignore_errors=True)


@pytest.fixture
def session(tmp_path: Path, monkeypatch) -> Iterator[dict[str, str]]:
    """The person's desktop session: keyring at the default address, folders encrypted (no opt-out)."""
    monkeypatch.delenv(encryption.ENV, raising=False)
    with freedesktop_session(tmp_path / "session") as env:
        env.pop(encryption.ENV, None)
        yield env


def minimal_env(home: Path | str | None = None) -> dict[str, str]:
    """What `env -i HOME=... PATH=...` leaves."""
    return {"HOME": str(home or os.environ["HOME"]), "PATH": os.environ.get("PATH", "/usr/bin:/bin")}


def mcp_default_env_session(folder: Path, body: Callable[[ClientSession], Awaitable[Any]]) -> tuple[Any, str]:
    """`desktop-memory mcp` from .venv/bin started by the SDK's own stdio client with its DEFAULT environment."""

    # env: none given, so the SDK's own default environment
    return mcp_session(folder, body, StdioServerParameters(command=DM, args=["--data-dir", str(folder), "mcp"]))


async def call(s: ClientSession, tool: str, args: dict[str, Any]) -> Any:
    res = await s.call_tool(tool, args)
    assert not res.is_error, res.content[0].text
    return res.structured_content if res.structured_content is not None else res.content[0].text


def encrypted_folder(folder: Path, embedder: Any, *texts: str) -> None:
    """A data folder made by the person's session (the keyring reachable), holding `texts`."""
    with MemoryService(folder, embedder=embedder) as service:
        for text in texts:
            service.add(text, source="manual")
    release_vector_index()
    assert not encryption.is_plain(folder / "memories.sqlite3")


def test_mcp_default_environment_with_the_app_closed(session, tmp_path: Path, real_embedder):
    folder = tmp_path / "data"
    encrypted_folder(folder, real_embedder, "The boiler service is booked for March 3rd with Heatwise Ltd")

    async def body(s: ClientSession) -> str:
        assert {t.name for t in (await s.list_tools()).tools} == TOOLS
        hits = (await call(s, "search_memories", {"query": "when is the boiler serviced?"}))["hits"]
        assert hits and "Heatwise" in hits[0]["content"]
        return (await call(s, "add_memory", {"content": "Spare house key is with the neighbour at number 14"}))["id"]

    memory_id, log = mcp_default_env_session(folder, body)
    assert "Traceback" not in log and "keyring" not in log.lower(), log
    assert stop_service(folder)  # the engine service MCP started (with the SDK's environment) hands the folder back
    with MemoryService(folder, embedder=real_embedder) as service:
        assert service.get(memory_id).source == "mcp"
    release_vector_index()


def test_mcp_and_cli_default_environment_with_the_app_running(session, tmp_path: Path):
    # a folder path too long for a socket inside it: the socket lives in the per-user run folder, which
    # the app (XDG_RUNTIME_DIR set) and an MCP server (no XDG_RUNTIME_DIR) must agree on
    folder = tmp_path / ("long-folder-name-" * 4) / "data"
    assert len(os.fsencode(folder / address.SOCKET_NAME)) > address.MAX_UNIX_PATH
    host = start(HOST, folder)  # the app's engine host, started with the session's environment
    try:
        assert not encryption.is_plain(folder / "memories.sqlite3")

        async def body(s: ClientSession) -> str:
            added = await call(s, "add_memory", {"content": "Parking spot at the office is B-17", "tags": ["car"]})
            hits = (await call(s, "search_memories", {"query": "where did I park"}))["hits"]
            assert hits[0]["id"] == added["id"]
            return added["id"]

        memory_id, log = mcp_default_env_session(folder, body)
        assert "Traceback" not in log, log
        remote = connect(folder)  # the host held the folder all along: MCP went through it
        assert remote is not None
        with remote:
            m = remote.get(memory_id)
            assert m.source == "mcp" and m.tags == ["car"]
        proc = subprocess.run([DM, "--data-dir", str(folder), "search", "parking", "--json"], env=minimal_env(),
                              capture_output=True, text=True, timeout=300)
        assert proc.returncode == 0, proc.stderr
        assert json.loads(proc.stdout)[0]["id"] == memory_id
    finally:
        stop(host)


def test_cli_and_setup_check_with_env_i_on_the_default_folder(session, tmp_path: Path, real_embedder):
    home = tmp_path / "home"
    folder = home / ".local" / "share" / "desktop-memory"  # where a minimal environment looks by default
    folder.parent.mkdir(parents=True)
    encrypted_folder(folder, real_embedder, "Wifi at the cabin: network Birch, ask Tove for the code")
    cache = home / ".cache" / "desktop-memory"  # the ONNX model made once already: not again for this home
    cache.parent.mkdir(parents=True)
    from desktop_memory.engine.onnx_export import cache_folder

    cache.symlink_to(cache_folder(), target_is_directory=True)
    env = minimal_env(home)

    proc = subprocess.run([DM, "search", "cabin wifi"], env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert "Birch" in proc.stdout

    written = subprocess.run([DM, "setup-mcp", "--client", "claude-desktop", "--write"], env=env,
                             capture_output=True, text=True, timeout=60)
    assert written.returncode == 0, written.stderr
    config = home / ".config" / "Claude" / "claude_desktop_config.json"
    assert "desktop-memory" in json.loads(config.read_text())["mcpServers"]
    check = subprocess.run([DM, "setup-mcp", "--client", "claude-desktop", "--check"], env=env,
                           capture_output=True, text=True, timeout=300)
    assert check.returncode == 0, check.stdout + check.stderr
    assert check.stdout.strip().splitlines()[-1] == "desktop-memory MCP server works with Claude Desktop: 5 tools"

    # a client configured without our server: one line saying what to do
    missing = subprocess.run([DM, "setup-mcp", "--client", "cursor", "--check"], env=env,
                             capture_output=True, text=True, timeout=60)
    assert missing.returncode == 1 and "Traceback" not in missing.stderr
    assert len(missing.stderr.strip().splitlines()) == 1 and "--write" in missing.stderr

    # a locked keyring: one clear line, from the CLI and from the check alike
    import secretstorage

    connection = secretstorage.dbus_init()
    try:
        secretstorage.get_default_collection(connection).lock()
    finally:
        connection.close()
    proc = subprocess.run([DM, "search", "cabin wifi"], env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1 and "keyring is locked" in proc.stderr
    check = subprocess.run([DM, "setup-mcp", "--client", "claude-desktop", "--check"], env=env,
                           capture_output=True, text=True, timeout=300)
    assert check.returncode == 1 and "Traceback" not in check.stderr
    assert len(check.stderr.strip().splitlines()) == 1 and "keyring is locked" in check.stderr


def test_without_any_keyring_the_mcp_tools_say_so_in_one_line(tmp_path: Path, monkeypatch):
    """No bus at the default address either: the tool error names the keyring, not a folder 'in use'."""
    monkeypatch.delenv(encryption.ENV, raising=False)
    if Path(f"/run/user/{os.getuid()}/bus").exists():
        pytest.skip("a session bus runs at the default address")
    folder = tmp_path / "data"

    async def body(s: ClientSession) -> str:
        res = await s.call_tool("search_memories", {"query": "anything"})
        assert res.is_error
        return res.content[0].text

    message, log = mcp_default_env_session(folder, body)
    assert "no usable OS keyring" in message and "D-Bus" in message and "\n" not in message, message
    assert "Traceback" not in log
    with contextlib.suppress(FileNotFoundError):
        assert not (folder / "memories.sqlite3").exists()
