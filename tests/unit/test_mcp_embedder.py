"""The MCP server's own engine: the service loads the embedder, and a reopen after an idle close reuses it."""

from __future__ import annotations

import time
from pathlib import Path

from desktop_memory.mcp.engine import EngineAccess
from desktop_memory.service import facade
from tests.fakes import FakeEmbedder


def test_the_service_loads_the_embedder_once_and_reopens_reuse_it(data_dir: Path, monkeypatch) -> None:
    made: list[FakeEmbedder] = []

    def load() -> FakeEmbedder:  # stands in for the service's Embedder(): counts the model loads
        made.append(FakeEmbedder())
        return made[-1]

    monkeypatch.setattr(facade, "Embedder", load)
    access = EngineAccess(data_dir, idle_close_s=0.1)
    try:
        used = [access.call(lambda e: (e.add("remember the milk", source="mcp"), e.embedder)[1])]
        deadline = time.monotonic() + 5
        while access.mode != "closed" and time.monotonic() < deadline:
            time.sleep(0.02)
        assert access.mode == "closed"
        used.append(access.call(lambda e: e.embedder))  # opened again after the idle close
    finally:
        access.close()
    assert len(made) == 1 and used == [made[0], made[0]]
