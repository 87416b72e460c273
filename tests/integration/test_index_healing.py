"""A damaged or missing vector index heals itself from SQLite's vector copies (issue 16, item 2).

Real Chroma and SQLite throughout; the CLI tests use the real MiniLM (they search by meaning), the
in-process ones the FakeEmbedder (the model does not matter there).
"""

from __future__ import annotations

import json
import os
import random
import shutil
import sqlite3
import subprocess
import sys
import threading
from pathlib import Path

import numpy as np
import pytest

from desktop_memory.engine import index_health
from desktop_memory.engine.vectors import VectorIndex
from desktop_memory.service import MemoryService
from desktop_memory.service.reports import IndexStatus
from tests.fakes import FakeEmbedder

pytestmark = pytest.mark.integration
CLI = [sys.executable, "-m", "desktop_memory"]

NEEDLES = [
    ("The plumber comes on Thursday at 9 to repair the leaking pipe under the kitchen sink.",
     "when is someone fixing the water leak in the kitchen"),
    ("Our flight to Lisbon leaves from gate B22 at 6:40 in the morning; check in online the day before.",
     "what time does the plane to Portugal depart"),
    ("Remember to renew the car insurance before the end of March, the broker is Helvetia.",
     "vehicle policy renewal deadline"),
]
TOPICS = ["meeting notes", "grocery list", "deploy log", "book quote", "recipe step", "shell history", "todo"]


def filler(n: int, seed: int = 3, tag: str = "f") -> list[str]:
    """Look-alike notes: repeated phrases, numbers, a few long and a few tiny ones."""
    rng = random.Random(seed)
    words = ["alpha", "beta", "gamma", "delta", "kafka", "postgres", "docker", "rust", "python", "vector",
             "index", "memory", "clipboard", "search", "window", "tray", "invoice", "budget", "sprint", "review",
             "deadline", "backup", "server", "latency"]
    out = []
    for i in range(n):
        size = rng.choice([3, 12, 12, 12, 40])
        text = f"{rng.choice(TOPICS)} {tag}{i}: " + " ".join(rng.choice(words) for _ in range(size))
        out.append(json.dumps({"content": text, "source": "import"}))
    return out


def cli(data: Path, *args: str, stdin: str | None = None, timeout: float = 300) -> subprocess.CompletedProcess:
    """The engine in the command's own process (no service): these tests damage its files between commands
    and kill it mid-write."""
    return subprocess.run([*CLI, "--data-dir", str(data), *args], input=stdin.encode() if stdin else None,
                          capture_output=True, timeout=timeout, env={**os.environ, "DESKTOP_MEMORY_SERVICE": "off"})


def stored(data: Path) -> int:
    """Memories in the (plain) database, read without the engine."""
    with sqlite3.connect(f"file:{data / 'memories.sqlite3'}?mode=ro", uri=True) as db:
        return int(db.execute("SELECT count(*) FROM memories").fetchone()[0])


def segment(data: Path) -> Path:
    (seg,) = index_health.segment_dirs(data / "vectors")
    return seg


def assert_finds_needles(data: Path) -> subprocess.CompletedProcess:
    queries = "\n".join(q for _, q in NEEDLES) + "\n"
    proc = cli(data, "search", "-", "--limit", "3", "--json", stdin=queries)
    assert proc.returncode == 0, proc.stderr.decode()
    results = [json.loads(line) for line in proc.stdout.decode().splitlines()]
    for (needle, query), hits in zip(NEEDLES, results, strict=True):
        assert hits and hits[0]["content"] == needle, (query, [h["content"][:40] for h in hits])
    return proc


@pytest.fixture(scope="module")
def base_folder(tmp_path_factory) -> Path:
    """1,200 memories imported by the CLI (Chroma persists its HNSW files every 1,000)."""
    root = tmp_path_factory.mktemp("heal")
    src = root / "in.jsonl"
    lines = filler(1200) + [json.dumps({"content": n}) for n, _ in NEEDLES]
    src.write_text("\n".join(lines) + "\n")
    data = root / "base"
    proc = cli(data, "import", str(src))
    assert proc.returncode == 0, proc.stderr.decode()
    assert (segment(data) / "index_metadata.pickle").exists()
    return data


