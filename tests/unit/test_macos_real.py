"""The macOS backends against the real pyobjc and Carbon: runs only on macOS (the GitHub macOS job).

The other test_macos_*.py files check our side with fakes; this one checks that the real calls take
the arguments we pass (ctypes signatures, pyobjc selectors). Skipped everywhere else.
"""

from __future__ import annotations

import sys

import pytest

pytestmark = pytest.mark.skipif(sys.platform != "darwin", reason="needs macOS (the GitHub macOS job runs it)")


def test_carbon_registers_and_removes_a_hotkey():
    from desktop_memory.capture.hotkeys_macos import MacHotkeys

    keys = MacHotkeys(lambda _action: None)
    try:
        assert keys.bind({"search": "Ctrl+Alt+Shift+F13", "bad": "Ctrl+Alt+NoSuchKey"}) == {
            "bad": "'Ctrl+Alt+NoSuchKey': no such key on this keyboard"}
        assert keys.bind({"search": "Meta+Shift+F14"}) == {}
    finally:
        keys.close()


def test_the_pasteboard_markers_are_read_and_the_items_put_back():
    import AppKit

    from desktop_memory.capture import pasteboard_macos

    board = pasteboard_macos.Pasteboard()
    saved = board.save()
    general = AppKit.NSPasteboard.generalPasteboard()
    try:
        general.clearContents()
        general.setString_forType_("desktop-memory test secret", AppKit.NSPasteboardTypeString)
        general.setString_forType_("", "org.nspasteboard.ConcealedType")
        assert board.text() == "desktop-memory test secret"
        assert board.markers() == {"org.nspasteboard.ConcealedType": b""}
    finally:
        count = board.restore(saved)
    assert pasteboard_macos.is_own(count) and board.change_count() == count


def test_the_app_in_front_and_the_accessibility_check_answer_without_prompting():
    from desktop_memory.capture import input_macos, paste_macos, window_macos

    app, title = window_macos.current()
    assert isinstance(app, str) and isinstance(title, str)
    assert paste_macos.foreground() is None or paste_macos.foreground() > 0
    assert input_macos.trusted(prompt=False) in (True, False)
