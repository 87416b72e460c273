"""Sync (issue 35): what a new machine's catch-up costs, and what each change writes into the shared folder.

Machine A holds N memories (bench/speed.py's generated corpus, imported); A sets sync up (its whole store becomes
log segments in the shared folder: time and bytes per memory); machine B joins with the phrase and catches up
(reads, merges, embeds and indexes every memory locally: the target is minutes at 100k); then A adds, pins and
tags a few hundred more and B applies them (steady state: bytes written per memory and per change). Finally B's
export is compared with A's (convergence) and the folder is grepped for a sample of texts (nothing readable).

    DESKTOP_MEMORY_ENCRYPTION=off .venv/bin/python bench/sync_catchup.py --memories 10000 --work /tmp/dm-sync
The sync key is kept in memory here (no keyring needed); the real embedding model is used.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import shutil
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from speed import Corpus  # noqa: E402

from desktop_memory.engine.embed import Embedder  # noqa: E402
from desktop_memory.service import MemoryService  # noqa: E402
from tests.fakes import MemorySecrets  # noqa: E402  (the sync key in memory: no keyring needed)


def folder_bytes(path: Path) -> tuple[int, int]:
    files = [p for p in path.rglob("*") if p.is_file()]
    return sum(p.stat().st_size for p in files), len(files)


def export(service: MemoryService) -> list[str]:
    return sorted(json.dumps(r, sort_keys=True) for r in service.export_records(include_forgotten=True))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--memories", type=int, default=10000)
    ap.add_argument("--changes", type=int, default=300, help="memories added on A after the catch-up")
    ap.add_argument("--work", type=Path, default=Path("/tmp/dm-sync-bench"))
    ap.add_argument("--keep-a", action="store_true", help="reuse A's data folder if it holds the memories")
    args = ap.parse_args()
    secrets = MemorySecrets()
    embedder = Embedder()
    a_dir, b_dir, shared = args.work / "a", args.work / "b", args.work / "shared"
    if not args.keep_a:
        shutil.rmtree(args.work, ignore_errors=True)
    shutil.rmtree(b_dir, ignore_errors=True)
    shutil.rmtree(shared, ignore_errors=True)
    shared.mkdir(parents=True)
    out: dict[str, Any] = {"memories": args.memories, "machine": platform.processor() or platform.machine(),
                           "cpus": os.cpu_count(), "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())}
    corpus = Corpus(seed=35)
    with MemoryService(a_dir, embedder=embedder) as a:
        a.sync.secrets = secrets
        if a.store.count() < args.memories:
            t0 = time.perf_counter()
            a.import_records(corpus.records(args.memories - a.store.count()))
            out["import_a_s"] = round(time.perf_counter() - t0, 1)
        else:
            corpus.records(args.memories).__next__()
        out["a_count"] = a.store.count(include_forgotten=True)
        t0 = time.perf_counter()
        a.sync_setup(shared, name="A")
        out["a_setup_s"] = round(time.perf_counter() - t0, 1)
        size, files = folder_bytes(shared)
        out["folder_bytes_after_setup"], out["folder_files_after_setup"] = size, files
        out["bytes_per_memory_initial"] = round(size / max(1, out["a_count"]), 1)
        phrase = a.sync_phrase()
        sample = [m.content for m in list(a.store.iter_all())[:: max(1, out["a_count"] // 200)]]

        with MemoryService(b_dir, embedder=embedder) as b:
            b.sync.secrets = secrets
            r0 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
            t0 = time.perf_counter()
            status = b.sync_setup(shared, phrase=phrase, name="B")
            steps = 1
            while status.catching_up:  # as the CLI and the engine host do: one bounded step after another
                status = b.sync_now()
                steps += 1
            out["b_catchup_steps"] = steps
            out["b_catchup_s"] = round(time.perf_counter() - t0, 1)
            out["b_catchup_per_s"] = round(out["a_count"] / out["b_catchup_s"], 1)
            out["peak_rss_mb"] = round(max(r0, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss) / 1024, 1)
            out["b_count"] = b.store.count(include_forgotten=True)

            # steady state: new memories, pins and tags on A, applied on B
            before, _ = folder_bytes(shared / "desktop-memory-sync" / f"m-{a.sync_status().machine_id}")
            ids = [a.add(text).memory.id for text in
                   (json.loads(line)["content"] + " (new)" for line in corpus.records(args.changes))]
            t0 = time.perf_counter()
            a.sync_now()
            out["a_write_changes_s"] = round(time.perf_counter() - t0, 2)
            after, _ = folder_bytes(shared / "desktop-memory-sync" / f"m-{a.sync_status().machine_id}")
            out["bytes_per_new_memory"] = round((after - before) / args.changes, 1)
            for i in ids[:100]:
                a.set_pinned(i, True)
            a.sync_now()
            after2, _ = folder_bytes(shared / "desktop-memory-sync" / f"m-{a.sync_status().machine_id}")
            out["bytes_per_pin"] = round((after2 - after) / 100, 1)
            t0 = time.perf_counter()
            b.sync_now()
            out["b_apply_changes_s"] = round(time.perf_counter() - t0, 2)
            a.sync_now()
            out["converged"] = export(a) == export(b)
            blob = b"".join(p.read_bytes() for p in shared.rglob("*") if p.is_file())
            out["readable_texts_in_folder"] = sum(1 for t in sample if t[:40].encode() in blob)
    print(json.dumps(out, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
