"""The MCP server's engine access: the host when one runs, else its own engine, let go when idle."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

from desktop_memory.core.errors import DataDirLocked, NotFound
from desktop_memory.ipc.server import IpcServer
from desktop_memory.mcp.engine import EngineAccess
from desktop_memory.service import MemoryService
from tests.fakes import FakeEmbedder


def wait_for(predicate, timeout: float = 5.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.02)
    return False


def test_without_a_host_it_opens_the_engine_and_lets_go_when_idle(data_dir: Path):
    access = EngineAccess(data_dir, embedder=FakeEmbedder(), idle_close_s=0.2)
    try:
        threads: set[str] = set()

        def add(e):
            threads.add(threading.current_thread().name)
            return e.add("remember the milk", source="mcp")

        assert access.call(add).status == "added" and access.mode == "local"
        assert wait_for(lambda: access.mode == "closed")
        with MemoryService(data_dir, embedder=FakeEmbedder(), lock_wait_s=0) as other:  # the lock is free again
            other.add("written by another process while MCP was idle")
        hits = access.call(lambda e: e.search("another process idle"))
        assert hits and hits[0].memory.content.startswith("written by another")
        access.call(lambda e: threads.add(threading.current_thread().name))
        assert threads == {"mcp-engine"}  # one thread of ours for every engine call
    finally:
        access.close()
    assert access.mode == "closed"


def test_domain_errors_reach_the_caller_and_the_worker_carries_on(data_dir: Path):
    access = EngineAccess(data_dir, embedder=FakeEmbedder())
    try:
        with pytest.raises(NotFound):
            access.call(lambda e: e.get("nope"))
        assert access.call(lambda e: e.stats()["memories"]) == 0
    finally:
        access.close()


def test_with_a_host_it_goes_through_the_socket(fake_service, data_dir: Path):
    with IpcServer(fake_service, data_dir):
        access = EngineAccess(data_dir, idle_close_s=0.2)
        try:
            added = access.call(lambda e: e.add("via the host", source="mcp"))
            assert access.mode == "host"
            assert fake_service.get(added.memory.id).source == "mcp"
            assert wait_for(lambda: access.mode == "closed")  # the connection is dropped when idle too
        finally:
            access.close()


def test_when_the_host_goes_away_it_does_not_touch_a_folder_still_held(fake_service, data_dir: Path):
    server = IpcServer(fake_service, data_dir)
    server.start()
    access = EngineAccess(data_dir, idle_close_s=30, lock_wait_s=0.1)
    try:
        assert access.call(lambda e: e.stats()["memories"]) == 0 and access.mode == "host"
        server.close()  # the socket is gone but the folder is still held by the service
        with pytest.raises(DataDirLocked):
            access.call(lambda e: e.add("must not be written"))
        assert fake_service.stats()["memories"] == 0
    finally:
        access.close()
        server.close()
