"""macOS selection capture, paste, the app in front and the Accessibility check
(capture/selection_macos.py, paste_macos.py, window_macos.py, input_macos.py).

Against fake pyobjc modules (tests/unit/macos_fakes.py): macOS cannot run here, so what is checked is
our side of each call: the events posted, the waiting, the pasteboard put back, the messages.
"""

from __future__ import annotations

import os
import sys
import types

import pytest

from desktop_memory.capture import input_macos, paste_macos, pasteboard_macos, selection_macos, window_macos
from desktop_memory.capture.active_window import ActiveWindow
from desktop_memory.core.errors import CaptureUnavailable
from tests.unit.macos_fakes import COMMAND_FLAG, TEXT, FakeMac

GRANT = "System Settings > Privacy & Security > Accessibility"
PREVIOUS = ({TEXT: b"what was on the clipboard", "public.html": b"<p>what was</p>"}, {"public.png": b"\x89PNG"})


@pytest.fixture
def mac(monkeypatch) -> FakeMac:
    mac = FakeMac().install(monkeypatch)
    mac.app(501, "TextEdit")
    mac.front = 501
    mac.board.copy(*PREVIOUS)
    return mac


def test_the_selection_is_copied_with_cmd_c_read_and_the_clipboard_put_back(mac):
    mac.selection = {TEXT: "the beta ships on March 3rd — naïve ✓".encode(), "public.rtf": b"{\\rtf1 ...}"}
    assert selection_macos.copy_selection() == "the beta ships on March 3rd — naïve ✓"
    assert mac.posted == [(0x08, True, COMMAND_FLAG), (0x08, False, COMMAND_FLAG)]  # Command only, no Option
    assert [i.data for i in mac.board.items] == list(PREVIOUS)
    assert pasteboard_macos.is_own(mac.board.count)  # the watcher does not capture the restore


@pytest.mark.parametrize("text", ["", "x", "line one\nline two\r\n\ttabbed", "émoji 🙂 and 中文", "word " * 200_000])
def test_any_selected_text_comes_back_whole_and_an_empty_copy_is_nothing(mac, text):
    mac.selection = {TEXT: text.encode("utf-8")}
    assert selection_macos.copy_selection() == (text or None)
    assert [i.data for i in mac.board.items] == list(PREVIOUS)


def test_nothing_selected_gives_none_after_the_timeout_and_leaves_the_clipboard_alone(mac):
    count = mac.board.count
    assert selection_macos.copy_selection(timeout_s=0.05) is None
    assert mac.board.count == count and [i.data for i in mac.board.items] == list(PREVIOUS)


def test_a_selection_that_is_not_text_gives_none_and_the_clipboard_comes_back(mac):
    mac.selection = {"public.png": b"\x89PNG selected picture"}
    assert selection_macos.copy_selection() is None
    assert [i.data for i in mac.board.items] == list(PREVIOUS)


def test_an_app_that_clears_first_and_writes_a_moment_later_is_waited_for(mac):
    mac.selection = {TEXT: b"written late"}
    mac.late_reads = 6  # the count moves at once, the text arrives six reads later
    assert selection_macos.copy_selection() == "written late"
    assert mac.board.pending is None and [i.data for i in mac.board.items] == list(PREVIOUS)


def test_a_selection_marked_secret_is_refused_in_one_line_without_the_secret(mac):
    mac.selection = {TEXT: b"hunter2-correct-horse", "org.nspasteboard.ConcealedType": b""}
    with pytest.raises(CaptureUnavailable) as err:
        selection_macos.copy_selection()
    message = str(err.value)
    assert "password manager" in message and "hunter2" not in message and "\n" not in message
    assert [i.data for i in mac.board.items] == list(PREVIOUS)


def test_without_accessibility_the_error_says_exactly_how_to_grant_it_and_macos_asks_once(mac):
    mac.trusted = False
    mac.selection = {TEXT: b"selected"}
    for _ in range(2):
        with pytest.raises(CaptureUnavailable) as err:
            selection_macos.copy_selection()
        message = str(err.value)
        assert GRANT in message and "desktop-memory" in message and "\n" not in message
    assert mac.posted == [] and mac.prompts == 1 and mac.checks == 2
    assert [i.data for i in mac.board.items] == list(PREVIOUS)


def test_the_app_in_front_is_its_pid_and_never_desktop_memory_itself(mac):
    assert paste_macos.foreground() == 501
    mac.app(os.getpid(), "desktop-memory")
    mac.front = os.getpid()
    assert paste_macos.foreground() is None
    mac.front = None
    assert paste_macos.foreground() is None


def test_paste_brings_the_app_back_and_sends_cmd_v_there(mac):
    mac.app(777, "desktop-memory search")
    mac.front = 777
    assert paste_macos.paste_into(501) is None
    assert mac.activations == [(501, 2)] and mac.pastes == [(501, "what was on the clipboard")]
    assert mac.posted == [(0x09, True, COMMAND_FLAG), (0x09, False, COMMAND_FLAG)]


