"""Nothing distinct is discarded or overwritten (issue 15): generated families of look-alike records, through
import and through `add`, with the real MiniLM, SQLite and Chroma; exact duplicates never abort an import;
two importing processes keep every record they acknowledged."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from desktop_memory.core.capture import Snapshot
from desktop_memory.core.text import normalise
from desktop_memory.service import MemoryService

# the CLI with the engine in its own process (tests/conftest.py: engine_in_process)
pytestmark = [pytest.mark.integration, pytest.mark.usefixtures("engine_in_process")]

NAMES = ["Amara", "Bastian", "Chiara", "Dmitri", "Esme", "Farid", "Greta", "Hiroshi", "Ines", "Joaquin", "Kalinda",
         "Lorcan", "Mireille", "Nnamdi", "Oskar", "Paloma", "Quentin", "Rosalind", "Soren", "Talia"]
WEEKDAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]
MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August", "September", "October"]
AIRLINES = ["LH", "BA", "AF", "KL", "IB", "SK", "AY", "OS"]
CUSTOMERS = ["Blue Heron Supplies", "Calder & Finch", "Marlow Bakery", "Oakridge Tools", "Pinecrest Dental"]

# slot kinds -> strategies for one value; each template below takes one varying slot and fixed others
order_no = st.integers(1000, 99999).map(lambda n: f"ORD-{n}")
invoice_no = st.integers(100, 9999).map(lambda n: f"INV-{n:04d}")
day_month = st.tuples(st.integers(1, 28), st.sampled_from(MONTHS)).map(lambda t: f"{t[0]} {t[1]}")
weekday = st.sampled_from(WEEKDAYS)
person = st.sampled_from(NAMES)
version = st.tuples(st.integers(0, 9), st.integers(0, 30), st.integers(0, 40)).map(lambda t: "v{}.{}.{}".format(*t))
flight = st.tuples(st.sampled_from(AIRLINES), st.integers(10, 9999)).map(lambda t: f"{t[0]} {t[1]}")

TEMPLATES: list[tuple[str, st.SearchStrategy[str]]] = [
    ("Invoice {x} for {customer}: 14 units of part PX-204, payment due within 30 days.", invoice_no),
    ("Order {x} from {customer} shipped by ground freight, tracking number follows tomorrow.", order_no),
    ("Dentist appointment moved to {x} at 9:30, bring the insurance card.", day_month),
    ("The on-call rotation for the platform team starts on {x} this week.", weekday),
    ("{x} agreed to review the quarterly budget slides before the board meeting.", person),
    ("Release {x} of the sync client fixes the crash when the laptop wakes from sleep.", version),
    ("Boarding pass: flight {x} to Lisbon, gate closes 25 minutes before departure.", flight),
    ("Reminder: send {customer} the signed contract, reference {x}, by the end of the month.", invoice_no),
    ("Standup notes {x}: API migration on track, two reviews pending.", day_month),
    ("Call with {x} about the apartment lease renewal went well.", person),
]


@st.composite
def family(draw: st.DrawFn) -> list[str]:
    """3-7 texts of one template that differ only in one value (a number, date, name, version...)."""
    template, values = draw(st.sampled_from(TEMPLATES))
    customer = draw(st.sampled_from(CUSTOMERS))
    xs = draw(st.lists(values, min_size=3, max_size=7, unique=True))
    return [template.format(x=x, customer=customer) for x in xs]


@st.composite
def growing(draw: st.DrawFn) -> list[str]:
    """A sentence that grows (typing, a streamed answer): each text is a longer prefix of the next."""
    words = draw(st.lists(st.sampled_from(["the", "migration", "plan", "for", "Friday", "needs", "two", "more",
                                           "reviewers", "and", "a", "rollback", "script", "tested", "on", "staging"]),
                          min_size=6, max_size=12))
    cuts = sorted(set(draw(st.lists(st.integers(2, len(words)), min_size=2, max_size=4))) | {len(words)})
    return ["Draft: " + " ".join(words[:c]) for c in cuts]


@st.composite
def corpus(draw: st.DrawFn) -> list[dict[str, Any]]:
    """Records of 2-4 families and a growing sentence, each with its own fields, in a shuffled order."""
    texts = [t for fam in draw(st.lists(family(), min_size=2, max_size=4)) for t in fam] + draw(growing())
    texts = list(dict.fromkeys(texts))
    texts = draw(st.permutations(texts))
    return [{"content": t, "created_at": f"2026-03-{1 + i % 28:02d}T{8 + i % 10:02d}:{i % 60:02d}:00+00:00",
             "source": "notes" if i % 3 else "import", "title": f"record {i}", "tags": [f"t{i % 4}"],
             "metadata": {"n": i}, "pinned": i % 5 == 0, "importance": round((i % 10) / 10, 1)}
            for i, t in enumerate(texts)]


RELATED: list[int] = []  # look-alikes the model related in each example (checked below)


def _exported(service: MemoryService) -> list[dict[str, Any]]:
    return list(service.export_records(include_forgotten=True))


def _same_fields(record: dict[str, Any], exported: dict[str, Any]) -> None:
    for key in ("content", "source", "title", "tags", "metadata", "pinned", "importance"):
        assert exported[key] == record[key], key
    assert exported["created_at"].replace("+00:00", "") == record["created_at"].replace("+00:00", "")


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                 HealthCheck.too_slow, HealthCheck.data_too_large])
@given(records=corpus())
def test_import_then_export_returns_every_distinct_record_with_its_fields(records, real_embedder) -> None:
    with tempfile.TemporaryDirectory() as tmp, MemoryService(Path(tmp), embedder=real_embedder) as service:
        report = service.import_records([json.dumps(r) for r in records])
        assert not report.errors and report.added + report.related == len(records) and report.duplicates == 0
        exported = {r["content"]: r for r in _exported(service)}
        assert len(exported) == len(records)
        for record in records:
            _same_fields(record, exported[record["content"]])
        RELATED.append(report.related)


@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                 HealthCheck.too_slow, HealthCheck.data_too_large])
@given(records=corpus())
def test_added_one_at_a_time_every_distinct_text_is_kept(records, real_embedder) -> None:
    with tempfile.TemporaryDirectory() as tmp, MemoryService(Path(tmp), embedder=real_embedder) as service:
        for r in records:  # live, now, one source (deliberate adds: none extends another)
            service.add(r["content"], source="clipboard", title=r["title"], tags=r["tags"])
        kept: set[str] = set()
        for e in _exported(service):
            kept.add(e["content"])
            kept.update(v["content"] for v in e.get("versions", ()))
        assert {normalise(r["content"]) for r in records} <= kept
        assert service.store.count() + sum(len(service.versions(i)) for i in service.store.all_ids()) == len(records)


def test_the_generated_families_were_look_alikes_to_the_model() -> None:
    """Runs after the property test: most examples must have exercised the near-duplicate path."""
    if not RELATED:
        pytest.skip("the property test did not run")
    assert sum(1 for n in RELATED if n) >= len(RELATED) // 2, RELATED


def test_growing_text_from_one_source_within_the_window_is_one_memory_with_versions(real_service) -> None:
    parts = ["Answer: the cache", "Answer: the cache is stale because", "Answer: the cache is stale because the TTL "
             "was set to a week"]
    copied = time.time() - 3600  # an answer streaming, captured as it grew an hour ago (only captures extend)
    results = [real_service.capture(Snapshot(p, app="assistant", at=copied)) for p in parts]
    assert [r.status for r in results] == ["added", "extended", "extended"]
    assert real_service.store.count() == 1
    m = real_service.get(results[0].memory_id)
    assert m.content == parts[-1] and [v.content for v in real_service.versions(m.id)] == parts[:2]
    assert real_service.search("why is the cache stale", limit=1)[0].memory.id == m.id
    later = real_service.capture(Snapshot(parts[-1] + " and nobody noticed", app="assistant"))  # an hour on
    other = real_service.add(parts[-1] + ", says the log", source="clipboard", source_app="assistant")  # deliberate
    assert later.status == other.status == "related" and real_service.store.count() == 3


def test_exact_duplicates_inside_and_across_batches_import_completely(real_service, monkeypatch) -> None:
    import desktop_memory.service.importing as service_module

    monkeypatch.setattr(service_module, "IMPORT_BATCH", 16)  # several pipelined batches
    chat = ["Hey!", "Thanks!", "ok", "Sounds good, see you at 6", "Hey!", "Thanks!", "lol"]
    lines = [chat[i % len(chat)] if i % 3 else f"Message {i}: the venue for the party on day {i} is booked"
             for i in range(120)]
    report = real_service.import_records([json.dumps({"content": t, "source": "chat"}) for t in lines])
    assert not report.errors and report.stored == len(lines)
    assert report.duplicates == len(lines) - len(set(lines))
    assert sorted(r["content"] for r in _exported(real_service)) == sorted(set(lines))


def _import_cli(data: Path, src: Path, acked: dict[str, int], key: str) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run([sys.executable, "-m", "desktop_memory", "--data-dir", str(data), "import", str(src)],
                          capture_output=True, text=True, timeout=600)
    counts = [int(m.group(1)) for m in re.finditer(r"committed (\d+)", proc.stderr)]
    acked[key] = counts[-1] if counts else 0
    return proc


def _two_writers(tmp_path: Path) -> tuple[list[list[str]], list[Path]]:
    texts = [[f"Courier {w} delivered parcel {n} to loading dock {n % 7} on the north side" for n in range(300)]
             for w in ("Ana", "Ben")]
    files = []
    for w, lines in enumerate(texts):
        f = tmp_path / f"writer{w}.jsonl"
        f.write_text("".join(json.dumps({"content": t, "source": f"w{w}"}) + "\n" for t in lines))
        files.append(f)
    return texts, files


def _run_both(data: Path, files: list[Path]) -> tuple[dict[str, int], list[subprocess.CompletedProcess[str]]]:
    acked: dict[str, int] = {}
    procs: list[subprocess.CompletedProcess[str]] = []
    threads = [threading.Thread(target=lambda f=f: procs.append(_import_cli(data, f, acked, f.name))) for f in files]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return acked, procs


def test_two_importing_processes_keep_every_acknowledged_record(tmp_path: Path, real_embedder) -> None:
    data = tmp_path / "d"
    texts, files = _two_writers(tmp_path)
    acked, procs = _run_both(data, files)
    for p in procs:  # a process that could not get the folder says so; it acknowledged nothing
        assert p.returncode == 0 or ("in use" in p.stderr and p.returncode == 1), p.stderr[-500:]
    assert sum(acked.values()) >= 300
    with MemoryService(data, embedder=real_embedder) as service:
        stored = {r["content"] for r in service.export_records()}
    for f, lines in zip(files, texts, strict=True):
        assert set(lines[: acked[f.name]]) <= stored


def test_two_importing_processes_through_the_engine_host_keep_all(tmp_path: Path, real_embedder) -> None:
    from desktop_memory.ipc.spawn import HostProcess

    data = tmp_path / "d"
    texts, files = _two_writers(tmp_path)
    host = HostProcess(data, enrich=False)
    remote = host.open()
    try:
        acked, procs = _run_both(data, files)
        assert [p.returncode for p in procs] == [0, 0], [p.stderr[-500:] for p in procs]
        assert acked == {f.name: 300 for f in files}
        stored = {r["content"] for r in remote.export_records()}
        assert set(texts[0]) | set(texts[1]) <= stored and remote.stats().memories == 600
    finally:
        remote.close()
        host.stop()


def test_cli_search_groups_look_alikes_and_expand_lists_them(tmp_path: Path) -> None:
    data, src = tmp_path / "d", tmp_path / "invoices.jsonl"
    texts = [f"Invoice INV-{n} for Calder & Finch: 14 units of part PX-204, shipped by ground freight, payment due "
             "within 30 days to the usual account." for n in (1691, 1693, 1695)]
    src.write_text("".join(json.dumps({"content": t}) + "\n" for t in texts))

    def cli(*args: str) -> str:
        proc = subprocess.run([sys.executable, "-m", "desktop_memory", "--data-dir", str(data), *args],
                              capture_output=True, text=True, timeout=300)
        assert proc.returncode == 0, proc.stderr
        return proc.stdout

    assert "Imported 3 new (2 grouped with similar ones)" in cli("import", str(src))
    assert "+2 similar" in cli("search", "invoice INV-1693 Calder")
    (hit, *rest) = json.loads(cli("search", "invoice INV-1693 Calder", "--json"))
    assert hit["content"] == texts[1] and len(hit["similar"]) == 2 and not any(t in texts for t in
                                                                              (r["content"] for r in rest))
    expanded = json.loads(cli("search", "invoice INV-1693 Calder", "--json", "--expand"))
    assert {h["content"] for h in expanded} >= set(texts) and all(h["similar"] == [] for h in expanded)
    ctx = cli("context", "--id", hit["similar"][0], "--id", hit["similar"][1])
    assert sum(t in ctx for t in texts) == 2 and texts[1] not in ctx
