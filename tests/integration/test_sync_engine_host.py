"""The engine host syncs by itself (issue 35): two machines, each its own engine host process (as the tray app
runs it) on its own data folder, one shared folder. Nobody calls `sync now`: what one remembers reaches the other,
and a long catch-up on a new machine does not keep the person's searches waiting until it ends. The keys are in the
real keyring of scripts/with-desktop.sh."""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from desktop_memory.ipc.client import RemoteService
from desktop_memory.ipc.spawn import HostProcess

pytestmark = [pytest.mark.integration,
              pytest.mark.skipif(not os.environ.get("DBUS_SESSION_BUS_ADDRESS"),
                                 reason="needs the keyring of scripts/with-desktop.sh")]


def wait_for(check: Callable[[], bool], timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout:g} s waiting for {what}")
        time.sleep(0.3)


@pytest.fixture
def hosts(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable[[str], RemoteService]]:
    monkeypatch.setenv("DESKTOP_MEMORY_SYNC_EVERY_S", "1")
    monkeypatch.setenv("DESKTOP_MEMORY_SYNC_STEP_S", "0.5")  # steps of ~256 memories, so that there are several
    started: list[tuple[HostProcess, RemoteService]] = []

    def start(name: str) -> RemoteService:
        host = HostProcess(tmp_path / name, enrich=False)
        remote = host.open()
        started.append((host, remote))
        return remote

    yield start
    for host, remote in started:
        try:
            if remote.sync_status().configured:
                remote.sync_leave()  # the set's key out of the session's keyring
        finally:
            remote.close()
            host.stop()


def contents(remote: RemoteService) -> set[str]:
    return {r["content"] for r in remote.export_records(include_forgotten=True)}


def test_each_host_syncs_by_itself(hosts: Callable[[str], RemoteService], tmp_path: Path) -> None:
    shared = tmp_path / "Sync"
    shared.mkdir()
    a, b = hosts("laptop"), hosts("desktop")
    a.sync_setup(shared, name="laptop")
    b.sync_setup(shared, phrase=a.sync_phrase(), name="desktop")
    a.add("The spare key to the bike lock is in the drawer under the printer")
    wait_for(lambda: any("bike lock" in t for t in contents(b)), 60, "the laptop's memory on the desktop")
    hit = b.search("where is the spare bike key", limit=1)[0]
    b.set_pinned(hit.memory.id, True)
    wait_for(lambda: any(r["pinned"] for r in a.export_records() if "bike lock" in r["content"]), 60,
             "the desktop's pin on the laptop")
    status = a.sync_status()
    assert status.problem is None and {m.name for m in status.machines} == {"laptop", "desktop"}


def test_a_new_machine_catching_up_still_answers_searches(hosts: Callable[[str], RemoteService],
                                                          tmp_path: Path) -> None:
    shared = tmp_path / "Sync"
    shared.mkdir()
    a = hosts("old")
    lines = [f'{{"content": "Note {i}: the {i}th reading of the water meter was {i * 7} litres"}}' for i in range(3000)]
    report = a.import_records(lines)
    assert report.added + report.related == 3000  # look-alikes are related, each its own memory
    a.sync_setup(shared, name="old")
    b = hosts("new")
    b.add("The new machine's own note about the garden hose")
    status = b.sync_setup(shared, phrase=a.sync_phrase(), name="new")  # returns after its first, bounded, step
    assert status.catching_up and status.line() == "Sync: catching up with the other machines' memories"
    found = b.search("garden hose", limit=1)
    assert found and "garden hose" in found[0].memory.content
    assert len(contents(b)) < 3001  # it answered while the rest was still arriving
    wait_for(lambda: len(contents(b)) == 3001, 600, "the whole catch-up")
