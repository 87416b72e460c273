"""Keep `None` alive in the GUI process: PySide6 6.12 drops references to it, and Python 3.11 can free it.

Measured with PySide6 6.12.0 on Python 3.11: every void method call on a QObject (`label.setText(...)`),
every `None` a Python `data()` returns to Qt and every `None` Qt returns to Python lowers None's
reference count by one. Python 3.12+ makes None immortal, so nothing happens there; on 3.11 a busy
session (a 10,000-memory import while searching: a few minutes) brings the count to zero and the
interpreter aborts with "Fatal Python error: none_dealloc". `keep_none_alive()` raises None's count once
by 2**40 (what 3.12 does), so no number of lost references can free it.
"""

from __future__ import annotations

import ctypes
import sys

ALIVE = 1 << 40


def keep_none_alive() -> bool:
    """Pin None's reference count high (CPython < 3.12 only); True when it did."""
    if sys.implementation.name != "cpython" or sys.version_info >= (3, 12) or hasattr(sys, "getobjects"):
        return False  # immortal already, or a build whose object header starts elsewhere (Py_TRACE_REFS)
    count = ctypes.c_ssize_t.from_address(id(None))  # ob_refcnt: the first field of every object
    if count.value < ALIVE:
        count.value += ALIVE
    return True