@pytest.fixture
def folder(base_folder: Path, tmp_path: Path) -> Path:
    data = tmp_path / "data"
    shutil.copytree(base_folder, data)
    return data


def _garbage_header(data: Path) -> None:
    (segment(data) / "header.bin").write_bytes(random.Random(1).randbytes(100))


def _garbage_pickle(data: Path) -> None:
    (segment(data) / "index_metadata.pickle").write_bytes(b"\x80\x04garbage" + random.Random(2).randbytes(500))


def _sparse_link_lists(data: Path) -> None:
    os.truncate(segment(data) / "link_lists.bin", 4 << 40)


def _deleted(data: Path) -> None:
    shutil.rmtree(data / "vectors")


@pytest.mark.parametrize("damage", [_garbage_header, _garbage_pickle, _sparse_link_lists, _deleted],
                         ids=["garbage-header", "garbage-pickle", "sparse-4T-link-lists", "deleted"])
def test_the_next_command_works_and_the_index_is_rebuilt(folder: Path, damage) -> None:
    damage(folder)
    proc = assert_finds_needles(folder)
    note = proc.stderr.decode()
    assert f"has been rebuilt from the database ({stored(folder):,} vectors)" in note, note
    assert ("was missing" if damage is _deleted else "was damaged") in note
    assert not list(folder.glob("vectors.broken-*"))  # deleted once the rebuild completed
    assert index_health.inspect(folder / "vectors", thorough=True) is None
    doctor = cli(folder, "doctor", "--json")
    assert doctor.returncode == 0, doctor.stderr.decode()
    report = json.loads(doctor.stdout)
    assert report["ok"] and report["vectors_match"]
    last = report["vector_index"]["last_repair"]
    assert last["vectors"] == stored(folder)
    assert last["cause"] == ("was missing" if damage is _deleted else "was damaged")


def test_doctor_right_after_damage_reports_the_rebuild_in_words(folder: Path) -> None:
    _garbage_header(folder)
    proc = cli(folder, "doctor")
    assert proc.returncode == 0, proc.stderr.decode()
    text = proc.stdout.decode()
    assert f"The vector index was damaged and has been rebuilt from the database ({stored(folder):,} vectors)." in text
    assert "header.bin is not consistent" in text and "{" not in text.split("vector repairs:")[1]


@pytest.mark.skipif(not shutil.which("strace"), reason="needs strace (scripts/dev.sh installs it)")
def test_kill_while_chroma_writes_its_index(folder: Path, tmp_path: Path) -> None:
    """SIGKILL at the 3rd write(2) to link_lists.bin during an import (strace injects it)."""
    links = segment(folder) / "link_lists.bin"
    src = tmp_path / "more.jsonl"
    src.write_text("\n".join(filler(2500, seed=9, tag="m")) + "\n")
    killer = ["strace", "-f", "-qq", "-o", os.devnull, "-P", str(links), "-e", "trace=write,pwrite64,writev",
              "-e", "inject=write,pwrite64,writev:signal=SIGKILL:when=3"]
    proc = subprocess.run([*killer, *CLI, "--data-dir", str(folder), "import", str(src)],
                          capture_output=True, timeout=600, env={**os.environ, "DESKTOP_MEMORY_SERVICE": "off"})
    assert proc.returncode in (-9, 137), proc.stderr.decode()[-500:]
    assert index_health.was_left_open(folder / "vectors")
    assert index_health.inspect(folder / "vectors", thorough=True) is not None  # the state issue 16 saw

    found = assert_finds_needles(folder)
    assert "was damaged and has been rebuilt from the database" in found.stderr.decode()
    doctor = cli(folder, "doctor", "--json")
    assert doctor.returncode == 0, doctor.stderr.decode()
    report = json.loads(doctor.stdout)
    assert report["ok"] and report["vectors_match"]
    # the copies of every memory indexed before the kill; the batch still queued was written from the queue
    assert 1203 <= report["vector_index"]["last_repair"]["vectors"] <= stored(folder)
    assert report["vector_repairs"]["orphans"] == 0


