"""Sync regressions found by the random stories of test_sync_properties.py, each as a small fixed story."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from desktop_memory.core.errors import NotFound
from tests.integration.test_sync_properties import World, deterministic


def test_remove_never_picks_a_machine_by_one_letter_of_its_id(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`sync remove c` when no machine is called "c" yet: not the machine whose id happens to start with c."""
    deterministic(monkeypatch, 2)
    w = World(tmp_path, random.Random(2))
    try:
        w.deliver("B", "A")
        w.sync("A")
        b = w.me("B")
        assert b[0] not in "bc"  # the seed's ids: B's first letter is no machine's name
        with pytest.raises(NotFound):
            w.svc["A"].sync_remove(b[0])
        assert not any(m.removed for m in w.svc["A"].sync_status().machines)
        got = w.svc["A"].sync_remove(b[:8])  # an id's first eight characters (as `sync status` shows them)
        assert [m.name for m in got.machines if m.removed] == ["B"]
    finally:
        w.close()
