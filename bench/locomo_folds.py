#!/usr/bin/env python3
"""Leave-one-conversation-out (LOCO) retrieval figures on the LoCoMo development split.

Every weight and threshold of the ranking (`RankingParams`) is tuned on four conversations and the
tuned settings are evaluated on the fifth, for each of the five conversations in turn. The mean and
the spread of the five held-out figures say how well the ranking generalises; the "plain" figure
(shipped settings, all five conversations) is printed next to them. A change that raises the plain
figure but not the held-out one is fitting.

How it runs (short, so it can share the machine):
  * each conversation is imported ONCE through the CLI (`desktop-memory --data-dir DIR import`) into
    `--cache/<sample_id>` and reused by later runs (delete the folder after changing how memories
    are stored or embedded; a different embedder needs its own `--cache`);
  * for tuning, each question's candidates are read once from the engine (BM25 scores, cosines,
    rank fields, session neighbours) and re-ranked in-process by the service's own pipeline
    (core/pipeline.rank, reading the cache instead of the store) for every setting tried (coordinate
    descent over a grid, `GRID`), so no CLI run per setting;
  * the held-out figures are measured end to end through `MemoryService.search` with the tuned
    settings, so whatever the service does after fusion (a reranker, say) is included.

Usage (from the project root; DESKTOP_MEMORY_ENCRYPTION=off and DESKTOP_MEMORY_SERVICE=off are set for you):
  flock /tmp/heavy.lock .venv/bin/python bench/locomo_folds.py                 # LOCO + plain
  flock /tmp/heavy.lock .venv/bin/python bench/locomo_folds.py --no-tune       # one configuration
  .venv/bin/python bench/locomo_folds.py --cache /tmp/dm-folds/bge --json-out r.json
Other environment variables pass through to both the import CLI and the in-process service, so a
configuration chosen by environment (a reranker on/off, an embedder) is measured the same way; give
each embedder its own --cache. `--no-tune` evaluates the shipped settings end to end only: per
conversation ("fold") figures, their mean and spread, per category. `--replay-only` skips the end to
end runs (fast; for method development).

LoCoMo (CC BY-NC) is read from ../shared and never copied into the project.
"""

from __future__ import annotations

import argparse
import dataclasses
import importlib.util
import json
import os
import shlex
import statistics
import subprocess
import sys
import time
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

os.environ.setdefault("DESKTOP_MEMORY_ENCRYPTION", "off")
# the import CLI opens each folder itself: no engine host is left holding it when the service opens it here
os.environ.setdefault("DESKTOP_MEMORY_SERVICE", "off")
HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
SHARED = ROOT.parent / "shared"
sys.path.insert(0, str(ROOT))

from desktop_memory.core.pipeline import CANDIDATES, rank  # noqa: E402
from desktop_memory.core.query import Filters, settle_prefix, terms  # noqa: E402
from desktop_memory.core.ranking import RankingParams  # noqa: E402

K = 10
LIMIT = 50  # hits asked per question (MRR looks this deep), as in locomo_eval.py
CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}

# The settings tuned, each over its grid (coordinate descent from the shipped values).
# keyword_weight moves semantic_weight with it (they sum to 1).
GRID: dict[str, list[Any]] = {
    "keyword_weight": [0.3, 0.4, 0.5, 0.6, 0.7],
    "semantic_floor": [0.0, 0.1, 0.2],
    "min_semantic_only": [0.1, 0.2, 0.3, 0.4],
    "neighbour_weight": [0.0, 0.5, 0.6, 0.7, 0.75, 0.8, 0.9],
    "neighbour_sources": [5, 10, 20, 30, 50],
    "far_neighbour_weight": [0.0, 0.5, 0.6, 0.7, 0.75],
    "importance_weight": [0.0, 0.05, 0.1],
    "collapse_jaccard": [0.8, 0.9, 1.01],
    "time_mention_boost": [0.0, 0.1, 0.2, 0.3, 0.4, 0.6],
    "context_weight": [0.0, 0.2, 0.3, 0.5],
    "coverage_boost": [0.0, 0.5, 1.0, 2.0, 3.0],
}


