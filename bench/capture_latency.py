"""Copy -> searchable latency and the clipboard watcher's idle CPU, with the real app on a real X server.

    bash scripts/with-desktop.sh .venv/bin/python bench/capture_latency.py [--trials 20] [--idle 60]

Starts the tray app in a temporary home (as tests/gui/test_desktop_e2e.py does), waits until its engine
and embedding model are ready, then for each trial another process (xclip) copies a new sentence and
the clock runs until the engine finds it by keyword (a word only that sentence holds) and by meaning (a
paraphrase sharing no word with it), asked over the engine socket (RemoteService, as the CLI does).
Then the app sits idle and its CPU time (utime + stime from /proc/PID/stat) is read over --idle seconds.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from desktop_memory.ipc.client import connect  # noqa: E402

SENTENCES = [  # (copied text with a unique marker word, a paraphrase with no word in common)
    ("The {w} dentist appointment moved to Thursday afternoon", "tooth doctor visit rescheduled"),
    ("Remember to renew the car insurance policy {w} before March", "vehicle cover expires soon"),
    ("Grandma's {w} lasagna needs two cups of ricotta cheese", "family pasta bake recipe"),
    ("The staging server {w} ran out of disk space last night", "machine storage full overnight"),
    ("Flight {w} to Lisbon departs at 7:40 from terminal two", "plane trip Portugal morning"),
]


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def wait_log(log: Path, pattern: str, timeout: float = 240) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if re.search(pattern, log.read_text(errors="replace")):
            return
        time.sleep(0.05)
    raise SystemExit(f"the app never logged {pattern!r}:\n{log.read_text(errors='replace')}")


def pct(values: list[float], q: float) -> float:
    s = sorted(values)
    return round(s[min(len(s) - 1, int(q * len(s)))] * 1000, 1)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--trials", type=int, default=20)
    ap.add_argument("--idle", type=float, default=60.0)
    args = ap.parse_args()
    if not os.environ.get("DISPLAY"):
        raise SystemExit("run it inside scripts/with-desktop.sh (needs an X server)")
    home = Path(tempfile.mkdtemp(prefix="dm-capture-bench-"))
    data = home / "data"
    env = {k: v for k, v in os.environ.items() if k != "QT_QPA_PLATFORM"}
    env.update(DESKTOP_MEMORY_HOME=str(data), DESKTOP_MEMORY_ENCRYPTION="off", HF_HUB_OFFLINE="1")
    log = home / "app.log"
    with open(log, "w") as log_file:
        app = subprocess.Popen([sys.executable, "-m", "desktop_memory", "app"], env=env,
                               stdout=subprocess.DEVNULL, stderr=log_file)
    report: dict = {"date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                    "machine": f"{platform.platform()}, {os.cpu_count()} CPUs", "load_avg_start": os.getloadavg()}
    try:
        wait_log(log, r"clipboard watcher started")
        wait_log(log, r"embedding model loaded")
        time.sleep(2)
        remote = connect(data)
        assert remote is not None, "no engine socket"
        keyword, meaning, holders = [], [], []
        for n in range(args.trials):
            marker = f"zq{n}x{os.getpid()}"
            text, paraphrase = SENTENCES[n % len(SENTENCES)]
            copied = text.format(w=marker)
            holder = subprocess.Popen(["xclip", "-quiet", "-selection", "clipboard"], stdin=subprocess.PIPE,
                                      stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env, text=True)
            assert holder.stdin is not None
            holder.stdin.write(copied)
            holder.stdin.close()
            started = time.perf_counter()
            found_kw = found_sem = None
            while time.perf_counter() - started < 10 and (found_kw is None or found_sem is None):
                if found_kw is None and any(h.memory.content == copied for h in remote.search(marker, limit=3)):
                    found_kw = time.perf_counter() - started
                if found_sem is None and any(h.memory.content == copied
                                             for h in remote.search(paraphrase, limit=10)):
                    found_sem = time.perf_counter() - started
                time.sleep(0.01)
            keyword.append(found_kw if found_kw is not None else float("inf"))
            meaning.append(found_sem if found_sem is not None else float("inf"))
            holders.append(holder)
            time.sleep(1.0)  # copies a second apart: each its own memory
        remote.close()
        for h in holders:
            h.terminate()
            h.wait(10)
        report["copy_to_keyword_ms"] = {"p50": pct(keyword, 0.5), "p95": pct(keyword, 0.95),
                                        "max": pct(keyword, 1.0), "n": len(keyword)}
        report["copy_to_meaning_ms"] = {"p50": pct(meaning, 0.5), "p95": pct(meaning, 0.95),
                                        "max": pct(meaning, 1.0), "n": len(meaning)}
        time.sleep(5)  # let the enrichment of the copies finish before reading idle CPU
        while "queued" in (status := subprocess.run(
                [sys.executable, "-m", "desktop_memory", "status", "--json"], env=env, capture_output=True,
                text=True)).stdout and json.loads(status.stdout).get("queued", 0):
            time.sleep(2)
        before, t0 = cpu_seconds(app.pid), time.monotonic()
        time.sleep(args.idle)
        used, spent = cpu_seconds(app.pid) - before, time.monotonic() - t0
        report["idle_cpu_percent"] = round(used / spent * 100, 3)
        report["idle_seconds"] = round(spent, 1)
        report["load_avg_end"] = os.getloadavg()
        report["keyword_mean_ms"] = round(statistics.mean(keyword) * 1000, 1)
    finally:
        app.terminate()
        app.wait(30)
    print(json.dumps(report, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
