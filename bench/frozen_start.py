"""Cold start of the frozen app: launch -> tray icon, -> engine ready, -> model loaded, and the first search.

    bash scripts/with-desktop.sh .venv/bin/python bench/frozen_start.py dist/desktop-memory/desktop-memory [--runs 3]

Each run starts the binary in a fresh temporary home (its own data folder and caches), reads its log
until the tray icon is shown and the embedding model is loaded, then times a `search` through the
running app (the CLI of the same binary) and quits the app.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

MARKS = {"tray": "tray icon shown (system tray available: True)", "engine": "engine ready",
         "model": "embedding model loaded"}


def one_run(binary: Path) -> dict[str, float]:
    home = Path(tempfile.mkdtemp(prefix="dm-frozen-start-"))
    env = {k: v for k, v in os.environ.items() if k != "QT_QPA_PLATFORM"}
    env.update(HOME=str(home), XDG_DATA_HOME=str(home / "data"), XDG_CACHE_HOME=str(home / "cache"),
               XDG_CONFIG_HOME=str(home / "config"), DESKTOP_MEMORY_ENCRYPTION="off")
    log = home / "app.log"
    started = time.perf_counter()
    with open(log, "w") as fh:
        app = subprocess.Popen([str(binary), "app"], env=env, stdout=subprocess.DEVNULL, stderr=fh)
    seen: dict[str, float] = {}
    try:
        while len(seen) < len(MARKS) and time.perf_counter() - started < 120:
            text = log.read_text(errors="replace")
            for key, mark in MARKS.items():
                if key not in seen and mark in text:
                    seen[key] = round(time.perf_counter() - started, 3)
            time.sleep(0.01)
        t0 = time.perf_counter()
        found = subprocess.run([str(binary), "search", "anything at all", "--json"], env=env, capture_output=True,
                               text=True, timeout=60)
        seen["first_search_via_cli_s"] = round(time.perf_counter() - t0, 3)
        seen["search_ok"] = float(found.returncode == 0)
    finally:
        app.terminate()
        app.wait(30)
    return seen


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("binary", type=Path)
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args()
    runs = [one_run(args.binary) for _ in range(args.runs)]
    keys = sorted({k for r in runs for k in r})
    report = {k: statistics.median(r[k] for r in runs if k in r) for k in keys}
    report["runs"] = runs
    report["load_avg"] = os.getloadavg()
    print(json.dumps(report, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
