"""The tray learns the enrichment queue's changes pushed by the engine, over the socket, without polling
(issue 17); and a copy crosses the socket once, decided by the engine."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtGui import QGuiApplication

from desktop_memory.engine import enrichment
from desktop_memory.engine.enrichment import Enricher
from desktop_memory.qt.app import DesktopApp
from tests.unit.test_enrichment import FakeModel, fake_gguf


class GatedModel(FakeModel):
    """A fake model that holds each job until the test opens the gate."""

    gate = threading.Event()

    def json_completion(self, *args: Any, **kwargs: Any) -> dict[str, Any]:
        assert self.gate.wait(30)
        return super().json_completion(*args, **kwargs)


@pytest.fixture
def desktop(qtbot, tmp_path: Path, monkeypatch, remote_opener, socket_engines):
    """The app over a RemoteService to an engine served in this process, with a gated fake model."""
    monkeypatch.setattr("desktop_memory.qt.app.QApplication.exit", lambda *a: None)
    monkeypatch.setattr(enrichment, "POLL_S", 60.0)  # the enricher moves only when woken or working
    GatedModel.gate = threading.Event()
    folder = tmp_path / "data"
    folder.mkdir()
    (folder / "settings.json").write_text('{"capture_enabled": false}', encoding="utf-8")
    remote_opener(folder).close()  # the engine is served before the app starts: give it the fake model first
    served = socket_engines[folder]
    gguf = str(fake_gguf(tmp_path / "fake.gguf"))

    def prepare(s: Any) -> None:
        s.settings.llm_model_path = gguf
        s.enrichment.use(Enricher(s.store.path, s.settings, foreground=s.foreground,
                                  model_factory=lambda info, _s: GatedModel(info)))

    served.run(prepare)
    asked: list[str] = []
    real_status = served.service.enrichment_status
    monkeypatch.setattr(served.service, "enrichment_status", lambda: asked.append("status") or real_status())
    app = DesktopApp(folder, opener=remote_opener)
    with qtbot.waitSignal(app.engine_ready, timeout=20_000):
        assert app.start()
    qtbot.addWidget(app.search)
    qtbot.addWidget(app.settings_window)
    app.status_calls = asked
    yield app
    GatedModel.gate.set()
    app.quit()


def test_queue_changes_reach_the_tray_pushed_not_polled(qtbot, desktop, engine) -> None:
    qtbot.waitUntil(lambda: desktop.queue_watch.calls >= 1, timeout=10_000)  # watching
    engine(desktop.bridge, lambda s: s.add("Quarterly planning: Joana presents the roadmap on Friday"))
    qtbot.waitUntil(lambda: desktop.enrich_pending == 1 and desktop.tray.state == "working", timeout=10_000)
    GatedModel.gate.set()
    qtbot.waitUntil(lambda: desktop.enrich_pending == 0 and desktop.tray.state == "ready", timeout=10_000)
    assert desktop.status_calls == []  # the tray never asks for the status (each ask opened the GGUF)
    assert desktop.queue_watch.calls <= 6  # one long poll per change (and the first), not one every 3 s


def test_a_copy_is_sent_once_and_decided_by_the_engine(qtbot, desktop, monkeypatch) -> None:
    from desktop_memory.ipc.client import RemoteService

    sent: list[str] = []
    real = RemoteService._call

    def counting(self: RemoteService, method: str, /, **params: Any) -> Any:
        sent.append(method)
        return real(self, method, **params)

    monkeypatch.setattr(RemoteService, "_call", counting)
    for n, text in enumerate(("The offsite is in Lisbon on May 12th", "ghp_aBcdEfGhIjKlMnOpQrStUvWxYz0123456789"), 1):
        QGuiApplication.clipboard().setText(text)
        desktop.capture_clipboard()
        qtbot.waitUntil(lambda n=n: len(desktop.recent) == n, timeout=10_000)
    newest, oldest = list(desktop.recent)
    assert oldest.stored and oldest.title.startswith("The offsite is in Lisbon")
    assert not newest.stored and newest.reason == "looks like a password" and not newest.title
    assert "capture" in sent, sent  # the lane runs jobs in order: what the app asked before comes first
    after = sent[sent.index("capture"):]
    background = ("enrichment_changes", "sync_status")  # the tray's own reads (enrichment, the sync line)
    assert [m for m in after if m not in background] == ["capture", "capture"]  # no settings read, no add
