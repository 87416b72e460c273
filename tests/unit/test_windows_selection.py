"""Selection capture on Windows (capture/selection_windows.py) against a fake user32/kernel32 (issue 18):
the clipboard saved, Ctrl+C sent with the held modifiers let go first, the sequence number waited for, the
text read, the clipboard put back with every format that lives in memory (the secret markers too).
Only fakes here: real SendInput, a real program answering Ctrl+C and the real clipboard are not."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from desktop_memory.capture import keys_windows as keys
from desktop_memory.capture import selection_windows as sel
from desktop_memory.core.capture import OWN_MIME
from desktop_memory.core.errors import CaptureUnavailable
from tests.windows_fakes import CF_UNICODETEXT, FakeWindows

CF_TEXT, CF_DIB, CF_BITMAP, CF_LOCALE = 1, 8, 2, 16


def utf16(text: str) -> bytes:
    return (text + "\0").encode("utf-16-le")


@pytest.fixture
def win(monkeypatch):
    fake = FakeWindows().install(monkeypatch)
    monkeypatch.setattr(keys.time, "sleep", lambda s: None)
    return fake


def selecting(win: FakeWindows, text: str | None, extra: dict | None = None) -> None:
    """The program in front copies `text` when it gets Ctrl+C (None: nothing selected, it copies nothing)."""
    if text is not None:
        win.on_chord["ctrl+c"] = lambda: win.copy({CF_UNICODETEXT: utf16(text), **(extra or {})})


def test_the_selected_text_comes_back_and_the_clipboard_is_put_back(win):
    before = {CF_UNICODETEXT: utf16("what I copied earlier"), CF_LOCALE: b"\x09\x04\0\0",
              "HTML Format": b"Version:0.9\r\n<b>earlier</b>", CF_DIB: b"BM" + bytes(range(40))}
    win.copy(before)
    saved = dict(win.clipboard)
    selecting(win, "the selected sentence")
    assert sel.copy_selection() == "the selected sentence"
    assert win.mine() == saved
    mark = win.register(OWN_MIME)  # the app's watcher skips what we put back as our own copy
    assert win.clipboard[mark] == b"restored"
    assert win.chords == ["ctrl+c"]
    assert not win.is_open and win.created_windows == []


def test_shift_and_alt_held_from_the_hotkey_are_let_go_first(win):
    win.down = {0xA2, 0xA0, 0xA4, ord("C")}  # Ctrl+Alt+Shift+C still held
    selecting(win, "selected")
    assert sel.copy_selection() == "selected"
    assert win.chords == ["ctrl+c"]  # not ctrl+shift+alt+c
    first_release = next(i for i, (vk, up) in enumerate(win.events) if up)
    assert win.events[:first_release + 1] == [(keys.VK_MASK, False), (keys.VK_MASK, True)]  # Alt alone: no menu
    assert {(0xA0, True), (0xA4, True), (0xA2, True)} <= set(win.events[:6])


def test_nothing_selected_gives_none_and_leaves_the_clipboard_alone(win):
    win.copy({CF_UNICODETEXT: utf16("earlier")})
    selecting(win, None)
    assert sel.copy_selection(timeout_s=0.05) is None
    assert win.text() == "earlier"
    assert win.called("EmptyClipboard") == []  # nothing to put back: never touched


def test_a_copy_without_text_gives_none_and_the_clipboard_back(win):
    win.copy({CF_UNICODETEXT: utf16("earlier")})
    win.on_chord["ctrl+c"] = lambda: win.copy({CF_DIB: b"BM" + bytes(60)})  # an image was selected
    assert sel.copy_selection() is None
    assert win.text() == "earlier"


def test_secret_markers_of_the_earlier_copy_come_back_with_it(win):
    win.copy({CF_UNICODETEXT: utf16("hunter2 correct horse"), "ExcludeClipboardContentFromMonitorProcessing": b"",
              "CanIncludeInClipboardHistory": b"\0\0\0\0", "Clipboard Viewer Ignore": b""})
    selecting(win, "selected")
    assert sel.copy_selection() == "selected"
    names = {win.names.get(f) for f in win.clipboard}
    assert {"ExcludeClipboardContentFromMonitorProcessing", "CanIncludeInClipboardHistory",
            "Clipboard Viewer Ignore"} <= names
    history = win.register("CanIncludeInClipboardHistory")
    assert win.clipboard[history] == b"\0\0\0\0"


def test_formats_that_are_not_memory_are_left_out(win):
    win.copy({CF_UNICODETEXT: utf16("earlier"), CF_BITMAP: b"\x01\x02", "DataObject": b"\x10\0\0\0",
              "Ole Private Data": b"\0" * 8})
    selecting(win, "selected")
    assert sel.copy_selection() == "selected"
    assert set(win.mine()) == {CF_UNICODETEXT}


def test_an_empty_clipboard_before_is_empty_after(win):
    selecting(win, "selected")
    assert sel.copy_selection() == "selected"
    assert win.mine() == {}


def test_the_clipboard_put_back_is_owned_by_a_window_of_ours(win):
    """EmptyClipboard after OpenClipboard(NULL) leaves no owner and SetClipboardData fails: a hidden window."""
    win.copy({CF_UNICODETEXT: utf16("earlier")})
    selecting(win, "selected")
    sel.copy_selection()
    opened = [a[0] for a in win.called("OpenClipboard")]
    assert opened[-1] and opened[-1] == win.called("DestroyWindow")[-1][0]
    assert win.text() == "earlier"


def test_a_busy_clipboard_is_waited_for(win):
    win.copy({CF_UNICODETEXT: utf16("earlier")})
    win.busy_opens = 3
    selecting(win, "selected")
    assert sel.copy_selection() == "selected"
    assert win.text() == "earlier"


def test_a_clipboard_that_stays_busy_is_one_line_error(win):
    win.copy({CF_UNICODETEXT: utf16("earlier")})
    win.busy_opens = 10**6
    with pytest.raises(CaptureUnavailable, match="clipboard is in use") as caught:
        sel.copy_selection(timeout_s=0.05)
    assert "\n" not in str(caught.value)
    assert win.chords == []  # never sent Ctrl+C without a way to put the clipboard back


def test_blocked_input_is_a_one_line_error_and_the_clipboard_is_untouched(win):
    win.copy({CF_UNICODETEXT: utf16("earlier")})
    win.accept_inputs = 0
    with pytest.raises(CaptureUnavailable, match="did not take the keystrokes"):
        sel.copy_selection()
    assert win.text() == "earlier"


def test_our_own_window_in_front_gives_none_without_waiting(win):
    win.windows[0x1001]["pid"] = win.pid
    selecting(win, "selected")
    assert sel.copy_selection() is None
    assert win.chords == []


def test_no_window_in_front_gives_none(win):
    win.foreground = 0
    assert sel.copy_selection() is None


def test_a_slow_program_that_empties_then_fills_is_read_once_it_closes(win):
    """Sequence number moves at EmptyClipboard; the program still holds the clipboard open while it writes."""
    win.copy({CF_UNICODETEXT: utf16("earlier")})

    def slow_copy():
        win.copy({})  # emptied: the number moved
        win.busy_opens = 2  # still open on its side
        win.clipboard = {CF_UNICODETEXT: utf16("late but whole")}

    win.on_chord["ctrl+c"] = slow_copy
    assert sel.copy_selection() == "late but whole"
    assert win.text() == "earlier"


@settings(max_examples=60, deadline=None)
@given(st.text(alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="\0"), max_size=300),
       st.dictionaries(st.sampled_from([CF_TEXT, CF_LOCALE, CF_DIB, 0xC123]), st.binary(min_size=1, max_size=64),
                       max_size=4))
def test_any_text_and_any_earlier_clipboard_round_trip(text, earlier):
    win = FakeWindows()
    keys._DLLS.update(user32=win, kernel32=win)
    real_error = keys.last_error
    keys.last_error = lambda: 0
    try:
        win.copy(dict(earlier))
        saved = dict(win.clipboard)
        selecting(win, text)
        assert sel.copy_selection() == (text or None)
        assert win.mine() == saved
    finally:
        keys._DLLS.clear()
        keys.last_error = real_error


class _AppStandIn:
    """What DesktopApp._capture_copied_selection uses of the app: the window names, notify, the engine lane."""

    def __init__(self) -> None:
        from types import SimpleNamespace

        self.watcher = SimpleNamespace(windows=SimpleNamespace(current=lambda: ("notepad", "notes.txt - Notepad")))
        self.notices: list[str] = []
        self.sent: list = []
        self.notify = self.notices.append
        self._captured = object()

        class Bridge:
            def submit(bridge, fn, done, hold=False):  # noqa: N805 - a stand-in
                self.sent.append(fn)

        self.bridge = Bridge()


@pytest.mark.parametrize(("outcome", "notice"), [
    ("the selected sentence", None),
    (None, "Nothing selected: select some text, then press the hotkey again"),
    (CaptureUnavailable("the clipboard is in use by another program; try again in a moment"),
     "Selection not captured: the clipboard is in use by another program; try again in a moment"),
])
def test_the_app_sends_the_copied_selection_as_the_hotkeys(monkeypatch, outcome, notice):
    pytest.importorskip("PySide6")
    from desktop_memory.core.capture import Snapshot
    from desktop_memory.qt.app import DesktopApp

    def fake_copy(timeout_s: float = 0.5):
        if isinstance(outcome, Exception):
            raise outcome
        return outcome

    monkeypatch.setattr(sel, "copy_selection", fake_copy)
    app = _AppStandIn()
    DesktopApp._capture_copied_selection(app)
    assert app.notices == ([notice] if notice else [])
    if notice is None:
        from desktop_memory.core.capture import CaptureResult

        captured: list[Snapshot] = []

        class Service:
            def capture(self, snap: Snapshot) -> CaptureResult:
                captured.append(snap)
                return CaptureResult.saved("added", "m1", "a title", 0)

        message, _event = app.sent[0](Service())
        assert message == "Saved"
        assert captured[0].text == "the selected sentence" and captured[0].source == "hotkey"
        assert (captured[0].app, captured[0].window) == ("notepad", "notes.txt - Notepad")
    else:
        assert app.sent == []


def test_wines_ole_pointer_format_is_left_out(win):
    win.copy({CF_UNICODETEXT: utf16("earlier"), "Wine Marshalled DataObject": b"\x01" * 68})
    selecting(win, "selected")
    assert sel.copy_selection() == "selected"
    assert set(win.mine()) == {CF_UNICODETEXT}


def test_sent_messages_are_answered_while_waiting_for_the_copy(win):
    """The program copying sends WM_DESTROYCLIPBOARD to the clipboard's owner, which may be our own (Qt's)
    window, and waits for the answer: the copy only happens once this thread takes its sent messages."""
    win.copy({CF_UNICODETEXT: utf16("earlier")})
    blocked: list[bool] = []
    win.on_chord["ctrl+c"] = lambda: blocked.append(True)  # stuck in EmptyClipboard until we answer

    def peek(msg_ref, hwnd, first, last, flags):
        assert flags == keys.PM_NOREMOVE | keys.PM_QS_SENDMESSAGE  # posted messages stay in the queue
        if blocked:
            blocked.clear()
            win.copy({CF_UNICODETEXT: utf16("after the owner answered")})
        return 0

    win.PeekMessageW = peek
    assert sel.copy_selection() == "after the owner answered"
    assert win.text() == "earlier"
