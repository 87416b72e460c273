"""The engine host process with real parts: the real engine and model in a child process, reached over
the engine socket the way the tray app, the CLI and MCP reach it."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from desktop_memory.engine.lock import DataDirLock
from desktop_memory.ipc import address, client
from desktop_memory.ipc.client import HostGone, HostTimeout, connect
from desktop_memory.ipc.server import HANDSHAKE_S
from desktop_memory.ipc.spawn import HostFailed, HostProcess, command
from desktop_memory.service.protocol import operations

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
        assert remote.erase_everything() == 1 and remote.stats().memories == 0
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


def host_threads(pid: int) -> int:
    return len(os.listdir(f"/proc/{pid}/task"))


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="counts the host's threads in /proc")
def test_a_client_that_never_answers_the_challenge_is_dropped_and_its_thread_ends(data_dir: Path) -> None:
    host = HostProcess(data_dir, enrich=False)
    remote = host.open()
    try:
        assert host.pid is not None
        remote.stats()
        before = host_threads(host.pid)
        silent = []
        for _ in range(3):  # connects and then says nothing, like a stuck or hostile local program
            sock = socket.socket(socket.AF_UNIX)
            sock.settimeout(30)
            sock.connect(address.socket_address(data_dir))
            silent.append(sock)
        started = time.monotonic()
        for sock in silent:
            with sock:
                while sock.recv(4096):  # the challenge, then the end of the connection
                    pass
        waited = time.monotonic() - started
        assert HANDSHAKE_S - 1 <= waited <= HANDSHAKE_S + 5
        deadline = time.monotonic() + 10
        while host_threads(host.pid) > before and time.monotonic() < deadline:
            time.sleep(0.1)
        assert host_threads(host.pid) <= before  # no thread left waiting on the silent clients
        assert remote.stats().memories == 0  # the app's own connection was never disturbed
    finally:
        remote.close()
        host.stop()


def test_a_stopped_host_times_out_calls_and_connections_instead_of_hanging(data_dir: Path) -> None:
    host = HostProcess(data_dir, enrich=False)
    remote = host.open()
    try:
        assert host.pid is not None
        remote.add("The flight to Lisbon leaves at 7:40 from terminal 2")
        os.kill(host.pid, signal.SIGSTOP)  # alive but answering nothing (a hang)
        started = time.monotonic()
        with pytest.raises(HostTimeout, match="did not answer in time"):
            remote.search("Lisbon", limit=1)
        assert time.monotonic() - started < 15
        started = time.monotonic()
        with pytest.raises(HostTimeout, match="did not answer in time"):
            connect(data_dir)
        assert time.monotonic() - started < 10
    finally:
        os.kill(host.pid, signal.SIGCONT)
        remote.close()
        host.stop()


def test_a_busy_host_is_waited_for_not_declared_hung(data_dir: Path, monkeypatch) -> None:
    host = HostProcess(data_dir, enrich=False)
    remote = host.open()
    other = None
    try:
        remote.add("The flight to Lisbon leaves at 7:40 from terminal 2")
        other = connect(data_dir)
        assert other is not None
        monkeypatch.setattr(operations()["import_records"], "patience", (0.2, 120.0))  # impatient; the host pings
        monkeypatch.setattr(client, "PING_PATIENCE", (0.5, 0.5))  # at once: not queued behind the import
        lines = [json.dumps({"content": f"Meeting note {n}: the budget review moves to room {n % 40}"})
                 for n in range(600)]
        started = time.monotonic()
        report = other.import_records(lines)  # seconds of work on the host's engine thread: pings answer meanwhile
        assert time.monotonic() - started > 1.0
        assert report.errors == [] and report.added + report.related == 600
        assert remote.stats().memories >= 56  # the first connection still works too
    finally:
        if other is not None:
            other.close()
        remote.close()
        host.stop()


def test_a_streamed_import_lets_other_clients_in_between_chunks_and_keeps_every_line(data_dir: Path) -> None:
    """One import on the host for the whole stream (pipelined across chunks), yet another client's searches
    are answered between chunks, and every line is stored."""
    host = HostProcess(data_dir, enrich=False)
    importer = host.open()
    searcher = connect(data_dir)
    assert searcher is not None
    lines = [json.dumps({"content": f"Meeting note {n}: the budget review moves to room {n % 40} on day {n % 7}"})
             for n in range(1200)]
    acked: list[int] = []
    result: dict[str, object] = {}

    def run_import() -> None:
        try:
            result["report"] = importer.import_records(lines, progress=lambda r: acked.append(r.stored))
        except BaseException as exc:  # noqa: BLE001 - reported by the test below
            result["error"] = exc

    try:
        searcher.search("warm up", limit=1, record_access=False)
        worker = threading.Thread(target=run_import)
        worker.start()
        waits: list[float] = []
        while worker.is_alive():
            started = time.monotonic()
            searcher.search("budget review room", limit=3, record_access=False)
            waits.append(time.monotonic() - started)
        worker.join()
        assert "error" not in result, result
        report = result["report"]
        assert report.errors == [] and report.stored == 1200 and acked == sorted(acked) and acked[-1] == 1200
        assert len(waits) >= 3 and max(waits) < 15, waits  # answered between chunks, not after the whole import
        assert searcher.stats().memories == report.added + report.related
    finally:
        searcher.close()
        importer.close()
        host.stop()
