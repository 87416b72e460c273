"""GUI stall probe: how long the GUI thread ever waits while the engine imports (and enriches) memories.

A 10 ms QTimer runs on the GUI thread with the search window open; every tick records how late it
fired. Meanwhile the engine thread opens the real engine (SQLite, Chroma, MiniLM), imports N
generated memories in batches, and the window searches as if someone typed every 0.5 s. Target: no
stall over 50 ms.

    .venv/bin/python bench/gui_stall.py [--count 10000] [--enrich]

Runs offscreen by default (QT_QPA_PLATFORM=offscreen); set QT_QPA_PLATFORM=xcb under Xvfb to use a
real X server.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import platform
import random
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")
os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")

from PySide6.QtCore import QTimer  # noqa: E402
from PySide6.QtWidgets import QApplication  # noqa: E402

from desktop_memory.engine.settings import Settings  # noqa: E402
from desktop_memory.qt.bridge import EngineBridge  # noqa: E402
from desktop_memory.qt.importing import IMPORT_CHUNK, ChunkedImport  # noqa: E402
from desktop_memory.qt.search_window import SearchWindow  # noqa: E402
from desktop_memory.service import MemoryService  # noqa: E402

TICK_MS = 10
TARGET_MS = 50
WORDS = ["release", "beta", "invoice", "meeting", "garden", "python", "deploy", "budget", "recipe", "flight",
         "hotel", "lisbon", "contract", "review", "kernel", "backup", "password", "rotate", "staging", "database",
         "coffee", "doctor", "appointment", "train", "ticket", "birthday", "present", "laptop", "battery",
         "firmware", "update", "holiday", "schedule", "report", "quarterly", "planning"]
QUERIES = ["beta release", "hotel in lisbon", "rotate staging password", "quarterly planning report",
           "doctor appointment", "laptop firmware"]


def records(n: int, seed: int = 7) -> list[str]:
    rng = random.Random(seed)
    out = []
    for i in range(n):
        words = " ".join(rng.choice(WORDS) for _ in range(rng.randint(20, 40)))
        out.append(json.dumps({"content": f"Note {i}: {words}.", "source": rng.choice(["clipboard", "manual"]),
                               "created_at": f"2026-{1 + i % 12:02d}-{1 + i % 28:02d}T12:00:00"}))
    return out


def busy_threads() -> str:
    """What the other threads are doing right after a stall (those not waiting), to see who held the GIL."""
    frames = sys._current_frames()
    parts = []
    for t in threading.enumerate():
        frame = frames.get(t.ident or -1)
        if t is threading.main_thread() or frame is None:
            continue
        names = []
        while frame is not None and len(names) < 3:
            names.append(f"{Path(frame.f_code.co_filename).name}:{frame.f_code.co_name}")
            frame = frame.f_back
        if not any(n.startswith("threading.py:wait") or n.endswith(":_worker") for n in names[:1]):
            parts.append(f"[{t.name}] " + " < ".join(names))
    return " | ".join(sorted(parts)) or "idle"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=10_000)
    parser.add_argument("--chunk", type=int, default=IMPORT_CHUNK, help="memories per import job")
    parser.add_argument("--enrich", action="store_true", help="also run background enrichment (llama.cpp)")
    args = parser.parse_args()

    app = QApplication(sys.argv[:1])
    folder = Path(tempfile.mkdtemp(prefix="gui-stall-"))
    bridge = EngineBridge(lambda: MemoryService(folder))
    window = SearchWindow(bridge, Settings())
    lines = records(args.count)
    late: dict[str, list[float]] = {"opening": [], "importing": []}
    state = {"phase": "opening", "last": time.perf_counter(), "searches": 0}
    marks: dict[str, float] = {"start": time.perf_counter()}
    errors: list[str] = []

    def fail(message: str) -> None:
        errors.append(message)
        app.quit()

    culprits: collections.Counter[str] = collections.Counter()

    def tick() -> None:
        now = time.perf_counter()
        stall = max(0.0, (now - float(state["last"])) * 1000 - TICK_MS)
        late[str(state["phase"])].append(stall)
        state["last"] = now
        if stall > TARGET_MS:  # what the engine thread is doing right after a stall
            culprits[busy_threads()] += 1

    def type_a_query() -> None:
        window.query.setText(QUERIES[int(state["searches"]) % len(QUERIES)])
        state["searches"] = int(state["searches"]) + 1

    def imported(_report: object) -> None:
        marks["imported"] = time.perf_counter()
        typing.stop()
        QTimer.singleShot(300, app.quit)

    def warmed(_: object) -> None:  # the engine is open and the model loaded: the import starts
        marks["warm"] = time.perf_counter()
        state["phase"] = "importing"
        if args.enrich:
            bridge.submit(lambda s: s.start_enrichment())
        ChunkedImport(bridge, lambda: lines, done=imported, failed=fail, chunk=args.chunk).start()
        typing.start()

    probe = QTimer(interval=TICK_MS, timeout=tick)
    typing = QTimer(interval=500, timeout=type_a_query)
    bridge.opened.connect(lambda: bridge.submit(lambda s: s.search("warm up", limit=1), warmed, fail))
    bridge.open_failed.connect(fail)
    window.show_and_focus()
    probe.start()
    bridge.start()
    app.exec()
    probe.stop()
    if args.enrich and bridge.is_open:
        bridge.submit(lambda s: s.stop_enrichment())
    bridge.stop()
    if errors:
        print(f"gui_stall: {errors[0]}", file=sys.stderr)
        return 1

    def summary(values: list[float]) -> dict[str, float | int]:
        v = sorted(values) or [0.0]
        return {"ticks": len(values), "max_ms": round(v[-1], 1), "p99_ms": round(v[int(len(v) * 0.99)], 1),
                "median_ms": round(statistics.median(v), 2), f"over_{TARGET_MS}ms": sum(x > TARGET_MS for x in v)}

    result = {
        "memories": args.count,
        "chunk": args.chunk,
        "open_and_load_model_s": round(marks["warm"] - marks["start"], 1),
        "import_s": round(marks["imported"] - marks["warm"], 1),
        "searches_while_importing": state["searches"],
        "stall_while_opening": summary(late["opening"]),
        "stall_while_importing": summary(late["importing"]),
        "busy_threads_after_stalls": dict(culprits.most_common(8)),
        "target_met_while_importing": max(late["importing"] or [0.0]) <= TARGET_MS,
        "qt_platform": os.environ["QT_QPA_PLATFORM"],
        "machine": f"{platform.system()} {platform.machine()}, {os.cpu_count()} cores, "
                   f"Python {platform.python_version()}",
    }
    print(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
