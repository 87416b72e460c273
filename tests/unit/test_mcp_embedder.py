"""An MCP engine in this process (an embedder given, as tests do): a reopen after an idle close reuses the
embedder the service was given, never a second load. (Without one, MCP uses the folder's engine service.)"""

from __future__ import annotations

import time
from pathlib import Path

from desktop_memory.mcp.engine import EngineAccess
from desktop_memory.service import MemoryService
from tests.fakes import FakeEmbedder


def test_the_service_loads_the_embedder_once_and_reopens_reuse_it(data_dir: Path, monkeypatch) -> None:
    given: list[object] = []
    loaded: list[FakeEmbedder] = []
    original = MemoryService.__init__

    def init(self, folder, *, embedder=None, **kwargs):
        given.append(embedder)
        if embedder is None:  # the service loads one itself: a fake stands in for the model
            loaded.append(embedder := FakeEmbedder())
        original(self, folder, embedder=embedder, **kwargs)

    monkeypatch.setattr(MemoryService, "__init__", init)
    first = FakeEmbedder()
    access = EngineAccess(data_dir, idle_close_s=0.1, embedder=first)
    try:
        used = [access.call(lambda e: (e.add("remember the milk", source="mcp"), e.embedder)[1])]
        deadline = time.monotonic() + 5
        while access.mode != "closed" and time.monotonic() < deadline:
            time.sleep(0.02)
        assert access.mode == "closed"
        used.append(access.call(lambda e: e.embedder))  # opened again after the idle close
    finally:
        access.close()
    assert not loaded and given == [first, first] and used == [first, first]