def load_eval_module() -> Any:
    spec = importlib.util.spec_from_file_location("locomo_eval", SHARED / "bench" / "locomo_eval.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@dataclass
class Question:
    text: str
    evidence: list[str]
    category: int
    keyword: dict[str, float] = field(default_factory=dict)
    semantic: dict[str, float] = field(default_factory=dict)  # the service's semantic candidates
    before: dict[str, float] = field(default_factory=dict)  # cosine of the memory before each candidate


@dataclass
class Conversation:
    sample_id: str
    folder: Path
    questions: list[Question]
    memories: dict[str, Any] = field(default_factory=dict)  # id -> Memory
    neighbours: dict[str, list[str]] = field(default_factory=dict)
    dia: dict[str, str] = field(default_factory=dict)  # memory id -> dia_id


def conversations(ev: Any, data_path: Path, cache: Path, cli: list[str]) -> list[Conversation]:
    """The questions of each conversation, its memories imported once into `cache/<sample_id>`."""
    out = []
    for sample in json.loads(data_path.read_text()):
        records = ev.conversation_records(sample)
        known = {r["metadata"]["dia_id"] for r in records}
        questions = []
        for qa in sample["qa"]:
            if int(qa["category"]) not in CATEGORIES:
                continue
            evidence = [e for e in ev.evidence_ids(qa.get("evidence")) if e in known]
            q = " ".join(str(qa["question"]).split())
            if evidence and q:
                questions.append(Question(q, evidence, int(qa["category"])))
        folder = cache / sample["sample_id"]
        done = cache / f'{sample["sample_id"]}.imported'
        if not done.exists():
            folder.mkdir(parents=True, exist_ok=True)
            jsonl = cache / f'{sample["sample_id"]}.jsonl'
            jsonl.write_text("".join(json.dumps(r) + "\n" for r in records))
            t0 = time.perf_counter()
            cmd = cli + ["--data-dir", str(folder), "import", str(jsonl)]
            proc = subprocess.run(cmd, capture_output=True, text=True)
            jsonl.unlink()
            if proc.returncode != 0:
                sys.exit(f"import failed ({proc.returncode}): {shlex.join(cli)}\n{proc.stderr[-3000:]}")
            done.write_text(f"{len(records)} records in {time.perf_counter() - t0:.1f} s\n")
            print(f"{sample['sample_id']}: imported {len(records)} memories", file=sys.stderr)
        out.append(Conversation(sample["sample_id"], folder, questions))
    return out


def open_service(folder: Path, params: RankingParams) -> Any:
    from desktop_memory.service import MemoryService

    return MemoryService(folder, ranking=params)


def collect(conv: Conversation) -> None:
    """Read each question's candidate features from the engine once (for in-process re-ranking)."""
    with open_service(conv.folder, RankingParams()) as svc:
        store = svc.store
        ids = [m.id for m in store.iter_all(include_forgotten=False)]
        conv.memories = store.get_many(ids)
        conv.dia = {i: (m.metadata or {}).get("dia_id") for i, m in conv.memories.items()}
        conv.neighbours = store.search.session_neighbourhood(ids)[0]
        vectors = svc.vectors
        for q in conv.questions:
            toks = settle_prefix(terms(q.text, prefix_last=True), lambda t: store.search.document_frequency(t) > 0)
            q.keyword = dict(store.search.keyword(toks, Filters(), CANDIDATES))  # as service/retrieval.py
            qvec = svc.embedder.encode_query(q.text[:4000])
            cosines = dict(vectors.query(qvec, len(ids)))  # every memory of the conversation
            q.semantic = dict(sorted(cosines.items(), key=lambda kv: -kv[1])[: CANDIDATES + 10])
            q.semantic.update({i: cosines[i] for i in q.keyword if i in cosines})  # exact cosines too
            before = store.vectors.previous(list(q.semantic))  # as service/retrieval.py, for context_weight
            q.before = {i: float(v @ qvec) for i, v in before.items()}


class CachedReads:
    """What the service's ranking pipeline (core/pipeline.rank) reads, from one question's cached candidates
    (the service reads its store and vector index): every memory of the conversation passes."""

    def __init__(self, conv: Conversation, q: Question) -> None:
        self.conv = conv
        self.q = q

    def candidates(self, depth: int) -> tuple[dict[str, float], dict[str, float], dict[str, Any]]:
        return self.q.keyword, self.q.semantic, self.passing(self.q.keyword)  # read at depth CANDIDATES

    def rows(self, ids: Sequence[str]) -> dict[str, Any]:
        return self.passing(ids)

    def previous(self, ids: Sequence[str], rows: Mapping[str, Any]) -> dict[str, float]:
        return self.q.before

    def full(self, ids: Sequence[str]) -> dict[str, Any]:
        return self.passing(ids)  # not asked: the rows are full memories

    def passing(self, ids: Collection[str]) -> dict[str, Any]:
        return {i: self.conv.memories[i] for i in ids if i in self.conv.memories}

    def neighbourhood(self, ids: Sequence[str]) -> tuple[dict[str, list[str]], dict[str, list[str]]]:
        near = {s: self.conv.neighbours.get(s, []) for s in ids}
        return near, {n: self.conv.neighbours.get(n, []) for ns in near.values() for n in ns}

    def family_members(self, family_ids: Sequence[str], limit: int) -> dict[str, list[Any]]:
        return {}  # members are attached to a hit, they do not move it: the order is what is scored

    def passages(self, ids: Sequence[str]) -> dict[str, list[Any]]:
        return {}  # turn-level memories: none is long


def replay(conv: Conversation, q: Question, p: RankingParams, now: float) -> list[str]:
    """The service's ranking (core/pipeline.rank) over cached features: dia_ids, best first."""
    hits = rank(q.text, CachedReads(conv, q), params=p, now=now, limit=LIMIT)
    return [conv.dia.get(h.memory.id) for h in hits]


def score(ranked: list[str], evidence: list[str]) -> tuple[float, float]:
    """(recall@K, reciprocal rank of the first evidence turn)."""
    top = set(ranked[:K])
    first = next((i for i, d in enumerate(ranked) if d in evidence), None)
    return len(top & set(evidence)) / len(evidence), 0.0 if first is None else 1.0 / (first + 1)


class Replayer:
    """Per-question (recall, rr) for a setting over every conversation, memoised by setting."""

    def __init__(self, convs: list[Conversation]) -> None:
        self.convs = convs
        self.now = time.time()
        self.memo: dict[RankingParams, dict[str, list[tuple[float, float]]]] = {}

    def run(self, p: RankingParams) -> dict[str, list[tuple[float, float]]]:
        if p not in self.memo:
            self.memo[p] = {c.sample_id: [score(replay(c, q, p, self.now), q.evidence) for q in c.questions]
                            for c in self.convs}
        return self.memo[p]

    def objective(self, p: RankingParams, train: list[str]) -> float:
        rows = [r for sid in train for r in self.run(p)[sid]]
        return sum(r[0] + r[1] for r in rows) / (2 * len(rows))


def with_value(p: RankingParams, name: str, value: Any) -> RankingParams:
    if name == "keyword_weight":
        return dataclasses.replace(p, keyword_weight=value, semantic_weight=round(1.0 - value, 4))
    return dataclasses.replace(p, **{name: value})


def tune(rep: Replayer, train: list[str], rounds: int = 2) -> RankingParams:
    """Coordinate descent over GRID from the shipped settings; ties keep the current value."""
    best = RankingParams()
    best_score = rep.objective(best, train)
    for _ in range(rounds):
        moved = False
        for name, values in GRID.items():
            if not hasattr(best, name):
                continue
            for value in values:
                cand = with_value(best, name, value)
                s = rep.objective(cand, train)
                if s > best_score + 1e-9:
                    best, best_score, moved = cand, s, True
        if not moved:
            break
    return best


def end_to_end(conv: Conversation, p: RankingParams) -> list[tuple[float, float, int]]:
    """(recall, rr, category) per question through MemoryService.search with settings `p`."""
    out = []
    with open_service(conv.folder, p) as svc:
        for q in conv.questions:
            hits = svc.search(q.text, limit=LIMIT, record_access=False)
            ranked = [(h.memory.metadata or {}).get("dia_id") for h in hits]
            out.append((*score(ranked, q.evidence), q.category))
    return out


def summary(rows: list[tuple[float, float, int]]) -> dict[str, Any]:
    n = len(rows)
    return {"n": n, "recall@10": round(sum(r[0] for r in rows) / n, 4), "mrr": round(sum(r[1] for r in rows) / n, 4)}


def spread(values: list[float]) -> dict[str, float]:
    return {"mean": round(statistics.fmean(values), 4), "sd": round(statistics.pstdev(values), 4),
            "min": round(min(values), 4), "max": round(max(values), 4)}


def report(name: str, per_fold: dict[str, list[tuple[float, float, int]]]) -> dict[str, Any]:
    """Per-fold, mean/spread over folds, pooled, per category."""
    folds = {sid: summary(rows) for sid, rows in per_fold.items()}
    pooled = [r for rows in per_fold.values() for r in rows]
    cats = {CATEGORIES[c]: summary([r for r in pooled if r[2] == c]) for c in sorted(CATEGORIES)}
    out = {"folds": folds,
           "fold_recall@10": spread([f["recall@10"] for f in folds.values()]),
           "fold_mrr": spread([f["mrr"] for f in folds.values()]),
           "pooled": summary(pooled), "by_category": cats}
    print(f"\n== {name}", file=sys.stderr)
    for sid, f in folds.items():
        print(f"  {sid:10s} n={f['n']:4d} recall@10={f['recall@10']:.4f} mrr={f['mrr']:.4f}", file=sys.stderr)
    r, m = out["fold_recall@10"], out["fold_mrr"]
    print(f"  fold mean  recall@10={r['mean']:.4f} (sd {r['sd']:.4f}, {r['min']:.4f}-{r['max']:.4f})"
          f"  mrr={m['mean']:.4f} (sd {m['sd']:.4f}, {m['min']:.4f}-{m['max']:.4f})", file=sys.stderr)
    print(f"  pooled     recall@10={out['pooled']['recall@10']:.4f} mrr={out['pooled']['mrr']:.4f}", file=sys.stderr)
    for c, s in cats.items():
        print(f"  {c:12s} n={s['n']:4d} recall@10={s['recall@10']:.4f} mrr={s['mrr']:.4f}", file=sys.stderr)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cli", default=str(ROOT / ".venv" / "bin" / "desktop-memory"), help="CLI used for the import")
    ap.add_argument("--data", default=str(SHARED / "data" / "locomo" / "locomo_dev.json"))
    ap.add_argument("--cache", default="/tmp/dm-locomo-folds/default", help="imported conversations, reused")
    ap.add_argument("--no-tune", action="store_true", help="shipped settings only, end to end (one configuration)")
    ap.add_argument("--replay-only", action="store_true", help="figures from the in-process replay only")
    ap.add_argument("--set", action="append", default=[], help="start from RankingParams field=value (repeatable)")
    ap.add_argument("--json-out")
    args = ap.parse_args()
    cache = Path(args.cache)
    cache.mkdir(parents=True, exist_ok=True)
    convs = conversations(load_eval_module(), Path(args.data), cache, shlex.split(args.cli))
    base = RankingParams()
    for item in args.set:
        key, value = item.split("=", 1)
        base = dataclasses.replace(base, **{key: type(getattr(base, key))(value)})
    result: dict[str, Any] = {"params": dataclasses.asdict(base)}
    t0 = time.perf_counter()
    if not args.replay_only:
        plain = {c.sample_id: end_to_end(c, base) for c in convs}
        result["plain"] = report("plain: shipped settings, end to end (each conversation a fold, no tuning)", plain)
    if not args.no_tune:
        for c in convs:
            collect(c)
        rep = Replayer(convs)
        cat = {c.sample_id: [q.category for q in c.questions] for c in convs}
        res = rep.run(base)
        result["plain_replay"] = report("plain, replayed in-process (checks the replay)",
                                        {s: [(*r, k) for r, k in zip(res[s], cat[s], strict=True)] for s in res})
        held, held_replay, tuned = {}, {}, {}
        for c in convs:
            train = [o.sample_id for o in convs if o is not c]
            p = tune(rep, train)
            tuned[c.sample_id] = {k: v for k, v in dataclasses.asdict(p).items() if v != getattr(base, k)}
            print(f"  fold {c.sample_id}: tuned on the other four: {tuned[c.sample_id] or 'shipped'}", file=sys.stderr)
            held_replay[c.sample_id] = [(*r, k) for r, k in zip(rep.run(p)[c.sample_id], cat[c.sample_id], strict=True)]
            if not args.replay_only:
                held[c.sample_id] = end_to_end(c, p)
        result["tuned"] = tuned
        result["loco_replay"] = report("LOCO held-out, replayed in-process", held_replay)
        if held:
            result["loco"] = report("LOCO held-out, end to end (tuned on the other four)", held)
    result["seconds"] = round(time.perf_counter() - t0, 1)
    if args.json_out:
        Path(args.json_out).write_text(json.dumps(result, indent=2) + "\n")
    for key in ("plain", "loco", "plain_replay", "loco_replay"):
        if key in result:
            r = result[key]
            print(f"{key}: fold-mean recall@10={r['fold_recall@10']['mean']} (sd {r['fold_recall@10']['sd']}) "
                  f"mrr={r['fold_mrr']['mean']} (sd {r['fold_mrr']['sd']}); pooled "
                  f"recall@10={r['pooled']['recall@10']} mrr={r['pooled']['mrr']}")


if __name__ == "__main__":
    main()
