"""A tiny EWMH window manager for tests on Xvfb (python-xlib): maps and configures what clients ask, focuses a
newly mapped window, and handles `_NET_ACTIVE_WINDOW` requests (focus, raise, the root property), printing
`{"activate": window, "source": indication}` for each, so a test can see who asked for what. It supports
only `_NET_ACTIVE_WINDOW` and `_NET_SUPPORTING_WM_CHECK`, never reparents, and obeys every request.

    python -m tests.gui.wm_standin      (prints {"ready": true} once it manages the screen)
"""

from __future__ import annotations

import json
import signal
import sys


def main() -> int:
    from Xlib import X, Xatom, display, error

    d = display.Display()
    root = d.screen().root
    catcher = error.CatchError(error.BadAccess)
    root.change_attributes(event_mask=X.SubstructureRedirectMask | X.SubstructureNotifyMask, onerror=catcher)
    d.sync()
    if catcher.get_error():
        print(json.dumps({"error": "another window manager runs"}), flush=True)
        return 1
    atom = d.intern_atom
    check = root.create_window(-10, -10, 1, 1, 0, X.CopyFromParent)
    for w in (root, check):
        w.change_property(atom("_NET_SUPPORTING_WM_CHECK"), Xatom.WINDOW, 32, [check.id])
    root.change_property(atom("_NET_SUPPORTED"), Xatom.ATOM, 32,
                         [atom("_NET_ACTIVE_WINDOW"), atom("_NET_SUPPORTING_WM_CHECK")])
    root.change_property(atom("_NET_ACTIVE_WINDOW"), Xatom.WINDOW, 32, [0])
    d.sync()
    print(json.dumps({"ready": True}), flush=True)
    active = 0
    ignore = error.CatchError(error.BadWindow, error.BadMatch, error.BadValue)

    def activate(window_id: int) -> None:
        nonlocal active
        window = d.create_resource_object("window", window_id)
        window.configure(stack_mode=X.Above, onerror=ignore)
        window.set_input_focus(X.RevertToPointerRoot, X.CurrentTime, onerror=ignore)
        root.change_property(atom("_NET_ACTIVE_WINDOW"), Xatom.WINDOW, 32, [window_id])
        active = window_id

    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    while True:
        ev = d.next_event()
        if ev.type == X.MapRequest:
            ev.window.map(onerror=ignore)
            activate(ev.window.id)
        elif ev.type == X.ConfigureRequest:
            values = {k: getattr(ev, k) for k in ("x", "y", "width", "height", "border_width")
                      if ev.value_mask & {"x": X.CWX, "y": X.CWY, "width": X.CWWidth, "height": X.CWHeight,
                                          "border_width": X.CWBorderWidth}[k]}
            ev.window.configure(onerror=ignore, **values)
        elif ev.type == X.ClientMessage and ev.client_type == atom("_NET_ACTIVE_WINDOW"):
            source = ev.data[1][0]
            print(json.dumps({"activate": ev.window.id, "source": source}), flush=True)
            activate(ev.window.id)
        elif ev.type in (X.UnmapNotify, X.DestroyNotify) and ev.window.id == active:
            root.change_property(atom("_NET_ACTIVE_WINDOW"), Xatom.WINDOW, 32, [0])
            active = 0
        d.flush()


if __name__ == "__main__":
    sys.exit(main())
