"""The engine host's parent watch: a thread reading stdin until EOF must not stop the rest of the host.

Under Wine (and the Windows C runtime), a thread blocked in os.read(0) holds fd 0's lock, and numpy's DLL,
imported by the engine right after the watch started, waited for it: the frozen app's host hung at start.
This runs in a child Python with stdin a pipe we hold open, as the app runs its host.
"""

from __future__ import annotations

import queue
import subprocess
import sys
import threading
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CHILD = """
import sys, threading
sys.path.insert(0, sys.argv[1])
from desktop_memory.ipc.host import _watch_stdin
stop = threading.Event()
threading.Thread(target=_watch_stdin, args=(0, stop), daemon=True).start()
import time; time.sleep(0.3)  # the watch is blocked in its read
import numpy  # a C extension with its own DLLs, as the engine's first import
print("imported", flush=True)
print("eof seen" if stop.wait(60) else "eof missed", flush=True)
"""


def test_imports_go_on_while_stdin_is_watched_and_eof_stops_the_host() -> None:
    child = subprocess.Popen([sys.executable, "-c", CHILD, str(ROOT)], stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    lines: queue.Queue[str] = queue.Queue()
    assert child.stdout is not None and child.stdin is not None
    out = child.stdout
    threading.Thread(target=lambda: [lines.put(line.strip()) for line in out], daemon=True).start()
    try:
        try:
            first = lines.get(timeout=90)  # the child hung here when the import waited for the watch
        except queue.Empty:
            first = "nothing in 90 s"
        assert first == "imported", f"the import did not finish while stdin was watched ({first})"
        child.stdin.close()  # the parent quits: EOF
        assert lines.get(timeout=60) == "eof seen"
        assert child.wait(30) == 0
    finally:
        if child.poll() is None:
            child.kill()
        child.wait()
        out.close()
