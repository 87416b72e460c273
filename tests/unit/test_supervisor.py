"""The engine supervisor's restart policy with a stand-in host: backoff, a bounded budget, a clear last reason."""

from __future__ import annotations

import threading
import time

import pytest

from desktop_memory.ipc import supervisor
from desktop_memory.ipc.spawn import HostFailed
from desktop_memory.ipc.supervisor import Supervisor


class FakeHost:
    """Fails `failures` starts (with numbered reasons), then serves; records kills and stops."""

    def __init__(self, failures: int = 0) -> None:
        self.failures = failures
        self.opened = 0
        self.killed = 0
        self.stopped = False
        self.alive = True
        self.last_exit: int | None = None

    def open(self) -> str:
        self.opened += 1
        if self.failures:
            self.failures -= 1
            raise HostFailed(f"the data folder is damaged ({self.opened})")
        return f"service {self.opened}"

    def kill(self) -> None:
        self.killed += 1

    def stop(self, timeout: float = 0) -> None:
        self.stopped = True


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture(autouse=True)
def no_waiting(monkeypatch):
    monkeypatch.setattr(supervisor, "RESTART_DELAYS", (0.0, 0.0, 0.0, 0.0, 0.0))


def test_a_restart_kills_what_is_left_and_tries_until_the_host_starts() -> None:
    host = FakeHost()
    sup = Supervisor(host)  # type: ignore[arg-type]
    assert sup.open() == "service 1" and sup.state == "ready"
    host.failures = 4
    assert sup.restart() == "service 6" and sup.state == "ready"
    assert host.killed == 1 and host.opened == 6


def test_a_host_that_never_starts_is_given_up_on_with_its_last_reason() -> None:
    host = FakeHost(failures=99)
    sup = Supervisor(host)  # type: ignore[arg-type]
    with pytest.raises(HostFailed, match=r"^the data folder is damaged \(5\)$"):
        sup.restart()
    assert sup.state == "stopped" and host.opened == 5


def test_attempts_are_counted_over_incidents_within_the_window_and_retry_starts_afresh() -> None:
    clock = Clock()
    host = FakeHost(failures=2)
    sup = Supervisor(host, clock=clock)  # type: ignore[arg-type]
    sup.restart()  # 3 attempts
    host.failures = 99
    with pytest.raises(HostFailed, match=r"damaged \(5\)"):
        sup.restart()  # only 2 left in the window
    with pytest.raises(HostFailed, match="stopped 5 times within 10 minutes"):
        sup.restart()  # none left: not even tried
    assert host.opened == 5
    host.failures = 0
    assert sup.restart(fresh=True) == "service 6"  # the person's Retry
    clock.now += supervisor.WINDOW_S + 1  # much later: a full budget again
    host.failures = 4
    assert sup.restart() == "service 11"


def test_a_host_that_keeps_dying_is_given_up_on_saying_how_it_died() -> None:
    """Issue 28: the engine died of an illegal instruction five times; the line said only "stopped 5 times"."""
    host = FakeHost()
    sup = Supervisor(host)  # type: ignore[arg-type]
    sup.open()
    for _ in range(5):  # each restart works, then the host dies again (SIGILL)
        sup.restart()
        host.last_exit = -4
    with pytest.raises(HostFailed, match=r"^it stopped 5 times within 10 minutes; the last time, this computer's "
                                         r"CPU cannot run it$"):
        sup.restart()
    host.last_exit = 3221225501  # Windows: STATUS_ILLEGAL_INSTRUCTION
    with pytest.raises(HostFailed, match="CPU cannot run it"):
        sup.restart()
    host.last_exit = -9
    with pytest.raises(HostFailed, match=r"the system stopped it \(out of memory\?\)$"):
        sup.restart()


def test_backoff_grows_between_attempts(monkeypatch) -> None:
    monkeypatch.setattr(supervisor, "RESTART_DELAYS", (0.0, 0.1, 0.2, 0.4, 0.8))
    host = FakeHost(failures=99)
    sup = Supervisor(host)  # type: ignore[arg-type]
    started = time.monotonic()
    with pytest.raises(HostFailed):
        sup.restart()
    assert 1.4 <= time.monotonic() - started < 5


def test_quitting_interrupts_the_backoff_and_ends_a_host_being_started(monkeypatch) -> None:
    monkeypatch.setattr(supervisor, "RESTART_DELAYS", (0.0, 30.0, 30.0, 30.0, 30.0))
    host = FakeHost(failures=99)
    sup = Supervisor(host)  # type: ignore[arg-type]
    threading.Timer(0.3, sup.close).start()
    started = time.monotonic()
    with pytest.raises(HostFailed, match="the app is quitting"):
        sup.restart()
    assert time.monotonic() - started < 5 and host.stopped and host.opened == 1
