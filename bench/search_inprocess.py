#!/usr/bin/env python3
"""Search latency in one process, on a copy of an existing data folder (for alternating A/B runs).

Opens `MemoryService` on a copy of `--data-dir` (the folder itself is never touched), draws queries of 2-8
words from the stored texts (seeded), runs `--warmup` searches, then times `--queries` searches
(`search(q, limit=10)`, query embedding included) and prints p50 / p95 / mean wall time, CPU per search and
the process's peak RSS. Run it alternately from two git worktrees (`PYTHONPATH=<worktree>`) on the same
folder to compare code without rebuilding a store; `--ranking-off` turns off issue 20's ranking additions
(coverage lift, previous turn, two-step neighbours, time lift) to separate their cost from the rest.

    DESKTOP_MEMORY_ENCRYPTION=off PYTHONPATH=. .venv/bin/python bench/search_inprocess.py --data-dir DIR --label head
"""

from __future__ import annotations

import argparse
import random
import resource
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from desktop_memory.core.ranking import RankingParams  # noqa: E402
from desktop_memory.service import MemoryService  # noqa: E402

OFF = {"far_neighbour_weight": 0.0, "time_mention_boost": 0.0, "context_weight": 0.0, "coverage_boost": 0.0}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data-dir", type=Path, required=True, help="an existing data folder (copied, never changed)")
    ap.add_argument("--label", default="run")
    ap.add_argument("--queries", type=int, default=800)
    ap.add_argument("--warmup", type=int, default=30)
    ap.add_argument("--seed", type=int, default=11)
    ap.add_argument("--ranking-off", action="store_true", help="issue 20's ranking additions off")
    args = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="dm-search-ab-"))
    try:
        folder = work / "data"
        shutil.copytree(args.data_dir, folder)
        service = MemoryService(folder, ranking=RankingParams(**OFF) if args.ranking_off else None)
        rng = random.Random(args.seed)
        words: list[str] = []
        for memory in service.store.iter_all():
            words += memory.content.split()[:6]
            if len(words) > 20_000:
                break
        queries = [" ".join(rng.choice(words) for _ in range(rng.randint(2, 8)))
                   for _ in range(args.warmup + args.queries)]
        for q in queries[: args.warmup]:
            service.search(q, limit=10)
        times: list[float] = []
        cpu0 = time.process_time()
        for q in queries[args.warmup :]:
            t0 = time.perf_counter()
            service.search(q, limit=10)
            times.append((time.perf_counter() - t0) * 1000)
        cpu = (time.process_time() - cpu0) * 1000 / len(times)
        service.close()
    finally:
        shutil.rmtree(work, ignore_errors=True)
    times.sort()
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"{args.label}: p50 {statistics.median(times):.2f} p95 {times[int(0.95 * len(times))]:.2f} "
          f"mean {statistics.mean(times):.2f} ms, CPU {cpu:.2f} ms a search, peak RSS {rss:.1f} MB")


if __name__ == "__main__":
    main()
