"""Cost of the vector index's self-healing (issue 16 item 2): a normal open, the check after a crash,
and a rebuild from SQLite's vector copies.

    .venv/bin/python bench/index_heal.py [--memories 10000] [--folder /tmp/dm-heal]

The FakeEmbedder fills the folder (a rebuild embeds nothing: it copies the stored vectors), so the
figures are Chroma's and SQLite's, not the model's.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
os.environ.setdefault("DESKTOP_MEMORY_ENCRYPTION", "off")

from desktop_memory.engine import index_health  # noqa: E402
from desktop_memory.engine.vectors import VectorIndex  # noqa: E402
from desktop_memory.service import MemoryService  # noqa: E402
from tests.fakes import FakeEmbedder  # noqa: E402

WORDS = ["meeting", "budget", "invoice", "kafka", "postgres", "docker", "deploy", "latency", "sprint", "review",
         "backup", "server", "window", "tray", "clipboard", "search", "recipe", "garlic", "onion", "flight", "hotel",
         "museum", "garden", "harbour", "zebra", "okapi"]


def build(folder: Path, n: int) -> None:
    rng = random.Random(11)
    lines = [json.dumps({"content": f"note {i}: " + " ".join(rng.choice(WORDS) for _ in range(rng.randint(4, 40)))})
             for i in range(n)]
    with MemoryService(folder, embedder=FakeEmbedder()) as service:
        service.import_records(lines)


def ms(seconds: float) -> str:
    return f"{seconds * 1000:.2f} ms"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--memories", type=int, default=10_000)
    ap.add_argument("--folder", type=Path, default=Path("/tmp/dm-heal-bench"))
    args = ap.parse_args()
    base = args.folder / "base"
    if not base.exists():
        t = time.perf_counter()
        build(base, args.memories)
        print(f"built {args.memories} memories in {time.perf_counter() - t:.1f} s")
    vectors = base / "vectors"

    quick = [0.0] * 20
    for i in range(len(quick)):
        t = time.perf_counter()
        index_health.inspect(vectors, thorough=False)
        index_health.was_left_open(vectors)
        quick[i] = time.perf_counter() - t
    thorough = []
    for _ in range(5):
        t = time.perf_counter()
        assert index_health.inspect(vectors, thorough=True) is None
        thorough.append(time.perf_counter() - t)
    marker = []
    for _ in range(20):
        t = time.perf_counter()
        index_health.mark_open(vectors)
        index_health.mark_closed(vectors)
        marker.append(time.perf_counter() - t)
    print(f"every open: header + sizes check {ms(statistics.median(quick))}, marker write + remove "
          f"{ms(statistics.median(marker))} (medians)")
    print(f"after a crash: the thorough check {ms(statistics.median(thorough))} (median of 5)")

    opens = []
    for _ in range(5):
        t = time.perf_counter()
        index = VectorIndex(vectors)
        opens.append(time.perf_counter() - t)
        index.close()
    print(f"VectorIndex open (checks, marker, Chroma client, first count) {ms(statistics.median(opens))} (median of 5)")

    index = VectorIndex(vectors)
    counts = []
    for _ in range(20):
        t = time.perf_counter()
        index.count()
        counts.append(time.perf_counter() - t)
    index.close()
    print(f"of which the first count() that makes Chroma load the segment now: a later count() costs "
          f"{ms(statistics.median(counts))}")

    for with_searches in (False, True):
        work = args.folder / "damaged"
        shutil.rmtree(work, ignore_errors=True)
        shutil.copytree(base, work)
        (index_health.segment_dirs(work / "vectors")[0] / "header.bin").write_bytes(os.urandom(100))
        with MemoryService(work, embedder=FakeEmbedder()) as service:
            t = time.perf_counter()
            index = service.vectors  # moves the damaged index aside, loads the copies, starts the fill
            started = time.perf_counter() - t
            searches = []
            while with_searches and index.filling:
                q = time.perf_counter()
                service.search("kafka postgres latency", limit=10, record_access=False)
                searches.append(time.perf_counter() - q)
                time.sleep(1.0)  # the rebuild waits for 0.5 s without requests (Foreground)
            index.wait_for_fill()
            total = time.perf_counter() - t
            after = []
            for _ in range(10):
                q = time.perf_counter()
                service.search("kafka postgres latency", limit=10, record_access=False)
                after.append(time.perf_counter() - q)
            status = service.index_status()
        print(f"rebuild of {status.vectors} vectors{' with a search every second' if with_searches else ''}: "
              f"open + copies loaded + thread started {ms(started)}, complete after {total:.1f} s")
        if searches:
            print(f"search during the rebuild: median {ms(statistics.median(searches))} over {len(searches)} "
                  f"(max {ms(max(searches))}); after it: median {ms(statistics.median(after))}")

if __name__ == "__main__":
    main()