# -- in process, with the fake embedder ------------------------------------------------------
def _fake_folder(data: Path, n: int = 1500) -> list[str]:
    with MemoryService(data, embedder=FakeEmbedder()) as service:
        service.import_records(filler(n, seed=5))
        return sorted(service.store.all_ids())


def test_a_level0_neighbour_beyond_the_index_is_caught_after_a_crash(tmp_path: Path) -> None:
    """Damage only the thorough check sees (Chroma would read past its arrays): found when the last
    process did not close the index, in a child process so that a miss cannot take pytest down."""
    data = tmp_path / "d"
    _fake_folder(data)
    seg = segment(data)
    header = index_health.read_header(seg)
    with open(seg / "data_level0.bin", "r+b") as fh:
        fh.seek(7 * header.stride)
        count = int.from_bytes(fh.read(4), "little") & 0xFFFF
        assert count > 0
        fh.write((10**9).to_bytes(4, "little"))  # its first neighbour
    index_health.mark_open(data / "vectors")  # as a kill leaves it
    assert index_health.inspect(data / "vectors", thorough=False) is None
    assert "neighbour beyond" in (index_health.inspect(data / "vectors", thorough=True) or "")
    code = ("import sys; from pathlib import Path; from desktop_memory.service import MemoryService; "
            "from tests.fakes import FakeEmbedder\n"
            "with MemoryService(Path(sys.argv[1]), embedder=FakeEmbedder()) as s:\n"
            "    hits = s.search('kafka postgres', limit=5)\n"
            "    s.vectors.wait_for_fill()\n"
            "    print(len(hits), s.vectors.count(), s.store.count())")
    proc = subprocess.run([sys.executable, "-c", code, str(data)], capture_output=True, timeout=300,
                          cwd=Path(__file__).parents[2])
    assert proc.returncode == 0, proc.stderr.decode()[-800:]
    hits, in_index, stored = map(int, proc.stdout.split())
    assert hits == 5 and in_index == stored


def test_clean_open_and_close_leave_no_marker(tmp_path: Path) -> None:
    data = tmp_path / "d"
    with MemoryService(data, embedder=FakeEmbedder()) as service:
        service.add("a note about kafka")
        service.sync_vectors()
        assert index_health.was_left_open(data / "vectors")
    assert not index_health.was_left_open(data / "vectors")
    with MemoryService(data, embedder=FakeEmbedder()) as service:
        assert service.search("kafka")
        assert service.index_status() == IndexStatus("ok", "")


def test_search_while_rebuilding_is_exact_and_writes_meanwhile_win(tmp_path: Path, monkeypatch) -> None:
    data = tmp_path / "d"
    ids = _fake_folder(data, 2000)
    with MemoryService(data, embedder=FakeEmbedder()) as service:
        expected = [h.memory.id for h in service.search("kafka postgres docker latency", limit=10,
                                                        record_access=False)]
    _garbage_header(data)
    gate = threading.Event()
    real_fill = VectorIndex._run_fill

    def slow_fill(self, *args):
        gate.wait(60)
        real_fill(self, *args)

    monkeypatch.setattr(VectorIndex, "_run_fill", slow_fill)
    with MemoryService(data, embedder=FakeEmbedder()) as service:
        got = [h.memory.id for h in service.search("kafka postgres docker latency", limit=10,
                                                   record_access=False)]
        status = service.index_status()
        assert status.state == "rebuilding" and status.done == 0 and "search works meanwhile" in status.message
        assert got == expected  # exact cosines over the copies: same ranking as the healthy index
        gone, edited = ids[0], ids[1]
        service.purge([gone])
        service.edit(edited, content="a zebra crossing near the harbour")
        added = service.add("an okapi in the museum garden").memory.id
        for _ in range(40):
            service.add(f"filler {_} sprint review")
        assert service.search("zebra crossing harbour", limit=1)[0].memory.id == edited
        gate.set()
        report = service.doctor()  # waits for the rebuild, then compares every id
        assert report.vector_index.state == "rebuilt" and report.vector_index.vectors == len(ids)
        assert report.vector_repairs.orphans == 0 and report.vector_repairs.missing == 0
        assert report.vectors_match and report.ok
        assert gone not in service.vectors.all_ids() and added in service.vectors.all_ids()
        vec = service.vectors.vectors([edited])[edited]
        assert float(vec @ FakeEmbedder().encode(["a zebra crossing near the harbour"])[0]) > 0.99


