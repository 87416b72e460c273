"""Which llama.cpp build runs the bundled SmolLM2 fastest on this CPU: the model worker forced onto each build.

    .venv/bin/python bench/llama_builds.py [--rounds 3] [--lib NAME=FOLDER ...]

Builds: `default` (the package's llama_cpp/lib: the Haswell level, AVX2/FMA/F16C) and `sse42` (llama_cpp/lib/sse42:
no AVX), plus any folder given with --lib (e.g. a native build with AVX-512, made by hand for the comparison).
Each round runs every build once, in turn (paired: this machine's speed drifts), through the real WorkerModel:
load time, then enrich_text on the same 6 texts (short and long, so prompt processing and generation both count).
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from desktop_memory.engine import model_process  # noqa: E402
from desktop_memory.engine.enrichment import enrich_text  # noqa: E402
from desktop_memory.engine.llm import check_model  # noqa: E402
from desktop_memory.engine.model_process import WorkerModel  # noqa: E402

TEXTS = [
    "Decision: Priya ships the beta release of Atlas in Berlin on March 3rd.",
    "Flight LH 1172 from Munich lands in Lisbon at 18:05 on Saturday; Omar picks us up at the airport.",
    "The quarterly tax payment of €2,300 is due on 15 June; Fatima prepares the forms.",
    ("Weekly product sync. Priya reported that the Atlas migration from MongoDB to PostgreSQL is 70% done; the "
     "billing tables need a careful backfill. Marcus raised the budget: $40,000 left for the quarter. Decision: we "
     "keep Grafana for now and revisit in Q3. Elena will simplify the onboarding flow before the beta on May 12. ") * 3,
    "git bisect found the regression in commit 9f2c1e7 (parse_config rewrite); Chen reverts it tomorrow.",
    ("Trip plan: train from Madrid to Lisbon on Friday, hotel near Alfama for three nights, dinner with Jordan and "
     "Lena on Saturday, museum on Sunday morning, flight back to Boston on Monday at 10:40. ") * 2,
]


def run(name: str, lib: Path | None) -> dict[str, float]:
    model_process.lib_variants = lambda: [(name, lib)]  # this build only
    model_process._variant["index"] = 0
    model = WorkerModel(check_model(None), n_ctx=2048, n_threads=2)
    started = time.perf_counter()
    model.load()
    load = time.perf_counter() - started
    started = time.perf_counter()
    for text in TEXTS:
        enrich_text(text, model=model, n_ctx=2048)
    work = time.perf_counter() - started
    model.unload()
    return {"load_s": load, "per_text_s": work / len(TEXTS)}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--lib", action="append", default=[], help="NAME=FOLDER of another build's libraries")
    args = parser.parse_args()
    builds = dict(model_process.lib_variants())
    builds.update({k: Path(v) for k, v in (item.split("=", 1) for item in args.lib)})
    results: dict[str, list[dict[str, float]]] = {name: [] for name in builds}
    for _ in range(args.rounds):
        for name, lib in builds.items():
            results[name].append(run(name, lib))
    print(f"# {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, {platform.processor() or platform.machine()}, "
          f"{args.rounds} rounds, {len(TEXTS)} texts each")
    print("| build | load s (median) | s per enrichment (median) | vs default |")
    print("| --- | --- | --- | --- |")
    base = statistics.median(r["per_text_s"] for r in results["default"])
    for name, runs in results.items():
        per = statistics.median(r["per_text_s"] for r in runs)
        print(f"| {name} | {statistics.median(r['load_s'] for r in runs):.2f} | {per:.2f} | {per / base - 1:+.0%} |")
    print(json.dumps(results))


if __name__ == "__main__":
    main()
