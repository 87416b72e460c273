"""A real window manager for tests on the X server of scripts/with-desktop.sh: Openbox (Debian's `openbox`, installed
by scripts/dev.sh), with its default focus, stacking and placement rules (focus stealing prevention included), so
what the search panel does with focus and geometry is what people get on a desktop. Plus the few X reads the tests
need (the active window, the stacking order, a window's frame geometry) through python-xlib.

    with openbox() as wm: ...      # wm.name == "Openbox"
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

# Openbox's own configuration, minimal: no desktop menu, focus follows clicks, new windows focused (its default).
RC = """<?xml version="1.0" encoding="UTF-8"?>
<openbox_config xmlns="http://openbox.org/3.4/rc">
  <focus><focusNew>yes</focusNew><followMouse>no</followMouse></focus>
  <placement><policy>Smart</policy></placement>
  <desktops><number>1</number></desktops>
</openbox_config>
"""


class Wm:
    """The running window manager and what it says about windows (EWMH root properties)."""

    def __init__(self, proc: subprocess.Popen[bytes], name: str) -> None:
        self.proc, self.name = proc, name

    @staticmethod
    def _root():  # type: ignore[no-untyped-def]
        from Xlib import display

        d = display.Display()
        return d, d.screen().root

    def active_window(self) -> int:
        from Xlib import X

        d, root = self._root()
        try:
            prop = root.get_full_property(d.intern_atom("_NET_ACTIVE_WINDOW"), X.AnyPropertyType)
            return int(prop.value[0]) if prop and len(prop.value) else 0
        finally:
            d.close()

    def stacking(self) -> list[int]:
        """Managed client windows, bottom to top."""
        from Xlib import X

        d, root = self._root()
        try:
            prop = root.get_full_property(d.intern_atom("_NET_CLIENT_LIST_STACKING"), X.AnyPropertyType)
            return [int(w) for w in prop.value] if prop else []
        finally:
            d.close()

    def above(self, upper: int, lower: int) -> bool:
        order = self.stacking()
        return upper in order and lower in order and order.index(upper) > order.index(lower)


def wm_name() -> str | None:
    """The EWMH name of the window manager running on $DISPLAY, if any."""
    from Xlib import X, display, error

    d = display.Display()
    try:
        root = d.screen().root
        check = root.get_full_property(d.intern_atom("_NET_SUPPORTING_WM_CHECK"), X.AnyPropertyType)
        if not check or not len(check.value):
            return None
        window = d.create_resource_object("window", int(check.value[0]))
        try:
            name = window.get_full_property(d.intern_atom("_NET_WM_NAME"), d.intern_atom("UTF8_STRING"))
        except error.XError:
            return None
        return bytes(name.value).decode() if name else None
    finally:
        d.close()


@contextmanager
def openbox(timeout: float = 20.0) -> Iterator[Wm]:
    """Run Openbox on $DISPLAY for the block (it replaces nothing: fails if another manager runs)."""
    if not shutil.which("openbox"):
        raise RuntimeError("openbox is missing (bash scripts/dev.sh setup installs it)")
    home = Path(tempfile.mkdtemp(prefix="openbox-"))
    (home / "rc.xml").write_text(RC, encoding="utf-8")
    env = {**os.environ, "XDG_CONFIG_HOME": str(home)}
    proc = subprocess.Popen(["openbox", "--sm-disable", "--config-file", str(home / "rc.xml")], env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + timeout
        name = None
        while time.monotonic() < deadline and proc.poll() is None:
            name = wm_name()
            if name:
                break
            time.sleep(0.05)
        if not name:
            err = proc.stderr.read().decode(errors="replace") if proc.poll() is not None and proc.stderr else ""
            raise RuntimeError(f"openbox did not start: {err[-500:]}")
        yield Wm(proc, name)
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(5)
        shutil.rmtree(home, ignore_errors=True)
