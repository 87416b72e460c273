"""The engine host process with real parts: the real engine and model in a child process, reached over
the engine socket the way the tray app, the CLI and MCP reach it."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from desktop_memory.engine.lock import DataDirLock
from desktop_memory.ipc import address
from desktop_memory.ipc.client import HostGone, connect
from desktop_memory.ipc.spawn import HostFailed, HostProcess, command

pytestmark = pytest.mark.integration


def gone(pid: int, timeout: float = 60.0) -> bool:
    """Whether the process `pid` ended within `timeout` (a zombie nobody reaps yet counts as ended)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
            if Path(f"/proc/{pid}/stat").read_text().split(")")[-1].split()[0] == "Z":
                return True
        except (ProcessLookupError, FileNotFoundError):
            return True
        time.sleep(0.1)
    return False


def test_the_host_serves_add_search_and_settings_and_stops_when_asked(data_dir: Path) -> None:
    host = HostProcess(data_dir, enrich=False)
    remote = host.open()
    try:
        assert remote.ping()["pid"] == host.pid != os.getpid()
        added = remote.add("The flight to Lisbon leaves at 7:40 from terminal 2", source="clipboard")
        assert added.status == "added"
        hits = remote.search("when is my plane departing?", limit=1, record_access=False)
        assert hits[0].memory.id == added.memory.id
        assert remote.context("Lisbon", fmt="markdown", budget=200).text.startswith("#")
        settings = remote.settings
        settings.context_budget = 700
        assert remote.save_settings(settings).context_budget == 700
        assert remote.settings.context_budget == 700
        assert '"context_budget": 700' in (data_dir / "settings.json").read_text()
        cli = subprocess.run([sys.executable, "-m", "desktop_memory", "--data-dir", str(data_dir), "search", "Lisbon"],
                             capture_output=True, text=True, timeout=120)  # the CLI reaches the same host
        assert cli.returncode == 0 and "Lisbon" in cli.stdout
        assert remote.erase_everything() == 1 and remote.stats()["memories"] == 0
    finally:
        remote.close()
        assert host.stop() == 0
    assert connect(data_dir) is None and not Path(address.socket_address(data_dir)).exists()
    assert not address.token_path(data_dir).exists()


def test_the_host_ends_when_its_parent_closes_the_pipe_or_sends_sigterm(data_dir: Path) -> None:
    for how in ("eof", "sigterm"):
        proc = subprocess.Popen(command(data_dir, enrich=False), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True)
        assert proc.stdout.readline().startswith(f"ready {proc.pid}")
        assert connect(data_dir) is not None
        if how == "eof":
            proc.stdin.close()
        else:
            proc.send_signal(signal.SIGTERM)
        assert proc.wait(60) == 0
        err = proc.stderr.read()
        assert "engine host stopped" in err and "Traceback" not in err
        assert not Path(address.socket_address(data_dir)).exists()
        for f in (proc.stdin, proc.stdout, proc.stderr):
            f.close()


def test_the_host_ends_when_its_parent_is_killed(data_dir: Path) -> None:
    parent = subprocess.Popen(
        [sys.executable, "-c", "import sys; from pathlib import Path; from desktop_memory.ipc.spawn import HostProcess;"
         "h = HostProcess(Path(sys.argv[1]), enrich=False); h.open(); print(h.pid, flush=True); sys.stdin.read()",
         str(data_dir)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    host_pid = int(parent.stdout.readline())
    parent.kill()  # no clean-up at all: only the pipe it held closes
    parent.wait(10)
    parent.stdin.close()
    parent.stdout.close()
    assert gone(host_pid), "the host outlived its parent"
    assert connect(data_dir) is None


def test_a_host_that_cannot_open_the_folder_says_why_in_one_line(data_dir: Path) -> None:
    data_dir.mkdir(parents=True)
    lock = DataDirLock(data_dir, wait_s=0)  # held like a running `desktop-memory enrich`
    try:
        done = subprocess.run(command(data_dir), capture_output=True, text=True, timeout=120, stdin=subprocess.PIPE)
        assert done.returncode == 1 and "Traceback" not in done.stderr
        assert done.stdout.startswith("error: the data folder") and done.stdout.count("\n") == 1
        assert "in use by another desktop-memory process" in done.stdout
        with pytest.raises(HostFailed, match="in use by another desktop-memory process"):
            HostProcess(data_dir).open()
    finally:
        lock.release()


def test_a_crashed_host_is_reported_and_calls_fail_with_a_message(data_dir: Path) -> None:
    ended: list[int] = []
    seen = threading.Event()
    host = HostProcess(data_dir, enrich=False, on_exit=lambda code: (ended.append(code), seen.set()))
    remote = host.open()
    try:
        assert host.pid is not None
        os.kill(host.pid, signal.SIGKILL)
        assert seen.wait(30) and ended == [-signal.SIGKILL]
        with pytest.raises(HostGone, match="lost the connection"):
            remote.stats()
    finally:
        remote.close()
        host.stop()
