"""Capture in the engine (issue 17): a snapshot sent once through the real engine socket is saved or skipped
there, with the reason; the settings stay in the engine (the client never reads them for a copy)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from desktop_memory.core.capture import OWN_MIME, CaptureResult, Snapshot
from desktop_memory.ipc.client import RemoteService, connect
from desktop_memory.ipc.server import IpcServer

pytestmark = pytest.mark.integration


@pytest.fixture
def remote(real_service, data_dir: Path):
    with IpcServer(real_service, data_dir):
        service = connect(data_dir)
        assert service is not None
        with service:
            yield service


def calls_made(remote: RemoteService, monkeypatch) -> list[str]:
    """The methods the client sends over the socket, in order."""
    sent: list[str] = []
    real = remote._call

    def counting(method: str, **params):
        sent.append(method)
        return real(method, **params)

    monkeypatch.setattr(remote, "_call", counting)
    return sent


def test_a_snapshot_crosses_the_socket_once_and_the_engine_decides(remote, real_service, monkeypatch):
    real_service.settings.capture_ignore_patterns = [r"^ticket-\d+$"]
    real_service.settings.capture_rules = [{"name": "work chat", "action": "tag", "app": "slack", "tag": "work"}]
    sent = calls_made(remote, monkeypatch)
    cases = [
        (Snapshot("The offsite is in Lisbon on May 12th", app="Slack", window="#general"), "Saved"),
        (Snapshot("ticket-42"), "Skipped: rule: ignore text 1"),
        (Snapshot("482913", source="hotkey"), "Skipped: rule: one-time code"),
        (Snapshot("ghp_aBcdEfGhIjKlMnOpQrStUvWxYz0123456789"), "Skipped: looks like a password"),
        (Snapshot("password: hunter2-Correct-Horse-Battery"), "Skipped: looks like a password"),
        (Snapshot("deploy with token ghp_aBcdEfGhIjKlMnOpQrStUvWxYz0123456789 today"),
         "Saved (1 secret redacted)"),
        (Snapshot("correct horse battery staple", {"x-kde-passwordManagerHint": b"secret"}),
         "Skipped: password manager"),
        (Snapshot("copied from the search window", {OWN_MIME: b"1"}), "Skipped: our own copy"),
        (Snapshot("The offsite agenda is on the wiki", automatic=True, paused=True), "Skipped: paused"),
        (Snapshot("  \n"), "Nothing saved: the clipboard holds no text"),
        (Snapshot(None, kind="image"), "Skipped: not text (image): only text is captured for now"),
    ]
    results = [remote.capture(snap) for snap, _ in cases]
    assert [r.message for r in results] == [want for _, want in cases]
    assert sent == ["capture"] * len(cases)  # one call per copy: no settings read, no second add
    assert all(isinstance(r, CaptureResult) for r in results)
    assert all("hunter2" not in r.reason and "ghp_" not in r.message for r in results)
    saved = real_service.get(results[0].memory_id)
    assert saved.source == "clipboard" and saved.source_app == "Slack" and saved.tags == ["work"]
    assert saved.metadata == {"window": "#general"} and results[0].title
    stored = sorted(m["content"] for m in real_service.export_records())
    assert stored == ["The offsite is in Lisbon on May 12th", "deploy with token [REDACTED:github_token] today"]


def test_capture_off_stops_the_watcher_not_an_explicit_capture_and_damaged_settings_stop_both(remote, real_service):
    real_service.settings.capture_enabled = False
    assert remote.capture(Snapshot("Standup moved to 9:30 tomorrow", automatic=True)).reason == "capture is off"
    explicit = remote.capture(Snapshot("Standup moved to 9:30 tomorrow", source="hotkey"))
    assert explicit.stored and real_service.get(explicit.memory_id).source == "hotkey"
    real_service.settings.problem = "settings.json is damaged (capture_rules.0: x)"
    blocked = remote.capture(Snapshot("Retro notes: keep the demo short"))
    assert not blocked.stored and blocked.reason.startswith("settings.json is damaged")
    real_service.settings.problem = None
    real_service.settings.capture_rules = [{"name": "broken", "content": "(unclosed"}]
    broken = remote.capture(Snapshot("Retro notes: keep the demo short"))
    assert not broken.stored and broken.reason.startswith("a capture rule is broken")


def test_a_repeated_copy_is_already_remembered_and_a_longer_one_extends_it(remote, real_service):
    first = remote.capture(Snapshot("Packing list: passport", automatic=True))
    again = remote.capture(Snapshot("Packing list: passport", automatic=True))
    grown = remote.capture(Snapshot("Packing list: passport, charger, rain jacket", automatic=True))
    assert (first.status, again.status, grown.status) == ("added", "duplicate", "extended")
    assert again.message == "Already remembered" and grown.memory_id == first.memory_id
    assert real_service.stats().memories == 1


def test_a_copy_over_the_size_limit_is_skipped_with_a_reason_not_an_error(remote, real_service):
    result = remote.capture(Snapshot("word " * 60_000))
    assert not result.stored and result.reason == "too long"


@pytest.mark.parametrize("bad", [{"text": 5}, {"text": "x", "source": "import"}, "not a snapshot"])
def test_wrong_snapshot_data_over_the_socket_is_a_one_line_error(remote, bad):
    from desktop_memory.core.errors import InvalidInput

    with pytest.raises(InvalidInput) as info:
        remote._call("capture", snapshot=bad)
    assert "\n" not in str(info.value)


def test_the_cli_captures_through_the_same_rules_locally_and_through_the_app(tmp_path: Path, real_service,
                                                                           data_dir: Path):
    from tests.integration.test_cli import run

    local = tmp_path / "local"
    saved = run(local, "capture", "--app", "Terminal", stdin="Standup moved to 9:30 tomorrow\n")
    assert saved.stdout.decode().startswith("Saved ") and saved.returncode == 0
    skipped = run(local, "capture", "ghp_aBcdEfGhIjKlMnOpQrStUvWxYz0123456789")
    assert skipped.stdout.decode().strip() == "Skipped: looks like a password" and skipped.returncode == 0
    shown = run(local, "export")
    records = [json.loads(line) for line in shown.stdout.decode().splitlines()]
    assert [(r["content"], r["source"], r["source_app"]) for r in records] == [
        ("Standup moved to 9:30 tomorrow", "cli", "Terminal")]
    real_service.settings.capture_ignore_patterns = [r"^ticket-\d+$"]
    with IpcServer(real_service, data_dir):  # the app's engine: the CLI goes through its socket and its rules
        ruled = run(data_dir, "capture", "--json", "ticket-42")
        assert json.loads(ruled.stdout) == {
            "stored": False, "reason": "rule: ignore text 1", "message": "Skipped: rule: ignore text 1",
            "status": "skipped", "memory_id": "", "title": "", "redactions": 0}
    assert real_service.stats().memories == 0
