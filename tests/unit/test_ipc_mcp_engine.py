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
        assert access.call(lambda e: e.stats().memories) == 0
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
    # an engine of this process (an embedder given): the folder is opened here only when no one holds it
    access = EngineAccess(data_dir, idle_close_s=30, lock_wait_s=0.1, embedder=FakeEmbedder())
    try:
        assert access.call(lambda e: e.stats().memories) == 0 and access.mode == "host"
        server.close()  # the socket is gone but the folder is still held by the service
        with pytest.raises(DataDirLocked):
            access.call(lambda e: e.add("must not be written"))
        assert fake_service.stats().memories == 0
    finally:
        access.close()
        server.close()


def test_one_engine_lane_and_one_opener_serve_the_app_the_host_and_mcp():
    import ast

    root = Path(__file__).resolve().parents[2] / "desktop_memory"
    for name in ("ipc/host.py", "mcp/engine.py", "qt/bridge.py"):
        tree = ast.parse((root / name).read_text())
        used = {n.id if isinstance(n, ast.Name) else n.attr for n in ast.walk(tree)
                if isinstance(n, ast.Name | ast.Attribute)}
        assert "EngineLane" in used, name  # the one "run fn on one thread" (ipc/lane.py)
        assert not used & {"ThreadPoolExecutor", "Queue", "deque"}, name  # no queue or worker of its own
    for name in ("mcp/engine.py", "cli/main.py"):
        text = (root / name).read_text()
        assert "DataDirLocked" not in text and "connect(" not in text, name  # ipc/client.host_or_local only
    assert "_identifier_to_system" not in (root / "mcp/engine.py").read_text()


def test_the_lane_runs_in_order_front_first_inline_on_itself_and_tells_idleness_once():
    from desktop_memory.ipc.lane import EngineLane

    idle = threading.Event()
    idles: list[float] = []
    lane = EngineLane("test-lane", nice=0, idle_s=0.1, on_idle=lambda: (idles.append(time.monotonic()), idle.set()))
    try:
        gate = threading.Event()
        order: list[str] = []
        lane.put(lambda: gate.wait(5))
        lane.put(lambda: order.append("second"))
        lane.put(lambda: order.append("first"), front=True)
        gate.set()
        assert lane.run(lambda: lane.run(lambda: threading.current_thread().name)) == "test-lane"  # no deadlock
        assert order == ["first", "second"]
        assert idle.wait(5) and not wait_for(lambda: len(idles) > 1, 0.4)  # once per idle period
        with pytest.raises(ZeroDivisionError):
            lane.submit(lambda: 1 / 0).result(5)
        lane.put(lambda: 1 / 0)  # a job that handles nothing itself does not stop the lane
        assert lane.run(lambda: "still running") == "still running"
    finally:
        done: list[str] = []
        lane.put(lambda: done.append("queued before close"))
        lane.close(5)
    assert done == ["queued before close"] and not lane.thread.is_alive()
    with pytest.raises(RuntimeError, match="closed"):
        lane.put(lambda: None)


def test_an_import_stream_lets_other_calls_run_between_chunks_and_keeps_every_line(fake_service, monkeypatch):
    from desktop_memory.ipc.lane import EngineLane
    from desktop_memory.ipc.streaming import ImportStream

    monkeypatch.setattr("desktop_memory.service.importing.IMPORT_BATCH", 4)
    lane = EngineLane("test-engine", nice=0)
    stream = ImportStream(fake_service)
    lines = [f'{{"content": "streamed note {i} about the quarterly budget review"}}' for i in range(22)]
    try:
        acked = [lane.run(lambda c=c: stream.feed(lines[c : c + 5])).stored for c in range(0, 20, 5)]
        # between chunks the lane serves others: a search sees what is committed so far
        between = lane.run(lambda: len(fake_service.search("quarterly budget", limit=50, expand=True)))
        assert acked == sorted(acked) and acked[-1] < 20 and between >= acked[-1]
        report = lane.run(lambda: stream.finish(lines[20:] + ["{bad"]))
    finally:
        lane.close(10)
    assert report.added + report.related == 22 and report.errors == [(23, report.errors[0][1])]
    assert fake_service.stats().memories == 22 and stream.done
