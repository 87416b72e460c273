"""Enrichment's pure rules (core/enrich.py), its writes through the store, and waking the thread."""

from __future__ import annotations

import ast
import threading
import time
from pathlib import Path

import desktop_memory.engine.enrichment as enrichment
from desktop_memory.core.enrich import DETERMINISTIC, combine, good_title, lead_summary, mostly_from
from desktop_memory.core.models import Memory
from desktop_memory.engine.enrichment import Enricher
from desktop_memory.engine.settings import Settings
from desktop_memory.engine.store import Store

TEXT = ("Priya moved the Atlas launch to Berlin on March 3rd. The budget review with Marcus follows next week, "
        "and the release notes go out the day before.")


def test_a_grounded_answer_is_used():
    got = combine(TEXT, {"title": "Atlas launch moved to Berlin", "importance": 5,
                         "summary": "Priya moved the Atlas launch to Berlin.",
                         "entities": [{"text": "Atlas", "type": "product"}]}, model_id="m1", summary_chars=80)
    assert got.title == "Atlas launch moved to Berlin" and got.by == "m1"
    assert got.summary == "Priya moved the Atlas launch to Berlin."
    assert {"text": "Atlas", "type": "product"} in got.entities


def test_invented_titles_and_summaries_are_dropped():
    got = combine(TEXT, {"title": "Quantum chromodynamics lecture notes", "importance": 1,
                         "summary": "A lecture about quarks, gluons and the strong force in physics."},
                  model_id="m1", summary_chars=80)
    assert got.title == ""
    assert got.summary == lead_summary(TEXT)  # the text's own lead instead


def test_without_an_answer_only_the_patterns_run():
    short = "Call Priya about Atlas"
    for answer in (None, {}):
        got = combine(short, answer, model_id="m1")
        assert got.by == DETERMINISTIC and got.title == "" and got.summary == short
        assert 0.0 <= got.importance <= 1.0


def test_odd_answers_never_fail():
    for answer in ({"importance": "5", "entities": "Atlas"}, {"importance": 9, "entities": [1, None, {"type": "x"}]},
                   {"title": None, "summary": 42}):
        got = combine(TEXT, answer, model_id="m1", summary_chars=80)  # type: ignore[arg-type]
        assert got.title == "" and got.summary == lead_summary(TEXT)


def test_title_rules():
    assert good_title("Atlas launch", TEXT)
    assert not good_title("Atlas", TEXT)  # one word
    assert not good_title("Priya moved the Atlas launch to Berlin", TEXT)  # a long stretch copied
    assert not mostly_from("", TEXT, 0.5)
    lead = lead_summary("word " * 200, limit=50)
    assert lead.endswith("…") and len(lead) <= 51 and lead[:-1].split() == ["word"] * 10  # cut at a word
    assert lead_summary(TEXT) == TEXT  # two short sentences fit whole


def test_enrichment_module_writes_nothing_itself():
    """Every read and write of the queue and the results goes through Store methods."""
    tree = ast.parse(Path(enrichment.__file__).read_text(encoding="utf-8"))
    calls = {n.func.attr for n in ast.walk(tree) if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)}
    assert not calls & {"execute", "executemany"}


def test_wake_starts_a_waiting_thread_on_new_work_at_once(tmp_path, monkeypatch):
    monkeypatch.setattr(enrichment, "POLL_S", 60.0)  # without wake() the thread would sleep a minute
    settings = Settings(llm_model_path=str(tmp_path / "missing.gguf"))  # no model: patterns only
    store = Store(tmp_path / "db")
    enricher = Enricher(store.path, settings)
    enricher.start(background=True)
    try:
        time.sleep(0.3)  # the thread found an empty queue and waits
        with store.transaction():
            store.insert(Memory(id="m1", content="Lunch with Priya in Berlin", created_at=1, updated_at=1,
                                content_hash="h1"))
        assert store.enrichment.counts()["queued"] == 1
        enricher.wake()
        deadline = time.monotonic() + 10
        while store.enrichment.counts()["queued"] and time.monotonic() < deadline:
            time.sleep(0.05)
        assert store.enrichment.counts()["queued"] == 0
        assert store.get("m1").enrichment_state == "basic"
    finally:
        enricher.stop()
        store.close()


def test_wake_from_many_threads_while_stopped_is_harmless(tmp_path):
    enricher = Enricher(tmp_path / "db", Settings())
    threads = [threading.Thread(target=enricher.wake) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not enricher.running
