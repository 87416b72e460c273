"""Import speed through the engine host (as the CLI and the app import while the app runs) vs in-process.

Writes a JSON Lines file of `--lines` realistic notes (repeats and look-alikes included), then imports it
into fresh data folders, alternating: through a host process streamed (`RemoteService.import_records`:
one import on the host, pipelined across the chunks), through a host process one complete import call per
256-line chunk (what the client and the app did before issue 17), and with the engine in this process
(`MemoryService.import_records`). Prints memories/s per round.

    .venv/bin/python bench/host_import.py --lines 2000 --rounds 2
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # this checkout's desktop_memory
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")
os.environ.setdefault("DESKTOP_MEMORY_ENCRYPTION", "off")

from desktop_memory.ipc.spawn import HostProcess  # noqa: E402
from desktop_memory.service import IMPORT_BATCH, MemoryService  # noqa: E402

TOPICS = ["the beta release", "the Lisbon trip", "the staging server", "quarterly planning", "the garden",
          "the invoice from Acme", "the new laptop", "Priya's onboarding", "the rollback", "the dentist"]
VERBS = ["moved to", "needs", "depends on", "was discussed with", "is blocked by", "reminds me of"]


def write_lines(path: Path, n: int, seed: int = 7) -> None:
    rng = random.Random(seed)
    with open(path, "w", encoding="utf-8") as fh:
        for i in range(n):
            if i and rng.random() < 0.03:  # an exact repeat of an earlier note
                text = f"note {rng.randrange(i)}: repeated"
            else:
                a, b = rng.sample(TOPICS, 2)
                text = f"note {i}: {a} {rng.choice(VERBS)} {b}; " + " ".join(
                    rng.choice(["Tuesday", "9:15", "ticket 4411", "call back", "draft", "budget", "v2.3"])
                    for _ in range(rng.randint(4, 30)))
            fh.write(json.dumps({"content": text, "source": "bench", "tags": ["bench"]}) + "\n")


def through_host(folder: Path, lines: list[str], *, chunked: bool = False) -> float:
    host = HostProcess(folder, enrich=False)
    remote = host.open()
    try:
        remote.search("warm up", limit=1, record_access=False)  # the model is loaded before the clock starts
        t = time.perf_counter()
        if chunked:  # one whole import per call: nothing overlaps across chunks
            stored = 0
            for i in range(0, len(lines), IMPORT_BATCH):
                r = remote._call("import_records", lines=lines[i : i + IMPORT_BATCH])
                stored += r["added"] + r["related"] + r["duplicates"]
        else:
            stored = remote.import_records(lines).stored
        took = time.perf_counter() - t
    finally:
        remote.close()
        host.stop()
    return stored / took


def in_process(folder: Path, lines: list[str]) -> float:
    with MemoryService(folder) as service:
        service.search("warm up", limit=1, record_access=False)
        t = time.perf_counter()
        report = service.import_records(lines)
        return report.stored / (time.perf_counter() - t)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lines", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--only", choices=("host", "host-chunked", "local"))
    args = parser.parse_args()
    out: dict[str, list[float]] = {"host-chunked": [], "host": [], "local": []}
    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp) / "in.jsonl"
        write_lines(src, args.lines)
        lines = src.read_text(encoding="utf-8").splitlines()
        for r in range(args.rounds):
            for kind, fn in (("host-chunked", lambda f, x: through_host(f, x, chunked=True)),
                             ("host", through_host), ("local", in_process)):
                if args.only and kind != args.only:
                    continue
                folder = Path(tmp) / f"{kind}-{r}"
                out[kind].append(round(fn(folder, lines), 1))
                shutil.rmtree(folder, ignore_errors=True)
    out["load_average"] = [round(x, 2) for x in os.getloadavg()]  # type: ignore[assignment]
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
