"""Items/s and peak RSS of `desktop-memory import` of a large ChatGPT-shaped export (issue 32: bounded memory).

Three measurements, each in a fresh process whose own peak RSS is read when it ends (`os.wait4` on it alone):
- the reader and Feed alone (no engine: each record line made, then dropped) over a generated export of
  `--feed-mb` MB (default 1024: bounded memory over 1 GB);
- the real CLI import (real SQLite, Chroma, MiniLM, the engine in process: DESKTOP_MEMORY_SERVICE=off) of a
  generated export of `--size-mb` MB into a fresh data folder (`--service` also through the engine service,
  whose own RSS is then not included: see bench/host_import.py);
- ordinary short JSON Lines texts (`--short` of them) for texts/s (the target: at least 150 memories/s).
Exports are written as a stream (a pool of texts, each made unique), conversations.json deflated in a zip.

    .venv/bin/python bench/import_formats.py --feed-mb 1024 --size-mb 100 --out /tmp/import-formats.json
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path

WORDS = [
    "harbour", "ferry", "invoice", "glacier", "violin", "compiler", "lantern", "meadow", "turbine", "saffron",
    "quarry", "budget", "release", "train", "meeting", "Tuesday", "March", "version", "patch", "server", "deploy",
    "customer", "contract", "delivery", "flight", "ticket", "garden", "recipe", "Bergen", "Oslo", "Kyoto", "東京",
    "café", "über",
]


def _text(rng: random.Random, words: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(words)) + f" #{rng.getrandbits(48):x}"


class _Texts:
    """Unique texts fast: one of a pool of random texts and a counter (generating 1 GB in about a minute)."""

    def __init__(self, rng: random.Random, words: int, pool: int = 4000):
        self.pool = [_text(rng, words) for _ in range(pool)]
        self.rng, self.n = rng, 0

    def __call__(self) -> str:
        self.n += 1
        return f"{self.rng.choice(self.pool)} n{self.n}"


def conversation(texts: dict[str, _Texts], n: int, exchanges: int) -> dict:
    cid = f"bench-{n:08d}"
    mapping: dict = {"root": {"id": "root", "message": None, "parent": None, "children": []}}
    last, t = "root", 1.6e9 + n * 600
    for e in range(exchanges):
        for role in ("user", "assistant"):
            nid = f"{cid}-{e}-{role[0]}"
            t += 5
            mapping[nid] = {"id": nid, "parent": last, "children": [], "message": {
                "id": nid, "author": {"role": role}, "create_time": t, "recipient": "all",
                "content": {"content_type": "text", "parts": [texts[role]()]}, "metadata": {}}}
            mapping[last]["children"].append(nid)
            last = nid
    return {"id": cid, "conversation_id": cid, "title": f"Bench {n}", "create_time": 1.6e9 + n * 600,
            "mapping": mapping, "current_node": last}


def make_export(path: Path, size_mb: float, seed: int = 7) -> tuple[int, int]:
    """A zip holding conversations.json of about `size_mb` MB, written as a stream; (conversations, exchanges)."""
    rng, target, written, convs, items = random.Random(seed), size_mb * 1e6, 0, 0, 0
    texts = {"user": _Texts(rng, 20), "assistant": _Texts(rng, 120)}
    with (zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED, compresslevel=1) as zf,
          zf.open("conversations.json", "w", force_zip64=True) as out):
        out.write(b"[")
        while written < target:
            exchanges = rng.randint(1, 12)
            data = json.dumps(conversation(texts, convs, exchanges)).encode()
            out.write((b"," if convs else b"") + data)
            written += len(data)
            convs, items = convs + 1, items + exchanges
        out.write(b"]")
    return convs, items


def measured(argv: list[str], env: dict[str, str]) -> dict:
    """Run `argv` in a fresh process; its exit, wall time, its own peak RSS (os.wait4 on it alone) and output."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        start = time.monotonic()
        proc = subprocess.Popen(argv, stdout=out, stderr=err, env=env)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.monotonic() - start
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        peak_mb = usage.ru_maxrss / 1024  # KiB on Linux
        return {"exit": proc.returncode, "wall_s": round(wall, 1), "peak_rss_mb": round(peak_mb),
                "stdout": out.read().decode(errors="replace").strip(),
                "stderr_tail": err.read().decode(errors="replace").strip().splitlines()[-3:]}


