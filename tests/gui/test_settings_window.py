"""Settings: a round trip through settings.json, applied by the running engine without a restart."""

from __future__ import annotations

import json
import os

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QKeySequence

from desktop_memory.engine.settings import FILENAME, Settings
from desktop_memory.qt import autostart
from desktop_memory.qt.settings_window import SettingsWindow


@pytest.fixture
def window(qtbot, bridge, tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    w = SettingsWindow(bridge, tmp_path / "data")
    qtbot.addWidget(w)
    w.show_settings(Settings.load(tmp_path / "data"))
    return w


def test_round_trip_saves_atomically_and_applies_at_once(qtbot, window, bridge, engine, tmp_path) -> None:
    window.capture.setChecked(False)
    window.ignore_patterns.setPlainText("^\\d{6}$\n\n  token-[a-z]+  ")
    window.ignore_apps.setPlainText("KeePassXC")
    window.hotkey_search.setKeySequence(QKeySequence("Ctrl+Shift+Space"))
    window.budget.setValue(800)
    window.format.setCurrentText("markdown")
    window.threads.setValue(2)
    window.login.setChecked(True)
    window.notify_all.setChecked(True)
    with qtbot.waitSignal(window.saved, timeout=10_000) as blocker:
        window.save()
    saved = json.loads((tmp_path / "data" / FILENAME).read_text())
    assert saved["capture_enabled"] is False and saved["capture_ignore_patterns"] == ["^\\d{6}$", "token-[a-z]+"]
    assert saved["capture_ignore_apps"] == ["keepassxc"] and saved["hotkey_search"] == "Ctrl+Shift+Space"
    assert saved["context_budget"] == 800 and saved["context_format"] == "markdown" and saved["llm_threads"] == 2
    assert saved["notify_every_capture"] is True
    assert not list((tmp_path / "data").glob(".settings-*"))  # no temp file left behind
    assert blocker.args[0].context_budget == 800
    # applied without a restart: the engine's next context uses the new budget and format
    engine(bridge, lambda s: s.add("a note about the quarterly planning meeting"))
    ctx = engine(bridge, lambda s: s.context("quarterly planning"))
    assert ctx.budget == 800 and ctx.text.startswith("## ")
    entry = autostart.entry_path().read_text()
    assert autostart.is_enabled() and f"-m desktop_memory --data-dir {tmp_path / 'data'} app\n" in entry
    # and the form shows the saved values when opened again
    window.load(Settings.load(tmp_path / "data"))
    assert window.budget.value() == 800 and not window.capture.isChecked()
    assert window.ignore_apps.toPlainText() == "keepassxc"
    window.login.setChecked(False)
    with qtbot.waitSignal(window.saved, timeout=10_000):
        window.save()
    assert not autostart.is_enabled()


def test_bad_values_give_a_readable_message_and_save_nothing(qtbot, window, tmp_path) -> None:
    window.ignore_patterns.setPlainText("([unclosed")
    window.save()
    assert window.error.isVisible() and "not a valid regular expression" in window.error.text()
    window.ignore_patterns.setPlainText("")
    window.model_path.setText(str(tmp_path / "missing.gguf"))
    window.save()
    assert "no model file at" in window.error.text()
    window.model_path.setText("")
    window.hotkey_capture.setKeySequence(window.hotkey_search.keySequence())
    window.save()
    assert "must be different" in window.error.text()
    assert not (tmp_path / "data" / FILENAME).exists()


def test_export_import_and_erase_everything(qtbot, window, bridge, engine, tmp_path) -> None:
    for text in ("first note about apples", "second note about pears", "third note about plums"):
        engine(bridge, lambda s, t=text: s.add(t))
    notices: list[str] = []
    window.notice.connect(notices.append)
    target = tmp_path / "export.jsonl"
    window.export_to(target)
    qtbot.waitUntil(lambda: bool(notices), timeout=10_000)
    assert notices[-1] == "Exported 3 memories to export.jsonl"
    assert len(target.read_text().splitlines()) == 3
    readable = tmp_path / "export.md"  # Markdown, for reading
    window.export_to(readable)
    qtbot.waitUntil(lambda: len(notices) == 2, timeout=10_000)
    assert notices[-1] == "Exported 3 memories to export.md"
    text = readable.read_text()
    assert text.startswith("# desktop-memory export") and text.count("\n## ") == 3 and "about pears" in text
    notices.clear()
    notices.append("exported")
    window.erase_everything()
    qtbot.waitUntil(lambda: len(notices) == 2, timeout=10_000)
    assert notices[-1] == "Erased 3 memories"
    assert engine(bridge, lambda s: s.stats().memories) == 0
    window.import_from(target)
    qtbot.waitUntil(lambda: len(notices) == 3, timeout=20_000)
    assert notices[-1] == "Imported 3 new memories from desktop-memory JSON Lines (export.jsonl)"
    vault = tmp_path / "Vault"
    (vault / ".obsidian").mkdir(parents=True)
    (vault / "Trip.md").write_text("---\ntitle: Trip\n---\nTrain from Oslo to Bergen\n")
    (vault / "Copy.md").write_text("---\ntitle: Copy\n---\nTrain from Oslo to Bergen\n")
    (vault / "bad.md").write_bytes(b"binary\0note")
    window.import_from(vault)  # a folder: what the "Import a folder of notes" choice gives
    qtbot.waitUntil(lambda: len(notices) == 4, timeout=20_000)
    assert notices[-1] == ("Imported 1 new memory from an Obsidian vault (the folder Vault) "
                           "(1 already there, 1 part could not be read)")
    window.import_from(tmp_path / "nope.jsonl")
    qtbot.waitUntil(lambda: window.error.isVisible(), timeout=10_000)
    assert "cannot read" in window.error.text()


def test_capture_rules_as_data_round_trip_and_apply(qtbot, window, bridge, engine, tmp_path) -> None:
    from desktop_memory.core.capture import CaptureRule, Snapshot
    from desktop_memory.qt import capture_now

    table = window.rules.table
    names = [table.item(r, 1).text() for r in range(table.rowCount())]
    assert names == ["one-time code", "password prompt", "password manager app", "private browsing window"]
    table.item(0, 0).setCheckState(Qt.CheckState.Unchecked)  # let one-time codes through
    window.rules.add_rule(CaptureRule("invoices", action="tag", content=r"\binvoice\b", tag="finance"))
    window.rules.add_rule(CaptureRule("ticket ids", action="redact", content=r"TCK-\d+"))
    window.rules.add_rule(CaptureRule("chat app", app="slack"))
    with qtbot.waitSignal(window.saved, timeout=10_000):
        window.save()
    saved = json.loads((tmp_path / "data" / FILENAME).read_text())
    assert saved["capture_disabled_defaults"] == ["one-time code"]
    assert [r["name"] for r in saved["capture_rules"]] == ["invoices", "ticket ids", "chat app"]
    cases = [(Snapshot("482913"), "Saved"), (Snapshot("the invoice for March is paid"), "Saved"),
             (Snapshot("ticket TCK-4411 is about the login page bug"), "Saved"),
             (Snapshot("lunch at noon?", app="Slack"), "Skipped: rule: chat app")]
    got = [engine(bridge, lambda s, snap=snap: capture_now.capture(s, snap)[0]) for snap, _ in cases]
    assert got == [want for _, want in cases]
    stored = {m["content"]: m["tags"] for m in engine(bridge, lambda s: list(s.export_records()))}
    assert stored["the invoice for March is paid"] == ["finance"]
    assert "ticket [REDACTED:ticket_ids] is about the login page bug" in stored
    window.load(Settings.load(tmp_path / "data"))  # the form shows them again
    assert table.rowCount() == 7 and table.item(0, 0).checkState() == Qt.CheckState.Unchecked
    window.rules.add_rule(CaptureRule("bad", content="x"))
    table.item(table.rowCount() - 1, 4).setText("([unclosed")  # the text pattern (under "Show the patterns")
    window.save()
    assert "not a valid regular expression" in window.error.text()


def test_capture_rules_are_shown_in_plain_words_with_the_patterns_on_request(qtbot, window) -> None:
    from desktop_memory.core.capture import CaptureRule

    window.tabs.setCurrentIndex(1)
    rules = window.rules
    rules.add_rule(CaptureRule("cards", action="redact", content=r"\b(?:\d[ -]?){13,16}\b"))
    rules.add_rule(CaptureRule("keepassxc", app="keepassxc"))
    rules.add_rule(CaptureRule("invoices", action="tag", content=r"\binvoice\b", tag="finance"))
    table = rules.table
    header = [table.horizontalHeaderItem(c).text() for c in range(table.columnCount()) if not table.isColumnHidden(c)]
    assert header == ["On", "Name", "Action", "What it catches", "Tag"]
    said = [table.item(r, 3).text() for r in range(table.rowCount())]
    assert said == ["Skip text that is only a one-time code", "Skip text that is only a password prompt",
                    "Skip everything copied from KeePass, 1Password, Bitwarden and 6 more",
                    "Skip everything copied in windows whose title has “private browsing” or “incognito”",
                    "Hide text that looks like a card number or an IBAN", "Skip everything copied from KeePassXC",
                    "Tag the word “invoice” as “finance”"]
    shown = " ".join(table.item(r, c).text() for r in range(table.rowCount()) for c in range(1, table.columnCount())
                     if not table.isColumnHidden(c) and table.item(r, c) is not None)
    assert not any(mark in shown for mark in ("\\", "|", "(?", "{", "[")), shown  # no regular expression in view
    assert table.item(4, 3).toolTip() == "Text: \\b(?:\\d[ -]?){13,16}\\b"
    rules.advanced.setChecked(True)  # advanced: the patterns, editable
    assert not table.isColumnHidden(4) and table.item(4, 4).text() == r"\b(?:\d[ -]?){13,16}\b"
    table.item(5, 5).setText("slack|discord")
    assert table.item(5, 3).text() == "Skip everything copied from Slack or discord"


def _placed(display: str, tmp_path) -> dict:
    """Where the settings window lands on the real X server `display` (a child process: its own QApplication)."""
    import subprocess
    import sys

    env = {k: v for k, v in os.environ.items() if k != "QT_QPA_PLATFORM"} | {"DISPLAY": display}
    done = subprocess.run([sys.executable, "-m", "tests.gui.settings_fit_probe", str(tmp_path / "data")],
                          env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.fixture
def small_screen(tmp_path):
    """A second X server of 1280x720 (a small laptop), next to the session's 1280x800 one."""
    import shutil
    import subprocess
    import time

    if not shutil.which("Xvfb") or not os.environ.get("DESKTOP_MEMORY_DESKTOP_SESSION"):
        pytest.skip("needs a real X server: bash scripts/with-desktop.sh")
    for n in range(97, 120):
        if not os.path.exists(f"/tmp/.X11-unix/X{n}") and not os.path.exists(f"/tmp/.X{n}-lock"):
            break
    server = subprocess.Popen(["Xvfb", f":{n}", "-screen", "0", "1280x720x24", "-nolisten", "tcp"],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    for _ in range(100):
        if os.path.exists(f"/tmp/.X11-unix/X{n}"):
            break
        time.sleep(0.05)
    yield f":{n}"
    server.terminate()
    server.wait(10)


@pytest.mark.parametrize("screen", ["session", "small"])
def test_settings_fit_the_screen_centred_with_save_and_close_visible(screen, request, tmp_path) -> None:
    if not os.environ.get("DESKTOP_MEMORY_DESKTOP_SESSION"):
        pytest.skip("needs a real X server: bash scripts/with-desktop.sh")
    display = request.getfixturevalue("small_screen") if screen == "small" else os.environ["DISPLAY"]
    placed = _placed(display, tmp_path)
    sx, sy, sw, sh = placed["screen"]
    x, y, w, h = placed["frame"]
    assert (sw, sh) == ((1280, 720) if screen == "small" else (1280, 800))
    assert sx <= x and sy <= y and x + w <= sx + sw and y + h <= sy + sh, placed  # fits
    assert abs((x + w / 2) - (sx + sw / 2)) <= 2 and abs((y + h / 2) - (sy + sh / 2)) <= 2, placed  # centred
    assert set(placed["buttons"]) == {"Save", "Close"}
    for bx, by, bw, bh, visible in placed["buttons"].values():
        assert visible and sx <= bx and by >= sy and bx + bw <= sx + sw and by + bh <= sy + sh, placed


def test_the_search_model_shows_the_installed_models_and_the_progress(qtbot, window, bridge) -> None:
    qtbot.waitUntil(lambda: window.embedding.count() > 0, timeout=10_000)
    names = [window.embedding.itemText(i) for i in range(window.embedding.count())]
    assert names[0] == "all-MiniLM-L6-v2" and window.embedding.currentText() == "all-MiniLM-L6-v2"
    qtbot.waitUntil(lambda: window.embedding_progress.text() == "Using all-MiniLM-L6-v2.", timeout=10_000)
    assert window.read().embedding_model == "all-MiniLM-L6-v2"


# -- hotkeys: one combination, checked as it is pressed, never saved unreadable ---------------------------------
def _press(qtbot, edit, *chords: tuple[Qt.Key, Qt.KeyboardModifier]) -> None:
    """Click into the field and press each chord, as a person does (a QKeySequenceEdit records key presses)."""
    tabs = edit.window().tabs
    tabs.setCurrentIndex(next(i for i in range(tabs.count()) if tabs.tabText(i) == "Hot&keys"))
    qtbot.mouseClick(edit, Qt.MouseButton.LeftButton)
    edit.setFocus()
    for key, mods in chords:
        qtbot.keyClick(edit, key, mods)


CTRL, ALT, SHIFT = (Qt.KeyboardModifier.ControlModifier, Qt.KeyboardModifier.AltModifier,
                    Qt.KeyboardModifier.ShiftModifier)
NONE = Qt.KeyboardModifier.NoModifier


def test_the_hotkey_field_keeps_the_last_combination_pressed_and_saves_it(qtbot, window, tmp_path) -> None:
    from desktop_memory.capture.hotkeys_x11 import parse

    _press(qtbot, window.hotkey_search, (Qt.Key.Key_A, CTRL), (Qt.Key.Key_K, CTRL | ALT))
    assert window.hotkey_search.keySequence().toString(QKeySequence.SequenceFormat.PortableText) == "Ctrl+Alt+K"
    assert not window.hotkey_checks["search"].isVisible()
    notices: list[str] = []
    window.notice.connect(notices.append)
    with qtbot.waitSignal(window.saved, timeout=10_000):
        window.save()
    saved = json.loads((tmp_path / "data" / FILENAME).read_text())
    assert saved["hotkey_search"] == "Ctrl+Alt+K" and parse(saved["hotkey_search"]) == (
        ["ControlMask", "Mod1Mask"], "k")
    assert notices == ["Settings saved"]


@pytest.mark.parametrize(("chord", "says"), [((Qt.Key.Key_K, NONE), "K alone would fire while you type"),
                                             ((Qt.Key.Key_F5, SHIFT), "Shift+F5 would fire while you type")])
def test_a_combo_that_cannot_be_a_global_hotkey_is_shown_at_once_and_never_saved(
        qtbot, window, tmp_path, chord, says) -> None:
    _press(qtbot, window.hotkey_capture, chord)
    check = window.hotkey_checks["capture"]
    assert check.isVisible() and check.text().startswith(says) and "add Ctrl, Alt or Meta" in check.text()
    window.save()
    assert window.error.isVisible() and window.error.text().startswith("The hotkey that captures the clipboard: ")
    assert not (tmp_path / "data" / FILENAME).exists()
    _press(qtbot, window.hotkey_capture, (Qt.Key.Key_J, CTRL | ALT))  # a good one: the problem goes away
    assert not check.isVisible()


def test_a_two_chord_hotkey_left_by_an_older_version_keeps_its_last_chord(qtbot, window, tmp_path) -> None:
    window.tabs.setCurrentIndex(2)
    window.load(Settings(hotkey_search="Ctrl+A, Ctrl+Alt+K"))
    assert window.hotkey_search.keySequence().toString(QKeySequence.SequenceFormat.PortableText) == "Ctrl+Alt+K"
    check = window.hotkey_checks["search"]
    assert check.isVisible() and check.text() == ("The saved hotkey “Ctrl+A, Ctrl+Alt+K” was 2 combinations; "
                                                  "Save keeps only Ctrl+Alt+K.")
    with qtbot.waitSignal(window.saved, timeout=10_000):
        window.save()
    assert json.loads((tmp_path / "data" / FILENAME).read_text())["hotkey_search"] == "Ctrl+Alt+K"


def test_a_combo_the_desktop_refuses_is_not_saved_and_the_old_one_stays(qtbot, window, tmp_path) -> None:
    tried: list[dict[str, str]] = []

    def trial(combos: dict[str, str]) -> dict[str, str]:  # the app's registration: another program holds Ctrl+Alt+K
        tried.append(dict(combos))
        return {a: f"{c} is already taken by another program" for a, c in combos.items() if c == "Ctrl+Alt+K"}

    window.hotkey_trial = trial
    notices: list[str] = []
    window.notice.connect(notices.append)
    window.budget.setValue(900)
    _press(qtbot, window.hotkey_search, (Qt.Key.Key_K, CTRL | ALT))
    with qtbot.waitSignal(window.saved, timeout=10_000):
        window.save()
    saved = json.loads((tmp_path / "data" / FILENAME).read_text())
    assert saved["hotkey_search"] == "Ctrl+Alt+M" and saved["context_budget"] == 900  # the rest is saved
    assert tried[0]["search"] == "Ctrl+Alt+K"
    line = "Ctrl+Alt+K is already taken by another program; Ctrl+Alt+M still opens the search window"
    assert notices == [f"Settings saved, but the hotkey was not changed: {line}"]
    assert window.hotkey_search.keySequence().toString(QKeySequence.SequenceFormat.PortableText) == "Ctrl+Alt+M"
    assert window.hotkey_checks["search"].isVisible() and window.hotkey_checks["search"].text() == line + "."


_KEYS = [Qt.Key.Key_A, Qt.Key.Key_K, Qt.Key.Key_M, Qt.Key.Key_5, Qt.Key.Key_F5, Qt.Key.Key_Space, Qt.Key.Key_Comma,
         Qt.Key.Key_Plus, Qt.Key.Key_Slash, Qt.Key.Key_Home]
_MODS = [NONE, CTRL, ALT, SHIFT, CTRL | ALT, CTRL | SHIFT, ALT | SHIFT, CTRL | ALT | SHIFT,
         Qt.KeyboardModifier.MetaModifier, Qt.KeyboardModifier.MetaModifier | SHIFT]


def test_whatever_is_pressed_save_stores_only_a_combo_the_hotkey_layer_reads(qtbot, window, tmp_path) -> None:
    from hypothesis import HealthCheck, given, settings
    from hypothesis import strategies as st

    from desktop_memory.qt.hotkeys import registration_parser

    parse = registration_parser()

    @settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
    @given(st.lists(st.tuples(st.sampled_from(_KEYS), st.sampled_from(_MODS)), min_size=1, max_size=4))
    def pressing(chords) -> None:  # type: ignore[no-untyped-def]
        (tmp_path / "data" / FILENAME).unlink(missing_ok=True)
        window.load(Settings())
        _press(qtbot, window.hotkey_search, *chords)
        combo = window.hotkey_search.keySequence().toString(QKeySequence.SequenceFormat.PortableText)
        assert window.hotkey_search.keySequence().count() <= 1
        window.save()
        if window.error.isVisible():
            assert not (tmp_path / "data" / FILENAME).exists()
            return
        qtbot.waitUntil(lambda: (tmp_path / "data" / FILENAME).exists(), timeout=10_000)
        stored = json.loads((tmp_path / "data" / FILENAME).read_text())["hotkey_search"]
        assert stored in (combo, "Ctrl+Alt+M") and "," not in stored.replace("+,", "")
        parse(stored)  # raises HotkeyError if the hotkey layer could not read it
        assert any(m in stored.split("+")[:-1] for m in ("Ctrl", "Alt", "Meta"))

    pressing()


def test_one_memory_is_counted_as_one_memory(qtbot, window, bridge, engine, tmp_path) -> None:
    engine(bridge, lambda s: s.add("the only note: the spare key is under the blue pot"))
    notices: list[str] = []
    window.notice.connect(notices.append)
    window.export_to(tmp_path / "one.jsonl")
    qtbot.waitUntil(lambda: bool(notices), timeout=10_000)
    assert notices[-1] == "Exported 1 memory to one.jsonl"
    window.erase_everything()
    qtbot.waitUntil(lambda: len(notices) == 2, timeout=10_000)
    assert notices[-1] == "Erased 1 memory"
