"""The engine socket with real parts: the real engine and model, a host process that holds the data
folder, and the real CLI as a subprocess reaching the engine through it."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from desktop_memory.ipc import address
from desktop_memory.ipc.client import connect
from desktop_memory.ipc.server import IpcServer

# the CLI with the engine in its own process (tests/conftest.py: engine_in_process)
pytestmark = [pytest.mark.integration, pytest.mark.usefixtures("engine_in_process")]
CLI = [sys.executable, "-m", "desktop_memory"]

# A minimal host: what ipc/host.py (the tray app's engine process) does with the engine socket.
HOST = """
import sys
from pathlib import Path
from desktop_memory.service import MemoryService
from desktop_memory.ipc.server import IpcServer
folder = Path(sys.argv[1])
with MemoryService(folder) as service, IpcServer(service, folder):
    print("ready", flush=True)
    sys.stdin.read()
"""

# Holds the data folder like a CLI command in progress: the lock, but no socket.
HOLDER = """
import sys
from pathlib import Path
from desktop_memory.service import MemoryService
with MemoryService(Path(sys.argv[1])):
    print("ready", flush=True)
    sys.stdin.read()
"""


def start(script: str, folder: Path) -> subprocess.Popen:
    proc = subprocess.Popen([sys.executable, "-c", script, str(folder)], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    line = proc.stdout.readline()
    if line.strip() != b"ready":
        proc.kill()
        raise AssertionError(f"host did not start: {proc.communicate()[1].decode()[-2000:]}")
    return proc


def stop(proc: subprocess.Popen) -> str:
    """Close the host's stdin (it then shuts down cleanly) and return what it wrote on stderr."""
    _, err = proc.communicate(timeout=60)
    return err.decode()


def cli(folder: Path, *args: str, stdin: str | None = None, check: bool = True) -> subprocess.CompletedProcess:
    proc = subprocess.run([*CLI, "--data-dir", str(folder), *args], input=stdin.encode() if stdin else None,
                          capture_output=True, timeout=300)
    if check and proc.returncode != 0:
        raise AssertionError(f"exit {proc.returncode}: {proc.stderr.decode()}")
    return proc


def test_real_engine_over_the_socket_finds_by_meaning(real_service, data_dir: Path):
    real_service.add("The flight to Lisbon leaves at 7:40 from terminal 2", source="manual")
    real_service.add("Buy oat milk and coffee beans", source="manual")
    with IpcServer(real_service, data_dir):
        remote = connect(data_dir)
        assert remote is not None
        with remote:
            hits = remote.search("when is my plane departing?", limit=2)
            assert "Lisbon" in hits[0].memory.content and hits[0].explain["semantic_cosine"] > 0.3
            added = remote.add("Hotel in Lisbon: Rua Augusta 12, check-in after 3 pm", tags=["trip"])
            assert remote.search("where do I sleep on the trip?", limit=1)[0].memory.id == added.memory.id
            ctx = remote.context("Lisbon trip", budget=200)
            assert ctx.tokens <= 200 and "Lisbon" in ctx.text


def test_cli_commands_reach_the_engine_through_the_running_host(tmp_path: Path):
    folder = tmp_path / "data"
    host = start(HOST, folder)
    try:
        added = json.loads(cli(folder, "add", "--json", "--tag", "ops", "Restart nginx with systemctl reload").stdout)
        assert added["status"] == "added"
        cli(folder, "add", stdin="Piped: the standup moved to 9:15")
        src = tmp_path / "in.jsonl"
        src.write_text(json.dumps({"content": "Imported: the VPN config lives in ~/vpn"}) + "\n{bad\n")
        imported = cli(folder, "import", str(src))
        assert "line 2: skipped" in imported.stderr.decode() and "committed 1" in imported.stderr.decode()
        hits = json.loads(cli(folder, "search", "reload the web server", "--json").stdout)
        assert hits[0]["id"] == added["id"] and hits[0]["tags"] == ["ops"]
        lines = cli(folder, "search", "-", "--json", stdin="standup time\nvpn\n").stdout.decode().splitlines()
        assert len(lines) == 2 and "9:15" in json.loads(lines[0])[0]["content"]
        cli(folder, "pin", added["id"][:8])
        cli(folder, "forget", added["id"])
        assert added["id"] not in cli(folder, "search", "nginx", "--json").stdout.decode()
        cli(folder, "restore", added["id"])
        assert "systemctl" in cli(folder, "context", "nginx", "--budget", "100").stdout.decode()
        stats = json.loads(cli(folder, "stats", "--json").stdout)
        assert stats["memories"] == 3 and stats["pinned"] == 1
        exported = cli(folder, "export").stdout.decode().splitlines()
        assert len(exported) == 3
        bad = cli(folder, "show", "zzzzzzzz", check=False)
        err = bad.stderr.decode().strip()
        assert bad.returncode == 1 and "no memory" in err and len(err.splitlines()) == 1
        assert json.loads(cli(folder, "doctor", "--json").stdout)["ok"] is True
        assert json.loads(cli(folder, "status", "--json").stdout)["queued"] >= 0
        assert host.poll() is None  # the host held the lock throughout
    finally:
        host_log = stop(host)
    assert "Traceback" not in host_log
    assert address.load_token(folder) is None  # the host took its token with it
    # without the host the CLI works alone and sees the same memories
    assert json.loads(cli(folder, "stats", "--json").stdout)["memories"] == 3


def test_a_crashed_host_leaves_nothing_that_breaks_the_cli(tmp_path: Path):
    folder = tmp_path / "data"
    host = start(HOST, folder)
    cli(folder, "add", "Written through the host before it crashed")
    host.send_signal(signal.SIGKILL)
    host.communicate(timeout=30)
    assert address.load_token(folder) is not None and os.path.exists(address.socket_address(folder))
    assert connect(folder) is None
    cli(folder, "add", "Written after the crash, by the CLI alone")
    assert json.loads(cli(folder, "stats", "--json").stdout)["memories"] == 2
    assert json.loads(cli(folder, "doctor", "--json").stdout)["ok"] is True
    host = start(HOST, folder)  # a new host replaces the stale socket and token
    try:
        assert json.loads(cli(folder, "stats", "--json").stdout)["memories"] == 2
    finally:
        stop(host)


def test_a_folder_held_without_a_socket_gives_the_usual_clear_message(tmp_path: Path):
    folder = tmp_path / "data"
    holder = start(HOLDER, folder)
    try:
        proc = cli(folder, "stats", check=False)  # waits its turn (30 s for this holder), then gives up
        lines = proc.stderr.decode().strip().splitlines()
        assert proc.returncode == 1 and "in use by another desktop-memory process" in lines[-1]
        assert len(lines) == 2 and lines[0].startswith("desktop-memory: waiting for another desktop-memory process")
    finally:
        stop(holder)
