"""Paste where you came from and the active window's names on Windows (capture/paste_windows.py,
capture/window_windows.py) against the fake user32/kernel32 (issue 18). Real focus rules (the foreground
lock, UIPI) and real processes are not exercised here."""

from __future__ import annotations

import pytest

from desktop_memory.capture import keys_windows as keys
from desktop_memory.capture import paste_windows, window_windows
from tests.windows_fakes import FakeWindows

EDITOR, OURS = 0x1001, 0x2002


@pytest.fixture
def win(monkeypatch):
    fake = FakeWindows().install(monkeypatch)
    monkeypatch.setattr(keys.time, "sleep", lambda s: None)
    fake.windows[OURS] = {"title": "desktop-memory", "pid": fake.pid, "tid": fake.tid}
    return fake


def test_foreground_is_the_window_in_front(win):
    assert paste_windows.foreground() == EDITOR
    win.foreground = 0
    assert paste_windows.foreground() is None


def test_foreground_without_user32_is_unknown(monkeypatch):
    def missing(name: str):
        raise OSError(name)

    monkeypatch.setattr(keys, "dll", missing)
    assert paste_windows.foreground() is None


def test_paste_brings_the_window_back_and_sends_ctrl_v(win):
    win.foreground = OURS
    win.down = {0xA2, 0xA0}  # Ctrl+Shift still held (Enter in the search window with them)
    assert paste_windows.paste_into(EDITOR) is None
    assert win.foreground == EDITOR
    assert win.chords == ["ctrl+v"]
    assert win.attached == []  # Windows let us: no thread-input dance


def test_a_refused_set_foreground_tries_once_more_attached_to_the_front_thread(win):
    win.foreground = OURS
    win.windows[0x3003] = {"title": "Start", "pid": 1, "tid": 88}
    win.foreground = 0x3003  # something else took the front meanwhile
    win.refuse_foreground = 1
    assert paste_windows.paste_into(EDITOR) is None
    assert win.attached == [(win.tid, 88, True), (win.tid, 88, False)]
    assert win.chords == ["ctrl+v"]


def test_a_window_that_will_not_come_forward_is_said_and_nothing_is_typed(win):
    win.foreground = OURS
    win.refuse_foreground = 10
    problem = paste_windows.paste_into(EDITOR)
    assert problem and "Ctrl+V" in problem and "\n" not in problem
    assert win.chords == []  # never typed into the wrong window


def test_a_closed_window_is_said(win):
    problem = paste_windows.paste_into(0x7777)
    assert problem and "closed" in problem
    assert win.chords == []


def test_a_minimised_window_is_restored_first(win):
    win.foreground = OURS
    win.windows[EDITOR]["minimised"] = True
    assert paste_windows.paste_into(EDITOR) is None
    assert win.called("ShowWindow") == [(EDITOR, 9)]


def test_no_target_pastes_into_whatever_is_in_front(win):
    assert paste_windows.paste_into(None) is None
    assert win.chords == ["ctrl+v"]


def test_blocked_input_is_a_problem_not_an_exception(win):
    win.accept_inputs = 2
    problem = paste_windows.paste_into(EDITOR)
    assert problem and "keystrokes" in problem


def test_current_names_the_program_and_the_title(win):
    assert window_windows.current() == ("notepad", "notes.txt - Notepad")
    assert win.called("CloseHandle")  # the process handle is not leaked


@pytest.mark.parametrize(("path", "app"), [
    (r"C:\Program Files\KeePassXC\KeePassXC.exe", "KeePassXC"),
    (r"C:\Users\ana\AppData\Local\Programs\Microsoft VS Code\Code.exe", "Code"),
    (r"\\?\C:\odd.name.exe", "odd.name"),
    (r"C:\tools\noext", "noext"),
])
def test_the_app_is_the_program_file_without_exe(win, path, app):
    win.processes[4242] = path
    assert window_windows.current()[0] == app


def test_a_store_app_is_named_by_its_own_process_not_the_frame_host(win):
    win.processes[500] = r"C:\Windows\System32\ApplicationFrameHost.exe"
    win.processes[501] = r"C:\Program Files\WindowsApps\Microsoft.WindowsCalculator\CalculatorApp.exe"
    win.windows[0x4004] = {"title": "Calculator", "pid": 500, "tid": 9, "children": [0x4005, 0x4006]}
    win.windows[0x4005] = {"title": "", "pid": 500, "tid": 9}
    win.windows[0x4006] = {"title": "", "pid": 501, "tid": 10}
    win.foreground = 0x4004
    assert window_windows.current() == ("CalculatorApp", "Calculator")


def test_a_process_we_may_not_open_still_gives_the_title(win):
    win.processes.pop(4242)  # elevated or protected: OpenProcess fails
    assert window_windows.current() == ("", "notes.txt - Notepad")


def test_nothing_in_front_gives_empty_names(win):
    win.foreground = 0
    assert window_windows.current() == ("", "")


def test_a_long_title_is_read_whole(win):
    win.windows[EDITOR]["title"] = "ü" * 3000
    assert window_windows.current()[1] == "ü" * 3000


def test_active_window_dispatches_to_windows(win, monkeypatch):
    from desktop_memory.capture import active_window

    monkeypatch.setattr(active_window.sys, "platform", "win32")
    assert active_window.ActiveWindow().current() == ("notepad", "notes.txt - Notepad")


def test_active_window_never_raises_on_windows(monkeypatch):
    from desktop_memory.capture import active_window

    def broken(name: str):
        raise OSError("no user32")

    monkeypatch.setattr(keys, "dll", broken)
    monkeypatch.setattr(active_window.sys, "platform", "win32")
    assert active_window.ActiveWindow().current() == ("", "")
