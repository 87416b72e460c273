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


def test_a_removal_learned_mid_read_holds_the_removed_machine_to_its_cut(tmp_path: Path,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """B learns that C was removed from A's log in the same read as C's segment past A's cut: B's own cut is at least
    what it read before (and published, so A reads that far too), never below what it applies."""
    deterministic(monkeypatch, 3)
    w = World(tmp_path, random.Random(3))
    try:
        w.deliver("B", "A")
        w.deliver("C", "A")
        w.sync("A")  # A knows B and C (their first segments)
        w.add("C", "written on C before its removal reached it")
        w.sync("C")
        w.deliver("C", "A")
        w.svc["A"].sync_remove(w.me("C"))
        w.removed.add("C")
        for f in w.sdir("A").rglob("*"):  # A's files reach B (C's log among them), the removal record not yet
            rel = f.relative_to(w.sdir("A"))
            if f.is_file() and not f.name.startswith(("removed-", ".")) and rel.parts[0] != f"m-{w.me('B')}":
                (w.sdir("B") / rel).parent.mkdir(parents=True, exist_ok=True)
                (w.sdir("B") / rel).write_bytes(f.read_bytes())
        w.sync("B")
        w.check()  # the same memories everywhere (with or without C's last change: the same on both)
    finally:
        w.close()


def test_a_removed_machine_compacted_past_its_cut_still_reaches_every_machine(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """C's change reached A, then C compacted its log into a snapshot past the cut A gave it when it removed C: B,
    which never read C's segments, gets the change from A's log (a removed machine's ops are carried on)."""
    deterministic(monkeypatch, 3)
    w = World(tmp_path, random.Random(3))
    try:
        w.deliver("B", "A")
        w.deliver("C", "A")
        w.sync("A")
        w.add("C", "written on C, read by A before C was removed")
        w.sync("C")
        w.deliver("C", "A")
        w.sync("A")
        c = w.svc["C"].sync
        c.compact(c._where(), c._keys(), c._clock())  # C's segments replaced by a snapshot (seq past A's cut)
        w.propagate_deletions()
        w.svc["A"].sync_remove(w.me("C"))
        w.removed.add("C")
        w.deliver("A", "B")
        w.sync("B")  # B knows of the removal before any of C's log reaches it
        w.deliver("C", "B")
        w.check()
        assert any("read by A before" in m.content for m in w.memories("B"))
    finally:
        w.close()


def test_a_purged_memorys_values_go_where_its_add_never_arrived(tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """C read B's title of a memory whose add it never saw (A compacted it away after purging it): the purge names
    the memories it removes, so the title does not stay behind in C's sync tables."""
    deterministic(monkeypatch, 3)
    w = World(tmp_path, random.Random(3))
    try:
        for n in "BC":
            w.deliver(n, "A")
        w.sync("A")
        w.add("A", "a note A purges later")
        w.sync("A")
        w.deliver("A", "B")
        w.sync("B")
        mid = next(m.id for m in w.memories("B") if m.content == "a note A purges later")
        w.svc["B"].edit(mid, title="secret title of a purged note")
        w.sync("B")
        own = w.sdir("B") / f"m-{w.me('B')}"  # B's log only: C never sees the add
        (w.sdir("C") / own.name).mkdir(parents=True, exist_ok=True)
        for f in own.glob("*.dms"):
            (w.sdir("C") / own.name / f.name).write_bytes(f.read_bytes())
        w.sync("C")
        w.purged.add(w.svc["A"].get(mid).content_hash)
        w.svc["A"].purge([mid])
        w.sync("A")  # A's log held the add: compacted away
        w.propagate_deletions()
        w.check()
        for n in "ABC":
            values = [str(v) for (v,) in w.svc[n].store.db.execute("SELECT value FROM sync_registers")]
            assert not any("secret title" in v for v in values), n
    finally:
        w.close()
