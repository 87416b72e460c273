"""Entity quality on a hand-labelled set: combined extractor vs. patterns alone vs. the model alone.

    .venv/bin/python bench/enrich_quality.py [--gold bench/data/entities_gold.jsonl] [--model PATH] [--out F]

The gold set (bench/data/entities_gold.jsonl, 64 snippets: chat, code, email, meetings, shell output,
URLs, notes, and notes in German, French, Spanish, Italian, Portuguese, Dutch, Polish and Japanese) was
written by hand before the extractor was tuned on it. A predicted entity is correct when its text
(case- and whitespace-insensitive, outer punctuation stripped) and its type equal a gold entity's;
the untyped figures ignore the type.

- patterns: desktop_memory.core.extract.extract (no model)
- model:    the model alone, asked for every entity type with the same JSON-schema grammar
- combined: desktop_memory.engine.enrichment.enrich_text with the model (what the engine stores)
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from desktop_memory.core.extract import TYPES, extract, normalise_type  # noqa: E402
from desktop_memory.engine.enrichment import enrich_text  # noqa: E402
from desktop_memory.engine.llm import LocalModel, check_model, default_threads, prompt  # noqa: E402

MODEL_ALONE_SCHEMA = {
    "type": "object",
    "properties": {"entities": {"type": "array", "maxItems": 10, "items": {
        "type": "object",
        "properties": {"text": {"type": "string", "minLength": 1, "maxLength": 60},
                       "type": {"type": "string", "enum": list(TYPES)}},
        "required": ["text", "type"]}}},
    "required": ["entities"],
}
MODEL_ALONE_PROMPT = (
    "Note:\n<<<\n{text}\n>>>\nList the entities named in the note, each with its type: person, organisation, "
    "product, place, datetime, url, email, path, code or amount."
)


def norm(text: str) -> str:
    return " ".join(str(text).lower().split()).strip(" .,;:!?\"'()")


def score(gold: list[set], pred: list[set]) -> dict[str, float]:
    tp = sum(len(g & p) for g, p in zip(gold, pred, strict=True))
    n_pred = sum(len(p) for p in pred)
    n_gold = sum(len(g) for g in gold)
    precision = tp / n_pred if n_pred else 0.0
    recall = tp / n_gold if n_gold else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return {"precision": round(precision, 3), "recall": round(recall, 3), "f1": round(f1, 3),
            "true_positives": tp, "predicted": n_pred, "gold": n_gold}


def as_sets(entities: list[tuple[str, str]]) -> tuple[set, set]:
    typed = {(norm(t), k) for t, k in entities if norm(t)}
    return typed, {t for t, _ in typed}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--gold", default=str(Path(__file__).parent / "data" / "entities_gold.jsonl"))
    ap.add_argument("--model", help="a GGUF file (default: the bundled SmolLM2-135M)")
    ap.add_argument("--threads", type=int, default=default_threads())
    ap.add_argument("--no-model", action="store_true", help="patterns only (no llama.cpp)")
    ap.add_argument("--out", help="write the figures and every prediction as JSON here")
    ap.add_argument("--show-errors", action="store_true")
    args = ap.parse_args()

    rows = [json.loads(line) for line in Path(args.gold).read_text(encoding="utf-8").splitlines() if line.strip()]
    model = None
    if not args.no_model:
        model = LocalModel(check_model(args.model), n_ctx=2048, n_threads=args.threads)
        model.load()
    systems: dict[str, list[list[tuple[str, str]]]] = {"patterns": [], "model": [], "combined": []}
    timing = {"combined_seconds": 0.0, "model_alone_seconds": 0.0}
    for row in rows:
        text = row["text"]
        systems["patterns"].append([(e.text, e.type) for e in extract(text)])
        if model is None:
            continue
        started = time.perf_counter()
        result = enrich_text(text, model=model)
        timing["combined_seconds"] += time.perf_counter() - started
        systems["combined"].append([(e["text"], e["type"]) for e in result.entities])
        started = time.perf_counter()
        data = model.json_completion(prompt("enrich_system.txt"), MODEL_ALONE_PROMPT.replace("{text}", text),
                                     MODEL_ALONE_SCHEMA, max_tokens=240)
        timing["model_alone_seconds"] += time.perf_counter() - started
        alone = []
        for item in data.get("entities") or []:
            kind = normalise_type(item.get("type")) if isinstance(item, dict) else None
            if kind:
                alone.append((str(item.get("text") or ""), kind))
        systems["model"].append(alone)

    gold_typed, gold_text = zip(*(as_sets([tuple(e) for e in r["entities"]]) for r in rows), strict=True)
    report: dict = {
        "date": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "machine": f"{platform.platform()}, {os.cpu_count()} CPUs",
        "snippets": len(rows), "gold_entities": sum(len(r["entities"]) for r in rows),
        "model": model.info.name if model else None, "threads": args.threads, **timing, "results": {},
    }
    for name, preds in systems.items():
        if not preds:
            continue
        typed, untyped = zip(*(as_sets(p) for p in preds), strict=True)
        report["results"][name] = {"typed": score(list(gold_typed), list(typed)),
                                   "untyped": score(list(gold_text), list(untyped))}
        by_kind = {}
        for kind in sorted({r["kind"] for r in rows}):
            idx = [i for i, r in enumerate(rows) if r["kind"] == kind]
            by_kind[kind] = score([gold_typed[i] for i in idx], [typed[i] for i in idx])["f1"]
        report["results"][name]["f1_by_kind"] = by_kind
        if args.show_errors and name in ("combined", "patterns"):
            for i, r in enumerate(rows):
                missed, wrong = gold_typed[i] - typed[i], typed[i] - gold_typed[i]
                if missed or wrong:
                    print(f"[{name} #{r['id']}] missed={sorted(missed)} wrong={sorted(wrong)}", file=sys.stderr)
    print(json.dumps(report["results"], indent=1))
    print(json.dumps({k: v for k, v in report.items() if k != "results"}))
    if args.out:
        report["predictions"] = systems
        Path(args.out).write_text(json.dumps(report, indent=1, ensure_ascii=False), encoding="utf-8")


if __name__ == "__main__":
    main()
