#!/usr/bin/env python3
"""Memory and time of the exact passage scan: the cached matrix of N passage vectors (engine/store_passages.py).

Writes N random unit vectors (384 dimensions, float16 as stored) for N / 8 long memories into a new store,
then reads the matrix and scans it with a query, reporting the process's RSS growth and the scan time.

Usage (from the project root): PYTHONPATH=. .venv/bin/python bench/passages_memory.py [--passages 20000]
"""

from __future__ import annotations

import argparse
import os
import resource
import tempfile
import time
from pathlib import Path

os.environ.setdefault("DESKTOP_MEMORY_ENCRYPTION", "off")

import numpy as np  # noqa: E402

from desktop_memory.core.models import Memory, Passage  # noqa: E402
from desktop_memory.engine.store import Store  # noqa: E402


def _rss_mb() -> float:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 1e6


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--passages", type=int, default=20_000)
    args = ap.parse_args()
    rng = np.random.default_rng(1)
    per = 8
    with tempfile.TemporaryDirectory() as tmp:
        store = Store(Path(tmp) / "db")
        with store.transaction():
            for n in range(args.passages // per):
                text = "x" * 600
                store.insert(Memory(id=f"m{n}", content=text, created_at=n, updated_at=n, content_hash=f"h{n}"))
                vecs = rng.standard_normal((per, 384)).astype(np.float32)
                vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
                store.passages.put(f"m{n}", [(Passage(k * 70, k * 70 + 60), v) for k, v in enumerate(vecs)])
        before = _rss_mb()
        t0 = time.perf_counter()
        matrix = store.passages.matrix()
        read_s = time.perf_counter() - t0
        after = _rss_mb()
        q = rng.standard_normal(384).astype(np.float32)
        t0 = time.perf_counter()
        for _ in range(10):
            matrix.best(q)
        scan_ms = (time.perf_counter() - t0) * 100
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1e3
        print(f"{len(matrix.vectors)} passages ({matrix.vectors.dtype}): matrix {matrix.vectors.nbytes / 1e6:.1f} MB, "
              f"RSS +{after - before:.1f} MB (peak RSS {peak:.0f} MB), "
              f"read {read_s * 1000:.0f} ms, scan {scan_ms:.1f} ms")
        store.close()


if __name__ == "__main__":
    main()
