"""The demonstration of issue 17: `family(memory_id)` was added by editing only the service protocol
(service/protocol.py) and its implementation (service/facade.py); it works over the engine socket and
through RemoteService with no edit to the server, the client or the codec."""

from __future__ import annotations

from pathlib import Path

import pytest

from desktop_memory.core.errors import NotFound
from desktop_memory.ipc.client import RemoteService, connect
from desktop_memory.ipc.server import CALLS, IpcServer
from desktop_memory.service.protocol import operations


@pytest.fixture(autouse=True)
def _token_keyring(ring):
    return ring


def _words(changed: dict[int, str] | None = None) -> str:
    words = [f"word{i}" for i in range(60)]
    for i, w in (changed or {}).items():
        words[i] = w
    return " ".join(words)


def test_family_lists_a_memorys_look_alikes_in_process_over_the_socket_and_through_the_client(fake_service,
                                                                                               data_dir: Path):
    first = fake_service.add(_words(), source="clipboard").memory
    second = fake_service.add(_words({30: "word99"}), source="cli")
    third = fake_service.add(_words({12: "other", 40: "word77"}), source="manual")
    alone = fake_service.add("Buy oat milk and coffee beans").memory
    assert second.status == third.status == "related"

    assert {m.id for m in fake_service.family(first.id)} == {second.memory.id, third.memory.id}
    assert fake_service.family(alone.id) == []

    assert "family" in operations() and "family" in CALLS and callable(RemoteService.family)
    with IpcServer(fake_service, data_dir):
        remote = connect(data_dir)
        assert remote is not None
        with remote:
            looks = remote.family(second.memory.id[:10])  # an id prefix, like every other operation
            assert {m.id for m in looks} == {first.id, third.memory.id}
            assert all(m.family_id == first.id and m.content.startswith("word0") for m in looks)
            assert remote.family(alone.id) == []
            with pytest.raises(NotFound):
                remote.family("no-such-memory")
