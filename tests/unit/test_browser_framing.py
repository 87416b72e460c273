"""The native messaging host's frames and its loop (desktop_memory/browser/framing.py, host.py), with a fake engine.

What the browser sees: every good frame answered in order, every bad one (too large, not JSON, not an object, bad
UTF-8, empty) answered with a one-line error, the stream kept in step, the host alive until the stream ends
(also inside a frame), then exit 0. The engine unreachable: captures spooled, hello says "offline".
"""

from __future__ import annotations

import io
import json
import struct
from concurrent.futures import Future
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from desktop_memory import __version__
from desktop_memory.browser import framing, host, spool
from desktop_memory.core.capture import CaptureResult
from desktop_memory.core.context import Context
from desktop_memory.core.errors import InvalidInput, StorageError
from desktop_memory.core.models import Hit, Memory, Passage
from desktop_memory.core.web import WebCapture
from desktop_memory.ipc.spawn import HostFailed

LIMIT = framing.LIMIT
EXCHANGE = {"kind": "exchange", "site": "chatgpt.com", "app": "ChatGPT", "url": "https://chatgpt.com/c/abc",
            "title": "Kettles", "conversation": "abc", "turn": "turn-1", "prompt": "What is a kettle?",
            "answer": "A pot for boiling water.", "at": 1_700_000_000, "private": False, "browser": "Chromium"}


def frame(body: bytes) -> bytes:
    return struct.pack("=I", len(body)) + body


def msg(obj: Any) -> bytes:
    return frame(json.dumps(obj).encode())


def replies(data: bytes) -> list[dict[str, Any]]:
    stream, out = io.BytesIO(data), []
    while (body := framing.read_frame(stream)) is not None:
        out.append(framing.decode(body))
    return out


class FakeEngine:
    def __init__(self) -> None:
        self.settings = SimpleNamespace(capture_enabled=True, problem=None)
        self.captured: list[Any] = []
        self.hits: list[Hit] = []
        self.spool_opened = 0
        self.searched: list[str] = []
        self.paused_until: float | None = None

    def open_spool(self, create=False):
        self.spool_opened += 1
        return 0

    def capture_paused_until(self):
        return self.paused_until

    def capture_web(self, item):
        self.captured.append(item)
        if item.private:
            return CaptureResult.skipped("private window")
        return CaptureResult.saved("added", "m1", item.title, 0)

    def search(self, query, *, limit=10, **_):
        self.searched.append(query)
        return self.hits[:limit]

    def context(self, query=None, *, ids=(), **_):
        return Context(text=f"context for {query} {','.join(ids)}", tokens=3, budget=100)


class FakeAccess:
    """EngineAccess's shape: submit(fn) -> Future; `fail` makes every call raise it (the engine cannot start)."""

    def __init__(self, engine: FakeEngine | None = None, fail: Exception | None = None) -> None:
        self.engine, self.fail, self.closed, self.calls = engine or FakeEngine(), fail, False, 0

    def submit(self, fn):
        self.calls += 1
        future: Future = Future()
        try:
            if self.fail is not None:
                raise self.fail
            future.set_result(fn(self.engine))
        except Exception as exc:  # noqa: BLE001
            future.set_exception(exc)
        return future

    def close(self):
        self.closed = True


def run(data: bytes, access: FakeAccess | None = None, folder: Path | None = None) -> tuple[int, list[dict]]:
    out = io.BytesIO()
    code = host.run(folder or Path("/nonexistent-data"), io.BytesIO(data), out, access=access or FakeAccess())
    return code, replies(out.getvalue())


# -- frames -------------------------------------------------------------------------------------------
GOOD = st.dictionaries(st.text(max_size=8), st.recursive(
    st.none() | st.booleans() | st.integers(-2**53, 2**53) | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
    max_leaves=10), max_size=5)


@given(st.lists(GOOD, max_size=8))
def test_any_sequence_of_good_frames_round_trips(messages):
    stream = io.BytesIO()
    for m in messages:
        framing.write_frame(stream, m)
    assert replies(stream.getvalue()) == messages


def test_a_frame_over_the_limit_is_skipped_and_named():
    stream = io.BytesIO(frame(b"x" * (LIMIT + 1)) + msg({"a": 1}))
    with pytest.raises(framing.FrameTooLarge, match=r"message too large \(1048577 bytes; the limit is 1 MB\)"):
        framing.read_frame(stream)
    assert framing.read_frame(stream) == b'{"a": 1}'  # still in step
    assert framing.read_frame(stream) is None


def test_a_frame_of_exactly_the_limit_is_read():
    body = json.dumps({"t": "x" * (LIMIT - 9)}).encode()
    assert len(body) == LIMIT
    assert framing.read_frame(io.BytesIO(frame(body))) == body


