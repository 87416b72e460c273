"""The passage backlog (an upgrade's backfill, a new model) is background work: the first search does not wait for
it, it drains after the person's requests, and a kill part-way loses nothing (real store, MiniLM)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap

import pytest

from desktop_memory.core.models import Memory
from desktop_memory.core.passages import split
from desktop_memory.core.text import content_hash
from desktop_memory.service import MemoryService
from desktop_memory.service.passage_backlog import BATCH

pytestmark = pytest.mark.integration

WORDS = ["harbour", "lantern", "copper", "meadow", "violin", "glacier", "orchard", "pepper", "velvet", "compass",
         "tunnel", "falcon", "ember", "quarry", "saddle", "thistle", "marble", "beacon", "canyon", "ribbon"]
LONG = 5 * BATCH  # long memories queued: five batches


def _text(n: int) -> str:
    lines = [f"Line {k} of note {n}: the {WORDS[(n + k) % 20]} and the {WORDS[(3 * n + k) % 20]} were "
             f"mentioned again while we talked about {WORDS[(n * k) % 20]}." for k in range(40)]
    return "\n".join(lines)


def _queue_long_memories(folder) -> int:
    """A store whose long memories wait in the passage queue, as after the m006 upgrade; their passages' count."""
    with MemoryService(folder) as svc:
        with svc.store.transaction():
            for n in range(LONG):
                text = _text(n)
                svc.store.insert(Memory(id=f"long{n:03d}", content=text, source="note", created_at=1e9 + n,
                                        updated_at=1e9 + n, content_hash=content_hash(text)))
        assert svc.store.passages.queue_length() == LONG
    return sum(len(split(_text(n))) for n in range(LONG))


def _rows(svc: MemoryService) -> int:
    return int(svc.store.scalar("SELECT count(*) FROM passage_vectors"))


def test_the_first_search_does_not_wait_for_the_backlog(tmp_path):
    total = _queue_long_memories(tmp_path / "d")
    with MemoryService(tmp_path / "d") as svc:
        hits = svc.search("violin glacier", limit=5, record_access=False)
        assert hits and all(h.passage is None for h in hits)  # by the memories' own vectors and words meanwhile
        assert svc.store.passages.queue_length() > 0  # the backlog waits for the person's request to end
        backlog = svc.vector_sync.backlog
        assert backlog is not None and backlog.running
        assert backlog.wait(120)
        assert backlog.error is None
        assert svc.store.passages.queue_length() == 0 and _rows(svc) == total
        hits = svc.search("violin glacier", limit=5, record_access=False)
        assert hits and all(h.passage is not None for h in hits)  # now shown by passage


def test_an_edit_embeds_its_own_passages_at_once(tmp_path):
    _queue_long_memories(tmp_path / "d")
    with MemoryService(tmp_path / "d") as svc:
        svc.vector_sync.backlog.stop()  # no background work in this test
        edited = _text(99)
        svc.edit("long003", content=edited)
        assert "long003" not in svc.store.passages.queued(LONG)
        assert len(svc.store.passages.spans(["long003"])["long003"]) == len(split(edited))
        assert svc.store.passages.queue_length() == LONG - 1  # the rest still waits for the background


def test_a_kill_during_the_backlog_resumes_at_the_next_start(tmp_path):
    folder = tmp_path / "d"
    total = _queue_long_memories(folder)
    script = textwrap.dedent(f"""
        import sys, time
        from desktop_memory.service import MemoryService
        svc = MemoryService(__import__("pathlib").Path({str(folder)!r}))
        svc.search("violin", limit=3, record_access=False)
        while True:
            print(svc.store.passages.queue_length(), flush=True)
            time.sleep(0.05)
    """)
    proc = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True,
                            env={**os.environ, "DESKTOP_MEMORY_SERVICE": "off"})
    assert proc.stdout is not None
    left = LONG
    for line in proc.stdout:
        left = int(line)
        if left <= LONG - BATCH:  # at least one batch written, more to come
            break
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=60)
    proc.stdout.close()
    assert 0 < left <= LONG - BATCH
    with MemoryService(folder) as svc:
        queued = set(svc.store.passages.queued(LONG))
        assert 0 < len(queued) <= left  # what was written stayed written
        done = svc.store.passages.spans([f"long{n:03d}" for n in range(LONG)])
        assert not queued & done.keys()  # a memory is either done, whole, or still queued
        assert all(len(ps) == len(split(_text(int(mid[4:])))) for mid, ps in done.items())
        svc.search("violin", limit=3, record_access=False)  # wakes the backlog
        assert svc.vector_sync.backlog.wait(120)
        assert svc.store.passages.queue_length() == 0 and _rows(svc) == total
