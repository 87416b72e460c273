"""The engine lane: one thread for every job, results and errors back on the GUI thread."""

from __future__ import annotations

import os
import sys
import threading

import pytest

from desktop_memory.core.errors import InvalidInput
from desktop_memory.engine.lock import DataDirLock
from desktop_memory.ipc.host import ENGINE_NICE


def test_every_job_runs_on_one_engine_thread(qtbot, bridge, engine) -> None:
    threads = {engine(bridge, lambda s: threading.get_ident()) for _ in range(5)}
    assert len(threads) == 1 and threading.get_ident() not in threads
    added = engine(bridge, lambda s: s.add("the engine lane remembers this").memory.id)
    assert engine(bridge, lambda s: s.get(added).content) == "the engine lane remembers this"


def test_errors_become_readable_messages(qtbot, bridge) -> None:
    messages: list[str] = []

    def bad_input(_s):
        raise InvalidInput("the text is empty")

    bridge.submit(bad_input, failed=messages.append)
    bridge.submit(lambda s: 1 / 0, failed=messages.append)
    with qtbot.waitSignal(bridge.job_failed, timeout=10_000) as blocker:
        bridge.submit(lambda s: s.get("no-such-id"))  # no handler: reported through job_failed
    assert messages == ["the text is empty", "unexpected error: ZeroDivisionError: division by zero"]
    assert "no-such-id" in blocker.args[0] and "Traceback" not in blocker.args[0]


def test_newer_job_of_a_lane_supersedes_a_waiting_one(qtbot, bridge) -> None:
    gate = threading.Event()
    ran: list[str] = []
    delivered: list[str] = []
    bridge.submit(lambda s: gate.wait(10))
    bridge.submit(lambda s: ran.append("old") or "old", delivered.append, lane="search")
    bridge.submit(lambda s: ran.append("new") or "new", delivered.append, lane="search")
    gate.set()
    qtbot.waitUntil(lambda: delivered == ["new"], timeout=10_000)
    assert ran == ["new"]  # the stale job never reached the engine


def test_call_waits_from_other_threads_but_never_on_the_gui_thread(qtbot, bridge) -> None:
    with pytest.raises(RuntimeError, match="GUI thread"):
        bridge.call(lambda s: 1)
    out: list[int] = []
    worker = threading.Thread(target=lambda: out.append(bridge.call(lambda s: s.stats().memories)))
    worker.start()
    qtbot.waitUntil(lambda: not worker.is_alive(), timeout=10_000)
    assert out == [0]


def test_a_folder_in_use_is_reported_not_raised(qtbot, make_bridge, tmp_path) -> None:
    folder = tmp_path / "busy"
    folder.mkdir()
    lock = DataDirLock(folder)
    try:
        bridge = make_bridge(folder, start=False)
        with qtbot.waitSignal(bridge.open_failed, timeout=20_000) as blocker:
            bridge.start()
    finally:
        lock.release()
    assert "in use by another desktop-memory process" in blocker.args[0]
    assert not bridge.is_open


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="per-thread nice values are a Linux feature")
def test_the_engine_thread_yields_the_cpu_to_the_gui(qtbot, bridge, engine) -> None:
    gui = os.getpriority(os.PRIO_PROCESS, threading.get_native_id())
    lane = engine(bridge, lambda s: os.getpriority(os.PRIO_PROCESS, threading.get_native_id()))
    assert lane == min(19, gui + ENGINE_NICE)
