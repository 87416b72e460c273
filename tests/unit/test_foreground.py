"""Foreground: requests first, background work in the quiet gaps (engine/foreground.py)."""

from __future__ import annotations

import threading

from desktop_memory.engine.foreground import Foreground


def waiter(fg: Foreground, stop: threading.Event | None = None) -> tuple[threading.Thread, threading.Event]:
    done = threading.Event()

    def run() -> None:
        fg.wait_quiet(stop.is_set if stop else lambda: False)
        done.set()

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread, done


def test_no_request_ever_means_no_wait():
    fg = Foreground(quiet_s=5)
    assert fg.wait_quiet() < 0.1 and not fg.active


def test_background_waits_for_the_request_and_then_a_quiet_gap():
    fg = Foreground(quiet_s=0.3)
    with fg.busy():
        with fg.busy():  # nested requests (context -> search) count once each
            assert fg.active
        assert fg.active
        thread, done = waiter(fg)
        assert not done.wait(0.5)  # held while the request runs
    assert not fg.active
    assert not done.wait(0.1)  # and for the quiet gap after it
    assert done.wait(2.0)
    thread.join(1)
    assert fg.waited_s >= 0.5


def test_a_stop_request_ends_the_wait():
    fg = Foreground(quiet_s=10)
    stop = threading.Event()
    with fg.busy():
        thread, done = waiter(fg, stop)
        stop.set()
        assert done.wait(2.0)
    thread.join(1)


def test_a_failing_request_still_ends():
    fg = Foreground(quiet_s=0)
    try:
        with fg.busy():
            raise ValueError("a bad query")
    except ValueError:
        pass
    assert not fg.active and fg.wait_quiet() < 0.1
