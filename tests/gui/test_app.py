"""The tray app's wiring, offscreen: tray states and menu, capture now, single instance, quitting."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from PySide6.QtCore import QByteArray, QMimeData
from PySide6.QtGui import QGuiApplication

from desktop_memory.core.models import from_iso
from desktop_memory.core.notices import FIRST_SAVED
from desktop_memory.ipc import spawn
from desktop_memory.qt import single_instance
from desktop_memory.qt.app import DesktopApp
from desktop_memory.service import MemoryService
from tests.fakes import FakeEmbedder
from tests.integration.test_engine_host import gone


@pytest.fixture
def desktop(qtbot, tmp_path: Path, monkeypatch, request, remote_opener):
    """The app over a RemoteService, as it ships, to an engine served in this process (tests/gui/conftest.py)."""
    monkeypatch.setattr("desktop_memory.qt.app.QApplication.exit", lambda *a: None)  # the test owns the loop
    if "watching" not in request.keywords:  # only the watcher's own tests let it capture by itself
        (tmp_path / "data").mkdir(parents=True, exist_ok=True)
        (tmp_path / "data" / "settings.json").write_text('{"capture_enabled": false, "welcome_shown": true}',
                                                         encoding="utf-8")
    app = DesktopApp(tmp_path / "data", opener=remote_opener)
    with qtbot.waitSignal(app.engine_ready, timeout=20_000):
        assert app.start()
    qtbot.waitUntil(lambda: app.engine_state == "ready", timeout=20_000)  # the model warmed up
    qtbot.addWidget(app.search)
    qtbot.addWidget(app.settings_window)
    yield app
    app.quit()


def _recent(desktop: DesktopApp) -> list[str]:
    """The captures Recent captures lists (not its "Show all in the search window…" entry)."""
    return [a.text() for a in desktop.tray.recent_menu.actions() if a.text().startswith(("Saved:", "Skipped:"))]


def test_tray_menu_and_states(qtbot, desktop) -> None:
    labels = [a.text().replace("&", "") for a in desktop.tray.menu.actions() if a.text() and a.isVisible()]
    assert labels[:2] == ["Search…", "Capture clipboard now"]
    for wanted in ("Pause capture", "Recent captures", "Settings…", "Open data folder", "Quit"):
        assert wanted in labels
    assert desktop.tray.state == "ready"
    desktop.pause_capture(15)
    assert desktop.tray.state == "paused" and desktop.capture_paused
    assert desktop.tray.resume_action.isVisible() and not desktop.tray.pause_menu.menuAction().isVisible()
    paused_until: list[float | None] = []  # the engine holds the pause too (the browser's captures honour it)
    desktop.bridge.submit(lambda s: s.capture_paused_until(), paused_until.append)
    qtbot.waitUntil(lambda: bool(paused_until), timeout=10_000)
    assert paused_until[0] is not None and paused_until[0] > time.time() + 14 * 60
    desktop.resume_capture()
    assert desktop.tray.state == "ready" and not desktop.capture_paused
    desktop.bridge.submit(lambda s: s.capture_paused_until(), paused_until.append)
    qtbot.waitUntil(lambda: len(paused_until) == 2, timeout=10_000)
    assert paused_until[1] is None
    gate = threading.Event()
    desktop.bridge.submit(lambda s: gate.wait(10), long=True)  # a long job (an import): "working"
    assert desktop.tray.state == "working"
    gate.set()
    qtbot.waitUntil(lambda: desktop.tray.state == "ready", timeout=10_000)


def test_capture_now_saves_and_never_shows_secrets(qtbot, desktop, engine) -> None:
    notices: list[str] = []
    desktop.tray.notify = notices.append  # what the balloon would show
    QGuiApplication.clipboard().setText("The offsite is in Lisbon on May 12th")
    desktop.capture_clipboard()
    qtbot.waitUntil(lambda: bool(notices), timeout=10_000)
    assert notices == ["Saved"]
    for secret in ("password: hunter2-Correct-Horse-Battery", "ghp_aBcdEfGhIjKlMnOpQrStUvWxYz0123456789"):
        QGuiApplication.clipboard().setText(secret)
        desktop.capture_clipboard()
        before = len(notices)
        qtbot.waitUntil(lambda: len(notices) == before + 1, timeout=10_000)  # noqa: B023 - used at once
        assert notices[-1] == "Skipped: looks like a password"
    QGuiApplication.clipboard().setText("deploy with token ghp_aBcdEfGhIjKlMnOpQrStUvWxYz0123456789 today")
    desktop.capture_clipboard()
    qtbot.waitUntil(lambda: len(notices) == 4, timeout=10_000)
    assert notices[3] == "Saved (1 secret redacted)" and "ghp_" not in " ".join(notices)
    QGuiApplication.clipboard().setText("  ")
    desktop.capture_clipboard()
    qtbot.waitUntil(lambda: len(notices) == 5, timeout=10_000)
    assert notices[4] == "Nothing saved: the clipboard holds no text"
    marked = QMimeData()  # a password manager's copy carries the OS marker
    marked.setText("correct horse battery staple, the long passphrase")
    marked.setData("x-kde-passwordManagerHint", QByteArray(b"secret"))
    QGuiApplication.clipboard().setMimeData(marked)
    desktop.capture_clipboard()
    qtbot.waitUntil(lambda: len(notices) == 6, timeout=10_000)
    assert notices[5] == "Skipped: password manager"
    ruled = engine(desktop.bridge, lambda s: s.settings)  # the engine's settings, changed there
    ruled.capture_ignore_patterns = [r"^ticket-\d+$"]
    engine(desktop.bridge, lambda s: s.save_settings(ruled))
    for text, why in (("ticket-42", "Skipped: rule: ignore text 1"), ("482913", "Skipped: rule: one-time code")):
        QGuiApplication.clipboard().setText(text)
        desktop.capture_clipboard()
        before = len(notices)
        qtbot.waitUntil(lambda: len(notices) == before + 1, timeout=10_000)  # noqa: B023 - used at once
        assert notices[-1] == why
    stored = engine(desktop.bridge, lambda s: [m["content"] for m in s.export_records()])
    assert sorted(stored) == ["The offsite is in Lisbon on May 12th",
                              "deploy with token [REDACTED:github_token] today"]
    labels = _recent(desktop)  # newest first, reasons only when skipped
    assert labels[0].startswith("Skipped: rule: one-time code") and len(labels) == 8
    assert any(t.startswith("Saved: The offsite is in Lisbon") for t in labels)
    assert sum(t.startswith("Skipped: looks like a password") for t in labels) == 2
    assert not any(s in " ".join(labels) for s in ("hunter2", "ghp_", "horse", "ticket-42", "482913"))


def test_a_second_start_shows_the_search_window(qtbot, desktop, tmp_path) -> None:
    desktop.search.hide()  # offscreen there is no tray, so the app opened the window at start
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen"}
    second = subprocess.Popen([sys.executable, "-m", "desktop_memory", "--data-dir", str(tmp_path / "data"), "app"],
                              env=env, stderr=subprocess.PIPE, text=True)
    with qtbot.waitSignal(desktop.search.search_finished, timeout=30_000):
        qtbot.waitUntil(lambda: second.poll() is not None, timeout=30_000)
    with second.stderr:
        assert second.returncode == 0 and "already running" in second.stderr.read()
    assert desktop.search.isVisible()
    assert single_instance.send_command(single_instance.server_name(tmp_path / "elsewhere"), "show") is False


def test_a_hotkey_press_still_queued_after_quit_is_ignored(qtbot, desktop) -> None:
    desktop.search.hide()
    desktop.quit()
    for action in ("search", "capture", "selection"):
        desktop.hotkeys.pressed.emit(action)  # queued presses delivered after quit: no error, nothing opens
    qtbot.wait(50)
    assert not desktop.search.isVisible()


def test_settings_saved_reach_the_search_window(qtbot, desktop) -> None:
    desktop.open_settings()
    qtbot.waitUntil(lambda: desktop.settings_window.isVisible(), timeout=10_000)
    desktop.settings_window.budget.setValue(700)
    with qtbot.waitSignal(desktop.settings_window.saved, timeout=10_000):
        desktop.settings_window.save()
    assert desktop.search.budget == 700


def test_without_a_display_the_app_says_so_in_one_line(tmp_path) -> None:
    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM")}
    for command in ([], ["app"]):
        done = subprocess.run([sys.executable, "-m", "desktop_memory", "--data-dir", str(tmp_path / "d"), *command],
                              env=env, capture_output=True, text=True, timeout=60)
        assert done.returncode == 1 and "Traceback" not in done.stderr
        assert done.stderr.startswith("desktop-memory: no display found") and done.stderr.count("\n") == 1
    toggled = subprocess.run([sys.executable, "-m", "desktop_memory", "--data-dir", str(tmp_path / "d"), "toggle"],
                             env=env, capture_output=True, text=True, timeout=60)
    assert toggled.returncode == 1 and toggled.stderr.startswith("desktop-memory: the app is not running")


def test_the_tray_works_while_the_enrichment_queue_is_not_empty(qtbot, desktop, engine) -> None:
    engine(desktop.bridge, lambda s: s.stop_enrichment())  # hold the queue still
    engine(desktop.bridge, lambda s: s.add("Quarterly planning: Joana presents the roadmap on Friday"))
    queued = engine(desktop.bridge, lambda s: s.enrichment_status().queued)
    assert queued >= 1
    desktop._queue_changed(queued)  # what the queue watch hears from a host (tests/gui/test_queue_watch.py)
    qtbot.waitUntil(lambda: desktop.tray.state == "working", timeout=10_000)
    engine(desktop.bridge, lambda s: s.enrich(10))
    desktop._queue_changed(engine(desktop.bridge, lambda s: s.enrichment_status().queued))
    qtbot.waitUntil(lambda: desktop.tray.state == "ready", timeout=10_000)


@pytest.mark.watching
def test_the_watcher_stores_copies_once_per_burst_and_skips_marked_and_own_copies(qtbot, desktop, engine) -> None:
    notices: list[str] = []
    desktop.tray.notify = notices.append
    clipboard = QGuiApplication.clipboard()
    for partial in ("The standup", "The standup moves", "The standup moves to 9:30 from Monday on"):
        clipboard.setText(partial)  # a burst: someone adjusting a selection and copying again
    qtbot.waitUntil(lambda: len(notices) == 1, timeout=10_000)
    assert notices == [FIRST_SAVED]  # the first capture is told; later ones go quietly to Recent captures
    clipboard.setText("The standup moves to 9:30 from Monday on")  # the same text again: nothing new
    marked = QMimeData()
    marked.setText("correct horse battery staple, the long passphrase")
    marked.setData("x-kde-passwordManagerHint", QByteArray(b"secret"))
    clipboard.setMimeData(marked)
    qtbot.waitUntil(lambda: len(notices) == 2, timeout=10_000)
    assert notices[1] == "Skipped: password manager"
    desktop.search.act._context_ready(  # our own copy (Enter in the search window) is not captured again
        engine(desktop.bridge, lambda s: s.context("standup", budget=200)))
    desktop.pause_capture(15)
    clipboard.setText("Copied while capture is paused: the budget review notes")
    qtbot.waitUntil(lambda: len(desktop.recent) == 3, timeout=10_000)
    assert len(notices) == 3 and notices[2].startswith("Copied context")  # no "Skipped: paused" balloon
    desktop.resume_capture()
    stored = engine(desktop.bridge, lambda s: [m["content"] for m in s.export_records()])
    assert stored == ["The standup moves to 9:30 from Monday on"]
    labels = _recent(desktop)
    assert labels[0].startswith("Skipped: paused") and labels[1].startswith("Skipped: password manager")
    assert labels[2].startswith("Saved: The standup moves") and len(labels) == 3
    assert "horse" not in " ".join(labels + notices) and "budget review" not in " ".join(labels + notices)


@pytest.fixture
def hosted(qtbot, tmp_path: Path, monkeypatch):
    """The app with its real engine host process (no opener), capture off; notices and engine states recorded."""
    monkeypatch.setattr("desktop_memory.qt.app.QApplication.exit", lambda *a: None)  # the test owns the loop
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "settings.json").write_text('{"capture_enabled": false, "welcome_shown": true}',
                                                     encoding="utf-8")
    app = DesktopApp(tmp_path / "data")
    qtbot.addWidget(app.search)
    qtbot.addWidget(app.settings_window)
    app.notices = []
    app.tray.notify = app.notices.append
    app.states = []  # the engine's states, and what the tray showed at each
    app.engine_state_changed.connect(lambda state: app.states.append((state, app.tray.state)))
    with qtbot.waitSignal(app.engine_ready, timeout=120_000):
        assert app.start()
    qtbot.waitUntil(lambda: app.engine_state == "ready", timeout=120_000)  # the model warmed up
    yield app
    app.quit()


class _Ready:
    """The tray after the engine is ready: "ready", or "working" while enrichment has a queue."""

    def __eq__(self, other: object) -> bool:
        return other in ("ready", "working")

    def __repr__(self) -> str:
        return "'ready' or 'working'"


READY = _Ready()


def copy_and_capture(app: DesktopApp, text: str) -> None:
    QGuiApplication.clipboard().setText(text)
    app.capture_clipboard()


def stored(qtbot, engine, app: DesktopApp) -> list[str]:
    return engine(app.bridge, lambda s: [m["content"] for m in s.export_records()])


def copied_between(qtbot, engine, app: DesktopApp, start: float, end: float) -> list[bool]:
    """Per stored memory: whether its created_at falls between the two wall-clock times (to export's microsecond)."""
    times = engine(app.bridge, lambda s: [from_iso(m["created_at"]) for m in s.export_records()])
    return [start - 1e-3 <= t <= end + 1e-3 for t in times]


def search_for(qtbot, app: DesktopApp, query: str) -> str:
    """Search in the search window; the content of the top result."""
    app.search.query.setText(query)
    with qtbot.waitSignal(app.search.search_finished, timeout=60_000) as blocker:
        app.search.run_search()
    assert blocker.args[0] == query and blocker.args[1] >= 1
    return app.search.model.memories[0].content


def test_the_engine_runs_in_its_own_process_and_comes_back_after_a_kill(qtbot, hosted, engine, tmp_path) -> None:
    app = hosted
    host_pid = app.host.pid
    assert host_pid is not None and host_pid != os.getpid()
    assert app.states[:3] == [("starting", "starting"), ("preparing", "preparing"), ("ready", "ready")]
    assert app.tray.state == "ready"
    copy_and_capture(app, "The offsite is in Lisbon on May 12th")
    qtbot.waitUntil(lambda: app.notices == ["Saved"], timeout=30_000)
    app.open_settings()
    qtbot.waitUntil(lambda: app.settings_window.isVisible(), timeout=10_000)
    app.settings_window.budget.setValue(700)
    with qtbot.waitSignal(app.settings_window.saved, timeout=10_000):
        app.settings_window.save()
    assert app.search.budget == 700 and '"context_budget": 700' in (tmp_path / "data" / "settings.json").read_text()
    assert app.notices == ["Saved", "Settings saved"]

    os.kill(host_pid, signal.SIGKILL)
    killed, copying = time.monotonic(), time.time()
    for n, place in enumerate(("Porto", "Braga", "Faro"), 1):  # copies while the engine is down or restarting
        copy_and_capture(app, f"Copied while the engine was down ({n}): the train to {place} leaves at 9")
    copied = time.time()
    qtbot.waitUntil(lambda: len(app.states) == 5, timeout=30_000)
    assert time.monotonic() - killed < 5.0
    assert app.states[3:] == [("restarting", "restarting"), ("ready", READY)]
    assert app.host.pid not in (None, host_pid)
    qtbot.waitUntil(lambda: len(app.notices) == 6, timeout=30_000)
    assert sorted(app.notices[2:]) == ["Saved", "Saved", "Saved", "The memory engine restarted; nothing was lost."]
    assert stored(qtbot, engine, app) == [
        "The offsite is in Lisbon on May 12th",
        "Copied while the engine was down (1): the train to Porto leaves at 9",
        "Copied while the engine was down (2): the train to Braga leaves at 9",
        "Copied while the engine was down (3): the train to Faro leaves at 9"]  # in the order they were copied
    assert copied_between(qtbot, engine, app, copying, copied) == [False, True, True, True]  # not when it came back
    assert search_for(qtbot, app, "Lisbon offsite") == "The offsite is in Lisbon on May 12th"
    assert app.tray.state in ("ready", "working")  # working: enrichment of the new memories
    assert len(app.notices) == 6  # one notice for the incident, none for each job


def test_the_model_worker_dying_leaves_the_app_its_engine_and_the_tray_says_so(qtbot, hosted, engine) -> None:
    """Issue 28: llama.cpp dies of SIGILL in background enrichment, three times; the host keeps its PID, every
    copy is saved and found, the tray says it in one line (one notice), and Retry brings the model back."""
    from tests.integration.test_model_worker_real import NOTES, kill_workers

    app = hosted
    host_pid = app.host.pid
    stop, killed = threading.Event(), []
    killer = threading.Thread(target=kill_workers, args=(host_pid, signal.SIGILL, 3, stop, killed), daemon=True)
    killer.start()
    try:
        for text in NOTES[:6]:
            copy_and_capture(app, text)
        qtbot.waitUntil(lambda: app.tray.model_line.isVisible(), timeout=300_000)
    finally:
        stop.set()
        killer.join()
    assert len(killed) == 3 and app.host.pid == host_pid and app.engine_state == "ready"
    assert app.tray.model_line.text() == "The local model stopped: this computer's CPU cannot run this build of it"
    assert app.tray.model_retry_action.isVisible()
    told = [n for n in app.notices if "local model" in n]
    assert told == [app.tray.model_line.text() + "; memories are enriched without it"]  # once, the whole line
    assert stored(qtbot, engine, app) == NOTES[:6]
    assert search_for(qtbot, app, "Lisbon flight Saturday") == NOTES[2]
    app.tray.model_retry_action.trigger()  # the person's Retry: the model runs again
    qtbot.waitUntil(lambda: not app.tray.model_line.isVisible(), timeout=60_000)
    model = engine(app.bridge, lambda s: s.enrichment_status().model)
    assert model.usable is True and model.error is None


def test_a_hung_engine_is_killed_and_restarted(qtbot, hosted, engine) -> None:
    app = hosted
    app.queue_watch.stop()  # the search below is the call that finds the hang
    copy_and_capture(app, "The offsite is in Lisbon on May 12th")
    qtbot.waitUntil(lambda: app.notices == ["Saved"], timeout=30_000)
    host_pid = app.host.pid
    os.kill(host_pid, signal.SIGSTOP)
    try:
        started = time.monotonic()
        app.search.query.setText("Lisbon")
        app.search.run_search()
        qtbot.waitUntil(lambda: [s for s, _t in app.states[-2:]] == ["restarting", "ready"], timeout=60_000)
        assert time.monotonic() - started < 30
        assert gone(host_pid, 10)  # the stopped process was killed, not left behind
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.kill(host_pid, signal.SIGCONT)
    qtbot.waitUntil(lambda: len(app.notices) == 2, timeout=30_000)
    assert app.notices[1].startswith("The memory engine restarted")
    text = app.search.empty.text()
    assert "did not answer in time" in text and "Timeout" not in text and "exit code" not in text
    assert search_for(qtbot, app, "Lisbon offsite") == "The offsite is in Lisbon on May 12th"
    assert len(app.notices) == 2 and app.states[-2:] == [("restarting", "restarting"), ("ready", READY)]


def test_an_engine_that_cannot_restart_is_reported_once_and_retried_on_request(
        qtbot, hosted, engine, monkeypatch) -> None:
    app = hosted
    monkeypatch.setattr("desktop_memory.ipc.supervisor.RESTART_DELAYS", (0.0, 0.05, 0.05, 0.05, 0.05))
    broken = [sys.executable, "-c", "print('error: the data folder is damaged', flush=True); raise SystemExit(1)"]
    real_command = spawn.command
    monkeypatch.setattr(spawn, "command", lambda *a, **k: broken)
    os.kill(app.host.pid, signal.SIGKILL)
    qtbot.waitUntil(lambda: app.tray.state == "stopped", timeout=30_000)
    assert app.states[3:] == [("restarting", "restarting"), ("stopped", "stopped")]
    assert app.notices == ["The memory engine could not start: the data folder is damaged. "
                           "Click here or use Retry in the tray menu."]
    assert "stopped" in app.tray.icon.toolTip() and app.tray.retry_action.isVisible()
    app.search.query.setText("Lisbon")
    app.search.run_search()
    qtbot.waitUntil(lambda: "The memory engine is stopped" in app.search.empty.text(), timeout=10_000)
    copying = time.time()
    copy_and_capture(app, "Copied while the engine was stopped: the dentist is on Thursday at 4")
    copied = time.time()
    qtbot.wait(500)
    assert len(app.notices) == 1  # the search and the capture waiting for the engine add no balloons

    monkeypatch.setattr(spawn, "command", real_command)
    app.tray.retry_action.trigger()
    qtbot.waitUntil(lambda: app.engine_state == "ready", timeout=60_000)
    assert app.states[-2:] == [("restarting", "restarting"), ("ready", READY)]
    assert not app.tray.retry_action.isVisible()
    qtbot.waitUntil(lambda: len(app.notices) == 3, timeout=30_000)
    assert sorted(app.notices[1:]) == ["Saved", "The memory engine restarted; nothing was lost."]
    assert stored(qtbot, engine, app) == ["Copied while the engine was stopped: the dentist is on Thursday at 4"]
    assert copied_between(qtbot, engine, app, copying, copied) == [True]  # dated when copied, not at the Retry


def test_an_add_run_again_after_the_host_died_never_makes_a_second_memory(qtbot, hosted, engine) -> None:
    app = hosted
    host_pid = app.host.pid
    text = "The dentist moved the appointment to Thursday at 4"
    statuses: list[str] = []

    def add_then_die(s) -> list[str]:
        statuses.append(s.add(text).status)  # committed by the host...
        if len(statuses) == 1:
            os.kill(host_pid, signal.SIGKILL)  # ...which dies before this job has its answer
            s.stats()
        return statuses

    assert engine(app.bridge, add_then_die) == ["added", "duplicate"]  # run again on the new host
    assert app.host.pid != host_pid
    assert stored(qtbot, engine, app) == [text]
    qtbot.waitUntil(lambda: app.notices == ["The memory engine restarted; nothing was lost."], timeout=10_000)


def test_an_import_chunk_cut_by_a_kill_fails_with_a_message_instead_of_being_skipped(qtbot, hosted, engine) -> None:
    from desktop_memory.qt.importing import ChunkedImport

    app = hosted
    host_pid = app.host.pid

    def lines():
        for n in range(600):
            if n == 300:  # reading the second chunk: the host dies before that chunk is sent
                os.kill(host_pid, signal.SIGKILL)
            yield json.dumps({"content": f"Imported note {n}: the quarterly review of project {n} is on file"})

    outcome: list[str] = []
    ChunkedImport(app.bridge, lines, done=lambda r: outcome.append(f"done {r.added}"),
                  failed=outcome.append).start()
    qtbot.waitUntil(lambda: bool(outcome), timeout=60_000)
    assert outcome == ["The memory engine stopped while doing this and was restarted. Try again."]
    qtbot.waitUntil(lambda: len(app.notices) == 1, timeout=30_000)
    assert app.notices[0].startswith("The memory engine restarted; what it was doing when it stopped did not finish")
    count = engine(app.bridge, lambda s: s.stats().memories)
    assert count <= 256  # the first chunk only: the cut one was not skipped over silently by a re-run


def started_with_notices(qtbot, folder: Path) -> tuple[DesktopApp, list[str]]:
    """The app on an in-process engine, its notices collected instead of shown."""
    notices: list[str] = []
    app = DesktopApp(folder, opener=lambda f: MemoryService(f, embedder=FakeEmbedder()))
    app.tray.notify = notices.append  # type: ignore[method-assign]
    with qtbot.waitSignal(app.engine_ready, timeout=20_000):
        assert app.start()
    qtbot.addWidget(app.search)
    qtbot.addWidget(app.settings_window)
    return app, notices


def test_a_damaged_settings_file_is_told_once_and_keeps_capture_off(qtbot, tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr("desktop_memory.qt.app.QApplication.exit", lambda *a: None)
    folder = tmp_path / "data"
    folder.mkdir()
    (folder / "settings.json").write_text('{"capture_enabled": false,}', encoding="utf-8")  # a trailing comma
    app, notices = started_with_notices(qtbot, folder)
    try:
        assert len(notices) == 1 and "settings.json" in notices[0] and "capture is off" in notices[0]
        assert not app.watcher.running
        app.bridge.submit(lambda s: s.settings, app._settings_loaded)  # settings read again: not told twice
        qtbot.wait(300)
        assert len(notices) == 1
    finally:
        app.quit()


def test_a_vector_index_rebuilt_at_start_is_told_once(qtbot, tmp_path: Path, monkeypatch) -> None:
    import shutil

    monkeypatch.setattr("desktop_memory.qt.app.QApplication.exit", lambda *a: None)
    folder = tmp_path / "data"
    with MemoryService(folder, embedder=FakeEmbedder()) as service:
        for i in range(40):
            service.add(f"Invoice INV-{3100 + i} for Fabrikam: {i + 2} units of part QX-{i * 7}, due {i % 28 + 1} May")
    shutil.rmtree(folder / "vectors")  # lost (a crash, a sync tool): the database still has every vector
    (folder / "settings.json").write_text('{"capture_enabled": false, "welcome_shown": true}', encoding="utf-8")
    app, notices = started_with_notices(qtbot, folder)
    try:
        qtbot.waitUntil(lambda: any("vector index" in n for n in notices), timeout=20_000)
        assert sum("vector index" in n for n in notices) == 1
        assert all("Error" not in n and "Traceback" not in n for n in notices)
    finally:
        app.quit()


def test_the_tray_menu_shows_the_hotkeys_that_work_and_follows_saved_ones(qtbot, desktop, engine, monkeypatch) -> None:
    def shortcuts() -> dict[str, str]:
        return {a.text().replace("&", ""): a.shortcut().toString() for a in desktop.tray.menu.actions()
                if a.isVisible() and a.text()}

    class Grabs:  # an X11 session's hotkeys; another program holds the selection combo
        active = True
        held: dict[str, str] = {"selection": "Ctrl+Alt+Shift+C is taken by another program"}

        def bind(self, combos):  # type: ignore[no-untyped-def]
            return {k: v for k, v in self.held.items() if k in combos}

        def close(self) -> None:
            pass

    if not desktop.hotkeys.active:  # offscreen Qt: no grabs, so no combo is shown
        assert not any(shortcuts().values())
    monkeypatch.setattr(desktop, "hotkeys", Grabs())
    desktop._settings_loaded(engine(desktop.bridge, lambda s: s.settings))
    shown = shortcuts()
    assert shown["Search…"] == "Ctrl+Alt+M" and shown["Capture clipboard now"] == "Ctrl+Alt+C"
    assert shown["Capture selected text"] == ""  # held elsewhere: not promised in the menu
    Grabs.held = {}
    desktop.open_settings()
    qtbot.waitUntil(lambda: desktop.settings_window.isVisible(), timeout=10_000)
    from PySide6.QtGui import QKeySequence

    desktop.settings_window.hotkey_search.setKeySequence(QKeySequence("Ctrl+Shift+Space"))
    with qtbot.waitSignal(desktop.settings_window.saved, timeout=10_000):
        desktop.settings_window.save()
    assert shortcuts()["Search…"] == "Ctrl+Shift+Space" and shortcuts()["Capture selected text"] == "Ctrl+Alt+Shift+C"
    selected: list[bool] = []
    desktop.tray.selection_requested.connect(lambda: selected.append(True))
    next(a for a in desktop.tray.menu.actions() if a.text().replace("&", "") == "Capture selected text").trigger()
    assert selected == [True]


@pytest.mark.watching
def test_captures_are_quiet_unless_they_need_attention_and_recent_times_stay_true(
        qtbot, desktop, engine, monkeypatch) -> None:
    from desktop_memory.qt import display

    notices: list[str] = []
    desktop.tray.notify = notices.append
    clipboard = QGuiApplication.clipboard()
    copies = ["Decision: the beta ships on March 3rd; Priya owns the release notes.",
              "Lunch order for Friday: two vegetarian, one vegan, one with extra chili",
              "https://example.org/docs/v2/install - install guide for version 2.4.1"]
    for n, text in enumerate(copies, 1):
        clipboard.setText(text)
        qtbot.waitUntil(lambda n=n: len(desktop.recent) == n, timeout=10_000)
    assert notices == [FIRST_SAVED]  # the first only: the rest went to Recent captures and the tooltip
    assert "Last copy saved at" in desktop.tray.icon.toolTip()
    clipboard.clear()  # a password manager clearing the clipboard after 30 s: not a copy
    qtbot.wait(800)
    assert len(desktop.recent) == 3 and not any("not text" in a.text() for a in desktop.tray.recent_menu.actions())
    clipboard.setText("password: hunter2-Correct-Horse-Battery")  # a secret kept out: told
    qtbot.waitUntil(lambda: len(notices) == 2, timeout=10_000)
    assert notices[1] == "Skipped: looks like a password"
    desktop.pause_capture(15)
    clipboard.setText("Copied while paused: the quarterly numbers draft")
    qtbot.waitUntil(lambda: len(desktop.recent) == 5, timeout=10_000)
    assert len(notices) == 2  # no balloon per copy while paused
    desktop.resume_capture()

    assert "just now" in desktop.tray.recent_menu.actions()[0].text()
    later = display.relative_time
    monkeypatch.setattr(display, "relative_time", lambda ts, now=None: later(ts, time.time() + 600))
    desktop.tray.recent_menu.aboutToShow.emit()  # the menu opens ten minutes later
    labels = _recent(desktop)
    assert all("10 min ago" in t for t in labels) and not any("just now" in t for t in labels)

    desktop.notify_every = True  # the setting "notify on every capture"
    clipboard.setText("Standup moved to 9:30 from Monday on, same room")
    qtbot.waitUntil(lambda: len(notices) == 3, timeout=10_000)
    assert notices[2] == "Saved"


class SlowFirstEmbedder(FakeEmbedder):
    """Loading the model takes a while on the first start: the first encode waits for the test's gate."""

    def __init__(self, gate: threading.Event) -> None:
        self.gate = gate

    def encode(self, texts, batch_size: int = 64):  # type: ignore[no-untyped-def]
        assert self.gate.wait(30)
        return super().encode(texts, batch_size)


def test_the_first_start_welcomes_once_and_the_tray_is_truthful_while_the_model_prepares(
        qtbot, tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr("desktop_memory.qt.app.QApplication.exit", lambda *a: None)
    folder = tmp_path / "data"
    gate = threading.Event()
    app = DesktopApp(folder, opener=lambda f: MemoryService(f, embedder=SlowFirstEmbedder(gate)))
    qtbot.addWidget(app.search)
    try:
        with qtbot.waitSignal(app.engine_ready, timeout=20_000):
            assert app.start()
        assert app._settings_window is None  # built when first opened: the idle app stays smaller
        qtbot.wait(300)
        assert app.engine_state == "preparing" and app.tray.state == "preparing"  # not "ready" meanwhile
        assert "ready" not in app.tray.icon.toolTip() and "preparing" in app.tray.icon.toolTip()
        qtbot.waitUntil(lambda: app.welcome is not None and app.welcome.isVisible(), timeout=10_000)
        text = app.welcome.text.text()
        for fact in ("Ctrl+Alt+M", "Ctrl+Alt+C", "password manager", "private browsing", str(folder),
                     "nothing is sent"):
            assert fact in text, fact
        gate.set()
        qtbot.waitUntil(lambda: app.tray.state == "ready", timeout=20_000)
        assert app.tray.icon.toolTip().startswith("desktop-memory: ready")
        app.search.hide()
        app.welcome.open_search.click()
        assert app.search.isVisible() and not app.welcome.isVisible()
        qtbot.waitUntil(lambda: '"welcome_shown": true' in (folder / "settings.json").read_text(), timeout=10_000)
    finally:
        app.quit()
    again = DesktopApp(folder, opener=lambda f: MemoryService(f, embedder=FakeEmbedder()))
    qtbot.addWidget(again.search)
    qtbot.addWidget(again.settings_window)
    try:
        with qtbot.waitSignal(again.engine_ready, timeout=20_000):
            assert again.start()
        qtbot.wait(300)
        assert again.welcome is None  # once only
    finally:
        again.quit()
