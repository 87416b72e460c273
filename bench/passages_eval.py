#!/usr/bin/env python3
"""Long memories: is the right one found, and does the 300-token context hold the line that answers?

Two sets:
  * LoCoMo (development split, read at run time from --data and never copied into the project, CC BY-NC):
    each SESSION stored whole as one memory ("Speaker: text" lines, the session's date as created_at,
    metadata {"conversation", "session"}), one data folder per conversation, imported through the CLI
    (`python -m desktop_memory --data-dir D import F.jsonl`) and searched through the CLI
    (`search - --json --limit 5`, one question a line). Questions of categories 1-4 whose evidence lies
    in one session count.
  * synthetic (--synthetic): long texts made here (multi-paragraph answers with code and non-English
    paragraphs, the answering sentence deep inside) and questions that paraphrase it, among short notes.

For each question: (a) the evidence memory among the top 5 hits; (b) every evidence line's text inside
the context of --budget tokens (`MemoryService.context`, the code `desktop-memory context` runs, in-process:
one CLI start per question would take most of the run).

Usage (from the project root):
  PYTHONPATH=. .venv/bin/python bench/passages_eval.py --work /tmp/pas-eval [--synthetic] [--json-out r.json]
Run it on two trees (PYTHONPATH) for before/after figures; each needs its own --work.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import random
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

os.environ.setdefault("DESKTOP_MEMORY_ENCRYPTION", "off")
os.environ.setdefault("DESKTOP_MEMORY_SERVICE", "off")

DATA = Path("/work/shared/data/locomo/locomo_dev.json")


def _cli(folder: Path, *args: str, stdin: str | None = None) -> str:
    cmd = [sys.executable, "-m", "desktop_memory", "--data-dir", str(folder), *args]
    done = subprocess.run(cmd, input=stdin, capture_output=True, text=True, check=True)
    return done.stdout


def _norm(text: str) -> str:
    return " ".join(text.split()).lower()


def _session_date(value: str) -> str:
    """LoCoMo's "1:56 pm on 8 May, 2023" as ISO 8601."""
    return dt.datetime.strptime(value.strip(), "%I:%M %p on %d %B, %Y").isoformat()


def locomo(path: Path) -> list[dict[str, Any]]:
    """Per conversation: records (one per session) and questions with their evidence session and lines."""
    out = []
    for conv in json.loads(path.read_text(encoding="utf-8")):
        c = conv["conversation"]
        turns: dict[str, tuple[int, str]] = {}
        records = []
        n = 1
        while f"session_{n}" in c:
            lines = []
            for t in c[f"session_{n}"]:
                lines.append(f"{t['speaker']}: {t['text']}")
                turns[t["dia_id"]] = (n, t["text"])
            records.append({"content": "\n".join(lines), "source": "chat", "created_at":
                            _session_date(c[f"session_{n}_date_time"]),
                            "metadata": {"conversation": conv["sample_id"], "session": n}})
            n += 1
        questions = []
        for qa in conv["qa"]:
            if qa.get("category") not in (1, 2, 3, 4):
                continue
            ev = [turns[e] for e in qa.get("evidence", []) if e in turns]
            if not ev or len({s for s, _ in ev}) != 1:
                continue
            questions.append({"question": qa["question"], "session": ev[0][0], "lines": [t for _, t in ev],
                              "category": qa["category"]})
        out.append({"name": conv["sample_id"], "records": records, "questions": questions})
    return out