def test_writing_more_than_the_limit_is_refused():
    with pytest.raises(framing.FrameTooLarge):
        framing.encode({"t": "x" * LIMIT})


# -- the host loop with good and bad frames interleaved -----------------------------------------------
BAD = {
    "oversized": (frame(b"{" + b" " * LIMIT + b"}"), "message too large (1048578 bytes; the limit is 1 MB)"),
    "not_json": (frame(b"{not json"), "not JSON"),
    "not_object": (frame(b"[1, 2]"), "not a JSON object"),
    "bad_utf8": (frame(b'{"a": "\xff\xfe"}'), "not valid UTF-8"),
    "empty": (frame(b""), "not JSON"),
    "no_type": (msg({"id": 5}), "unknown request type"),
    "unknown_type": (msg({"id": 5, "type": "format-disk"}), "unknown request type"),
}
TAILS = {"none": b"", "cut_length": b"\x05\x00", "cut_body": struct.pack("=I", 50) + b'{"id": 1, "ty'}


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.one_of(st.integers(0, 10_000), st.sampled_from(sorted(BAD))), max_size=10),
       st.sampled_from(sorted(TAILS)))
def test_every_good_frame_is_answered_in_order_and_the_host_survives_bad_ones(items, tail):
    data = b"".join(msg({"id": i, "type": "hello"}) if isinstance(i, int) else BAD[i][0] for i in items)
    code, got = run(data + TAILS[tail])
    assert code == 0
    assert len(got) == len(items)
    for item, reply in zip(items, got, strict=True):
        if isinstance(item, int):
            assert reply == {"id": item, "ok": True, "version": __version__, "engine": "ready", "paused": False}
        else:
            assert reply["ok"] is False and BAD[item][1] in reply["error"] and "\n" not in reply["error"]
            assert reply["id"] == (5 if item in ("no_type", "unknown_type") else None)


def test_refused_frames_are_logged_in_one_line_without_their_content(caplog):
    with caplog.at_level("DEBUG", logger="desktop_memory.browser"):
        run(frame(b'{"secret": "hunter2 ' + b"\xff" + b'"}') + BAD["oversized"][0])
    refused = [r for r in caplog.records if r.levelname == "WARNING"]
    assert len(refused) == 2 and all("hunter2" not in r.getMessage() for r in caplog.records)


# -- requests -----------------------------------------------------------------------------------------
def test_capture_goes_to_the_engine_and_its_answer_comes_back():
    access = FakeAccess()
    _, got = run(msg({"id": "c1", "type": "capture", "capture": EXCHANGE})
                 + msg({"id": "c2", "type": "capture", "capture": {**EXCHANGE, "private": True}}), access)
    assert got[0] == {"id": "c1", "ok": True, "status": "added", "message": "Saved", "memory_id": "m1"}
    assert got[1] == {"id": "c2", "ok": True, "status": "skipped", "message": "Skipped: private window",
                      "memory_id": None}
    assert [c.turn for c in access.engine.captured] == ["turn-1", "turn-1"] and access.closed


def test_a_capture_of_the_wrong_shape_is_an_error_not_a_crash():
    access = FakeAccess()
    _, got = run(msg({"id": 1, "type": "capture", "capture": {**EXCHANGE, "prompt": 12}})
                 + msg({"id": 2, "type": "capture"}), access)
    assert got[0]["ok"] is False and "prompt must be a string" in got[0]["error"]
    assert got[1]["ok"] is False and access.engine.captured == []


def memory(n: int, content: str) -> Memory:
    return Memory(id=f"m{n}", content=content, title=f"Title {n}", source="browser", source_app="Claude",
                  source_url="https://claude.ai/chat/x", created_at=1_700_000_000 + n)


def test_search_answers_short_hits():
    engine = FakeEngine()
    long = "word " * 200
    engine.hits = [Hit(memory(1, "the kettle boils"), 1.0),
                   Hit(memory(2, long), 0.5, passage=Passage(5, 20), weak=True)]
    _, got = run(msg({"id": 3, "type": "search", "query": "kettle"}), FakeAccess(engine))
    hits = got[0]["hits"]
    assert got[0]["ok"] and len(hits) == 2
    assert hits[0] == {"id": "m1", "title": "Title 1", "snippet": "the kettle boils",
                       "when": "2023-11-14T22:13:21+00:00", "source": "browser", "source_app": "Claude",
                       "url": "https://claude.ai/chat/x", "weak": False}
    assert hits[1]["weak"] is True and hits[1]["snippet"] == long[5:20].strip()


