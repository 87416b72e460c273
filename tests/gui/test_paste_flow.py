"""Enter pastes into the window the search was opened over (qt/paste_flow.py), with a fake OS backend: the
order (copy, hide, paste off the GUI thread), the notices, a failed paste, Wayland, and restoring the clipboard.
The real X server is in tests/gui/test_paste_x11.py."""

from __future__ import annotations

import threading
import time

import pytest
from PySide6.QtCore import QByteArray, QMimeData, Qt
from PySide6.QtGui import QGuiApplication

from desktop_memory.capture import paste
from desktop_memory.core.capture import OWN_MIME
from desktop_memory.engine.settings import Settings
from desktop_memory.qt import paste_flow
from desktop_memory.qt.search_window import SearchWindow
from tests.gui.query_typing import search

NOTES = ["Decision: the beta ships on March 3rd; Priya owns the release notes.",
         "Pasta recipe: boil spaghetti 9 minutes, toss with garlic and olive oil."]


class FakeBackend:
    """The agreed backend interface; records what the flow asked and on which thread."""

    def __init__(self, front: int | None = 4242, problem: str | None = None) -> None:
        self.front, self.problem = front, problem
        self.calls: list[tuple[int | None, str, bool]] = []
        self.window: SearchWindow | None = None

    def foreground(self) -> int | None:
        return self.front

    def paste_into(self, target: int | None) -> str | None:
        visible = self.window.isVisible() if self.window else False
        self.calls.append((target, threading.current_thread().name, visible))
        return self.problem


@pytest.fixture
def backend(monkeypatch) -> FakeBackend:
    fake = FakeBackend()
    monkeypatch.setattr(paste, "support", lambda *_a, **_k: paste.PasteSupport("x11", fake))
    return fake


def make_window(qtbot, bridge, engine, backend, settings: Settings | None = None) -> SearchWindow:
    for text in NOTES:
        engine(bridge, lambda s, t=text: s.add(t))
    w = SearchWindow(bridge, settings or Settings())
    backend.window = w
    qtbot.addWidget(w)
    with qtbot.waitSignal(w.search_finished, timeout=10_000):
        w.show_and_focus()
    return w


def press_enter(qtbot, w: SearchWindow, query: str = "beta", ctrl: bool = False) -> None:
    search(qtbot, w, query)
    mods = Qt.KeyboardModifier.ControlModifier if ctrl else Qt.KeyboardModifier.NoModifier
    qtbot.keyClick(w.query, Qt.Key.Key_Return, mods)


def test_enter_copies_hides_then_pastes_into_the_remembered_window_off_the_gui_thread(
        qtbot, bridge, engine, backend) -> None:
    w = make_window(qtbot, bridge, engine, backend)
    notices: list[str] = []
    w.notice.connect(notices.append)
    assert w.paster.target == 4242 and "Paste context ↵" in w.footer.text()
    with qtbot.waitSignal(w.paster.finished, timeout=10_000) as done:
        press_enter(qtbot, w)
    assert done.args == [None]
    assert backend.calls == [(4242, "paste", False)]  # after the hide, on the worker thread
    assert QGuiApplication.clipboard().text().startswith("Context from my personal notes about")
    assert notices == ["Pasted context: 1 memory, ~" + notices[0].split("~")[1]]
    assert not w.isVisible()


def test_ctrl_enter_pastes_the_text_too(qtbot, bridge, engine, backend) -> None:
    w = make_window(qtbot, bridge, engine, backend)
    with qtbot.waitSignal(w.paster.finished, timeout=10_000):
        press_enter(qtbot, w, "pasta", ctrl=True)
    assert QGuiApplication.clipboard().text() == NOTES[1] and backend.calls[0][0] == 4242


def test_our_own_window_in_front_is_no_target_and_enter_only_copies(qtbot, bridge, engine, backend) -> None:
    w = make_window(qtbot, bridge, engine, backend)
    w.hide()
    backend.front = int(w.winId())  # e.g. the settings window of this app was in front
    w.show_and_focus()
    assert w.paster.target is None
    notices: list[str] = []
    w.notice.connect(notices.append)
    with qtbot.waitSignal(w.copied, timeout=10_000):
        press_enter(qtbot, w)
    qtbot.wait(100)
    assert backend.calls == [] and notices[0].startswith("Copied context: 1 memory,")
    assert notices[0].endswith("— paste with Ctrl+V")


def test_a_failed_paste_brings_the_window_back_with_the_problem_and_the_text_stays_copied(
        qtbot, bridge, engine, backend) -> None:
    backend.problem = "the window you came from is gone: the context is on the clipboard; paste it with Ctrl+V"
    w = make_window(qtbot, bridge, engine, backend)
    with qtbot.waitSignal(w.paster.finished, timeout=10_000):
        press_enter(qtbot, w)
    assert w.isVisible() and w.paste_problem.isVisible()
    assert w.paste_problem.text() == f"Copied, not pasted: {backend.problem}"
    assert QGuiApplication.clipboard().text().startswith("Context from my personal notes")
    with qtbot.waitSignal(w.copied, timeout=10_000):  # Enter again: copied only, nothing pasted twice
        qtbot.keyClick(w.query, Qt.Key.Key_Return)
    qtbot.wait(100)
    assert len(backend.calls) == 1
    w.show_and_focus()
    assert not w.paste_problem.isVisible()  # a fresh opening forgets the old problem


def test_a_backend_that_raises_is_a_problem_not_a_stuck_flow(qtbot, bridge, engine, backend, monkeypatch) -> None:
    def boom(_target: int | None) -> str | None:
        raise OSError("broken pipe")

    monkeypatch.setattr(backend, "paste_into", boom)
    w = make_window(qtbot, bridge, engine, backend)
    with qtbot.waitSignal(w.paster.finished, timeout=10_000) as done:
        press_enter(qtbot, w)
    assert done.args[0].startswith("could not paste (OSError)") and not w.paster.busy


