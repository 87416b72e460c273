"""Settings › General: "Paste into the window I came from" and "put back the clipboard", saved and applied;
disabled on Wayland with what happens there instead."""

from __future__ import annotations

import json

from desktop_memory.capture import paste
from desktop_memory.engine.settings import FILENAME, Settings
from desktop_memory.qt.settings_window import SettingsWindow


class Backend:
    def foreground(self) -> int | None:
        return None

    def paste_into(self, target: int | None) -> str | None:
        return None


def open_settings(qtbot, bridge, tmp_path, monkeypatch, support: paste.PasteSupport) -> SettingsWindow:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.setattr(paste, "support", lambda *_a, **_k: support)
    w = SettingsWindow(bridge, tmp_path / "data")
    qtbot.addWidget(w)
    w.show_settings(Settings.load(tmp_path / "data"))
    return w


def test_paste_is_on_by_default_and_both_choices_are_saved(qtbot, bridge, tmp_path, monkeypatch) -> None:
    w = open_settings(qtbot, bridge, tmp_path, monkeypatch, paste.PasteSupport("x11", Backend()))
    assert w.paste.isEnabled() and w.paste.isChecked()
    assert w.restore_clipboard.isEnabled() and not w.restore_clipboard.isChecked()
    w.restore_clipboard.setChecked(True)
    with qtbot.waitSignal(w.saved, timeout=10_000) as blocker:
        w.save()
    saved = json.loads((tmp_path / "data" / FILENAME).read_text())
    assert saved["paste_into_previous_window"] is True and saved["restore_clipboard_after_paste"] is True
    assert blocker.args[0].restore_clipboard_after_paste is True
    w.paste.setChecked(False)
    assert not w.restore_clipboard.isEnabled()  # nothing to restore without a paste
    with qtbot.waitSignal(w.saved, timeout=10_000):
        w.save()
    assert json.loads((tmp_path / "data" / FILENAME).read_text())["paste_into_previous_window"] is False
    w.load(Settings.load(tmp_path / "data"))
    assert not w.paste.isChecked() and not w.restore_clipboard.isEnabled()


def test_on_wayland_the_choice_is_disabled_and_says_what_happens(qtbot, bridge, tmp_path, monkeypatch) -> None:
    w = open_settings(qtbot, bridge, tmp_path, monkeypatch, paste.PasteSupport("wayland", None, paste.WAYLAND_NOTE))
    assert not w.paste.isEnabled() and not w.restore_clipboard.isEnabled()
    assert w.paste.text() == "Wayland: the context is copied; paste it with Ctrl+V"
    with qtbot.waitSignal(w.saved, timeout=10_000):
        w.save()  # the stored choice is kept for a later X11 session
    assert json.loads((tmp_path / "data" / FILENAME).read_text())["paste_into_previous_window"] is True
