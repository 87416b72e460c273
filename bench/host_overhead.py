"""What the engine host process costs: start to ready, stop, per-call socket round trip, memory.

Runs on an existing data folder (e.g. the one bench/gui_stall.py leaves behind and prints), first through
a host process (as the tray app does), then with the engine in this process, with the same searches.

    .venv/bin/python bench/host_overhead.py --data-dir DIR [--searches 50]   # DIR: the folder gui_stall.py printed
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # this checkout's desktop_memory
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")

from desktop_memory.ipc.spawn import HostProcess  # noqa: E402
from desktop_memory.service import MemoryService  # noqa: E402

QUERIES = ["beta release", "hotel in lisbon", "rotate staging password", "quarterly planning report"]


def rss_mb(pid: int | str = "self", field: str = "VmRSS") -> float | None:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith(field + ":"):
                return round(int(line.split()[1]) / 1024, 1)
    except OSError:
        pass
    return None


def median_ms(fn: Callable[[], Any], n: int) -> float:
    times = []
    for _ in range(n):
        t = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t) * 1000)
    return round(statistics.median(times), 3)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", required=True, type=Path)
    parser.add_argument("--searches", type=int, default=50)
    args = parser.parse_args()
    n = args.searches
    out: dict[str, Any] = {"load_average_before": [round(x, 2) for x in os.getloadavg()]}

    host = HostProcess(args.data_dir, enrich=False)
    t = time.perf_counter()
    remote = host.open()
    out["host_start_to_ready_s"] = round(time.perf_counter() - t, 2)
    t = time.perf_counter()
    remote.search("warm up", limit=1, record_access=False)  # loads the embedding model in the host
    out["host_first_search_s"] = round(time.perf_counter() - t, 2)
    out["socket_ping_ms"] = median_ms(remote.ping, n * 4)
    out["socket_search_ms"] = median_ms(lambda: [remote.search(q, record_access=False) for q in QUERIES], n) / 4
    out["socket_get_ms"] = median_ms(lambda: remote.stats(), n)
    out["host_rss_mb"] = rss_mb(host.pid or 0)
    remote.close()
    t = time.perf_counter()
    host.stop()
    out["host_stop_s"] = round(time.perf_counter() - t, 2)

    base = rss_mb()
    t = time.perf_counter()
    with MemoryService(args.data_dir) as service:
        out["in_process_open_s"] = round(time.perf_counter() - t, 2)
        service.search("warm up", limit=1, record_access=False)
        out["in_process_search_ms"] = median_ms(lambda: [service.search(q, record_access=False) for q in QUERIES],
                                                n) / 4
        out["in_process_stats_ms"] = median_ms(service.stats, n)
        out["in_process_engine_rss_mb"] = round((rss_mb() or 0) - (base or 0), 1)
    out["load_average_after"] = [round(x, 2) for x in os.getloadavg()]
    print(json.dumps(out, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