def test_the_setting_off_copies_only_and_the_footer_says_copy(qtbot, bridge, engine, backend) -> None:
    w = make_window(qtbot, bridge, engine, backend, Settings(paste_into_previous_window=False))
    assert "Copy context ↵" in w.footer.text() and w.paster.target is None
    with qtbot.waitSignal(w.copied, timeout=10_000):
        press_enter(qtbot, w)
    qtbot.wait(100)
    assert backend.calls == []
    w.apply_settings(Settings())
    assert "Paste context ↵" in w.footer.text()


def test_wayland_copies_and_says_paste_with_ctrl_v(qtbot, bridge, engine, monkeypatch) -> None:
    monkeypatch.setattr(paste, "support", lambda *_a, **_k: paste.PasteSupport("wayland", None, paste.WAYLAND_NOTE))
    w = make_window(qtbot, bridge, engine, FakeBackend())
    notices: list[str] = []
    w.notice.connect(notices.append)
    assert "Copy context ↵" in w.footer.text()
    with qtbot.waitSignal(w.copied, timeout=10_000):
        press_enter(qtbot, w)
    assert notices[0].startswith("Copied context") and notices[0].endswith("paste with Ctrl+V")


def offer(text: str, html: str = "") -> None:
    mime = QMimeData()
    mime.setText(text)
    if html:
        mime.setHtml(html)
    QGuiApplication.clipboard().setMimeData(mime)


def test_the_previous_clipboard_comes_back_after_the_paste_when_chosen(qtbot, bridge, engine, backend,
                                                                       monkeypatch) -> None:
    monkeypatch.setattr(paste_flow, "RESTORE_MS", 50)
    w = make_window(qtbot, bridge, engine, backend, Settings(restore_clipboard_after_paste=True))
    offer("what I had copied before", "<b>what I had copied before</b>")
    with qtbot.waitSignal(w.paster.finished, timeout=10_000):
        press_enter(qtbot, w)
    assert QGuiApplication.clipboard().text().startswith("Context from")  # while the target pastes
    qtbot.waitUntil(lambda: QGuiApplication.clipboard().text() == "what I had copied before", timeout=5_000)
    back = QGuiApplication.clipboard().mimeData()
    assert "<b>what I had copied before</b>" in back.html() and back.hasFormat(OWN_MIME)  # not captured again


def test_a_copy_made_meanwhile_is_never_overwritten(qtbot, bridge, engine, backend, monkeypatch) -> None:
    monkeypatch.setattr(paste_flow, "RESTORE_MS", 150)
    w = make_window(qtbot, bridge, engine, backend, Settings(restore_clipboard_after_paste=True))
    offer("what I had copied before")
    with qtbot.waitSignal(w.paster.finished, timeout=10_000):
        press_enter(qtbot, w)
    offer("copied by the person right after the paste")
    qtbot.wait(400)
    assert QGuiApplication.clipboard().text() == "copied by the person right after the paste"


def test_without_restore_the_context_stays_on_the_clipboard(qtbot, bridge, engine, backend, monkeypatch) -> None:
    monkeypatch.setattr(paste_flow, "RESTORE_MS", 20)
    w = make_window(qtbot, bridge, engine, backend)
    offer("what I had copied before")
    with qtbot.waitSignal(w.paster.finished, timeout=10_000):
        press_enter(qtbot, w)
    qtbot.wait(200)
    assert QGuiApplication.clipboard().text().startswith("Context from")


def test_a_huge_previous_clipboard_keeps_its_text_only(qtbot, monkeypatch) -> None:
    monkeypatch.setattr(paste_flow, "RESTORE_MAX_BYTES", 1000)
    mime = QMimeData()
    mime.setText("short text")
    mime.setData("application/x-big-thing", QByteArray(b"x" * 5000))
    QGuiApplication.clipboard().setMimeData(mime)
    copy = paste_flow.clipboard_copy()
    assert copy is not None and copy.text() == "short text" and not copy.hasFormat("application/x-big-thing")
    QGuiApplication.clipboard().clear()
    assert paste_flow.clipboard_copy() is None


def test_enter_to_paste_call_is_quick(qtbot, bridge, engine, backend) -> None:
    """The flow's own share of Enter -> paste: the engine's context call, the hide, PASTE_DELAY_MS, the thread."""
    w = make_window(qtbot, bridge, engine, backend)
    search(qtbot, w, "beta")
    started = time.monotonic()
    with qtbot.waitSignal(w.paster.finished, timeout=10_000):
        qtbot.keyClick(w.query, Qt.Key.Key_Return)
    assert time.monotonic() - started < 2.0


def test_a_password_managers_copy_is_not_put_back(qtbot, bridge, engine, backend, monkeypatch) -> None:
    """Taken over by us, a secret would outlive the password manager's own clearing of the clipboard."""
    monkeypatch.setattr(paste_flow, "RESTORE_MS", 20)
    w = make_window(qtbot, bridge, engine, backend, Settings(restore_clipboard_after_paste=True))
    mime = QMimeData()
    mime.setText("hunter2-correct-horse")
    mime.setData("x-kde-passwordManagerHint", QByteArray(b"secret"))
    QGuiApplication.clipboard().setMimeData(mime)
    with qtbot.waitSignal(w.paster.finished, timeout=10_000):
        press_enter(qtbot, w)
    qtbot.wait(200)
    assert QGuiApplication.clipboard().text().startswith("Context from")
