"""Peak resident memory of `desktop-memory import` on big records (issue 15: bounded memory).

Generates, in a temporary folder, JSON Lines files of large records and imports each into a fresh data
folder with the real CLI (its own process: real SQLite, Chroma and MiniLM), then reports the CLI process's
peak RSS (`ru_maxrss` of that child, from `os.wait4`), its wall time, and the counts it printed.

Cases (all by default):
- `records`: `--mb` MB of records of `--record-kb` KB each (default 200 MB of ~950 KB: under the default
  1,000,000-byte limit of a memory);
- `one-big`: one memory of `--big-mb` MB (default 10), with `max_bytes` raised so that it is accepted;
- `huge-line`: one line of `--mb` MB (refused: longer than the line limit) between two small records.

Not a timed test: run it by hand and put the figures in docs/benchmarks.md.

    .venv/bin/python bench/import_memory.py --out /tmp/import-memory.json
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

WORDS = [
    "invoice", "shipment", "harbour", "orchard", "glacier", "violin", "compiler", "lantern", "meadow", "turbine",
    "saffron", "quarry", "budget", "review", "release", "train", "meeting", "Tuesday", "Thursday", "March",
    "version", "patch", "server", "deploy", "rollback", "customer", "contract", "delivery", "warehouse", "flight",
    "gate", "ticket", "doctor", "appointment", "garden", "recipe", "chapter", "draft",
]


def _text(rng: random.Random, size: int, label: str) -> str:
    parts = [label]
    total = len(label)
    while total < size:
        w = rng.choice(WORDS) + (str(rng.randint(0, 9999)) if rng.random() < 0.2 else "")
        parts.append(w)
        total += len(w) + 1
    return " ".join(parts)[:size]


def make_records(path: Path, mb: int, record_kb: int, seed: int) -> int:
    rng = random.Random(seed)
    n = max(1, mb * 1_000_000 // (record_kb * 1000))
    with open(path, "w", encoding="utf-8") as fh:
        for i in range(n):
            fh.write(json.dumps({"content": _text(rng, record_kb * 1000, f"record {i}:"), "source": "bench",
                                 "tags": ["big"]}) + "\n")
    return n


def make_huge_line(path: Path, mb: int) -> None:
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(json.dumps({"content": "a small record before the huge line"}) + "\n")
        fh.write('{"content": "')
        chunk = "huge line " * 100_000
        for _ in range(mb * 1_000_000 // len(chunk)):
            fh.write(chunk)
        fh.write('"}\n')
        fh.write(json.dumps({"content": "a small record after the huge line"}) + "\n")


def run_import(cli: list[str], data: Path, src: Path) -> dict:
    """Import `src` into `data` with the CLI; peak RSS of that process (os.wait4), time, output."""
    env = {**os.environ, "DESKTOP_MEMORY_ENCRYPTION": "off"}
    started = time.perf_counter()
    with open(os.devnull, "wb") as devnull, tempfile.TemporaryFile() as err, tempfile.TemporaryFile() as out:
        proc = subprocess.Popen([*cli, "--data-dir", str(data), "import", str(src)], stdout=out, stderr=err,
                                stdin=devnull, env=env)
        _, status, usage = os.wait4(proc.pid, 0)
        proc.returncode = os.waitstatus_to_exitcode(status)
        seconds = time.perf_counter() - started
        err.seek(0)
        out.seek(0)
        stderr = err.read().decode(errors="replace")
        stdout = out.read().decode(errors="replace")
    return {"exit": proc.returncode, "peak_rss_mb": round(usage.ru_maxrss / 1024, 1), "seconds": round(seconds, 1),
            "stdout": stdout.strip()[-300:],
            "stderr_tail": [line for line in stderr.splitlines() if not line.startswith("committed ")][-3:]}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cases", default="records,one-big,huge-line")
    ap.add_argument("--mb", type=int, default=200, help="size of the records file and of the huge line")
    ap.add_argument("--record-kb", type=int, default=950)
    ap.add_argument("--big-mb", type=int, default=10)
    ap.add_argument("--seed", type=int, default=15)
    ap.add_argument("--cli", default=f"{sys.executable} -m desktop_memory")
    ap.add_argument("--workdir", help="keep the files here (default: a temporary folder, removed)")
    ap.add_argument("--out", help="write the JSON report here too")
    args = ap.parse_args()
    cli = args.cli.split()
    report: dict = {"date": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"), "platform": platform.platform(),
                    "cpus": os.cpu_count(), "python": platform.python_version(), "load_before": os.getloadavg(),
                    "cases": {}}
    with tempfile.TemporaryDirectory(dir=args.workdir) as tmp:
        work = Path(tmp)
        for case in args.cases.split(","):
            data = work / f"data-{case}"
            src = work / f"{case}.jsonl"
            if case == "records":
                n = make_records(src, args.mb, args.record_kb, args.seed)
                info = {"records": n, "file_mb": round(src.stat().st_size / 1e6, 1)}
            elif case == "one-big":
                make_records(src, args.big_mb, args.big_mb * 1000, args.seed)
                data.mkdir()
                (data / "settings.json").write_text(json.dumps({"max_bytes": (args.big_mb + 1) * 1_000_000}))
                info = {"records": 1, "file_mb": round(src.stat().st_size / 1e6, 1)}
            elif case == "huge-line":
                make_huge_line(src, args.mb)
                info = {"records": 3, "file_mb": round(src.stat().st_size / 1e6, 1)}
            else:
                raise SystemExit(f"unknown case {case}")
            info.update(run_import(cli, data, src))
            src.unlink()
            report["cases"][case] = info
            print(json.dumps({case: info}), flush=True)
    report["load_after"] = os.getloadavg()
    if args.out:
        Path(args.out).write_text(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
