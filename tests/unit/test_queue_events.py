"""The enrichment queue's counts are pushed, not polled (issue 17): new memories wake the enricher, the
enricher tells the counts, and a long poll (`enrichment_changes`) hands them to whoever waits."""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

import pytest

from desktop_memory.engine import enrichment
from desktop_memory.engine.enrichment import Enricher
from desktop_memory.service import MemoryService
from desktop_memory.service.events import QueueEvents
from tests.fakes import FakeEmbedder
from tests.unit.test_enrichment import FakeModel, fake_gguf


def test_a_waiter_gets_the_state_at_once_then_only_changes():
    events = QueueEvents()
    first = events.wait(-1, wait_s=5)
    assert first == {"version": 0, "queued": 0, "failed": 0, "model_problem": ""}
    started = time.monotonic()
    assert events.wait(0, wait_s=0.2)["version"] == 0 and time.monotonic() - started >= 0.19  # nothing new
    events.publish({"queued": 0, "failed": 0})  # the same counts: no change
    got: list[dict[str, Any]] = []
    waiter = threading.Thread(target=lambda: got.append(events.wait(0, wait_s=30)))
    waiter.start()
    time.sleep(0.05)
    assert not got
    events.publish({"queued": 3, "failed": 0})
    waiter.join(5)
    assert got == [{"version": 1, "queued": 3, "failed": 0, "model_problem": ""}]
    assert events.wait(7, wait_s=30)["version"] == 1  # a version from another host: the state at once
    problem = "the local model stopped: it crashed (SIGSEGV)"
    events.publish({"queued": 3, "failed": 0, "model_problem": problem})
    assert events.wait(1, wait_s=5) == {"version": 2, "queued": 3, "failed": 0, "model_problem": problem}  # the tray


def test_waits_are_bounded():
    started = time.monotonic()
    assert QueueEvents().wait(0, wait_s=-5)["version"] == 0 and time.monotonic() - started < 1


class SlowModel(FakeModel):
    """A fake model that holds each job until the test opens the gate."""

    gate = threading.Event()

    def json_completion(self, *args: Any, **kwargs: Any) -> dict[str, Any]:
        assert self.gate.wait(30)
        return super().json_completion(*args, **kwargs)


@pytest.fixture
def service(data_dir: Path, tmp_path: Path, monkeypatch):
    monkeypatch.setattr(enrichment, "POLL_S", 60.0)  # only a wake (or finished work) can move the enricher
    SlowModel.gate = threading.Event()
    with MemoryService(data_dir, embedder=FakeEmbedder()) as svc:
        svc.settings.llm_model_path = str(fake_gguf(tmp_path / "fake.gguf"))
        svc.enrichment.use(Enricher(svc.store.path, svc.settings, foreground=svc.foreground,
                                    model_factory=lambda info, s: SlowModel(info)))
        yield svc
        SlowModel.gate.set()


def wait_for(svc: MemoryService, since: int, want: int) -> dict[str, Any]:
    """Long-poll until `queued` is `want` (each call returns on a change)."""
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        state = svc.enrichment_changes(since=since, wait_s=5)
        if state.queued == want:
            return state
        since = state.version
    raise AssertionError(f"queued never reached {want}: {svc.enrichment_status()}")


def test_an_add_wakes_the_enricher_and_the_counts_reach_a_waiter(service):
    service.start_enrichment()
    start = service.enrichment_changes(since=-1, wait_s=0)
    assert start.queued == 0
    service.add("Quarterly planning: Joana presents the roadmap on Friday")
    busy = wait_for(service, start.version, 1)  # told by the woken enricher, not after a 60 s poll
    SlowModel.gate.set()
    done = wait_for(service, busy.version, 0)
    assert done.version > busy.version


def test_an_import_and_a_requeue_wake_it_too(service):
    service.start_enrichment()
    start = service.enrichment_changes(since=-1, wait_s=0)
    lines = [f'{{"content": "Import line {i} about the Lisbon offsite budget"}}' for i in range(3)]
    service.import_records(lines)
    state = wait_for(service, start.version, 3)
    SlowModel.gate.set()
    state = wait_for(service, state.version, 0)
    SlowModel.gate.clear()
    service.requeue_enrichment()
    wait_for(service, state.version, 3)
    SlowModel.gate.set()


def test_the_long_poll_never_marks_the_service_busy(service):
    """A waiting front end must not pause background enrichment (it is not the person's request)."""
    service.start_enrichment()
    waiter = threading.Thread(target=lambda: service.enrichment_changes(since=10**6 - 1, wait_s=0.5))
    waiter.start()
    time.sleep(0.1)
    assert not service.foreground.active
    waiter.join(5)


def test_the_enricher_tells_counts_when_woken_without_a_service(data_dir: Path, tmp_path: Path, monkeypatch):
    monkeypatch.setattr(enrichment, "POLL_S", 60.0)
    with MemoryService(data_dir, embedder=FakeEmbedder()) as svc:
        svc.add("a memory queued before the enricher starts")
        told: list[dict[str, int]] = []
        worker = Enricher(svc.store.path, svc.settings, model_factory=lambda info, s: FakeModel(info))
        worker.on_counts = told.append
        worker.start(background=False)  # not enriching: only telling
        deadline = time.monotonic() + 10
        while not told and time.monotonic() < deadline:
            time.sleep(0.01)
        assert told[0]["queued"] == 1
        svc.add("a second one")
        worker.wake()
        while len(told) < 2 and time.monotonic() < deadline:
            time.sleep(0.01)
        assert told[-1]["queued"] == 2
        worker.stop()


def test_the_long_poll_waits_off_the_engine_lane(fake_service, data_dir: Path):
    """Over the socket the wait holds only its connection's thread: other calls are answered meanwhile."""
    from desktop_memory.ipc.client import connect
    from desktop_memory.ipc.server import IpcServer

    with IpcServer(fake_service, data_dir):  # one lock stands for the engine lane
        waiter, other = connect(data_dir), connect(data_dir)
        assert waiter is not None and other is not None
        with waiter, other:
            start = waiter.enrichment_changes(since=-1, wait_s=0)
            got: list[dict[str, Any]] = []
            thread = threading.Thread(target=lambda: got.append(waiter.enrichment_changes(since=start.version,
                                                                                        wait_s=20)))
            thread.start()
            time.sleep(0.2)
            began = time.monotonic()
            assert other.stats().memories == 0 and time.monotonic() - began < 5  # not behind the wait
            assert not got
            fake_service.enrichment.events.publish({"queued": 2, "failed": 0})
            thread.join(5)
            assert got and got[0].queued == 2 and got[0].version == start.version + 1
