"""The real llama.cpp in its worker process, killed the way a CPU without an instruction (SIGILL) or the OOM
killer (SIGKILL) kills it: during `enrich --all` and during the engine host's background enrichment. The
command ends with one line, the host keeps its PID, every memory is there and found, status names the problem."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from desktop_memory.engine import model_process
from desktop_memory.engine.enrichment import enrich_text
from desktop_memory.engine.llm import check_model
from desktop_memory.engine.model_process import WorkerModel
from desktop_memory.ipc.spawn import HostProcess

# the CLI with the engine in its own process (tests/conftest.py: engine_in_process): `enrich --all` counts what
# the adds left unenriched, which a service would have started enriching in the background
pytestmark = [pytest.mark.integration, pytest.mark.usefixtures("engine_in_process")]

NOTES = [
    "Decision: Priya ships the Atlas beta in Berlin on March 3rd; Marcus writes the release notes",
    "The dentist appointment moved to Thursday at 9:30 am, bring the insurance card",
    "Flight LH 1172 from Munich lands in Lisbon at 18:05 on Saturday",
    "Kubernetes upgrade to 1.31 is blocked by the ingress-nginx chart; Omar is on it",
    "Recipe: bake the sourdough 45 minutes at 230°C with steam for the first 15",
    "Book club: we read Project Hail Mary next, meeting at Elena's place on the 14th",
    "Die Steuererklärung für 2025 muss bis zum 31. Juli beim Finanzamt Köln sein",
    "def retry(fn, n=3):\n    for i in range(n):\n        try: return fn()\n        except OSError: time.sleep(2 ** i)",
]


def cli(data: Path, *args: str, timeout: float = 600) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "desktop_memory", "--data-dir", str(data), *args],
                          capture_output=True, text=True, timeout=timeout,
                          env=os.environ | {"DESKTOP_MEMORY_ENCRYPTION": "off"})


def workers_of(parent: int) -> list[int]:
    """The model workers whose parent is `parent` (alive, not zombies)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            cmdline = (entry / "cmdline").read_bytes()
        except OSError:
            continue
        fields = stat.rsplit(")", 1)[1].split()
        if int(fields[1]) == parent and fields[0] != "Z" and b"model_worker" in cmdline:
            found.append(int(entry.name))
    return found


def kill_workers(parent: int, sig: int, times: int, stop: threading.Event, killed: list[int]) -> None:
    """Kill each new worker of `parent` once it has run a moment (loaded, generating), `times` times."""
    while len(killed) < times and not stop.is_set():
        for pid in workers_of(parent):
            if pid not in killed:
                time.sleep(1.0)  # past loading (~0.3 s): the worker is enriching
                try:
                    os.kill(pid, sig)
                except ProcessLookupError:
                    continue
                killed.append(pid)
        time.sleep(0.05)


def searchable(data: Path) -> None:
    for text in NOTES:
        found = cli(data, "search", text.split("\n")[0][:60], "--json", "--limit", "10")
        assert found.returncode == 0, found.stderr
        assert text.split("\n")[0][:30] in found.stdout


@pytest.mark.parametrize("sig", [signal.SIGILL, signal.SIGKILL], ids=["SIGILL", "SIGKILL"])
def test_killing_the_worker_during_enrich_all_ends_in_one_line_and_loses_nothing(tmp_path: Path, sig):
    data = tmp_path / "d"
    for text in NOTES:
        assert cli(data, "add", text).returncode == 0
    proc = subprocess.Popen([sys.executable, "-m", "desktop_memory", "--data-dir", str(data), "enrich", "--all"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=os.environ | {"DESKTOP_MEMORY_ENCRYPTION": "off"})
    stop, killed = threading.Event(), []
    killer = threading.Thread(target=kill_workers, args=(proc.pid, sig, 3, stop, killed))
    killer.start()
    out, err = proc.communicate(timeout=600)
    stop.set()
    killer.join()
    assert len(killed) == 3
    assert proc.returncode in (0, 1) and "Traceback" not in err and not err.strip(), err
    lines = out.strip().splitlines()
    assert len(lines) == 2 and lines[0].startswith("enriched 8")
    reason = ("this computer's CPU cannot run this build of it" if sig == signal.SIGILL
              else "the system stopped it (out of memory?)")
    assert reason in lines[1] and "memories are enriched without it" in lines[1]
    status = cli(data, "status")
    assert status.returncode == 0 and reason in status.stdout
    doctor = cli(data, "doctor")
    assert reason in doctor.stdout
    searchable(data)
    assert not workers_of(proc.pid)


def test_the_host_keeps_its_pid_when_its_worker_dies_in_background_enrichment(tmp_path: Path):
    data = tmp_path / "d"
    host = HostProcess(data, enrich=True)
    remote = host.open()
    try:
        pid = host.pid
        stop, killed = threading.Event(), []
        killer = threading.Thread(target=kill_workers, args=(pid, signal.SIGILL, 3, stop, killed))
        killer.start()
        for text in NOTES:
            remote.add(text, source="clipboard")
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline:
            problem = remote.enrichment_changes(since=-1, wait_s=0).model_problem
            if problem:
                break
            time.sleep(0.2)
        stop.set()
        killer.join()
        assert len(killed) == 3 and host.alive and remote.ping()["pid"] == pid
        assert "CPU cannot run this build" in problem and "enriched without it" in problem  # the tray's line
        status = cli(data, "status")  # through the running host
        assert "CPU cannot run this build" in status.stdout
        for worker in killed:  # a low-priority worker of the host, each reaped
            assert not Path(f"/proc/{worker}").exists()
        for text in NOTES:
            hits = remote.search(text.split("\n")[0][:60], limit=10, record_access=False)
            assert any(h.memory.content == text for h in hits)
        assert remote.stats().memories == len(NOTES)
    finally:
        remote.close()
        assert host.stop() == 0


def test_the_worker_runs_at_the_priority_of_background_work_and_goes_when_unloaded(monkeypatch):
    monkeypatch.setitem(model_process._variant, "index", 0)
    model = WorkerModel(check_model(None), n_ctx=1024, n_threads=1)
    result = enrich_text(NOTES[0], model=model, n_ctx=1024)
    assert result.by.startswith("SmolLM2") and model.variant == "default"
    pid = model.pid
    assert pid is not None and Path(f"/proc/{pid}").exists()
    model.unload()
    assert not Path(f"/proc/{pid}").exists() or "Z" in Path(f"/proc/{pid}/stat").read_text().split(")")[1][:3]