def test_search_results_are_cut_to_fit_one_frame():
    engine = FakeEngine()
    engine.hits = [Hit(Memory(id=f"m{n}", content="x", title="t" * 30_000), 1.0) for n in range(50)]
    _, got = run(msg({"id": 3, "type": "search", "query": "x", "limit": 50}), FakeAccess(engine))
    assert got[0]["ok"] and 0 < len(got[0]["hits"]) < 50


@pytest.mark.parametrize("request_", [{"query": 3}, {"query": "x", "limit": 0}, {"query": "x", "limit": 51},
                                      {"query": "x", "limit": True}, {"query": "x", "limit": "8"}])
def test_a_bad_search_is_a_one_line_error(request_):
    _, got = run(msg({"id": 1, "type": "search", **request_}))
    assert got[0]["ok"] is False and "\n" not in got[0]["error"]


def test_context_from_ids_and_query():
    _, got = run(msg({"id": 1, "type": "context", "ids": ["m1", "m2"], "query": None})
                 + msg({"id": 2, "type": "context", "ids": "m1"}))
    assert got[0] == {"id": 1, "ok": True, "text": "context for None m1,m2"}
    assert got[1]["ok"] is False


def test_an_engine_error_is_a_one_line_error_reply():
    _, got = run(msg({"id": 1, "type": "search", "query": "x"}), FakeAccess(fail=InvalidInput("the query is empty")))
    assert got == [{"id": 1, "ok": False, "error": "the query is empty"}]


# -- the engine cannot start: spooled, offline -------------------------------------------------------
@pytest.mark.parametrize("failure", [HostFailed("the keyring is locked"), StorageError("damaged"),
                                     InvalidInput("the data folder is in use by another desktop-memory process")])
def test_when_the_engine_cannot_start_captures_are_spooled(tmp_path, failure):
    private, public = spool.new_keypair()
    spool.write_public_key(tmp_path, public)
    access = FakeAccess(fail=failure)
    code, got = run(msg({"id": 0, "type": "hello"}) + msg({"id": 1, "type": "capture", "capture": EXCHANGE})
                    + msg({"id": 2, "type": "capture", "capture": {**EXCHANGE, "private": True}})
                    + msg({"id": 3, "type": "search", "query": "x"}) + msg({"id": 4, "type": "status"}),
                    access, tmp_path)
    assert code == 0
    assert got[0]["engine"] == "offline" and got[4]["engine"] == "offline"
    assert got[1]["status"] == "spooled" and got[1]["ok"] and got[1]["memory_id"] is None
    assert got[2]["status"] == "skipped"  # a private window's text is never written, not even encrypted
    assert got[3]["ok"] is False and "engine" in got[3]["error"]
    [path] = spool.pending(tmp_path)
    assert WebCapture.from_dict(spool.open_file(path, private)["capture"]) == WebCapture.from_dict(EXCHANGE)
    assert access.calls == 1  # tried once, then not again at every message (each try may wait 15 s)


def test_no_spool_key_means_the_capture_is_refused(tmp_path):
    _, got = run(msg({"id": 1, "type": "capture", "capture": EXCHANGE}), FakeAccess(fail=HostFailed("no")), tmp_path)
    assert got == [{"id": 1, "ok": False, "error": "desktop-memory has not been started yet on this computer"}]


def test_a_real_bug_in_a_request_does_not_end_the_host():
    _, got = run(msg({"id": 1, "type": "search", "query": "x"}) + msg({"id": 2, "type": "hello"}),
                 FakeAccess(fail=ZeroDivisionError("boom")))
    assert got[0]["ok"] is False and "unexpected error" in got[0]["error"]
    assert got[1]["ok"] is True


def test_an_engine_that_does_not_answer_in_time_counts_as_offline(tmp_path, monkeypatch):
    spool.write_public_key(tmp_path, spool.new_keypair()[1])
    monkeypatch.setattr(host, "CALL_TIMEOUT_S", 0.05)

    class Stuck(FakeAccess):
        def submit(self, fn):
            self.calls += 1
            return Future()  # never answered

    _, got = run(msg({"id": 1, "type": "capture", "capture": EXCHANGE}) + msg({"id": 2, "type": "hello"}),
                 Stuck(), tmp_path)
    assert got[0]["status"] == "spooled" and got[1]["engine"] == "offline"
    assert len(spool.pending(tmp_path)) == 1


def test_hello_warms_the_engine_up_once_so_the_first_capture_does_not_wait_for_the_model():
    access = FakeAccess()
    _, got = run(msg({"id": 1, "type": "hello"}) + msg({"id": 2, "type": "hello"}), access)
    assert [g["engine"] for g in got] == ["ready", "ready"]
    assert access.engine.searched == ["warm up"]  # one search nobody waits for, after the first hello
    offline = FakeAccess(fail=StorageError("the folder is in use"))
    run(msg({"id": 1, "type": "hello"}), offline)
    assert offline.engine.searched == []
