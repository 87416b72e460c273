"""Enrichment speed: throughput, memory, and capture/search latency while the queue is busy.

    .venv/bin/python bench/enrich_speed.py [--model PATH] [--threads N] [--n 30] [--seconds 40] [--out F.json]

Everything runs through desktop_memory.service.MemoryService with the real MiniLM embedder, SQLite,
Chroma and the GGUF model through llama-cpp-python.

1. Throughput: `enrich` on N fresh ~200-character texts, then N ~2,000-character texts (memories/minute).
2. Memory: process RSS before the model loads, with it loaded, and after the enrichment thread unloads it
   (the process also holds MiniLM, torch and Chroma; the difference is the model's share).
3. Latency: `add` (capture: normalise, redact, embed, store, index) and `search` p50/p95, first with the
   enrichment thread idle, then while it works through a full queue in the background at low priority,
   then idle again, each for --seconds; the busy phase starts once the first background job is done and
   reports how many memories the thread enriched meanwhile. Then both again with a pause of --pace seconds
   between operations (a person at work: enrichment runs in the gaps, engine/foreground.py). Queries and
   texts are distinct (no cache helps).
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from desktop_memory.engine.embed import Embedder  # noqa: E402
from desktop_memory.service import MemoryService  # noqa: E402

WORDS = str.split("project release meeting budget deadline review design server database migration customer invoice "
         "contract travel flight hotel dinner family doctor appointment garden recipe training running book "
         "python docker kubernetes backup laptop phone password network office manager report plan")
NAMES = ["Priya", "Marcus", "Elena", "Tom", "Sarah Connor", "Chen", "Fatima", "Jordan", "Lena", "Omar"]
PLACES = ["Berlin", "Lisbon", "Toronto", "Kyoto", "Madrid", "Boston"]


def sentence(rng: random.Random) -> str:
    words = [rng.choice(WORDS) for _ in range(rng.randint(6, 12))]
    words.insert(rng.randint(0, len(words)), rng.choice(NAMES))
    if rng.random() < 0.4:
        words += ["in", rng.choice(PLACES)]
    if rng.random() < 0.3:
        words += ["on", f"2026-0{rng.randint(1, 9)}-{rng.randint(10, 28)}"]
    if rng.random() < 0.2:
        words += ["for", f"${rng.randint(10, 9000):,}"]
    return " ".join(words).capitalize() + "."


def text_of(rng: random.Random, chars: int) -> str:
    out = ""
    while len(out) < chars:
        out += sentence(rng) + " "
    return out[:chars].rsplit(" ", 1)[0] + "."


def rss_mb(pid: int | str = "self") -> float:
    with open(f"/proc/{pid}/status", encoding="ascii") as fh:
        for line in fh:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def pct(values: list[float], q: float) -> float:
    values = sorted(values)
    return round(values[min(len(values) - 1, int(q * len(values)))] * 1000, 1)


def latencies(service: MemoryService, rng: random.Random, seconds: float, tag: str,
              pace: float = 0.0) -> dict[str, float]:
    """add + search pairs for `seconds`: back to back, or one pair every `pace` seconds (a person at work)."""
    adds, searches = [], []
    end = time.monotonic() + seconds
    i = 0
    while time.monotonic() < end:
        if pace and i:
            time.sleep(pace)
        i += 1
        text = f"{tag} {i}: " + text_of(rng, 200)
        started = time.perf_counter()
        service.add(text, source="bench")
        adds.append(time.perf_counter() - started)
        query = f"{rng.choice(WORDS)} {rng.choice(WORDS)} {rng.choice(NAMES)} {tag}{i}"
        started = time.perf_counter()
        service.search(query, limit=10)
        searches.append(time.perf_counter() - started)
    return {"add_p50_ms": pct(adds, 0.5), "add_p95_ms": pct(adds, 0.95), "add_mean_ms": round(
        statistics.mean(adds) * 1000, 1), "search_p50_ms": pct(searches, 0.5), "search_p95_ms": pct(searches, 0.95),
        "search_mean_ms": round(statistics.mean(searches) * 1000, 1), "load_avg": os.getloadavg()[0],
        "operations": len(adds), "pace_s": pace}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", help="GGUF file (default: the bundled SmolLM2-135M)")
    ap.add_argument("--threads", type=int, default=0, help="llama.cpp threads (0: the engine's default)")
    ap.add_argument("--n", type=int, default=30, help="texts per size for throughput")
    ap.add_argument("--seconds", type=float, default=40, help="length of each latency phase")
    ap.add_argument("--pace", type=float, default=1.0, help="seconds between operations in the paced phases")
    ap.add_argument("--corpus", type=int, default=1000, help="memories in the store before measuring")
    ap.add_argument("--seed", type=int, default=11)
    ap.add_argument("--out")
    args = ap.parse_args()
    rng = random.Random(args.seed)
    report: dict = {"date": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
                    "machine": f"{platform.platform()}, {os.cpu_count()} CPUs, Python {platform.python_version()}",
                    "load_avg_start": os.getloadavg()}
    with tempfile.TemporaryDirectory() as tmp, MemoryService(Path(tmp) / "data", embedder=Embedder()) as service:
        service.settings.llm_model_path = args.model or ""
        service.settings.llm_threads = args.threads
        service.settings.llm_idle_unload_s = 3
        report["threads"] = service.settings.llm_threads or service.enrichment_status().threads
        corpus = [json.dumps({"content": text_of(rng, rng.choice([120, 200, 400]))}) for _ in range(args.corpus)]
        service.import_records(corpus)
        with service.store.transaction():
            service.store.db.execute("DELETE FROM enrichment_queue")  # the corpus is only there to search
        service.search("warm up the embedder", limit=5)
        report["rss_mb_before_model"] = round(rss_mb(), 1)

        for label, chars in (("short_200", 200), ("long_2000", 2000)):
            for _ in range(args.n):
                service.add(text_of(rng, chars), source="bench")
            started = time.perf_counter()
            result = service.enrich(args.n)
            seconds = time.perf_counter() - started
            report[f"throughput_{label}_per_min"] = round(result.processed / seconds * 60, 1)
            report[f"throughput_{label}_with_model"] = result.with_model
            report[f"{label}_load_avg"] = os.getloadavg()[0]
            report.setdefault("model", result.model or result.model_error)
        report["rss_mb_model_loaded"] = round(rss_mb(), 1)
        worker = getattr(service.enricher.model, "pid", None)  # since issue 28 the model runs in a worker process
        report["worker_rss_mb_model_loaded"] = round(rss_mb(worker), 1) if worker else 0.0
        service.start_enrichment()  # background mode: unloads after the idle time
        time.sleep(service.settings.llm_idle_unload_s + 3)
        report["rss_mb_after_unload"] = round(rss_mb(), 1)
        service.stop_enrichment()

        report["idle_before"] = latencies(service, rng, args.seconds, "idle")
        with service.store.transaction():
            service.store.db.execute("DELETE FROM enrichment_queue")
        queued = service.requeue_enrichment()
        service.start_enrichment()
        done = "SELECT count(*) FROM memories WHERE enriched_at IS NOT NULL AND enrichment_state != 'pending'"
        start_done = service.store.scalar(done)
        while service.store.scalar(done) == start_done:  # the model is loaded and the first job is done
            time.sleep(0.2)
        before = service.store.scalar(done)
        report["busy"] = latencies(service, rng, args.seconds, "busy")
        report["busy"]["enriched_during_phase"] = service.store.scalar(done) - before
        report["busy"]["queue_at_start"] = queued
        waited = service.foreground.waited_s
        before = service.store.scalar(done)
        report["busy_paced"] = latencies(service, rng, args.seconds, "paced", pace=args.pace)
        report["busy_paced"]["enriched_during_phase"] = service.store.scalar(done) - before
        report["busy_paced"]["enrichment_waited_s"] = round(service.foreground.waited_s - waited, 1)
        service.stop_enrichment()
        with service.store.transaction():
            service.store.db.execute("DELETE FROM enrichment_queue")
        report["idle_after"] = latencies(service, rng, args.seconds, "after")
        report["idle_paced"] = latencies(service, rng, args.seconds, "idlepaced", pace=args.pace)
        report["load_avg_end"] = os.getloadavg()
    print(json.dumps(report, indent=1))
    if args.out:
        Path(args.out).write_text(json.dumps(report, indent=1), encoding="utf-8")


if __name__ == "__main__":
    main()
