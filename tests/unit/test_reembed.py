"""Switching the embedding model: re-embedding in the background, search by the old model meanwhile, resume
after a kill (service/reembed.py), with a pair of fake models over real SQLite and Chroma."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import numpy as np
import pytest

from desktop_memory.cli.main import main
from desktop_memory.core.errors import ModelUnavailable
from desktop_memory.engine.settings import Settings
from desktop_memory.service import MemoryService, reembed
from tests.fakes import FakeEmbedder

OLD, NEW = "all-MiniLM-L6-v2", "multilingual-e5-small"
TOPICS = ["invoice payment overdue supplier", "kubernetes deploy rollback cluster", "dentist appointment tooth",
          "birthday party cake candles", "python traceback import error", "garden tomatoes watering"]


class FakeModel(FakeEmbedder):
    """A named fake model: bag of words with its own permutation of the dimensions (so two models' vectors
    do not compare), a gate that can hold its encoding, and a count of what it embedded."""

    def __init__(self, name: str, seed: int, gate: threading.Event | None = None) -> None:
        self.model = name
        self.vectors_id = f"fake/{name}"
        self._perm = np.random.default_rng(seed).permutation(384)
        self.gate = gate
        self.entered = threading.Event()  # the job is inside its first batch
        self.embedded = 0

    def encode(self, texts: list[str], batch_size: int = 64, *, query: bool = False) -> np.ndarray:
        if self.gate is not None and not query:
            self.entered.set()
            assert self.gate.wait(30), "the test never opened the gate"
        if not query:
            self.embedded += len(texts)
        return super().encode(texts)[:, self._perm]

    def encode_query(self, text: str) -> np.ndarray:
        return self.encode([text], query=True)[0]


def service(folder: Path, old: FakeModel, new: FakeModel) -> MemoryService:
    models = {OLD: old, NEW: new}
    return MemoryService(folder, embedder=old, embedder_for=lambda name: models[name])


def fill(svc: MemoryService, n: int) -> None:
    for i in range(n):
        svc.add(f"{TOPICS[i % len(TOPICS)]} note number {i} with detail w{i}")


def wait_for(svc: MemoryService, state: str = "idle", timeout: float = 30.0) -> dict:
    end = time.monotonic() + timeout
    while (status := svc.embedding_model_status()).state != state:
        assert time.monotonic() < end, status
        time.sleep(0.05)
    return status


@pytest.fixture(autouse=True)
def small_batches(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(reembed, "BATCH", 8)
    monkeypatch.delenv("DESKTOP_MEMORY_EMBEDDER", raising=False)


def test_search_answers_by_meaning_from_the_old_index_while_the_new_model_embeds(data_dir: Path) -> None:
    gate = threading.Event()
    old, new = FakeModel(OLD, 1), FakeModel(NEW, 2, gate)
    with service(data_dir, old, new) as svc:
        fill(svc, 30)
        status = svc.set_embedding_model(NEW)
        assert status.model == OLD and status.chosen == NEW and status.state == "re-embedding"
        assert Settings.load(data_dir).embedding_model == NEW  # the choice is kept
        hits = svc.search("dentist appointment tooth")
        # the shown cosine mixes in the previous turn's (another topic, ranking's context_weight); vectors
        # of the wrong model would give cosines near 0
        assert "dentist" in hits[0].memory.content and hits[0].explain["semantic_cosine"] > 0.3
        added = svc.add("dentist appointment moved to friday").memory  # during the job: found at once
        assert added.id in {h.memory.id for h in svc.search("dentist friday")}
        assert svc.embedder is old and svc.embedding_model_status().done < 31
        gate.set()
        done = wait_for(svc)
        assert done.model == NEW and done.done == done.total == 31
        assert svc.embedder is new and svc.store.get_meta("embedding_model") == new.vectors_id
        hits = svc.search("dentist appointment tooth")
        assert "dentist" in hits[0].memory.content and hits[0].explain["semantic_cosine"] > 0.3
        assert new.embedded == 31  # every memory once, the one added during the job included
        svc.vectors.wait_for_fill()
        assert svc.vectors.count() == 31
        assert svc.index_status().message.startswith("The vector index was switched to the new embedding model")
    with MemoryService(data_dir, embedder_for=lambda name: {OLD: old, NEW: new}[name]) as again:
        assert again.embedder is new and again.embedding_model_status().state == "idle"  # remembered
        assert "dentist" in again.search("tooth dentist")[0].memory.content


def test_a_switch_killed_midway_resumes_where_it_stopped(data_dir: Path) -> None:
    gate = threading.Event()
    old, new = FakeModel(OLD, 1), FakeModel(NEW, 2, gate)
    svc = service(data_dir, old, new)
    fill(svc, 40)
    svc.set_embedding_model(NEW)
    assert new.entered.wait(10)
    closing = threading.Thread(target=svc.close)
    closing.start()  # stops the job after its current batch
    time.sleep(0.2)
    gate.set()
    closing.join(30)
    first = new.embedded
    assert 0 < first < 40
    new2 = FakeModel(NEW, 2)
    with service(data_dir, old, new2) as svc:
        assert svc.embedding_model_status().chosen == NEW
        status = wait_for(svc)
        assert status.model == NEW and new2.embedded == 40 - first  # only what was left
        assert "garden" in svc.search("garden tomatoes")[0].memory.content


def test_switching_back_during_the_job_cancels_it(data_dir: Path) -> None:
    gate = threading.Event()
    old, new = FakeModel(OLD, 1), FakeModel(NEW, 2, gate)
    with service(data_dir, old, new) as svc:
        fill(svc, 12)
        svc.set_embedding_model(NEW)
        gate.set()
        status = svc.set_embedding_model(OLD)
        assert status.state == "idle" and status.model == OLD and svc.embedder is old
        assert not svc.store.get_meta(reembed.TARGET_KEY)
        assert "invoice" in svc.search("invoice overdue")[0].memory.content


@pytest.mark.parametrize("name", ["bge-small", "minilm\n", "e5; rm -rf /", "x" * 300])
def test_an_unknown_model_is_a_one_line_error(data_dir: Path, name: str) -> None:
    with service(data_dir, FakeModel(OLD, 1), FakeModel(NEW, 2)) as svc:
        with pytest.raises(ModelUnavailable) as err:
            svc.set_embedding_model(name)
        assert "\n" not in str(err.value) and svc.embedding_model_status().state == "idle"


def test_an_unknown_model_in_settings_json_fails_closed(data_dir: Path) -> None:
    data_dir.mkdir(parents=True, exist_ok=True)
    (data_dir / "settings.json").write_text('{"embedding_model": "bge-huge"}')
    settings = Settings.load(data_dir)
    assert settings.embedding_model == OLD and not settings.capture_enabled
    assert "embedding_model" in (settings.problem or "")


def test_cli_embedder_lists_and_refuses_an_unknown_name(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    folder = str(tmp_path / "d")
    assert main(["--data-dir", folder, "embedder"]) == 0
    shown = capsys.readouterr().out
    assert f"* {OLD}" in shown and NEW in shown and "Using all-MiniLM-L6-v2." in shown
    assert main(["--data-dir", folder, "embedder", "bge-nope"]) == 1
    err = capsys.readouterr().err
    assert "unknown embedding model 'bge-nope'" in err and err.count("\n") == 1


def test_an_import_after_the_job_finished_switches_first_then_uses_the_new_model(data_dir: Path) -> None:
    old, new = FakeModel(OLD, 1), FakeModel(NEW, 2)
    with service(data_dir, old, new) as svc:
        fill(svc, 10)
        svc.set_embedding_model(NEW)
        end = time.monotonic() + 30
        while not svc.reembed._ready:  # complete, not yet switched (no request since)
            assert time.monotonic() < end
            time.sleep(0.02)
        svc.import_records([f'{{"content": "imported line {i} about {TOPICS[i % 6]}"}}' for i in range(30)])
        assert svc.embedder is new and old.embedded == 10 and new.embedded == 40
        status = svc.embedding_model_status()
        assert status.state == "idle" and status.model == NEW
        hit = svc.search("imported line 7 garden tomatoes watering")[0]
        assert "garden" in hit.memory.content and hit.explain["semantic_cosine"] > 0.5  # the new model's vectors
