"""A model worker that keeps dying: each death is a failed attempt, enrichment goes on with the patterns, and
after three deaths in a row the model is not started again until the file, the version or the person changes
that (the fake worker of tests/fake_model_worker.py; the real one in tests/integration/test_model_worker_real.py)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from desktop_memory.engine import enrichment, model_process
from desktop_memory.engine.enrichment import Enricher
from desktop_memory.engine.llm import ModelInfo
from desktop_memory.engine.model_process import WorkerModel
from desktop_memory.service import MemoryService
from tests.fakes import FakeEmbedder
from tests.unit.test_enrichment import fake_gguf
from tests.unit.test_model_process import FAKE

pytestmark = pytest.mark.skipif(os.name != "posix", reason="the fake worker dies by POSIX signals")
CPU_LINE = "the local model stopped: this computer's CPU cannot run this build of it; memories are enriched without it"


@pytest.fixture(autouse=True)
def one_build(monkeypatch):
    monkeypatch.setattr(model_process, "lib_variants", lambda: [("default", None)])
    monkeypatch.setitem(model_process._variant, "index", 0)


def use_worker(svc: MemoryService, pids: Path) -> list[WorkerModel]:
    made: list[WorkerModel] = []

    def factory(info: ModelInfo, settings: Any) -> WorkerModel:
        made.append(WorkerModel(info, command=FAKE))
        return made[-1]

    svc.enrichment.use(Enricher(svc.store.path, svc.settings, model_factory=factory, foreground=svc.foreground))
    return made


@pytest.fixture
def service(data_dir: Path, tmp_path: Path, monkeypatch):
    monkeypatch.setenv("FAKE_WORKER_PIDS", str(tmp_path / "pids"))
    with MemoryService(data_dir, embedder=FakeEmbedder()) as svc:
        svc.settings.llm_model_path = str(fake_gguf(tmp_path / "fake.gguf"))
        use_worker(svc, tmp_path / "pids")
        yield svc


def worker_starts(tmp_path: Path) -> int:
    path = tmp_path / "pids"
    return len(path.read_text().split()) if path.exists() else 0


def test_three_deaths_in_a_row_stop_the_model_and_nothing_is_lost(service, monkeypatch, tmp_path, data_dir):
    monkeypatch.setenv("FAKE_WORKER_MODE", "sigill-complete")
    ids = [service.add(f"note {i}: Priya ships the Atlas beta in Berlin on March {i + 1}").memory.id
           for i in range(6)]
    report = service.enrich(100)
    assert worker_starts(tmp_path) == 3  # three deaths, then no worker at all
    assert report.processed == 6 and report.retried == 3 and report.deterministic == 3
    assert report.model_error == CPU_LINE
    status = service.enrichment_status()
    assert status.model.usable is False and status.model.error == CPU_LINE
    assert status.model.crashes.in_a_row == 3
    assert service.doctor().local_model == CPU_LINE
    for memory_id in ids:  # every memory is there and found
        assert any(h.memory.id == memory_id for h in service.search(service.get(memory_id).content, limit=10))
    assert service.enrichment.events.wait(-1, 0)["model_problem"] == CPU_LINE  # what the tray is told


def test_the_stop_outlives_a_restart_until_the_person_says_retry(monkeypatch, tmp_path, data_dir):
    monkeypatch.setenv("FAKE_WORKER_MODE", "segv-complete")
    monkeypatch.setenv("FAKE_WORKER_PIDS", str(tmp_path / "pids"))
    with MemoryService(data_dir, embedder=FakeEmbedder()) as first:
        first.settings.llm_model_path = str(fake_gguf(tmp_path / "fake.gguf"))
        use_worker(first, tmp_path / "pids")
        for i in range(4):
            first.add(f"meeting notes number {i} with Marcus about the budget")
        first.enrich(100)
    with MemoryService(data_dir, embedder=FakeEmbedder()) as again:  # the app started again
        again.settings.llm_model_path = str(tmp_path / "fake.gguf")
        assert "crashed (SIGSEGV); memories are enriched without it" in again.enrichment_status().model.error
        use_worker(again, tmp_path / "pids")
        before = worker_starts(tmp_path)
        again.add("one more note about the budget review with Marcus")
        assert again.enrich(100).with_model == 0 and worker_starts(tmp_path) == before  # not started again
        monkeypatch.setenv("FAKE_WORKER_MODE", "ok")
        again.retry_failed_enrichment()  # the person's Retry
        report = again.enrich(100)
        assert report.with_model >= 1 and worker_starts(tmp_path) == before + 1
        status = again.enrichment_status()
        assert status.model.usable is True and status.model.crashes is None


def test_another_model_file_or_version_is_started_again(service, monkeypatch, tmp_path):
    monkeypatch.setenv("FAKE_WORKER_MODE", "sigill-complete")
    for i in range(4):
        service.add(f"travel plan {i}: train to Lyon on Friday")
    service.enrich(100)
    health = service.store.enrichment.model_health()
    assert health["crashes"] == 3
    model_id = health["model_id"]
    assert enrichment.stopped_line(health, model_id) == CPU_LINE
    assert enrichment.stopped_line(health, "other.gguf:123") == ""  # another model file
    assert enrichment.stopped_line(health | {"version": "0.0.1"}, model_id) == ""  # another app version


def test_a_job_done_with_the_model_ends_the_run_of_deaths(service, monkeypatch):
    monkeypatch.setenv("FAKE_WORKER_MODE", "sigill-complete")
    service.add("a note about the quarterly planning with Priya")
    service.enrich(1)
    assert service.store.enrichment.model_health()["crashes"] == 1
    monkeypatch.setenv("FAKE_WORKER_MODE", "ok")
    service.add("a second note about the offsite in Lisbon")
    report = service.enrich(1)
    assert report.with_model == 1 and service.store.enrichment.model_health() == {}


def test_model_set_refuses_a_gguf_that_crashes_llama_cpp_in_one_line(service, monkeypatch, tmp_path):
    before = service.settings.llm_model_path
    other = fake_gguf(tmp_path / "broken.gguf", size=8192)
    monkeypatch.setenv("FAKE_WORKER_MODE", "segv-load")
    with pytest.raises(model_process.ModelCrashed, match=r"^the local model stopped: it crashed \(SIGSEGV\)$"):
        service.set_enrichment_model(str(other))
    assert service.settings.llm_model_path == before  # the setting is not changed
    monkeypatch.setenv("FAKE_WORKER_MODE", "ok")
    assert service.enrich(5).processed == 0  # and the engine carries on
