"""PySide6 6.12 drops a reference to None on every void QObject call; the app pins None so it is never freed."""

from __future__ import annotations

import subprocess
import sys

CALLS = """
import os, sys
os.environ["QT_QPA_PLATFORM"] = "offscreen"
from PySide6.QtWidgets import QApplication, QLabel
from desktop_memory.qt.none_guard import keep_none_alive
app = QApplication([])
print(keep_none_alive(), flush=True)
label = QLabel()
for _ in range(300_000):  # without the guard, Python 3.11 + PySide6 6.12 abort here ("deallocating None")
    label.setText("x")
print("done", flush=True)
"""


def test_a_long_session_of_qt_calls_never_frees_none() -> None:
    done = subprocess.run([sys.executable, "-c", CALLS], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    guarded, finished = done.stdout.split()
    assert finished == "done" and guarded == str(sys.version_info < (3, 12))
