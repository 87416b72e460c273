"""Search window latency through the engine host: hotkey to visible window, keystroke to painted results, GUI
thread stalls while typing, and the GUI process's idle memory.

The window runs in this process as in the tray app (bridge over the engine host child process); a person is
simulated by Qt key events typed one character at a time into the query box (a pause after each result is
painted). Timings:
- hotkey to visible: from the call the hotkey handler makes (`SearchWindow.toggle`) to the window's first paint;
  the X key delivery before it was ~2 ms when measured with xdotool (issue 19);
- keystroke to painted: from the key event to the first paint of the results list showing that query's results;
- stall: a 10 ms timer on the GUI thread, how late it ever fires while typing.

    .venv/bin/python bench/search_typing.py --data-dir DIR [--queries 30] [--platform xcb]

Use an existing data folder (bench/speed.py makes one of 100k memories); the folder is opened by the engine host
(without enrichment) and searched without recording access (nothing is changed but the engine's caches).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")

QUERIES = ["meeting notes design", "call with carla", "docker deploy staging", "slide platform", "release checklist",
           "invoice payment", "git rebase", "project deadline", "sql index", "island cafe", "backup schedule",
           "http api timeout", "review feedback", "cron job", "design document", "yaml config", "regex email",
           "popular fund", "quarterly report", "team lunch"]


def pct(values: list[float], p: float) -> float:
    v = sorted(values)
    return round(v[min(len(v) - 1, int(len(v) * p))], 1) if v else 0.0


def runqueue_wait_ms() -> float:
    """How long this thread has waited for a core so far (Linux schedstat), in ms."""
    try:
        return int(Path("/proc/thread-self/schedstat").read_text().split()[1]) / 1e6
    except (OSError, IndexError, ValueError):
        return 0.0


def rss_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return round(int(line.split()[1]) / 1024, 1)
    return 0.0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data-dir", type=Path, required=True)
    ap.add_argument("--queries", type=int, default=20)
    ap.add_argument("--opens", type=int, default=20)
    ap.add_argument("--platform", default=os.environ.get("QT_QPA_PLATFORM", "offscreen"))
    args = ap.parse_args()
    os.environ["QT_QPA_PLATFORM"] = args.platform

    from PySide6.QtCore import QEvent, QObject, QTimer
    from PySide6.QtTest import QTest
    from PySide6.QtWidgets import QApplication

    from desktop_memory.engine.settings import Settings
    from desktop_memory.ipc.spawn import HostProcess
    from desktop_memory.qt.bridge import EngineBridge
    from desktop_memory.qt.search_window import SearchWindow

    app = QApplication(sys.argv[:1])
    host = HostProcess(args.data_dir, enrich=False)
    bridge = EngineBridge(host.open)
    window = SearchWindow(bridge, Settings())
    state: dict[str, object] = {"paint_wait": None, "t0": 0.0, "want": None, "painted": False}
    opens: list[float] = []
    keys: list[float] = []
    late: list[float] = []
    errors: list[str] = []

    class Paints(QObject):
        def eventFilter(self, obj: QObject, event: QEvent) -> bool:  # noqa: N802
            if event.type() == QEvent.Type.Paint and state["paint_wait"] == "window" and obj is window:
                opens.append((time.perf_counter() - float(state["t0"])) * 1000)
                state["paint_wait"] = None
            elif (event.type() == QEvent.Type.Paint and state["paint_wait"] == "list"
                  and obj is window.list.viewport() and state["want"] == window.model.query):
                keys.append((time.perf_counter() - float(state["t0"])) * 1000)
                state["paint_wait"] = None
            return False

    paints = Paints()
    window.installEventFilter(paints)
    window.list.viewport().installEventFilter(paints)
    for w in (window.empty,):
        w.installEventFilter(paints)
    tick = {"last": time.perf_counter(), "on": False, "cpu": time.thread_time(), "wait": runqueue_wait_ms()}
    big: list[tuple[float, float, float]] = []  # stalls over 50 ms: (stall, GUI thread CPU, its wait for a core)

    def on_tick() -> None:
        now, cpu, wait = time.perf_counter(), time.thread_time(), runqueue_wait_ms()
        if tick["on"]:
            stall = max(0.0, (now - float(tick["last"])) * 1000 - 10)
            late.append(stall)
            if stall > 50:
                big.append((round(stall, 1), round((cpu - float(tick["cpu"])) * 1000, 1),
                            round(wait - float(tick["wait"]), 1)))
        tick["last"], tick["cpu"], tick["wait"] = now, cpu, wait

    probe = QTimer(interval=10, timeout=on_tick)
    probe.start()

    def wait_until(cond, timeout_s: float = 10.0) -> bool:
        end = time.perf_counter() + timeout_s
        while not cond() and time.perf_counter() < end:
            app.processEvents()
            time.sleep(0.001)
        return cond()

    def run() -> None:
        # warm up: the model loaded and the first search done
        done: list[object] = []
        bridge.submit(lambda s: s.search("warm up", limit=1, record_access=False), done.append, errors.append)
        if not wait_until(lambda: bool(done or errors), 300):
            errors.append("the engine did not answer")
        for i in range(args.opens):
            window.hide()
            wait_until(lambda: False, 0.15)
            state["t0"], state["paint_wait"] = time.perf_counter(), "window"
            window.toggle()
            if not wait_until(lambda: state["paint_wait"] is None, 5):
                errors.append(f"open {i}: no paint")
            wait_until(lambda: False, 0.2)
        window.show_and_focus()
        tick["on"] = True
        for q in QUERIES[: args.queries]:
            window.query.clear()
            wait_until(lambda: False, 0.3)
            for n in range(1, len(q) + 1):
                typed = q[:n]
                if typed.endswith(" "):
                    QTest.keyClick(window.query, " ")
                    continue
                state["t0"], state["want"], state["paint_wait"] = time.perf_counter(), typed, "list"
                QTest.keyClicks(window.query, typed[-1])
                if not wait_until(lambda: state["paint_wait"] is None or window.stack.currentWidget() is window.empty,
                                  10):
                    errors.append(f"keystroke {typed!r}: no paint")
                if state["paint_wait"] is not None:  # no results: the empty state shown instead
                    keys.append((time.perf_counter() - float(state["t0"])) * 1000)
                    state["paint_wait"] = None
                wait_until(lambda: False, 0.08)
        tick["on"] = False
        window.hide()
        wait_until(lambda: False, 2.0)
        state["idle_rss"] = rss_mb()
        app.quit()

    bridge.opened.connect(lambda: QTimer.singleShot(0, run))
    bridge.open_failed.connect(lambda m: (errors.append(m), app.quit()))
    bridge.start()
    app.exec()
    bridge.stop()
    host.stop()
    out = {
        "data_dir": str(args.data_dir),
        "qt_platform": args.platform,
        "hotkey_to_visible_ms": {"n": len(opens), "p50": pct(opens, 0.5), "p95": pct(opens, 0.95),
                                 "max": pct(opens, 1.0)},
        "keystroke_to_painted_ms": {"n": len(keys), "p50": pct(keys, 0.5), "p95": pct(keys, 0.95),
                                    "max": pct(keys, 1.0), "mean": round(statistics.mean(keys), 1) if keys else 0},
        "gui_stall_while_typing_ms": {"ticks": len(late), "max": pct(late, 1.0), "p99": pct(late, 0.99),
                                      "over_50ms": sum(x > 50 for x in late),
                                      "over_50ms_stall_gui_cpu_core_wait": big[:12]},
        "gui_idle_rss_mb": state.get("idle_rss"),
        "gui_engine_libraries": sorted({m.split(".")[0] for m in sys.modules}  # none: they live in the host
                                       & {"numpy", "chromadb", "onnxruntime", "apsw", "llama_cpp"}),
        "errors": errors[:5],
        "machine": f"{platform.system()} {platform.machine()}, {os.cpu_count()} cores, load {os.getloadavg()[0]:.2f}",
    }
    print(json.dumps(out, indent=2))
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
