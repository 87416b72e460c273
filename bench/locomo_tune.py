#!/usr/bin/env python3
"""Compare ranking settings in-process on data folders kept by locomo_eval.py --keep.

For method development only: the official figure is always the CLI run of
../shared/bench/locomo_eval.py. The LoCoMo data is read from ../shared and never copied.

    python bench/locomo_tune.py --keep /tmp/lc/keep1 --set keyword_weight=0.4 --set semantic_weight=0.6
"""

from __future__ import annotations

import argparse
import dataclasses
import importlib.util
import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
SHARED = HERE.parent.parent / "shared"


def load_eval_module():
    spec = importlib.util.spec_from_file_location("locomo_eval", SHARED / "bench" / "locomo_eval.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--keep", required=True)
    ap.add_argument("--set", action="append", default=[], help="RankingParams field=value")
    ap.add_argument("--k", type=int, default=10)
    args = ap.parse_args()
    sys.path.insert(0, str(HERE.parent))
    from desktop_memory.core.ranking import RankingParams
    from desktop_memory.engine.embed import Embedder
    from desktop_memory.service import MemoryService

    params = RankingParams()
    for item in args.set:
        key, value = item.split("=", 1)
        params = dataclasses.replace(params, **{key: type(getattr(params, key))(value)})
    ev = load_eval_module()
    data = json.loads((SHARED / "data" / "locomo" / "locomo_dev.json").read_text())
    embedder = Embedder()
    rows = []
    for sample in data:
        records = ev.conversation_records(sample)
        known = {r["metadata"]["dia_id"] for r in records}
        with MemoryService(Path(args.keep) / sample["sample_id"], embedder=embedder, ranking=params) as svc:
            for qa in sample["qa"]:
                if int(qa["category"]) == 5:
                    continue
                ev_ids = [e for e in ev.evidence_ids(qa.get("evidence")) if e in known]
                q = " ".join(str(qa["question"]).split())
                if not ev_ids or not q:
                    continue
                hits = svc.search(q, limit=50, record_access=False)
                ranked = [h.memory.metadata.get("dia_id") for h in hits]
                top = set(ranked[: args.k])
                first = next((i for i, d in enumerate(ranked) if d in ev_ids), None)
                rows.append((len(top & set(ev_ids)) / len(ev_ids), 0.0 if first is None else 1 / (first + 1)))
    n = len(rows)
    print(f"{params}\nrecall@{args.k}={sum(r[0] for r in rows) / n:.4f} mrr={sum(r[1] for r in rows) / n:.4f} n={n}")


if __name__ == "__main__":
    main()
