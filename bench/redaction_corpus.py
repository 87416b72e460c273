"""Redaction on the corpora: secrets caught and look-alikes wrongly redacted (issue 29 item 6).

Reads tests/data/redaction_corpus_family.jsonl (the key-value family, named formats and their look-alikes) and
tests/data/redaction_corpus.jsonl (the earlier corpus), runs `redact` on every text and prints, per corpus and
per group of the family corpus:

- positives caught: none of the row's secrets is left in the text (`secrets`; the earlier corpus's rows without
  them count when the kinds found are the ones expected), and exact: the output is the expected text (`expected`),
- negatives wrongly redacted: a text without a secret that came out changed,
- the time per text (median of `--repeat` runs over the corpus, CPU time).

`--rev REV` measures the redaction modules of a git revision instead of this checkout (`--rev HEAD`: before the
work tree's changes), loaded from `git show REV:desktop_memory/core/redact*.py` into a temporary package; the
corpora are always this checkout's. No data set is read: the corpora are written by hand.

    .venv/bin/python bench/redaction_corpus.py                 # this checkout
    .venv/bin/python bench/redaction_corpus.py --rev HEAD      # the last commit
    .venv/bin/python bench/redaction_corpus.py --misses        # also list each miss and false redaction
"""

from __future__ import annotations

import argparse
import importlib
import json
import statistics
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path
from types import ModuleType

REPO = Path(__file__).resolve().parent.parent
DATA = REPO / "tests" / "data"
CORPORA = {"family": DATA / "redaction_corpus_family.jsonl", "earlier": DATA / "redaction_corpus.jsonl"}
MODULES = ("redact", "redact_rules", "redact_checks")


def load_redact(rev: str | None, tmp: Path) -> ModuleType:
    """`desktop_memory.core.redact` of this checkout, or the three modules at `rev` as a package of their own."""
    if rev is None:
        sys.path.insert(0, str(REPO))
        return importlib.import_module("desktop_memory.core.redact")
    package = tmp / "redact_at_rev"
    package.mkdir()
    (package / "__init__.py").write_text("", encoding="utf-8")
    for name in MODULES:
        source = subprocess.run(
            ["git", "-C", str(REPO), "show", f"{rev}:desktop_memory/core/{name}.py"],
            check=True, capture_output=True, text=True,
        ).stdout
        (package / f"{name}.py").write_text(source, encoding="utf-8")
    sys.path.insert(0, str(tmp))
    return importlib.import_module("redact_at_rev.redact")


def read(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def caught(row: dict, result) -> bool:
    if row.get("secrets"):
        return not any(secret in result.text for secret in row["secrets"])
    return set(result.counts) == set(row["kinds"])  # the earlier corpus's rows without listed secrets


def measure(rows: list[dict], redact, repeat: int) -> dict:
    groups: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    misses, false = [], []
    for row in rows:
        result = redact(row["text"])
        g = groups[row.get("group", "all")]
        if row["kinds"]:
            g["positives"] += 1
            if caught(row, result):
                g["caught"] += 1
            else:
                misses.append({"text": row["text"], "got": result.text})
            if "expected" in row:
                g["with_expected"] += 1
                g["exact"] += result.text == row["expected"] and result.counts == row["kinds"]
        else:
            g["negatives"] += 1
            if result.text != row["text"]:
                g["false"] += 1
                false.append({"text": row["text"], "got": result.text})
    times = []
    for _ in range(repeat):
        start = time.process_time()
        for row in rows:
            redact(row["text"])
        times.append((time.process_time() - start) / len(rows) * 1e6)
    total: dict[str, int] = defaultdict(int)
    for g in groups.values():
        for key, value in g.items():
            total[key] += value
    return {"total": dict(total), "groups": {k: dict(v) for k, v in sorted(groups.items())},
            "us_per_text": round(statistics.median(times), 1), "misses": misses, "false_redactions": false}


def line(name: str, g: dict) -> str:
    parts = [f"{name:<22}"]
    if g.get("positives"):
        parts.append(f"caught {g.get('caught', 0):>3}/{g['positives']:<3}")
        if g.get("with_expected"):
            parts.append(f"exact {g.get('exact', 0):>3}/{g['with_expected']:<3}")
    if g.get("negatives"):
        parts.append(f"wrongly redacted {g.get('false', 0):>2}/{g['negatives']}")
    return "  ".join(parts)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rev", help="measure the redaction modules of this git revision (e.g. HEAD)")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--misses", action="store_true", help="list every miss and false redaction")
    parser.add_argument("--json", type=Path, help="write every figure here")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        redact = load_redact(args.rev, Path(tmp)).redact
        report = {"rev": args.rev or "work tree"}
        for name, path in CORPORA.items():
            report[name] = measure(read(path), redact, args.repeat)
    print(f"redaction modules: {report['rev']}")
    for name in CORPORA:
        r = report[name]
        print(f"\n{name} corpus ({CORPORA[name].name}), {r['us_per_text']} us per text")
        print(line("all", r["total"]))
        if name == "family":
            for group, g in r["groups"].items():
                print("  " + line(group, g))
        if args.misses:
            for miss in r["misses"]:
                print(f"  MISS  {miss['text']!r}\n     -> {miss['got']!r}")
            for wrong in r["false_redactions"]:
                print(f"  FALSE {wrong['text']!r}\n     -> {wrong['got']!r}")
    if args.json:
        args.json.write_text(json.dumps(report, indent=1, ensure_ascii=False), encoding="utf-8")


if __name__ == "__main__":
    main()
