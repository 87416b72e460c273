"""The tray's Recent captures labels and tooltip (offscreen)."""

from __future__ import annotations

import time

from desktop_memory.core.capture import CaptureEvent
from desktop_memory.qt.tray import Tray


def test_recent_labels_are_cut_at_a_word_and_the_tooltip_names_the_last_copy(qtbot) -> None:
    tray = Tray()
    title = "The lighthouse at Cape Point was built in 1860 and moved in 1919 after ships kept running aground"
    at = time.time()
    tray.set_recent([CaptureEvent(at, False, "paused"), CaptureEvent(at - 90, True, "saved", memory_id="m1",
                                                                      title=title)])
    labels = [a.text() for a in tray.recent_menu.actions()]
    assert labels[0] == "Skipped: paused  (just now)"
    assert labels[1] == "Saved: The lighthouse at Cape Point was built in 1860 and moved in…  (1 min ago)"
    tip = tray.icon.toolTip()
    assert tip.startswith("desktop-memory: ready\n") and "Last copy skipped (paused) at " in tip
    tray.set_state(paused=False, working=False, engine="preparing")
    assert tray.state == "preparing" and "preparing the search model" in tray.icon.toolTip()
