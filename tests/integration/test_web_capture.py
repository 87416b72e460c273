"""The browser companion's captures in the engine (issue 34): through the real engine socket, the engine decides
(private windows, rules, pause, secrets) and keeps one memory per exchange, one session per conversation, a
regenerated answer as a version; an export of the same conversation imported later adds nothing twice."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from desktop_memory.core.web import UNTIL_RESUMED, WebCapture
from desktop_memory.ipc.client import connect
from desktop_memory.ipc.server import IpcServer

pytestmark = pytest.mark.integration


@pytest.fixture
def remote(fake_service, data_dir: Path):
    with IpcServer(fake_service, data_dir):
        service = connect(data_dir)
        assert service is not None
        with service:
            yield service


def exchange(turn: str, prompt: str, answer: str, *, conversation: str = "c-1", site: str = "chatgpt.com",
             app: str = "ChatGPT", title: str = "Trip planning", **more) -> WebCapture:
    return WebCapture.from_dict({"kind": "exchange", "site": site, "app": app, "conversation": conversation,
                                 "turn": turn, "prompt": prompt, "answer": answer, "title": title,
                                 "url": f"https://{site}/c/{conversation}", "browser": "Chromium", **more})


def browser_memories(service) -> list[dict]:
    memories = [service.get(i) for i in service.store.recent(1000)]
    return [m.to_dict() for m in memories if m.source == "browser"]


def test_a_conversation_is_one_memory_per_exchange_in_one_session(remote, fake_service):
    answers = ["Lisbon in May is mild, 20-24 °C.", "Take the 744 bus from the airport.",
               "Pastéis de Belém opens at 8:00."]
    for n, answer in enumerate(answers):
        result = remote.capture_web(exchange(f"m-{n}", f"question {n} about Lisbon", answer))
        assert result.stored and result.status == "added", result
    stored = browser_memories(fake_service)
    assert len(stored) == 3
    assert {m["content"] for m in stored} == {f"You: question {n} about Lisbon\n\nChatGPT: {a}"
                                              for n, a in enumerate(answers)}
    assert len({m["session_id"] for m in stored}) == 1
    assert all(m["source_url"] == "https://chatgpt.com/c/c-1" and m["title"] == "Trip planning" for m in stored)


def test_a_regenerated_answer_replaces_the_text_and_keeps_the_first_as_a_version(remote, fake_service):
    first = remote.capture_web(exchange("m-1", "name a fast sorting algorithm", "Quicksort."))
    again = remote.capture_web(exchange("m-1", "name a fast sorting algorithm", "Quicksort."))
    regenerated = remote.capture_web(exchange("m-1", "name a fast sorting algorithm", "Merge sort, stable."))
    assert (first.status, again.status, regenerated.status) == ("added", "duplicate", "updated")
    assert regenerated.memory_id == first.memory_id and "version" in regenerated.message
    memory = fake_service.get(first.memory_id)
    assert memory.content.endswith("Merge sort, stable.")
    assert [v.content for v in fake_service.versions(first.memory_id)] == [
        "You: name a fast sorting algorithm\n\nChatGPT: Quicksort."]


def test_private_windows_rules_pause_and_secrets_are_the_engines_to_decide(remote, fake_service):
    private = remote.capture_web(exchange("p-1", "my private question", "a private answer", private=True))
    assert not private.stored and "private window" in private.message
    fake_service.settings.capture_rules = [{"name": "no banking", "action": "ignore", "window": r"mybank\."}]
    ruled = remote.capture_web(WebCapture.from_dict({"kind": "page", "site": "mybank.example", "title": "Account",
                                                     "url": "https://mybank.example/", "text": "balance 1200"}))
    assert not ruled.stored and "no banking" in ruled.message
    remote.pause_capture(UNTIL_RESUMED)
    assert remote.capture_paused_until() is not None
    paused = remote.capture_web(exchange("q-1", "while paused", "not kept"))
    asked = remote.capture_web(WebCapture.from_dict({"kind": "selection", "site": "example.org",
                                                     "text": "a selection the person asked to remember"}))
    assert not paused.stored and "paused" in paused.message
    assert asked.stored  # what the person asks for is not stopped by the pause
    remote.pause_capture(None)
    assert remote.capture_paused_until() is None
    secret = remote.capture_web(exchange("s-1", "is this key ok: ghp_aBcdEfGhIjKlMnOpQrStUvWxYz0123456789 for CI",
                                         "Never paste tokens into a chat; revoke it."))
    assert secret.stored and secret.redactions == 1
    assert "ghp_" not in json.dumps(browser_memories(fake_service))


def test_the_pause_ends_on_its_own(remote):
    remote.pause_capture(time.time() + 0.3)
    assert remote.capture_paused_until() is not None
    time.sleep(0.4)
    assert remote.capture_paused_until() is None
    assert remote.capture_web(exchange("t-1", "after the pause", "kept again")).stored


def test_an_export_imported_later_adds_nothing_twice(remote, fake_service, tmp_path):
    captured = remote.capture_web(exchange("node-a", "What is HLC?", "A hybrid logical clock.", conversation="conv9"))
    export = {"title": "Clocks", "id": "conv9", "current_node": "node-b", "create_time": 1_700_000_000,
              "mapping": {
                  "root": {"id": "root", "message": None, "parent": None, "children": ["node-a"]},
                  "node-a": {"id": "node-a", "parent": "root", "children": ["node-b"], "message": {
                      "id": "node-a", "author": {"role": "user"}, "create_time": 1_700_000_001,
                      "content": {"content_type": "text", "parts": ["What is HLC?"]}}},
                  "node-b": {"id": "node-b", "parent": "node-a", "children": [], "message": {
                      "id": "node-b", "author": {"role": "assistant"}, "create_time": 1_700_000_002,
                      "content": {"content_type": "text", "parts": ["A hybrid logical clock."]}}}}}
    path = tmp_path / "conversations.json"
    path.write_text(json.dumps([export]), encoding="utf-8")
    from desktop_memory.imports.feed import Feed, recognise

    found = recognise(path)
    assert found is not None
    report = remote.import_records(Feed(found, 10_000_000).lines())
    assert report.added == 0 and report.duplicates == 1
    assert fake_service.store.recent(10) == [captured.memory_id]


texts = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), min_size=3, max_size=200).filter(
    lambda t: len(t.strip()) >= 3)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(turns=st.lists(st.tuples(st.sampled_from(["a", "b", "c", "d"]), texts), min_size=1, max_size=8))
def test_any_sequence_of_exchanges_keeps_the_latest_answer_of_each_turn_and_every_earlier_one(fake_service, turns):
    fake_service.erase_everything()
    conversation = f"h-{time.monotonic_ns()}"
    latest: dict[str, str] = {}
    seen: dict[str, set[str]] = {}
    for turn, answer in turns:
        item = exchange(turn, "prompt " + turn, answer, conversation=conversation)
        result = fake_service.capture_web(item)
        if not result.stored:  # a rule or the password check: only for texts that are little but a secret
            continue
        latest[turn] = item.content()
        seen.setdefault(turn, set()).add(result.memory_id)
    for turn, content in latest.items():
        (memory_id,) = seen[turn]  # one memory per turn, whatever came
        memory = fake_service.get(memory_id)
        assert memory.metadata["external_id"] == f"chatgpt:{conversation}:{turn}"
        normalised = fake_service.ingest.prepare(content, source="browser")[0].content
        assert memory.content == normalised
