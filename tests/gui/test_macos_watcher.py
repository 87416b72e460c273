"""The clipboard watcher's macOS path (qt/clipboard_watcher.py, qt/capture_now.py) with fake pyobjc modules.

Qt runs offscreen here as on Linux; the watcher, capture_now and active_window are told they run on
darwin, and AppKit / Quartz are the fakes of tests/unit/macos_fakes.py, so what is checked is our side:
the 500 ms timer polls NSPasteboard's changeCount (no Qt dataChanged), a changed count becomes one
settled snapshot with the app in front and the pasteboard's marker types, our own restore is not
captured. macOS itself cannot run here.
"""

from __future__ import annotations

import types

import pytest
from PySide6.QtGui import QGuiApplication

from desktop_memory.capture import pasteboard_macos
from desktop_memory.core.capture import decide
from tests.unit.macos_fakes import TEXT, FakeMac


@pytest.fixture
def mac(monkeypatch, qapp) -> FakeMac:
    mac = FakeMac().install(monkeypatch)
    mac.app(501, "Notes")
    mac.front = 501
    from desktop_memory.capture import active_window
    from desktop_memory.qt import capture_now, clipboard_watcher

    darwin = types.SimpleNamespace(platform="darwin")  # only these modules think they run on macOS
    for module in (clipboard_watcher, capture_now, active_window):
        monkeypatch.setattr(module, "sys", darwin)
    return mac


def watcher():
    from desktop_memory.qt.clipboard_watcher import ClipboardWatcher

    w = ClipboardWatcher(quiet_s=0.05, max_hold_s=0.2)
    w.start()
    return w


def copy(mac: FakeMac, text: str, **types: bytes) -> None:
    """A copy on the Mac: the pasteboard (count, types) and what Qt reads of it (the text)."""
    mac.board.copy({TEXT: text.encode(), **types})
    QGuiApplication.clipboard().setText(text)


def test_a_new_change_count_becomes_one_settled_copy_with_the_app_in_front(qtbot, mac):
    w = watcher()
    try:
        assert w.pasteboard is not None and w._poll.isActive() and w._poll.interval() == 500
        copy(mac, "the beta ships on March 3rd")
        with qtbot.waitSignal(w.copy_settled, timeout=3000) as got:
            pass  # the poll timer finds the new count by itself
        snap = got.args[0]
        assert (snap.text, snap.app) == ("the beta ships on March 3rd", "Notes") and snap.formats == {}
    finally:
        w.stop()


def test_a_copy_marked_by_a_password_manager_carries_the_marker_to_the_engine(qtbot, mac):
    w = watcher()
    try:
        copy(mac, "hunter2-correct-horse", **{"com.agilebits.onepassword": b"1"})
        with qtbot.waitSignal(w.copy_settled, timeout=3000) as got:
            w._poll_changed()
        snap = got.args[0]
        assert snap.formats == {"com.agilebits.onepassword": b"1"}
        assert decide(snap).reason == "password manager"
    finally:
        w.stop()


def test_an_unchanged_count_and_our_own_restore_are_not_copies(qtbot, mac):
    w = watcher()
    try:
        with qtbot.assertNotEmitted(w.copy_settled, wait=400):
            QGuiApplication.clipboard().setText("Qt says something changed")  # no dataChanged path on macOS
            w._poll_changed()
            copy(mac, "put back after a selection capture")
            pasteboard_macos.mark_own(mac.board.count)
            w._poll_changed()
        copy(mac, "a real copy afterwards")
        with qtbot.waitSignal(w.copy_settled, timeout=3000) as got:
            w._poll_changed()
        assert got.args[0].text == "a real copy afterwards"
    finally:
        w.stop()


def test_capture_clipboard_now_also_sees_the_pasteboard_markers(qtbot, mac):
    from desktop_memory.qt import capture_now

    copy(mac, "token", **{"org.nspasteboard.ConcealedType": b""})
    snap = capture_now.snapshot(QGuiApplication.clipboard().mimeData())
    assert snap.formats == {"org.nspasteboard.ConcealedType": b""} and decide(snap).reason == "password manager"