def run_cli(args: list[str], data: Path, service: bool) -> dict:
    env = {**os.environ, "DESKTOP_MEMORY_ENCRYPTION": "off", "DESKTOP_MEMORY_SERVICE": "on" if service else "off"}
    return measured([sys.executable, "-m", "desktop_memory", "--data-dir", str(data), *args], env)


def feed_only(path: str) -> None:
    """The reader and Feed over `path`, each line made and dropped; prints {"lines", "chars"} as JSON."""
    from desktop_memory.core.lines import line_limit
    from desktop_memory.imports import recognise
    from desktop_memory.imports.feed import Feed

    found = recognise(path)
    assert found is not None, path
    feed, lines, chars = Feed(found, line_limit(1 << 20)), 0, 0
    for line in feed.lines():
        lines += 1
        chars += len(line) if isinstance(line, (str, bytes)) else 0
    print(json.dumps({"lines": lines, "chars": chars, "problems": len(feed.problems) + feed.more_problems}))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--feed-mb", type=float, default=1024, help="the export the reader and Feed read alone")
    ap.add_argument("--size-mb", type=float, default=100, help="the export imported through the CLI")
    ap.add_argument("--short", type=int, default=3000, help="short JSON Lines texts for texts/s")
    ap.add_argument("--service", action="store_true", help="also import through the engine service")
    ap.add_argument("--feed-only", help=argparse.SUPPRESS)  # the child process of the first measurement
    ap.add_argument("--out")
    a = ap.parse_args()
    if a.feed_only:
        feed_only(a.feed_only)
        return
    results: dict = {}
    with tempfile.TemporaryDirectory(prefix="import-formats-") as tmp:
        root = Path(tmp)
        if a.feed_mb:
            big = root / "big.zip"
            t = time.monotonic()
            convs, items = make_export(big, a.feed_mb)
            results["feed_alone"] = r = {"size_mb": a.feed_mb, "conversations": convs, "exchanges": items,
                                         "zip_mb": round(big.stat().st_size / 1e6, 1),
                                         "generate_s": round(time.monotonic() - t, 1)}
            r.update(measured([sys.executable, __file__, "--feed-only", str(big)], dict(os.environ)))
            r["items_per_s"] = round(items / r["wall_s"], 1)
            r["mb_per_s"] = round(a.feed_mb / r["wall_s"], 1)
            big.unlink()
        if a.size_mb:
            export = root / "export.zip"
            t = time.monotonic()
            convs, items = make_export(export, a.size_mb)
            base = {"size_mb": a.size_mb, "conversations": convs, "exchanges": items,
                    "zip_mb": round(export.stat().st_size / 1e6, 1), "generate_s": round(time.monotonic() - t, 1)}
            for service in (False, True) if a.service else (False,):
                r = {**base, **run_cli(["import", str(export)], root / f"data-{service}", service)}
                r["items_per_s"] = round(items / r["wall_s"], 1)
                results["export_service" if service else "export_in_process"] = r
        if a.short:
            rng = random.Random(3)
            short = root / "short.jsonl"
            short.write_text("".join(json.dumps({"content": _text(rng, 25)}) + "\n" for _ in range(a.short)))
            r = run_cli(["import", str(short)], root / "data-short", False)
            r["texts_per_s"] = round(a.short / r["wall_s"], 1)
            results["short_jsonl_in_process"] = r
    text = json.dumps(results, indent=2, ensure_ascii=False)
    print(text)
    if a.out:
        Path(a.out).write_text(text)


if __name__ == "__main__":
    main()
