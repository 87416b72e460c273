"""Quiet by default, and errors in plain words (core/notices.py)."""

from __future__ import annotations

from desktop_memory.core.capture import CaptureEvent
from desktop_memory.core.notices import KEYRING_HELP, needs_attention, plain


def _saved(message: str = "saved") -> CaptureEvent:
    return CaptureEvent(0.0, True, message, memory_id="m1", title="t")


def _skipped(reason: str) -> CaptureEvent:
    return CaptureEvent(0.0, False, reason)


def test_only_what_needs_attention_is_notified() -> None:
    quiet = {"automatic": True, "first": False, "every": False}
    assert not needs_attention("Saved", _saved(), **quiet)
    assert not needs_attention("Already remembered", _saved("already remembered"), **quiet)
    for reason in ("paused", "capture is off", "not text", "empty", "rule: chat app", "too short"):
        assert not needs_attention(f"Skipped: {reason}", _skipped(reason), **quiet), reason
    for reason in ("looks like a password", "password manager", "a capture rule is broken (x): fix it in Settings",
                   "settings.json is damaged: fix it or save Settings again"):
        assert needs_attention(f"Skipped: {reason}", _skipped(reason), **quiet), reason
    assert needs_attention("Saved (1 secret redacted)", _saved("saved (1 secret redacted)"), **quiet)
    assert needs_attention("Saved", _saved(), automatic=True, first=True, every=False)  # the first capture
    assert needs_attention("Skipped: paused", _skipped("paused"), automatic=True, first=False, every=True)
    assert needs_attention("Saved", _saved(), automatic=False, first=False, every=False)  # asked for


def test_technical_errors_read_as_plain_words() -> None:
    killed = plain("The memory engine could not start: the engine stopped (exit code -9). Click here to retry.")
    assert "exit code" not in killed and "-9" not in killed and "memory ran low" in killed
    keyring = plain("no usable OS keyring (found keyring.backends.fail.Keyring): start and unlock your desktop's "
                    "keyring (GNOME Keyring, KWallet, macOS Keychain, Windows Credential Manager)")
    assert keyring.startswith(KEYRING_HELP) and "backends" not in keyring
    stopped = plain("The memory engine could not start: no usable OS keyring (found keyring.backends.fail.Keyring): "
                    "start and unlock your desktop's keyring. Click here or use Retry in the tray menu.")
    assert stopped.startswith(KEYRING_HELP) and stopped.endswith("use Retry in the tray menu.")
    assert plain("Settings saved") == "Settings saved"
    assert "exit code" not in plain("enrichment model ended (exit code 3)")
