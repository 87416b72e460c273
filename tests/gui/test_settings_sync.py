"""Settings › Sync: set up a new set, join it from another machine with the phrase, a wrong phrase is a notice.

Two real engines (fake embedder) on two data folders stand for two machines; one shared folder between them. The
set's key goes to the real keyring of scripts/with-desktop.sh."""

from __future__ import annotations

import pytest
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QFileDialog

from desktop_memory.core.capture import OWN_MIME
from desktop_memory.engine.settings import Settings
from desktop_memory.qt.settings_window import SettingsWindow
from desktop_memory.qt.sync_section import SyncSection


@pytest.fixture
def shared(tmp_path):
    folder = tmp_path / "shared"
    folder.mkdir()
    return folder


def _set_up(qtbot, section: SyncSection, monkeypatch, folder, phrase: str | None) -> None:
    monkeypatch.setattr(QFileDialog, "getExistingDirectory", lambda *a, **k: str(folder))
    section.choose_setup()
    dialog = section.setup_dialog
    assert dialog is not None and dialog.isVisible()
    if phrase is None:
        assert dialog.new.isChecked()  # an empty folder: a new set is the likely choice
    else:
        assert dialog.join.isChecked()  # the folder holds a set: joining it is
        dialog.phrase.setPlainText(phrase)
    dialog.accept()


def test_set_up_a_new_set_then_join_it_from_another_machine(qtbot, make_bridge, engine, tmp_path, shared,
                                                             monkeypatch) -> None:
    bridge_a = make_bridge(tmp_path / "data")
    window = SettingsWindow(bridge_a, tmp_path / "data")
    qtbot.addWidget(window)
    window.show_settings(Settings.load(tmp_path / "data"))
    a = window.sync
    qtbot.waitUntil(lambda: a.line.text() == "Sync is off", timeout=10_000)
    assert not a.now_button.isEnabled() and a.setup_button.isEnabled()
    notices: list[str] = []
    window.notice.connect(notices.append)

    _set_up(qtbot, a, monkeypatch, shared, None)
    qtbot.waitUntil(lambda: a.phrase_dialog is not None and a.phrase_dialog.isVisible(), timeout=20_000)
    assert a.line.text().startswith("Synced ") and a.now_button.isEnabled()
    assert notices[-1].startswith("Sync set up")
    phrase = a.phrase_dialog.phrase
    assert len(phrase.split()) == 24
    copy = next(b for b in a.phrase_dialog.findChildren(type(a.now_button)) if b.text() == "&Copy")
    copy.click()
    copied = QGuiApplication.clipboard().mimeData()
    assert copied.text() == phrase and copied.hasFormat(OWN_MIME)  # not captured back by the app
    a.phrase_dialog.accept()

    bridge_b = make_bridge(tmp_path / "b")
    b = SyncSection(bridge_b)
    qtbot.addWidget(b)
    _set_up(qtbot, b, monkeypatch, shared, "\n".join(phrase.upper().split()))
    qtbot.waitUntil(lambda: b.line.text().startswith("Synced"), timeout=20_000)
    assert b.phrase_dialog is None  # a join shows no phrase

    engine(bridge_a, lambda s: s.add("The piano tuner comes on the first Monday of May"))
    with qtbot.waitSignal(a.status_changed, timeout=20_000):
        a.sync_now()
    assert a.status.pending == 0
    with qtbot.waitSignal(b.status_changed, timeout=20_000):
        b.sync_now()
    assert "1 other machine" in b.line.text()
    hits = engine(bridge_b, lambda s: s.search("piano tuner", limit=3))
    assert hits and "first Monday of May" in hits[0].memory.content
    assert b.machines.count() == 2 and "(this computer)" in b.machines.item(0).text() + b.machines.item(1).text()

    b.leave()
    qtbot.waitUntil(lambda: b.line.text() == "Sync is off", timeout=20_000)
    assert b.setup_button.isEnabled() and not b.machines.isVisible()


def test_a_wrong_phrase_is_a_readable_notice(qtbot, make_bridge, engine, tmp_path, shared, monkeypatch) -> None:
    bridge_a = make_bridge(tmp_path / "data")
    phrase = engine(bridge_a, lambda s: (s.sync_setup(shared), s.sync_phrase())[1])
    words = phrase.split()
    words[7] = "abandon" if words[7] != "abandon" else "ability"
    bridge_b = make_bridge(tmp_path / "b")
    b = SyncSection(bridge_b)
    qtbot.addWidget(b)
    notices: list[str] = []
    b.notice.connect(notices.append)
    b.show()
    _set_up(qtbot, b, monkeypatch, shared, " ".join(words))
    qtbot.waitUntil(b.error.isVisible, timeout=20_000)
    assert "phrase" in b.error.text() and "Traceback" not in b.error.text() and "\n" not in b.error.text()
    assert notices == [b.error.text()]
    _set_up(qtbot, b, monkeypatch, shared, " ".join(words[:-1] + ["zzzz"]))  # a typo
    qtbot.waitUntil(lambda: "word 24" in b.error.text(), timeout=20_000)
    assert b.line.text() == "Sync is off"
