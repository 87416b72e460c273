"""The tray's sync line: hidden while sync is off, the status while it is set up, a problem in one line, read on a
timer (every minute; faster here). The engine host syncs by itself: tests/integration/test_sync_engine_host.py."""

from __future__ import annotations

import re
import shutil


def test_the_tray_shows_the_sync_line_and_follows_the_status(qtbot, start_app, engine, tmp_path) -> None:
    shared = tmp_path / "shared"
    shared.mkdir()
    app = start_app(lambda a: a.sync.timer.setInterval(300))
    line = app.tray.sync_line
    qtbot.wait(700)  # a few ticks with sync off
    assert not line.isVisible()

    engine(app.bridge, lambda s: s.sync_setup(shared, name="laptop"))
    qtbot.waitUntil(line.isVisible, timeout=30_000)
    assert re.fullmatch(r"Synced (just now|\d+ min ago) \(no other machine yet\)", line.text())
    assert not line.isEnabled()

    engine(app.bridge, lambda s: s.add("Bring the blue folder to the dentist on Friday"))
    qtbot.waitUntil(lambda: app.sync.status.pending == 1, timeout=30_000)  # the next tick reads it
    engine(app.bridge, lambda s: s.sync_now())
    qtbot.waitUntil(lambda: app.sync.status.pending == 0 and app.sync.status.machines[0].last_seq >= 1,
                    timeout=30_000)

    shutil.rmtree(shared)
    qtbot.waitUntil(lambda: line.text().startswith("Sync: the sync folder"), timeout=30_000)
    assert line.text().startswith("Sync: the sync folder is missing")  # however long its path (cut at 90)
    assert line.toolTip().startswith("Sync: the sync folder is missing") and str(shared) in line.toolTip()

    engine(app.bridge, lambda s: s.sync_leave())
    qtbot.waitUntil(lambda: not line.isVisible(), timeout=30_000)


def test_the_settings_sync_tab_updates_the_tray_at_once(qtbot, start_app, tmp_path) -> None:
    shared = tmp_path / "shared"
    shared.mkdir()
    app = start_app()  # the minute's timer does not tick during this test
    section = app.settings_window.sync
    with qtbot.waitSignal(section.status_changed, timeout=20_000):
        section.setup(shared)
    assert app.tray.sync_line.isVisible() and app.tray.sync_line.text().startswith("Synced ")
