"""SIGKILL in the middle of a large import: nothing acknowledged is lost and both indexes agree."""

import json
import random
import re
import signal
import subprocess
import sys

import pytest

from desktop_memory.core.models import Memory
from desktop_memory.service import MemoryService

# the CLI with the engine in its own process (tests/conftest.py: engine_in_process)
pytestmark = [pytest.mark.integration, pytest.mark.usefixtures("engine_in_process")]


def records(n: int, seed: int = 7) -> list[str]:
    rng = random.Random(seed)
    syllables = ["ka", "lo", "mi", "ne", "ru", "ta", "vo", "zi", "pe", "su", "da", "fo", "gu", "hi", "ja", "be"]
    words = ["".join(rng.choice(syllables) for _ in range(rng.randint(2, 4))) for _ in range(3000)]
    out = []
    for i in range(n):
        text = f"Note {i}: " + " ".join(rng.choice(words) for _ in range(30))
        out.append(json.dumps({"content": text[:200], "metadata": {"n": i}}))
    return out


def test_sigkill_during_import_loses_nothing_acknowledged(tmp_path, real_embedder):
    data = tmp_path / "d"
    src = tmp_path / "big.jsonl"
    lines = records(1600)
    src.write_text("\n".join(lines) + "\n")
    proc = subprocess.Popen([sys.executable, "-m", "desktop_memory", "--data-dir", str(data), "import", str(src)],
                            stderr=subprocess.PIPE, stdout=subprocess.DEVNULL)
    acknowledged = 0
    for raw in proc.stderr:
        m = re.match(rb"committed (\d+)", raw)
        if m:
            acknowledged = int(m.group(1))
            if acknowledged >= 512:
                break
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=60)
    proc.stderr.close()
    assert proc.returncode == -signal.SIGKILL and acknowledged >= 512

    with MemoryService(data, embedder=real_embedder) as service:
        report = service.reconcile(full=True)
        stored = service.store.count()
        assert stored >= acknowledged
        assert service.vectors.all_ids() == service.store.all_ids()
        assert service.store.stats.fts_count() == stored and service.store.vectors.queue_length() == 0
        assert report["orphans"] == 0
        # the import can simply be run again: what is there is recognised as duplicate
        again = service.import_records(lines)
        assert again.added + again.related == 1600 - stored and again.duplicates == stored
        assert service.vectors.count() == service.store.count() == 1600  # every distinct line is kept


def test_committed_but_unindexed_memories_are_embedded_on_start(tmp_path, real_embedder):
    data = tmp_path / "d"
    with MemoryService(data, embedder=real_embedder) as service:
        service.add("indexed normally")
        service.sync_vectors()
        # as if the process died right after the SQLite commit, before Chroma heard of it
        with service.store.transaction():
            service.store.insert(Memory(id="ghost", content="a crocodile in the bathtub", created_at=1.0,
                                        updated_at=1.0, content_hash="x"))
        assert service.store.vectors.queue_length() == 1
        service.sync_vectors = lambda: 0  # the process dies: close() must not write it either
    with MemoryService(data, embedder=real_embedder) as service:
        hits = service.search("reptile in the bathroom", limit=1)
        assert hits[0].memory.id == "ghost"
        assert service.store.vectors.queue_length() == 0 and service.vectors.count() == 2
