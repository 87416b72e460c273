"""Five machines in one sync set (issue 35), one shared folder, each machine syncing in its own order with long
gaps: the same texts captured on several machines are one memory, every change reaches every machine, and their
exports end identical. (The file-sync faults are in test_sync_properties.py; this is the size of the set.)"""

from __future__ import annotations

import json
import random
from pathlib import Path

from desktop_memory.service import MemoryService
from tests.fakes import FakeEmbedder, MemorySecrets

NAMES = ("home", "work", "laptop", "tablet", "old-pc")


def export(service: MemoryService) -> list[str]:
    return sorted(json.dumps(r, sort_keys=True) for r in service.export_records(include_forgotten=True))


def test_five_machines_converge(tmp_path: Path) -> None:
    rng = random.Random(35)
    shared = tmp_path / "Sync"
    shared.mkdir()
    machines = {n: MemoryService(tmp_path / n, embedder=FakeEmbedder()) for n in NAMES}
    try:
        for m in machines.values():
            m.sync.secrets = MemorySecrets()
        first = machines[NAMES[0]]
        first.add("Shared on every machine: the wifi at the cabin is 'pinecone-42'")
        first.sync_setup(shared, name=NAMES[0])
        phrase = first.sync_phrase()
        for name in NAMES[1:]:
            machines[name].add("Shared on every machine: the wifi at the cabin is 'pinecone-42'")  # the same copy
            machines[name].add(f"Only on {name}: its serial number is {rng.randrange(10**8):08d}")
            machines[name].sync_setup(shared, phrase=phrase, name=name)
        words = ["Ödön", "東京", "Привет", "naïve café", "def f(): pass"]
        for step in range(60):
            name = rng.choice(NAMES)
            m = machines[name]
            mine = [r.memory.id for r in m.search("machine", limit=50, record_access=False)]
            roll = rng.random()
            if roll < 0.35 or not mine:
                m.add(f"Step {step} on {name}: {rng.choice(words)} {rng.randrange(10**6)}")
            elif roll < 0.5:
                m.set_pinned(rng.choice(mine), rng.random() < 0.5)
            elif roll < 0.65:
                m.tag(rng.choice(mine), add=[rng.choice(["home", "work", "later"])])
            elif roll < 0.75:
                m.edit(rng.choice(mine), title=f"title {step}")
            elif roll < 0.85:
                m.set_forgotten(rng.choice(mine), rng.random() < 0.5)
            elif roll < 0.9:
                m.purge([rng.choice(mine)])
            if rng.random() < 0.4:  # machines sync now and then, some rarely
                m.sync_now()
        for _ in range(3):  # everyone, until nothing new arrives
            for name in NAMES:
                status = machines[name].sync_now()
                assert status.problem is None, (name, status.problem)
        exports = {n: export(m) for n, m in machines.items()}
        assert all(e == exports[NAMES[0]] for e in exports.values())
        texts = [json.loads(r)["content"] for r in exports[NAMES[0]]]
        assert texts.count("Shared on every machine: the wifi at the cabin is 'pinecone-42'") <= 1
        for name in NAMES[1:]:
            status = machines[name].sync_status()
            assert {m.name for m in status.machines} == set(NAMES)
            assert all(m.seen_seq == m.last_seq for m in status.machines)
    finally:
        for m in machines.values():
            m.close()
