"""Sync through Syncthing itself (issue 35): two machines, each a data folder with its engine and a real Syncthing
instance on a loopback address syncing that machine's copy of the shared folder (tests/sync/syncthing.py). What one
machine remembers, forgets or purges reaches the other through the files Syncthing carries; a real conflict copy
Syncthing makes is read for what it holds; nothing in either copy of the folder is readable without the key. The
set's key is in the real Secret Service keyring of scripts/with-desktop.sh."""

from __future__ import annotations

import json
import os
import time
import uuid
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from desktop_memory.service import MemoryService
from desktop_memory.sync import wire
from tests.sync.conftest import FOLDER_ID
from tests.sync.syncthing import Syncthing, make_conflict, settle, wait_for

pytestmark = pytest.mark.skipif(not os.environ.get("DBUS_SESSION_BUS_ADDRESS"),
                                reason="needs the keyring of scripts/with-desktop.sh")


@pytest.fixture(scope="module")
def machines(syncthing_pair: tuple[Syncthing, Syncthing], tmp_path_factory: pytest.TempPathFactory,
             real_embedder: Any) -> Iterator[tuple[MemoryService, MemoryService]]:
    a_st, b_st = syncthing_pair
    root = tmp_path_factory.mktemp("machines")
    a = MemoryService(root / "data-a", embedder=real_embedder)
    b = MemoryService(root / "data-b", embedder=real_embedder)
    try:
        a.add("Before sync: the laptop's note about the Lisbon trip budget")
        b.add("Before sync: the desktop's note about the Kyoto conference")
        a.sync_setup(a_st.folder, name="laptop")
        wait_for(lambda: (b_st.folder / wire.SYNC_DIR / wire.SET_FILE).is_file()
                 and (b_st.folder / wire.SYNC_DIR / "epoch-0").is_file(), 60, "the set to reach the desktop")
        status = b.sync_setup(b_st.folder, phrase=a.sync_phrase(), name="desktop")
        assert status.configured and status.problem is None, status
        yield a, b
    finally:
        for service in (a, b):
            if service.sync.configured:
                service.sync_leave()  # its key out of the session's keyring
            service.close()


def until(check: Callable[[], bool], machines: tuple[MemoryService, ...], what: str, timeout: float = 90) -> None:
    """Sync every machine until `check` holds (Syncthing carries files in its own time)."""
    def round_() -> bool:
        for m in machines:
            m.sync_now()
        return check()
    wait_for(round_, timeout, what, interval=1.0)


def texts(service: MemoryService, *, forgotten: bool = True) -> dict[str, dict[str, Any]]:
    return {r["content"]: r for r in service.export_records(include_forgotten=forgotten)}


def export(service: MemoryService) -> list[str]:
    return sorted(json.dumps(r, sort_keys=True) for r in service.export_records(include_forgotten=True))


def test_what_each_had_before_reaches_the_other(machines: tuple[MemoryService, MemoryService]) -> None:
    a, b = machines
    until(lambda: len(texts(a)) == 2 and len(texts(b)) == 2, machines, "both earlier memories on both machines")
    assert export(a) == export(b)
    found = b.search("Lisbon trip budget", limit=3)
    assert found and "Lisbon" in found[0].memory.content  # searchable there: indexed and embedded locally


def test_a_memory_added_then_forgotten_on_one_reaches_the_other(
        machines: tuple[MemoryService, MemoryService]) -> None:
    a, b = machines
    word = f"zephyr{uuid.uuid4().hex[:8]}"
    added = a.add(f"The {word} router password hint is in the blue notebook")
    until(lambda: any(word in t for t in texts(b)), machines, "the new memory on the desktop")
    assert b.search(word, limit=1)[0].memory.content.startswith(f"The {word}")
    a.set_forgotten(added.memory.id, True)
    text = added.memory.content
    until(lambda: text in texts(b) and text not in texts(b, forgotten=False), machines, "the forget on the desktop")
    until(lambda: export(a) == export(b), machines, "both exports the same")


def test_a_purge_removes_the_text_on_both(machines: tuple[MemoryService, MemoryService]) -> None:
    a, b = machines
    word = f"quokka{uuid.uuid4().hex[:8]}"
    a.add(f"Remove me everywhere: {word}")
    until(lambda: any(word in t for t in texts(b)), machines, "the memory on the desktop")
    target = next(r for r in b.search(word, limit=3) if word in r.memory.content)
    b.purge([target.memory.id])
    until(lambda: not any(word in t for t in texts(a)), machines, "the purge on the laptop")
    assert export(a) == export(b)


def test_a_conflict_copy_syncthing_makes_is_read_for_what_it_holds(
        machines: tuple[MemoryService, MemoryService], syncthing_pair: tuple[Syncthing, Syncthing]) -> None:
    """A machine's data folder copied to a second computer (the same machine id on both) writes the same segment
    number twice: Syncthing keeps one and renames the other to a .sync-conflict copy. Both are read."""
    a, b = machines
    a_st, b_st = syncthing_pair
    keys = a.sync._keys()
    epoch = max(keys)
    clone = wire.new_machine_id()
    words = [f"conflict{uuid.uuid4().hex[:8]}" for _ in range(2)]

    def segment(word: str) -> bytes:
        t = f"{int(time.time() * 1000):015d}-000000-{clone}"
        op = {"o": "add", "id": str(uuid.uuid4()), "g": word, "t": t,
              "r": {"source": "manual", "created_at": time.time()},
              "v": {"content": f"Written by a cloned machine: {word}", "title": "", "pinned": False,
                    "forgotten": False, "tags": []}}
        return wire.seal(keys[epoch], epoch, {"machine": clone, "seq": 1, "name": "clone", "t": t, "ops": [op]})

    relpath = f"{wire.SYNC_DIR}/m-{clone}/{wire.segment_name(1)}"
    copy = make_conflict(a_st, b_st, FOLDER_ID, relpath, segment(words[0]), segment(words[1]))
    assert ".sync-conflict-" in copy.name
    settle(a_st, b_st, FOLDER_ID)
    until(lambda: all(any(w in t for t in texts(m)) for w in words for m in machines), machines,
          "both versions of the conflicting segment on both machines")
    assert export(a) == export(b)


def test_nothing_in_either_copy_of_the_folder_is_readable(
        machines: tuple[MemoryService, MemoryService], syncthing_pair: tuple[Syncthing, Syncthing]) -> None:
    a, b = machines
    secret_words = {"Lisbon", "Kyoto", "laptop's note", "router password", "notebook"}
    for st in syncthing_pair:
        for path in st.folder.rglob("*"):
            if path.is_file():
                data = path.read_bytes()
                for w in secret_words:
                    assert w.encode() not in data, f"{w!r} readable in {path}"
                    assert w.encode("utf-16-le") not in data
