"""The enrichment queue and worker with a fake model (the real GGUF runs in tests/integration)."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest

from desktop_memory.core.errors import ModelUnavailable
from desktop_memory.engine.enrichment import Enricher, enrich_text, lead_summary
from desktop_memory.engine.llm import LocalModel, ModelInfo, check_model
from desktop_memory.service import MemoryService
from tests.fakes import FakeEmbedder

LONG = ("The quarterly planning meeting covered the Atlas migration in detail. " * 8
        + "Priya will own the rollout and Marcus reviews the budget of $40,000 next week.")


class FakeModel:
    """Stands in for LocalModel: canned JSON answers, records the thread it runs on."""

    def __init__(self, info: ModelInfo, answer: dict[str, Any] | None = None, fail: bool = False) -> None:
        self.info = info
        self.answer = answer if answer is not None else {
            "title": "Atlas migration planning", "importance": 5, "summary": "Priya will own the Atlas rollout.",
            "entities": [{"text": "Atlas", "type": "product"}, {"text": "Zanzibar", "type": "place"}]}
        self.fail = fail
        self.loaded = False
        self.last_used = 0.0
        self.load_seconds = 0.0
        self.threads: set[int] = set()
        self.calls = 0
        self.between_tokens: Any = None
        self.pauses = 0

    def load(self) -> None:
        self.threads.add(threading.get_ident())
        self.loaded = True

    def unload(self) -> None:
        self.threads.add(threading.get_ident())
        self.loaded = False

    def truncate(self, text: str, max_tokens: int) -> str:
        return text[: max_tokens * 4]

    def json_completion(self, system: str, user: str, schema: dict, *, max_tokens: int) -> dict[str, Any]:
        self.threads.add(threading.get_ident())
        self.calls += 1
        for _token in range(3):  # the real model calls this after every generated token
            if self.between_tokens is not None:
                self.pauses += 1
                self.between_tokens()
        if self.fail:
            raise RuntimeError("llama_decode returned -1")
        assert "{text}" not in user and set(self.answer) <= set(schema["properties"]) | {"summary"}
        return {k: v for k, v in self.answer.items() if k in schema["properties"]}


def fake_gguf(path: Path, size: int = 4096) -> Path:
    path.write_bytes(b"GGUF" + (3).to_bytes(4, "little") + (1).to_bytes(8, "little") + b"\0" * (size - 16))
    return path


@pytest.fixture
def gguf(tmp_path: Path) -> Path:
    return fake_gguf(tmp_path / "fake.gguf")


@pytest.fixture
def service(data_dir: Path, gguf: Path):
    with MemoryService(data_dir, embedder=FakeEmbedder()) as svc:
        svc.settings.llm_model_path = str(gguf)
        yield svc


def use_model(svc: MemoryService, **kw: Any) -> list[FakeModel]:
    made: list[FakeModel] = []

    def factory(info: ModelInfo, settings: Any) -> FakeModel:
        made.append(FakeModel(info, **kw))
        return made[-1]

    svc.enrichment.use(Enricher(svc.store.path, svc.settings, model_factory=factory, foreground=svc.foreground))
    return made


def test_new_memories_are_queued_and_enriched_in_arrival_order(service):
    use_model(service)
    ids = [service.add(f"note number {i} about Berlin").memory.id for i in range(3)]
    assert service.enrichment_status().queued == 3
    report = service.enrich(2)
    assert report.processed == 2 and report.with_model == 2 and report.remaining == 1
    states = [service.get(i).enrichment_state for i in ids]
    assert states == ["done", "done", "pending"]


def test_results_combine_patterns_and_model_and_reach_the_index(service):
    use_model(service)
    m = service.add(LONG).memory
    service.enrich(10)
    got = service.get(m.id)
    assert got.title == "Atlas migration planning"
    assert got.summary == "Priya will own the Atlas rollout."
    kinds = {(e["text"], e["type"]) for e in got.entities}
    assert {("Priya", "person"), ("$40,000", "amount"), ("Atlas", "product")} <= kinds
    assert not any(e["text"] == "Zanzibar" for e in got.entities)  # not in the text: invented
    assert got.importance > 0.5
    for query in ("title:planning", "entities:atlas", 'summary:"own the atlas rollout"'):
        rows = service.store.db.execute("SELECT rowid FROM memories_fts WHERE memories_fts MATCH ?",
                                        (query,)).fetchall()
        assert len(rows) == 1, query


def test_short_texts_are_their_own_summary_and_invented_titles_are_dropped(service):
    use_model(service, answer={"title": "Quantum chromodynamics lecture", "importance": 1, "entities": []})
    m = service.add("Lunch with Sarah at noon").memory
    service.enrich(1)
    got = service.get(m.id)
    assert got.summary == "Lunch with Sarah at noon" and got.title == ""


def test_the_persons_title_and_importance_are_kept(service):
    use_model(service)
    m = service.add(LONG, title="My own title", importance=0.9).memory
    service.enrich(1)
    got = service.get(m.id)
    assert got.title == "My own title" and got.importance == 0.9 and got.entities


def test_a_failing_model_is_retried_a_bounded_number_of_times_then_marked(service, monkeypatch):
    monkeypatch.setattr("desktop_memory.engine.store_enrichment.RETRY_BASE_S", 0.0)
    made = use_model(service, fail=True)
    m = service.add("Decision: ship Atlas on 2026-03-03").memory
    first = service.enrich(5)  # no back-off here: all attempts happen in one run
    assert (first.processed, first.retried, first.failed) == (3, 2, 1)
    assert "llama_decode" in first.errors[0]
    assert service.enrich(5).processed == 0  # marked: never retried by itself
    assert made[0].calls == service.settings.enrich_max_attempts
    got = service.get(m.id)
    assert got.enrichment_state == "failed"
    assert {"text": "2026-03-03", "type": "datetime"} in got.entities  # the deterministic part is kept
    status = service.enrichment_status()
    assert status.failed == 1 and status.queued == 0
    assert service.retry_failed_enrichment() == 1 and service.enrichment_status().queued == 1


def test_an_unusable_model_falls_back_to_patterns(service, tmp_path):
    bad = tmp_path / "notes.txt"
    bad.write_text("not a model")
    service.settings.llm_model_path = str(bad)
    m = service.add("Email ana@example.com about the $300 refund").memory
    report = service.enrich(5)
    assert report.processed == 1 and report.deterministic == 1
    assert "not a GGUF model file" in report.model_error
    got = service.get(m.id)
    assert got.enrichment_state == "basic"
    assert {"text": "ana@example.com", "type": "email"} in got.entities
    status = service.enrichment_status()
    assert status.model.usable is False and "not a GGUF" in status.model.error


def test_edits_requeue_and_a_stale_result_is_not_written(service):
    use_model(service)
    m = service.add("Meet Priya in Berlin").memory
    service.edit(m.id, content="Meet Jordan in Lisbon")
    assert service.enrichment_status().queued == 1  # one job, the newest text
    service.enrich(5)
    texts = {e["text"] for e in service.get(m.id).entities}
    assert "Lisbon" in texts and "Berlin" not in texts
    service.purge([m.id])
    assert service.enrichment_status().queued == 0


def test_the_model_runs_on_one_thread_only(service):
    made = use_model(service)
    service.add("first note about Kubernetes")
    service.enrich(1)
    service.add("second note about Docker")
    service.enrich(1)
    assert len(made) == 1 and len(made[0].threads) == 1
    assert threading.get_ident() not in made[0].threads


def test_local_model_refuses_a_second_thread(gguf):
    model = LocalModel(check_model(gguf))
    model.unload()  # claims this thread
    errors = []
    t = threading.Thread(target=lambda: errors.append(pytest.raises(RuntimeError, model.unload)))
    t.start()
    t.join()
    assert errors


def test_background_thread_enriches_new_memories_and_unloads_when_idle(service):
    made = use_model(service)
    service.settings.llm_idle_unload_s = 1
    service.start_enrichment()
    ids = [service.add(f"background note {i} with Priya").memory.id for i in range(3)]
    service.enricher.wake()
    deadline = 200
    while service.enrichment_status().queued and deadline:
        deadline -= 1
        threading.Event().wait(0.05)
    assert all(service.get(i).enrichment_state == "done" for i in ids)
    assert service.enrichment_status().running is True
    for _ in range(100):
        if not made[0].loaded:
            break
        threading.Event().wait(0.05)
    assert made[0].loaded is False  # unloaded after the idle time
    service.stop_enrichment()
    assert service.enrichment_status().running is False


def test_changing_the_model_requeues_everything(service, tmp_path):
    use_model(service)
    service.add("one note about Python")
    service.add("another about Rust")
    service.enrich(10)
    assert service.enrichment_status().queued == 0
    other = fake_gguf(tmp_path / "other.gguf", size=8192)
    result = service.set_enrichment_model(str(other))
    assert result.requeued == 2 and service.enrichment_status().queued == 2
    assert service.set_enrichment_model(str(other)).requeued == 0  # same model: nothing to redo


@pytest.mark.parametrize(
    ("content", "message"),
    [(b"", "not found"), (b"GGML" + b"\0" * 4096, "not a GGUF"), (b"GGUF\x03\0\0\0", "truncated")],
)
def test_check_model_explains_bad_files(tmp_path, content, message):
    path = tmp_path / "m.gguf"
    if content:
        path.write_bytes(content)
    with pytest.raises(ModelUnavailable, match=message):
        check_model(path)


def test_entity_filters_in_search(service):
    use_model(service, answer={"title": "", "importance": 3, "entities": []})
    a = service.add("Lunch with Priya in Berlin about the launch").memory
    b = service.add("Lunch with Marcus in Lisbon about the launch").memory
    service.enrich(10)
    assert [h.memory.id for h in service.search("lunch entity:priya")] == [a.id]
    assert [h.memory.id for h in service.search("entity:place:lisbon")] == [b.id]
    assert {h.memory.id for h in service.search("launch entity:person:")} == {a.id, b.id}
    assert service.search("launch entity:organisation:") == []


def test_enrich_text_without_a_model_and_lead_summary():
    result = enrich_text(LONG)
    assert result.by == "patterns" and result.summary == lead_summary(LONG)
    assert len(result.summary) <= 241 and result.title == ""
    assert lead_summary("One. Two three. Four.") == "One. Two three."


def test_capture_and_background_enrichment_write_at_the_same_time(service):
    """Two connections writing: neither side may fail with SQLITE_BUSY(_SNAPSHOT)."""
    use_model(service)
    service.start_enrichment()
    added = []
    for i in range(120):
        word = ["alpha", "beta", "gamma", "delta"][i % 4]
        added.append(service.add(f"parallel note {i} {word} {i * 7919}").memory.id)
        if i % 10 == 0:
            service.enricher.wake()
            service.search(f"note {i}", limit=3)
    deadline = 400
    while service.enrichment_status().queued and deadline:
        deadline -= 1
        threading.Event().wait(0.05)
    service.stop_enrichment()
    assert service.enrichment_status().queued == 0 and service.enrichment_status().failed == 0
    assert service.enricher.crashed == ""
    states = {service.get(i).enrichment_state for i in set(added)}
    assert states == {"done"}


def test_background_jobs_wait_while_the_person_is_served_explicit_ones_do_not(service):
    made = use_model(service)
    waiting = service.add("queued while the person searches; Priya reviews the Atlas budget").memory.id
    with service.foreground.busy():  # a request in progress (a long search, an import, ...)
        service.start_enrichment()
        service.enricher.wake()
        threading.Event().wait(1.0)
        assert service.get(waiting).enrichment_state == "pending" and not made  # nothing started
        report = service.enrich(1)  # asked for by the person: runs now
        assert report.processed == 1 and service.get(waiting).enrichment_state == "done"
        later = service.add("another note for the background, about the Lisbon offsite").memory.id
        threading.Event().wait(1.0)
        assert service.get(later).enrichment_state == "pending"
    for _ in range(200):  # quiet now: the background job runs
        if service.get(later).enrichment_state == "done":
            break
        threading.Event().wait(0.05)
    assert service.get(later).enrichment_state == "done"
    assert made[0].pauses >= 3  # it offered to pause after each token of the background job
    service.stop_enrichment()


def test_a_model_too_big_for_the_free_memory_is_refused_before_loading(monkeypatch):
    from desktop_memory.engine import llm

    real = check_model(None)  # the bundled GGUF is valid
    monkeypatch.setattr(llm, "available_memory", lambda: real.size // 4)
    with pytest.raises(ModelUnavailable, match=r"needs about .* GB of memory; only .* GB is available"):
        check_model(real.path)
