"""HostProcess with stand-in children: a host that hangs or dies before its line is a one-line error, bounded."""

from __future__ import annotations

import sys
import time
from pathlib import Path

import pytest

from desktop_memory.ipc import spawn
from desktop_memory.ipc.spawn import HostFailed, HostProcess


@pytest.mark.parametrize(("script", "message"), [
    ("import time; time.sleep(60)", "the engine did not start within 1 s"),
    ("import sys; sys.exit(3)", r"^the engine stopped while starting; `desktop-memory doctor` checks the data folder$"),
    ("print('error: the data folder is damaged', flush=True); raise SystemExit(1)", "^the data folder is damaged$"),
])
def test_a_host_that_never_says_ready_is_a_bounded_one_line_error(monkeypatch, tmp_path: Path, script, message):
    monkeypatch.setattr(spawn, "command", lambda *a, **k: [sys.executable, "-c", script])
    host = HostProcess(tmp_path)
    started = time.monotonic()
    with pytest.raises(HostFailed, match=message):
        host.open(timeout=1)
    assert time.monotonic() - started < 15
    assert host.proc is not None and host.proc.poll() is not None  # nothing left running