# -- the synthetic set ---------------------------------------------------------------------------
_TOPICS = [
    ("garden", "The vegetable beds along the south fence get about six hours of sun. Compost from the kitchen "
     "goes into the black bin, and we turn it every second weekend. Slugs ate most of the lettuce last year, "
     "so the copper tape is worth trying again. Tomatoes were staked with bamboo, which bent in the wind."),
    ("database", "Indexes help reads and slow writes a little. The query planner picks an index when the "
     "selectivity is high enough, and EXPLAIN QUERY PLAN shows which one. Vacuuming reclaims free pages but "
     "rewrites the whole file, so it is best done when nobody is using the application."),
    ("travel", "The train from the airport runs every twenty minutes until midnight. Tickets are cheaper "
     "online, and the day pass covers buses and trams too. Most museums close on Mondays, and the old town "
     "is easiest to see on foot early in the morning before the tour groups arrive."),
    ("cooking", "Brown the onions slowly before adding the spices, otherwise the curry tastes raw. A spoon of "
     "yoghurt at the end softens the heat. Leftovers keep for three days in the fridge, and the flavour is "
     "often better on the second day once everything has settled."),
    ("finance", "The budget spreadsheet has one tab per month and a summary tab that adds them up. Fixed "
     "costs come first, then savings, then everything else. Reviewing subscriptions twice a year usually "
     "finds one or two services nobody uses any more."),
    ("music", "Practising scales slowly with a metronome builds accuracy before speed. Recording yourself "
     "reveals timing problems you do not hear while playing. A new string set sounds bright for a week and "
     "then settles; changing strings before a concert is therefore a gamble."),
]
_GERMAN = ("Die Besprechung wurde auf Donnerstag verschoben, weil zwei Kolleginnen krank sind. Bitte bringt "
           "die Unterlagen vom letzten Quartal mit, damit wir die Zahlen vergleichen können.")
_FRENCH = ("Le rapport annuel doit être envoyé avant la fin du mois. N'oubliez pas de joindre les annexes "
           "et de vérifier les chiffres du troisième trimestre avec la comptabilité.")
_JAPANESE = "来週の会議は火曜日の午後に変更されました。資料は前日までに共有してください。よろしくお願いします。"
_CODE = ("```python\ndef load(path):\n    with open(path, encoding='utf-8') as f:\n        rows = [line.split(',') "
         "for line in f]\n    return [r for r in rows if r and r[0]]\n\n\ndef total(rows):\n    return sum(float(r[2]) "
         "for r in rows)\n```")
# (topic, the answering sentence, a question that paraphrases it)
_FACTS = [
    ("garden", "The plum tree by the shed was grafted in 2019 from a cutting my grandmother brought from Tbilisi.",
     "where did the cutting for the grafted plum tree come from"),
    ("garden", "We finally solved the aphid problem on the roses by releasing ladybird larvae in early June.",
     "how did we get rid of the aphids on the roses"),
    ("database", "The nightly backup job failed because the WAL file grew past the 2 GB quota on the NAS.",
     "why did the nightly backup fail"),
    ("database", "Switching the primary key to an INTEGER column made bulk inserts about four times faster.",
     "what change made the bulk inserts quicker"),
    ("travel", "Our ferry to the island leaves from pier 7 at 06:40, and the crossing takes just under two hours.",
     "what time does the boat to the island depart and from where"),
    ("travel", "The hotel near the cathedral refunded the deposit after we showed them the photo of the broken heater.",
     "how did we get the hotel deposit back"),
    ("cooking", "The secret of the lentil soup is a teaspoon of smoked paprika stirred in with the tomato paste.",
     "what is the trick that makes the lentil soup taste good"),
    ("cooking", "Marta is allergic to cashews, so the pesto for her birthday dinner uses sunflower seeds instead.",
     "which nut is my friend allergic to and what replaces it in the pesto"),
    ("finance", "The car insurance renewal went up by 18 percent, so I moved the policy to the credit union in March.",
     "why did I change car insurer and when"),
    ("finance", "Dad's pension statements are in the blue folder in the second drawer of the filing cabinet.",
     "where are my father's pension papers kept"),
    ("music", "The cello bow was rehaired by the luthier on Kastanienallee for 85 euros.",
     "who rehaired the cello bow and how much did it cost"),
    ("music", "For the spring recital I chose the Fauré Élégie instead of the Bach suite because of the tempo.",
     "which piece will I play at the spring recital"),
]


