"""Items/s and peak RSS of `desktop-memory import` of a large ChatGPT-shaped export (issue 32: bounded memory).

Generates conversations.json in a zip (default ~200 MB uncompressed; `--size-mb 1024` for 1 GB) and imports it
into a fresh data folder with the real CLI (real SQLite, Chroma, MiniLM), in process (DESKTOP_MEMORY_SERVICE=off)
and through the engine service; then ordinary short JSON Lines texts (`--short` of them) for texts/s (the
target: at least 150 memories/s). Reports wall time, items/s and the CLI's peak RSS (`os.wait4`; with the engine
service, the engine's own RSS is not included: see bench/host_import.py).

    .venv/bin/python bench/import_formats.py --size-mb 200 --out /tmp/import-formats.json
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


def conversation(rng: random.Random, n: int, exchanges: int) -> dict:
    cid = f"bench-{n:08d}"
    mapping: dict = {"root": {"id": "root", "message": None, "parent": None, "children": []}}
    last, t = "root", 1.6e9 + n * 600
    for e in range(exchanges):
        for role, words in (("user", 20), ("assistant", 120)):
            nid = f"{cid}-{e}-{role[0]}"
            t += 5
            mapping[nid] = {"id": nid, "parent": last, "children": [], "message": {
                "id": nid, "author": {"role": role}, "create_time": t, "recipient": "all",
                "content": {"content_type": "text", "parts": [_text(rng, words)]}, "metadata": {}}}
            mapping[last]["children"].append(nid)
            last = nid
    return {"id": cid, "conversation_id": cid, "title": f"Bench {n}", "create_time": 1.6e9 + n * 600,
            "mapping": mapping, "current_node": last}


def make_export(path: Path, size_mb: float, seed: int = 7) -> tuple[int, int]:
    """A zip holding conversations.json of about `size_mb` MB, written as a stream; (conversations, exchanges)."""
    rng, target, written, convs, items = random.Random(seed), size_mb * 1e6, 0, 0, 0
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf, zf.open("conversations.json", "w") as out:
        out.write(b"[")
        while written < target:
            exchanges = rng.randint(1, 12)
            data = json.dumps(conversation(rng, convs, exchanges)).encode()
            out.write((b"," if convs else b"") + data)
            written += len(data)
            convs, items = convs + 1, items + exchanges
        out.write(b"]")
    return convs, items


def run_cli(args: list[str], data: Path, service: bool) -> dict:
    env = {**os.environ, "DESKTOP_MEMORY_ENCRYPTION": "off", "DESKTOP_MEMORY_SERVICE": "on" if service else "off"}
    start = time.monotonic()
    proc = subprocess.Popen([sys.executable, "-m", "desktop_memory", "--data-dir", str(data), *args],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    out, err = proc.communicate()
    _, _, usage = os.wait4(proc.pid, 0) if proc.returncode is None else (0, 0, None)
    wall = time.monotonic() - start
    import resource

    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024 if usage is None else usage.ru_maxrss / 1024
    return {"exit": proc.returncode, "wall_s": round(wall, 1), "peak_rss_mb_children_max": round(peak),
            "summary": out.decode().strip(), "stderr_tail": err.decode(errors="replace").strip().splitlines()[-3:]}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size-mb", type=float, default=200)
    ap.add_argument("--short", type=int, default=3000, help="short JSON Lines texts for texts/s")
    ap.add_argument("--no-service", action="store_true", help="skip the run through the engine service")
    ap.add_argument("--out")
    a = ap.parse_args()
    results: dict = {"size_mb": a.size_mb}
    with tempfile.TemporaryDirectory(prefix="import-formats-") as tmp:
        root = Path(tmp)
        export = root / "export.zip"
        t = time.monotonic()
        convs, items = make_export(export, a.size_mb)
        results.update(conversations=convs, exchanges=items, zip_mb=round(export.stat().st_size / 1e6, 1),
                       generate_s=round(time.monotonic() - t, 1))
        for service in (False,) if a.no_service else (False, True):
            r = run_cli(["import", str(export)], root / f"data-{service}", service)
            r["items_per_s"] = round(items / r["wall_s"], 1)
            results["export_service" if service else "export_in_process"] = r
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