def test_chroma_failing_at_work_replaces_the_index_and_search_still_answers(tmp_path: Path, monkeypatch) -> None:
    from chromadb.errors import InternalError

    data = tmp_path / "d"
    _fake_folder(data, 300)
    with MemoryService(data, embedder=FakeEmbedder()) as service:
        index = service.vectors
        fail = {"left": 1}
        real_query = index._col.query

        def broken(*a, **kw):
            if fail["left"]:
                fail["left"] -= 1
                raise InternalError("Error in compaction: Failed to apply logs to the hnsw segment writer")
            return real_query(*a, **kw)

        monkeypatch.setattr(index._col, "query", broken)
        assert service.search("kafka postgres", limit=5)  # keyword side answers; no exception
        assert index.damage and index.needs_rebuild
        hits = service.search("kafka postgres", limit=5)  # this one starts the rebuild
        assert hits
        index.wait_for_fill()
        assert service.index_status().state == "rebuilt"
        assert service.vectors.count() == service.store.count(include_forgotten=True) == 300


def test_doctor_reports_what_was_repaired_when_the_index_opened(tmp_path: Path) -> None:
    """Issue 16: the open-time reconcile did the work, doctor then said 0 repairs."""
    data = tmp_path / "d"
    ids = _fake_folder(data, 600)
    with MemoryService(data, embedder=FakeEmbedder()) as service:
        service.vectors.delete(ids[40:65])  # 25 memories whose vectors are missing from the index
        stale = ids[:40]  # rows deleted behind Chroma's back: stale vectors in the index
        service.store.db.execute(f"DELETE FROM memories WHERE id IN ({','.join('?' * len(stale))})", stale)
        service.store.db.execute("DELETE FROM vector_queue")
    with MemoryService(data, embedder=FakeEmbedder()) as service:
        report = service.doctor()
    assert report.vector_repairs.orphans == 40 and report.vector_repairs.missing == 25
    assert report.vectors_match and report.ok


def test_memories_without_a_vector_copy_are_embedded_when_rebuilding(tmp_path: Path) -> None:
    data = tmp_path / "d"
    ids = _fake_folder(data, 200)
    with MemoryService(data, embedder=FakeEmbedder()) as service:
        service.store.db.execute("DELETE FROM memory_vectors WHERE rowid IN (SELECT rowid FROM memories "
                                 "WHERE id IN (?, ?, ?))", ids[:3])
    shutil.rmtree(data / "vectors")
    with MemoryService(data, embedder=FakeEmbedder()) as service:
        assert service.vectors.count() >= 3  # the three were embedded on the spot
        service.vectors.wait_for_fill()
        status = service.index_status()
        assert status.state == "rebuilt" and status.vectors == len(ids) - 3 and status.embedded == 3
        assert "3 to embed again" in status.message
        assert service.vectors.all_ids() == service.store.all_ids()
        assert np.isfinite(service.vectors.vectors(ids[:1])[ids[0]]).all()


def test_a_rebuild_killed_part_way_resumes_at_the_next_open(tmp_path: Path) -> None:
    data = tmp_path / "d"
    ids = _fake_folder(data, 400)
    with MemoryService(data, embedder=FakeEmbedder()) as service:
        service.vectors.delete(ids[100:])  # as a kill leaves it: the first 100 written, 300 to go
    index_health.set_rebuilding(data / "vectors", True)
    index_health.mark_open(data / "vectors")
    with MemoryService(data, embedder=FakeEmbedder()) as service:
        assert service.search("kafka postgres", limit=3)
        service.vectors.wait_for_fill()
        status = service.index_status()
        assert status.state == "rebuilt" and status.cause == "was left half rebuilt"
        assert service.vectors.all_ids() == service.store.all_ids()
    assert not index_health.is_rebuilding(data / "vectors")
    assert not index_health.was_left_open(data / "vectors")