def synthetic() -> dict[str, Any]:
    """Long texts (~6-12 KB) with two facts each deep inside, paraphrased questions, and short notes."""
    rng = random.Random(7)
    records, questions = [], []
    for k, (topic, base) in enumerate(_TOPICS):
        sentences = re.split(r"(?<=\.)\s+", base)
        others = [b for t, b in _TOPICS if t != topic]
        paragraphs = []
        for _ in range(22):  # a long answer: paragraphs of its topic, some asides
            picked = rng.sample(sentences, k=len(sentences))
            if rng.random() < 0.3:
                picked.append(rng.choice(re.split(r"(?<=\.)\s+", rng.choice(others))))
            paragraphs.append(" ".join(picked))
        paragraphs.insert(5, _CODE)
        paragraphs.insert(9, [_GERMAN, _FRENCH, _JAPANESE][k % 3])
        facts = [f for f in _FACTS if f[0] == topic]
        for depth, (_, sentence, question) in zip((0.6, 0.85), facts, strict=True):
            at = int(len(paragraphs) * depth)
            paragraphs[at] = paragraphs[at] + " " + sentence
            questions.append({"question": question, "session": k + 1, "lines": [sentence], "category": 0})
        records.append({"content": "\n\n".join(paragraphs), "source": "chat", "title": f"Notes about {topic}",
                        "created_at": f"2024-0{k % 9 + 1}-1{k}T10:00:00",
                        "metadata": {"conversation": "synthetic", "session": k + 1}})
    for n, (_, base) in enumerate(_TOPICS * 5):  # short notes on the same topics
        s = re.split(r"(?<=\.)\s+", base)
        records.append({"content": " ".join(rng.sample(s, k=2)), "source": "note",
                        "created_at": f"2024-10-{n % 28 + 1:02d}T09:00:00",
                        "metadata": {"conversation": "synthetic", "session": 100 + n}})
    return {"name": "synthetic", "records": records, "questions": questions}


def evaluate(conv: dict[str, Any], work: Path, budget: int) -> list[dict[str, Any]]:
    folder = work / conv["name"]
    done = work / f"{conv['name']}.imported"
    if not done.exists():
        folder.mkdir(parents=True, exist_ok=True)
        feed = work / f"{conv['name']}.jsonl"
        feed.write_text("".join(json.dumps(r) + "\n" for r in conv["records"]), encoding="utf-8")
        _cli(folder, "import", str(feed))
        done.touch()
    questions = conv["questions"]
    out = _cli(folder, "search", "-", "--json", "--limit", "5",
               stdin="".join(" ".join(q["question"].split()) + "\n" for q in questions))
    answers = [json.loads(line) for line in out.splitlines() if line.strip()]
    from desktop_memory.service import MemoryService

    rows = []
    with MemoryService(folder) as svc:
        for q, hits in zip(questions, answers, strict=True):
            sessions = [h.get("metadata", {}).get("session") for h in hits]
            ctx = svc.context(q["question"], budget=budget)
            text = _norm(ctx.text)
            rows.append({"category": q["category"], "top5": q["session"] in sessions,
                         "in_context": all(_norm(line) in text for line in q["lines"]),
                         "tokens": ctx.tokens})
    return rows


def summary(rows: list[dict[str, Any]]) -> dict[str, Any]:
    n = len(rows)
    return {"questions": n, "top5": round(sum(r["top5"] for r in rows) / max(1, n), 4),
            "in_context": round(sum(r["in_context"] for r in rows) / max(1, n), 4),
            "max_tokens": max((r["tokens"] for r in rows), default=0)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", type=Path, default=DATA)
    ap.add_argument("--work", type=Path, required=True, help="data folders (reused when present)")
    ap.add_argument("--budget", type=int, default=300)
    ap.add_argument("--synthetic", action="store_true", help="also the synthetic set")
    ap.add_argument("--only-synthetic", action="store_true")
    ap.add_argument("--json-out", type=Path)
    args = ap.parse_args()
    convs = [] if args.only_synthetic else locomo(args.data)
    if args.synthetic or args.only_synthetic:
        convs.append(synthetic())
    result: dict[str, Any] = {}
    rows_all: list[dict[str, Any]] = []
    for conv in convs:
        rows = evaluate(conv, args.work, args.budget)
        result[conv["name"]] = summary(rows)
        print(conv["name"], result[conv["name"]], flush=True)
        if conv["name"] != "synthetic":
            rows_all += rows
    if rows_all:
        result["locomo"] = summary(rows_all)
        result["locomo_by_category"] = {c: summary([r for r in rows_all if r["category"] == c]) for c in (1, 2, 3, 4)}
        print("locomo", result["locomo"])
        print("by category", result["locomo_by_category"])
    if args.json_out:
        args.json_out.write_text(json.dumps(result, indent=2), encoding="utf-8")


if __name__ == "__main__":
    main()
