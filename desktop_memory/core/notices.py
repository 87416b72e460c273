"""What the tray app says out loud: which captures deserve a notification, and errors in plain words.

Quiet by default: a notification only for what needs attention (a secret kept out, a broken rule or
settings file, the first capture of a run, anything the person asked for); every other capture goes
to "Recent captures" and the tray's tooltip. Pure functions, no Qt.
"""

from __future__ import annotations

import re

from .capture import CaptureEvent

SECRET_REASONS = ("looks like a password", "password manager")
ERROR_REASONS = ("a capture rule is broken", "settings.json is damaged")
FIRST_SAVED = "Saved your first copy. Later copies are saved quietly: see Recent captures in the tray menu."

_EXIT = re.compile(r"\s*\(?\b(?:exit code|exit status|returncode|return code)\s*(-?\d+)\)?", re.IGNORECASE)
_MODULE_PATH = re.compile(r"\b(?:found )?(?:keyring|keyrings)\.[\w.]+(?:, (?:keyring|keyrings)\.[\w.]+)*")
KEYRING_HELP = ("desktop-memory keeps its encryption key in your desktop's password keyring, which is not "
                "available. Start and unlock it (GNOME Keyring or KWallet: usually by logging in to your desktop); "
                "or, to keep this data folder unencrypted by choice, set DESKTOP_MEMORY_ENCRYPTION=off.")


def needs_attention(message: str, event: CaptureEvent, *, automatic: bool, first: bool, every: bool) -> bool:
    """Whether a capture's outcome is worth a notification (else only Recent captures and the tooltip).

    `automatic`: a copy the watcher saw (not one the person asked for); `first`: the first automatic save
    of this run; `every`: the person's "notify on every capture" setting.
    """
    if every or not automatic:
        return True
    if event.stored:
        return first or "redacted" in message
    return event.reason.startswith(SECRET_REASONS + ERROR_REASONS)


def _exit_words(match: re.Match[str]) -> str:
    code = int(match.group(1))
    if code == -9:
        return " (it was stopped by the system, perhaps because memory ran low: closing some programs helps)"
    if code < 0:
        return " (it was stopped unexpectedly)"
    return " (it ended with an error)" if code else ""


def plain(message: str) -> str:
    """A technical message in words a person can act on: no exit codes, no Python module paths."""
    lowered = message.lower()
    if "keyring" in lowered and ("backends.fail" in lowered or "no usable os keyring" in lowered):
        retry = (" Then click here or use Retry in the tray menu." if "Retry in the tray menu" in message
                 else " Then start desktop-memory again.")
        return KEYRING_HELP + retry
    text = _EXIT.sub(_exit_words, message)
    text = _MODULE_PATH.sub("no keyring", text)
    return " ".join(text.split())
