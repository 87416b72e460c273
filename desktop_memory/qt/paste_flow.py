"""Paste where you came from: the search window's copy, then a paste into the window it was opened over.

When the search window is shown (hotkey, tray, `show` / `toggle`), `remember_target` asks the OS backend
(desktop_memory/capture/paste.py) which window is in front, before ours takes the focus (never one of ours).
On Enter, `deliver` puts the text on the clipboard as before; the window hides; `PASTE_DELAY_MS` later (the
window system has the hide by then) a worker thread runs the backend's `paste_into(target)`, which waits
up to half a second for the target to come forward: the GUI thread never waits, and stays free to answer
the target's request for the clipboard's content. The answer comes back as `finished` on the GUI thread:
None (pasted) or the one-line problem; the context stays on the clipboard either way.

With "restore the previous clipboard" on, the clipboard's earlier content (every format Qt offers for it,
up to `RESTORE_MAX_BYTES` in all, else its text only) is put back `RESTORE_MS` after the paste was sent,
only if the clipboard still holds our copy (a copy the person made meanwhile is never overwritten). A
previous copy with a secret marker (a password manager's) is never taken over and put back.
"""

from __future__ import annotations

import logging
import threading
import time
import uuid

from PySide6.QtCore import QByteArray, QMimeData, QObject, QTimer, Signal
from PySide6.QtGui import QClipboard, QGuiApplication
from PySide6.QtWidgets import QApplication

from ..capture import paste
from ..core.capture import MARKER_FORMATS, OWN_MIME, concealed_by, format_name
from ..engine.settings import Settings

log = logging.getLogger("desktop_memory.qt.search_window")

# after the hide: Qt has sent the unmap of the search window to the X server by then, so the server cannot process
# it after the backend focused the target (it comes on another connection) and take the focus back. Not
# QGuiApplication.sync(): on xcb it left the window shown next without Qt's activation (isActiveWindow False).
PASTE_DELAY_MS = 30
RESTORE_MS = 700  # after the paste was sent: the target has asked for the clipboard's content by then
RESTORE_MAX_BYTES = 32 * 1024 * 1024


def put_on_clipboard(text: str, token: bytes = b"1") -> None:
    """Our copy, marked with our own format so the clipboard watcher does not store it again."""
    mime = QMimeData()
    mime.setText(text)
    mime.setData(OWN_MIME, QByteArray(token))
    QGuiApplication.clipboard().setMimeData(mime)


def clipboard_copy() -> QMimeData | None:
    """A copy of what the clipboard holds now: every format Qt offers (text/plain, text/html, text/uri-list,
    images as image/png and application/x-qt-image, other apps' own types), or its text alone when all of them
    together exceed RESTORE_MAX_BYTES; None when it is empty."""
    source = QGuiApplication.clipboard().mimeData(QClipboard.Mode.Clipboard)
    if source is None or not source.formats():
        return None
    copy, size = QMimeData(), 0
    for fmt in source.formats():
        data = source.data(fmt)
        size += data.size()
        if size > RESTORE_MAX_BYTES:
            copy = QMimeData()
            copy.setText(source.text())
            break
        copy.setData(fmt, data)
    return copy


def _secret(mime: QMimeData) -> bool:
    """Whether a copy carries a password manager's or the OS's secret marker (core/capture.py)."""
    markers = {f: bytes(mime.data(f).data()) for f in mime.formats() if format_name(f) in MARKER_FORMATS}
    return concealed_by(markers) is not None


class PasteFlow(QObject):
    """Copies, then pastes into the remembered window off the GUI thread; `finished(problem or None)`."""

    finished = Signal(object)  # None: pasted; str: the one-line problem (the text is on the clipboard)
    _done = Signal(object, float)  # from the worker thread: problem, seconds paste_into took

    def __init__(self, parent: QObject | None = None, support: paste.PasteSupport | None = None) -> None:
        super().__init__(parent)
        self.support = support or paste.support(QGuiApplication.platformName())
        self.enabled = True  # settings.paste_into_previous_window
        self.restore = False  # settings.restore_clipboard_after_paste
        self.target: int | None = None
        self.busy = False
        self._previous: QMimeData | None = None
        self._restore_due = False  # the previous content (None: an empty clipboard) goes back after the paste
        self._token = b""
        self.sent_at = 0.0  # time.monotonic() when the chord was sent (measurements)
        self._done.connect(self._finished)
        log.info("paste into the previous window: %s", "available" if self.support.available
                 else self.support.note)

    def apply_settings(self, settings: Settings) -> None:
        self.enabled = settings.paste_into_previous_window
        self.restore = settings.restore_clipboard_after_paste

    @property
    def pastes(self) -> bool:
        """Whether Enter will paste (the setting is on and this session has a backend)."""
        return self.enabled and self.support.available

    def remember_target(self) -> None:
        """Note the window in front now (called before the search window shows); ours never counts."""
        if not self.pastes:
            self.target = None
            return
        own = {int(w.internalWinId()) for w in QApplication.topLevelWidgets() if w.internalWinId()}
        self.target = self.support.target(own)
        log.info("paste target remembered: %s", "yes" if self.target else "none")

    def deliver(self, text: str) -> bool:
        """Put `text` on the clipboard; True when a paste into the remembered window follows (`finished`)."""
        paste_now = self.pastes and self.target is not None and not self.busy
        self._restore_due = paste_now and self.restore
        self._previous = clipboard_copy() if self._restore_due else None
        if self._previous is not None and _secret(self._previous):
            # a password manager's copy is not taken over: it would outlive the manager's own clearing
            log.info("previous clipboard held a secret: it will not be put back")
            self._previous, self._restore_due = None, False
        self._token = uuid.uuid4().hex.encode()
        put_on_clipboard(text, self._token)
        if paste_now:
            self.busy = True
            QTimer.singleShot(PASTE_DELAY_MS, self._start)
        return paste_now

    def _start(self) -> None:
        target, backend = self.target, self.support.backend
        assert backend is not None

        def work() -> None:
            started = time.monotonic()
            try:
                problem = backend.paste_into(target)
            except Exception as exc:  # noqa: BLE001 - a backend bug must not leave the flow busy
                log.debug("paste backend failed", exc_info=True)
                problem = f"could not paste ({type(exc).__name__}): the context is on the clipboard"
            self._done.emit(problem, time.monotonic() - started)

        threading.Thread(target=work, name="paste", daemon=True).start()

    def _finished(self, problem: str | None, took: float) -> None:
        self.busy = False
        self.sent_at = time.monotonic()
        log.info("paste %s in %.0f ms", "failed" if problem else "sent", took * 1000)
        if problem is None and self._restore_due:
            QTimer.singleShot(RESTORE_MS, self._restore)
        else:
            self._previous, self._restore_due = None, False
        self.finished.emit(problem)

    def _restore(self) -> None:
        previous, self._previous, self._restore_due = self._previous, None, False
        clipboard = QGuiApplication.clipboard()
        now = clipboard.mimeData(QClipboard.Mode.Clipboard)
        if now is None or bytes(now.data(OWN_MIME).data()) != self._token:
            log.info("previous clipboard not restored: something else was copied meanwhile")
            return
        if previous is None:
            clipboard.clear(QClipboard.Mode.Clipboard)  # it was empty
        else:
            previous.setData(OWN_MIME, QByteArray(b"restored"))  # not stored again by the clipboard watcher
            clipboard.setMimeData(previous)
        log.info("previous clipboard restored")
