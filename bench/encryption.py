#!/usr/bin/env python3
"""The cost of encryption at rest: the same work on a plain and on an encrypted data folder.

Target: encrypted within 15 % of plain for import and for search. Measured through
`desktop_memory.service.MemoryService`, with the same synthetic corpus and queries as bench/speed.py
(seeded, no data set read), the real embedding model loaded once and shared by both folders:

1. opening the engine (the encrypted side also reads its key from the keyring over D-Bus);
2. import throughput of N JSON Lines records (embedding included: what a person waits for);
3. the SQLite share of an import alone: the same N memories written through the store, no embedding;
4. warm search latency p50/p95 (`service.search`, query embedding included) and keyword-only
   latency (`store.search.keyword`, FTS5 + the join) over the same distinct queries.

Both folders are open side by side and the work is paired: each import batch, store batch and query
runs on both, the side that goes first alternating, so load from other processes falls on both alike
(on a shared 2-core machine it varies several-fold within minutes). Each figure is the median over
`--rounds` fresh pairs of folders. The encrypted side needs a usable OS keyring: run it inside a desktop
session, e.g. `bash scripts/with-desktop.sh .venv/bin/python bench/encryption.py`.

    .venv/bin/python bench/encryption.py --memories 3000 --queries 200 --rounds 3 --out /tmp/enc.json
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from bench.speed import Corpus, QueryMaker, cpu_model, loadavg, pct  # noqa: E402
from desktop_memory.core.models import Memory  # noqa: E402
from desktop_memory.core.query import Filters, terms  # noqa: E402
from desktop_memory.core.text import content_hash  # noqa: E402
from desktop_memory.engine import encryption  # noqa: E402
from desktop_memory.engine.embed import Embedder  # noqa: E402
from desktop_memory.service import MemoryService  # noqa: E402

TARGET_OVERHEAD = 0.15


def _open(encrypted: bool, folder: Path, embedder: Embedder) -> MemoryService:
    if encrypted:
        os.environ.pop(encryption.ENV, None)
    else:
        os.environ[encryption.ENV] = "off"
    service = MemoryService(folder, embedder=embedder)
    assert encryption.is_plain(service.store.path) is not encrypted or not encryption.has_data(service.store.path)
    return service


def _paired(i: int) -> tuple[str, str]:
    """Alternate which side goes first, so caches and load bursts favour neither."""
    return ("plain", "encrypted") if i % 2 == 0 else ("encrypted", "plain")


def _memories(lines: list[str], tag: str) -> list[Memory]:
    now = time.time()
    out = []
    for i, line in enumerate(lines):
        text = json.loads(line)["content"] + f" ({tag} {i})"
        out.append(Memory(id=str(uuid.uuid4()), content=text, source="bench", created_at=now, updated_at=now,
                          content_hash=content_hash(text)))
    return out


def run(lines: list[str], queries: list[str], embedder: Embedder, work: Path, batch: int,
        opens: int) -> dict[str, dict[str, float]]:
    sides = ("plain", "encrypted")
    folders = {s: work / s for s in sides}
    open_ms: dict[str, list[float]] = {s: [] for s in sides}
    for i in range(opens):  # the first open creates the folder (and, encrypted, the key)
        for side in _paired(i):
            t0 = time.perf_counter()
            _open(side == "encrypted", folders[side], embedder).close()
            open_ms[side].append((time.perf_counter() - t0) * 1000)
    services = {s: _open(s == "encrypted", folders[s], embedder) for s in sides}
    try:
        imported = {s: 0.0 for s in sides}
        stored = {s: 0.0 for s in sides}
        for i, start in enumerate(range(0, len(lines), batch)):
            chunk = lines[start : start + batch]
            for side in _paired(i):
                t0 = time.perf_counter()
                services[side].import_records(chunk)
                imported[side] += time.perf_counter() - t0
            for side in _paired(i):  # the SQLite share alone: the same rows through the store, no embedding
                rows = _memories(chunk, f"copy {i}")
                t0 = time.perf_counter()
                with services[side].store.transaction():
                    for m in rows:
                        services[side].store.insert(m)
                stored[side] += time.perf_counter() - t0
        for side in sides:
            with services[side].store.transaction():  # the store-only copies do not need vectors
                services[side].store.db.execute("DELETE FROM vector_queue")
        for q in queries[:10]:
            for side in sides:
                services[side].search(q, record_access=False)
        search: dict[str, list[float]] = {s: [] for s in sides}
        keyword: dict[str, list[float]] = {s: [] for s in sides}
        for i, q in enumerate(queries[10:]):
            toks = terms(q, prefix_last=True)
            for side in _paired(i):
                t0 = time.perf_counter()
                services[side].search(q, limit=10, record_access=False)
                search[side].append((time.perf_counter() - t0) * 1000)
                if toks:
                    t0 = time.perf_counter()
                    services[side].store.search.keyword(toks, Filters(), 100)
                    keyword[side].append((time.perf_counter() - t0) * 1000)
        for side in sides:
            services[side].store.db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        sizes = {s: sum(p.stat().st_size for p in folders[s].glob("memories.sqlite3*")) for s in sides}
    finally:
        for service in services.values():
            service.close()
    assert encryption.is_plain(folders["plain"] / "memories.sqlite3")
    assert not encryption.is_plain(folders["encrypted"] / "memories.sqlite3")
    return {s: {"open_ms": statistics.median(open_ms[s]), "import_per_s": len(lines) / imported[s],
                "store_only_per_s": len(lines) / stored[s],
                "search_p50_ms": pct(search[s], 50), "search_p95_ms": pct(search[s], 95),
                "keyword_p50_ms": pct(keyword[s], 50), "keyword_p95_ms": pct(keyword[s], 95),
                "db_bytes": float(sizes[s])} for s in sides}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--memories", type=int, default=3000)
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--batch", type=int, default=250, help="import batch size (sides alternate per batch)")
    ap.add_argument("--opens", type=int, default=5, help="engine opens per side for the open time")
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--out", help="write the JSON result here")
    args = ap.parse_args(argv)

    corpus = Corpus(args.seed)
    lines = list(corpus.records(args.memories))
    queries = [q for _, q in QueryMaker(args.seed + 1, corpus).make(args.queries + 10)]
    embedder = Embedder()
    embedder.encode(["load the model before timing anything"])
    work = Path(tempfile.mkdtemp(prefix="dm-enc-bench-"))
    load = [loadavg()]
    rounds: dict[str, list[dict[str, Any]]] = {"plain": [], "encrypted": []}
    try:
        for r in range(args.rounds):
            got = run(lines, queries, embedder, work / f"round{r}", args.batch, args.opens)
            for side, figures in got.items():
                rounds[side].append(figures)
                print(f"round {r + 1} {side}: " + ", ".join(f"{k}={v:.1f}" for k, v in figures.items()),
                      file=sys.stderr, flush=True)
            load.append(loadavg())
    finally:
        shutil.rmtree(work, ignore_errors=True)
    median = {name: {k: statistics.median(r[k] for r in rs) for k in rs[0]} for name, rs in rounds.items()}
    overhead = {}
    for k in median["plain"]:
        p, e = median["plain"][k], median["encrypted"][k]
        overhead[k] = (p / e - 1) if k.endswith("_per_s") else (e / p - 1)  # positive: encryption is slower
    result = {
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "machine": f"{platform.platform()}, {os.cpu_count()} cores, {cpu_model()}",
        "python": platform.python_version(), "memories": args.memories, "queries": args.queries,
        "rounds": args.rounds, "batch": args.batch, "median": median, "overhead": overhead, "loadavg": load,
        "target_overhead": TARGET_OVERHEAD,
        "met": {k: overhead[k] <= TARGET_OVERHEAD for k in ("import_per_s", "search_p50_ms", "search_p95_ms")},
        "raw": rounds,
    }
    print(f"{'figure':<18}{'plain':>12}{'encrypted':>12}{'overhead':>10}")
    for k in median["plain"]:
        print(f"{k:<18}{median['plain'][k]:>12.2f}{median['encrypted'][k]:>12.2f}{overhead[k]:>+10.1%}")
    print("target (import, search within 15 %):", "met" if all(result["met"].values()) else f"NOT met {result['met']}")
    if args.out:
        Path(args.out).write_text(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
