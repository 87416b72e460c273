"""The sync folder as people treat it (issue 35): moved, deleted, chosen wrongly; two data folders on one computer."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from desktop_memory.core.errors import InvalidInput
from desktop_memory.service import MemoryService
from tests.fakes import FakeEmbedder, MemorySecrets


def export(service: MemoryService) -> list[str]:
    return sorted(json.dumps(r, sort_keys=True) for r in service.export_records(include_forgotten=True))


@pytest.fixture
def pair(tmp_path: Path):
    keyring = MemorySecrets()  # one keyring for both folders, as on one computer
    a = MemoryService(tmp_path / "a", embedder=FakeEmbedder())
    b = MemoryService(tmp_path / "b", embedder=FakeEmbedder())
    a.sync.secrets = b.sync.secrets = keyring
    yield a, b, keyring
    a.close()
    b.close()


def test_a_moved_folder_is_a_problem_until_set_up_where_it_is_now(pair, tmp_path: Path) -> None:
    a, b, _ = pair
    shared = tmp_path / "Dropbox" / "memory"
    shared.mkdir(parents=True)
    a.add("Before the move: the piano tuner comes on Thursday")
    a.sync_setup(shared, name="a")
    b.sync_setup(shared, phrase=a.sync_phrase(), name="b")
    moved = tmp_path / "Sync" / "memory"
    moved.parent.mkdir()
    shutil.move(str(shared), str(moved))
    a.add("During the move: the gas meter reading is 04521")
    status = a.sync_now()
    assert status.problem and "missing" in status.problem and status.line().startswith("Sync: ")
    assert status.pending == 1  # kept, not lost
    for m in (a, b):
        assert m.sync_setup(moved).problem is None  # the same set where it is now: no phrase needed
    a.sync_now()
    b.sync_now()
    assert export(a) == export(b) and len(export(a)) == 2


def test_a_deleted_set_says_so_and_nothing_is_lost(pair, tmp_path: Path) -> None:
    a, _, _ = pair
    shared = tmp_path / "Sync"
    shared.mkdir()
    a.add("The recipe for the lemon cake is in the green folder")
    a.sync_setup(shared, name="a")
    shutil.rmtree(shared / "desktop-memory-sync")
    status = a.sync_now()
    assert status.problem and "no longer holds" in status.problem
    assert len(export(a)) == 1


@pytest.mark.parametrize("where", ["inside the data folder", "around the data folder", "the data folder"])
def test_the_sync_folder_and_the_data_folder_must_be_apart(pair, tmp_path: Path, where: str) -> None:
    a, _, _ = pair
    folder = {"inside the data folder": a.folder / "sync", "around the data folder": tmp_path,
              "the data folder": a.folder}[where]
    folder.mkdir(exist_ok=True)
    with pytest.raises(InvalidInput, match="apart"):
        a.sync_setup(folder)
    assert not a.sync_status().configured


def test_two_data_folders_on_one_computer_keep_their_own_keys(pair, tmp_path: Path) -> None:
    a, b, keyring = pair
    shared = tmp_path / "Sync"
    shared.mkdir()
    a.sync_setup(shared, name="a")
    b.sync_setup(shared, phrase=a.sync_phrase(), name="b")
    assert len(keyring.data) == 2
    b.sync_leave()
    a.add("After the other folder left: the bike is at the shop")
    status = a.sync_now()
    assert status.configured and status.problem is None and len(keyring.data) == 1


def test_a_conflict_copy_cut_short_by_a_step_is_read_again(pair, tmp_path: Path,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """A step that ends before all of a conflict copy's memories are stored (a long catch-up) reads it again in the
    next step: none of what it holds is left behind."""
    import time
    import uuid

    from desktop_memory.service import sync as sync_component
    from desktop_memory.sync import wire

    a, b, _ = pair
    shared = tmp_path / "Sync"
    shared.mkdir()
    a.sync_setup(shared, name="a")
    keys = a.sync._keys()
    clone = wire.new_machine_id()
    t = f"{int(time.time() * 1000):015d}-000000-{clone}"
    ops = [{"o": "add", "id": str(uuid.uuid4()), "g": f"g{i}", "t": t, "r": {"source": "manual"},
            "v": {"content": f"Cloned machine's note number {i}", "title": "", "pinned": False, "forgotten": False,
                  "tags": []}} for i in range(300)]
    copy = wire.machine_dir(wire.sync_dir(shared), clone) / "0000000001.sync-conflict-20261128-101010-ABCDEFG.dms"
    wire.write_new(copy, wire.seal(keys[0], 0, {"machine": clone, "seq": 1, "name": "clone", "t": t, "ops": ops}))
    monkeypatch.setattr(sync_component, "STEP_S", 0.0)  # every step ends after its first batch of new memories
    status = b.sync_setup(shared, phrase=a.sync_phrase(), name="b")
    for _ in range(10):
        if not status.catching_up:
            break
        status = b.sync_now()
    texts = {r["content"] for r in b.export_records()}
    assert all(f"Cloned machine's note number {i}" in texts for i in range(300))
