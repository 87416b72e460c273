"""The selected text of the app in front on macOS: Cmd+C through Quartz, read, the pasteboard put back.

macOS has no PRIMARY selection. `copy_selection` saves what the pasteboard holds, posts Cmd+C
(capture/input_macos.py: needs the Accessibility grant), waits for the pasteboard's change count to
move, reads the text and puts the previous items back. A copy the source marked secret (a password
manager's field) is refused like any marked copy.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable

from ..core.capture import concealed_by
from ..core.errors import CaptureUnavailable
from . import input_macos
from .pasteboard_macos import Pasteboard

log = logging.getLogger(__name__)
POLL_S = 0.01


def copy_selection(timeout_s: float = 0.5) -> str | None:
    """Send Cmd+C to the app in front and return the selected text (None: nothing selected, or no text);
    the pasteboard's previous content is put back afterwards. Raises CaptureUnavailable (one line) when
    Accessibility is not granted or the selection carries a password manager's marker."""
    if not input_macos.trusted(prompt=True):
        raise CaptureUnavailable(input_macos.ACCESSIBILITY_HINT)
    board = Pasteboard()
    saved = board.save()
    before = board.change_count()
    input_macos.post_command_chord(input_macos.KEY_C)
    deadline = time.monotonic() + max(0.0, timeout_s)
    if not _wait(lambda: board.change_count() != before, deadline):
        log.debug("Cmd+C changed nothing within %.2f s: no selection", timeout_s)
        return None
    try:
        _wait(board.types, deadline)  # an app clears the pasteboard (the count moves) before it writes
        marker = concealed_by(board.markers())
        text = None if marker else board.text()
    finally:
        board.restore(saved)
    if marker:
        raise CaptureUnavailable(f"not captured: the selection is marked as a secret ({marker})")
    return text or None  # an app that copies an empty string: nothing selected either


def _wait(ready: Callable[[], object], deadline: float) -> bool:
    """Poll `ready` until it is true or `deadline` (monotonic) passes; whether it became true."""
    while True:
        if ready():
            return True
        if time.monotonic() >= deadline:
            return False
        time.sleep(POLL_S)