def test_paste_without_a_target_goes_to_the_app_in_front(mac):
    assert paste_macos.paste_into(None) is None
    assert mac.activations == [] and mac.pastes == [(501, "what was on the clipboard")]


def test_paste_still_happens_when_the_app_is_slow_to_come_forward(mac, monkeypatch):
    monkeypatch.setattr(paste_macos, "ACTIVATE_WAIT_S", 0.05)
    mac.app(502, "Slow").comes_forward = False
    assert paste_macos.paste_into(502) is None and len(mac.pastes) == 1


def test_paste_into_an_app_that_quit_says_so_and_sends_nothing(mac):
    mac.app(503, "Gone").terminated = True
    for target in (503, 99_999):
        problem = paste_macos.paste_into(target)
        assert problem and "clipboard" in problem and "\n" not in problem
    assert mac.posted == [] and mac.pastes == []


def test_paste_without_accessibility_returns_how_to_grant_it(mac):
    mac.trusted = False
    problem = paste_macos.paste_into(501)
    assert problem and GRANT in problem and mac.posted == [] and mac.activations == []


def test_the_app_and_title_in_front_come_from_its_frontmost_normal_window(mac):
    mac.windows = [{"kCGWindowOwnerPID": 99, "kCGWindowLayer": 0, "kCGWindowName": "Other app"},
                   {"kCGWindowOwnerPID": 501, "kCGWindowLayer": 25, "kCGWindowName": "a menu"},
                   {"kCGWindowOwnerPID": 501, "kCGWindowLayer": 0, "kCGWindowName": "Notes — Edited"},
                   {"kCGWindowOwnerPID": 501, "kCGWindowLayer": 0, "kCGWindowName": "Older window"}]
    assert window_macos.current() == ("TextEdit", "Notes — Edited")


def test_without_the_screen_recording_grant_the_title_is_empty(mac):
    mac.windows = [{"kCGWindowOwnerPID": 501, "kCGWindowLayer": 0}]  # macOS leaves the name out
    assert window_macos.current() == ("TextEdit", "")
    mac.front = None
    assert window_macos.current() == ("", "")


def test_the_active_window_reader_asks_the_macos_backend_on_macos(mac, monkeypatch):
    mac.windows = [{"kCGWindowOwnerPID": 501, "kCGWindowLayer": 0, "kCGWindowName": "Report.txt"}]
    from desktop_memory.capture import active_window

    monkeypatch.setattr(active_window, "sys", types.SimpleNamespace(platform="darwin"))
    assert ActiveWindow().current() == ("TextEdit", "Report.txt")


@pytest.mark.skipif(sys.platform == "darwin", reason="pyobjc is there")
def test_without_pyobjc_nothing_breaks(monkeypatch):
    for name in ("AppKit", "Quartz", "ApplicationServices", "HIServices"):
        monkeypatch.setitem(sys.modules, name, None)  # import fails as on a machine without pyobjc
    monkeypatch.setattr(input_macos, "_asked", type(input_macos._asked)())
    assert window_macos.current() == ("", "") and paste_macos.foreground() is None
    assert input_macos.trusted() is False
    with pytest.raises(CaptureUnavailable):
        selection_macos.copy_selection()


@pytest.mark.parametrize("trusted", [True, False])
def test_the_apps_selection_hotkey_uses_cmd_c_on_macos_and_says_how_to_grant_accessibility(mac, monkeypatch, trusted):
    pytest.importorskip("PySide6")
    from desktop_memory.core.capture import CaptureResult, Snapshot
    from desktop_memory.qt import app as app_module

    monkeypatch.setattr(app_module, "sys", types.SimpleNamespace(platform="darwin"))
    mac.trusted = trusted
    mac.selection = {TEXT: b"the selected sentence"}
    notices: list[str] = []
    sent: list = []
    stand_in = types.SimpleNamespace(
        watcher=types.SimpleNamespace(windows=types.SimpleNamespace(current=lambda: ("TextEdit", "notes.rtf"))),
        notify=notices.append, _captured=None,
        bridge=types.SimpleNamespace(submit=lambda fn, done, hold=False: sent.append(fn)))
    stand_in._capture_copied_selection = lambda: app_module.DesktopApp._capture_copied_selection(stand_in)
    app_module.DesktopApp.capture_selection(stand_in)
    if not trusted:
        assert sent == [] and len(notices) == 1 and GRANT in notices[0]
        return
    captured: list[Snapshot] = []

    class Service:
        def capture(self, snap: Snapshot) -> CaptureResult:
            captured.append(snap)
            return CaptureResult.saved("added", "m1", "a title", 0)

    assert notices == [] and sent[0](Service())[0] == "Saved"
    assert (captured[0].text, captured[0].source, captured[0].app) == ("the selected sentence", "hotkey", "TextEdit")
    assert [i.data for i in mac.board.items] == list(PREVIOUS)
