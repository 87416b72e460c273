"""settings.json fails closed: a damaged file is reported, copied aside, and nothing is captured meanwhile."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given
from hypothesis import settings as hsettings
from hypothesis import strategies as st

from desktop_memory.core.capture import Snapshot, decide
from desktop_memory.engine.settings import FILENAME, Settings
from desktop_memory.ipc import codec

TEXT = "The quarterly report goes to Maya on Friday"
BROKEN = [
    '{"capture_enabled": false,}',  # a trailing comma
    '{"capture_enabled": false',  # cut off
    '{"capture_enabled": "no"}',
    '{"capture_enabled": 0}',
    '{"max_bytes": "big", "capture_enabled": false}',
    '{"max_bytes": true}',
    '{"max_bytes": -5}',
    '{"near_duplicate_cosine": 3.5}',
    '{"capture_ignore_apps": "keepassxc"}',
    '{"capture_ignore_apps": ["keepassxc", 7]}',
    '{"capture_ignore_patterns": ["([unclosed"]}',
    '{"capture_rules": [{"name": "bank", "content": "(IBAN"}]}',
    '{"capture_rules": [{"action": "ignore", "app": "slack"}]}',  # no name
    '{"capture_rules": ["slack"]}',
    '{"capture_enabeld": false}',  # a misspelt key would silently leave capture on
    '{"problem": "none"}',
    "[]",
    '"capture_enabled: false"',
    "",
    b"\xff\xfe{\x00}\x00",  # UTF-16
]


def write(folder: Path, text: str | bytes) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / FILENAME
    path.write_bytes(text if isinstance(text, bytes) else text.encode("utf-8"))
    return path


@pytest.mark.parametrize("text", BROKEN)
def test_a_damaged_file_fails_closed_is_named_and_copied_aside(tmp_path, text) -> None:
    path = write(tmp_path, text)
    s = Settings.load(tmp_path)
    assert s.problem and FILENAME in s.problem and "\n" not in s.problem
    assert s.capture_enabled is False
    copies = list(tmp_path.glob(FILENAME + ".damaged-*"))
    raw = text if isinstance(text, bytes) else text.encode("utf-8")
    assert len(copies) == 1 and copies[0].read_bytes() == path.read_bytes() == raw
    assert os.name != "posix" or stat.S_IMODE(copies[0].stat().st_mode) == 0o600  # Windows: the folder's ACL
    assert copies[0].name in s.problem
    again = Settings.load(tmp_path)  # a restart: still closed, and no second copy of the same file
    assert again.problem == s.problem and not again.capture_enabled
    assert list(tmp_path.glob(FILENAME + ".damaged-*")) == copies


def test_valid_values_of_a_damaged_file_are_kept(tmp_path) -> None:
    write(tmp_path, json.dumps({
        "max_bytes": 5000, "capture_enabled": True, "context_budget": "lots",
        "capture_ignore_apps": ["keepassxc", 7, "signal"],
        "capture_rules": [{"name": "bank", "content": "(IBAN"}, {"name": "work chat", "app": "slack"}],
        "capture_ignore_patterns": ["^\\d{6}$", "([bad"]}))
    s = Settings.load(tmp_path)
    assert s.max_bytes == 5000 and s.context_budget == Settings().context_budget
    assert s.capture_ignore_apps == ["keepassxc", "signal"] and s.capture_ignore_patterns == ["^\\d{6}$"]
    assert [r["name"] for r in s.capture_rules] == ["work chat"]
    assert not s.capture_enabled  # asked for on, but the file is damaged
    for word in ("context_budget", "capture_ignore_apps.1", "bank", "([bad"):
        assert word in s.problem


def test_good_files_load_as_before(tmp_path) -> None:
    assert Settings.load(tmp_path).problem is None  # no file: the defaults
    write(tmp_path, json.dumps({"capture_enabled": False, "near_duplicate_cosine": 1, "max_bytes": 2048}))
    s = Settings.load(tmp_path)
    assert s.problem is None and not s.capture_enabled and s.near_duplicate_cosine == 1.0 and s.max_bytes == 2048
    write(tmp_path, '\ufeff{"context_budget": 900}')  # a byte-order mark, as some Windows editors write
    assert Settings.load(tmp_path) == Settings(context_budget=900)
    Settings(context_budget=900).save(tmp_path)
    assert Settings.load(tmp_path) == Settings(context_budget=900)
    assert not list(tmp_path.glob(FILENAME + ".damaged-*"))


def test_saving_writes_a_valid_file_and_clears_the_problem(tmp_path) -> None:
    write(tmp_path, '{"capture_enabled": false,}')
    s = Settings.load(tmp_path)
    assert s.problem
    s.capture_enabled = True
    s.save(tmp_path)
    assert s.problem is None
    on_disk = json.loads((tmp_path / FILENAME).read_text())
    assert "problem" not in on_disk and on_disk["capture_enabled"] is True
    assert Settings.load(tmp_path).problem is None
    assert os.name != "posix" or stat.S_IMODE((tmp_path / FILENAME).stat().st_mode) == 0o600


@pytest.mark.skipif(os.name != "posix" or os.geteuid() == 0, reason="root reads any file")
def test_an_unreadable_file_fails_closed(tmp_path) -> None:
    path = write(tmp_path, '{"capture_enabled": false}')
    path.chmod(0)
    s = Settings.load(tmp_path)
    assert s.problem and "cannot be read" in s.problem and not s.capture_enabled


def test_a_folder_in_place_of_the_file_fails_closed(tmp_path) -> None:
    (tmp_path / FILENAME).mkdir()
    s = Settings.load(tmp_path)
    assert s.problem and "cannot be read" in s.problem and not s.capture_enabled


@hsettings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(value=st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False), st.text(max_size=8),
                       st.lists(st.integers(), max_size=2)),
       key=st.sampled_from(["max_bytes", "capture_enabled", "capture_ignore_apps", "near_duplicate_window",
                            "context_format", "capture_rules"]))
def test_a_value_of_the_wrong_type_never_passes_silently(tmp_path, key, value) -> None:
    default = getattr(Settings(), key)
    least = {"max_bytes": 1, "near_duplicate_window": 0}.get(key)
    same_kind = (type(value) is type(default) and not (isinstance(value, list) and value)
                 and (least is None or value >= least))
    write(tmp_path, json.dumps({key: value, "capture_enabled": False} if key != "capture_enabled" else {key: value}))
    s = Settings.load(tmp_path, keep_copy=False)
    if same_kind:
        assert s.problem is None and getattr(s, key) == value
    else:
        assert s.problem and key in s.problem and not s.capture_enabled


def test_the_problem_travels_over_the_engine_socket_and_is_never_saved(tmp_path) -> None:
    write(tmp_path, '{"capture_enabled": false,}')
    s = Settings.load(tmp_path)
    wire = json.loads(codec.dumps(codec.to_json(s, Settings)))
    back = codec.from_json(wire, Settings)
    assert back.problem == s.problem and not back.capture_enabled
    assert "problem" not in s.to_file()


def test_decide_blocked_stops_explicit_and_automatic_captures() -> None:
    assert decide(Snapshot(TEXT)).store
    for gate in ({}, {"enabled": True}, {"paused": False}):
        d = decide(Snapshot(TEXT), blocked="settings.json is damaged", **gate)
        assert not d.store and d.reason == "settings.json is damaged" and not d.text


def _capture_now():
    pytest.importorskip("PySide6")
    from desktop_memory.qt import capture_now

    return capture_now


def test_capture_now_stores_nothing_while_settings_are_damaged(data_dir, fake_service) -> None:
    capture_now = _capture_now()
    write(data_dir, '{"capture_enabled": false,}')  # the person turned capture off; the comma broke it
    fake_service.settings = Settings.load(data_dir)
    for automatic in (True, False):  # the watcher, and "Capture clipboard now" / a hotkey
        message, event = capture_now.capture(fake_service, Snapshot(TEXT), automatic=automatic)
        assert message.startswith("Skipped:") and "settings.json" in message and not event.stored
        assert TEXT not in message and TEXT not in event.reason
    assert fake_service.store.count() == 0
    assert "settings.json" in capture_now.settings_notice(fake_service.settings)
    fake_service.save_settings(Settings(capture_enabled=True))  # saving Settings mends it
    assert capture_now.settings_notice(fake_service.settings) is None
    assert capture_now.capture(fake_service, Snapshot(TEXT), automatic=True)[0] == "Saved"


def test_a_broken_rule_arriving_from_elsewhere_never_drops_the_rules(fake_service) -> None:
    capture_now = _capture_now()
    fake_service.settings = Settings(capture_rules=[{"name": "bank", "action": "redact", "content": "(IBAN"}])
    message, event = capture_now.capture(fake_service, Snapshot("IBAN DE44 5001 0517 5407 3249 31 for rent"))
    assert message.startswith("Skipped:") and "bank" in message and not event.stored
    assert fake_service.store.count() == 0


def test_the_service_opens_with_damaged_settings_and_keeps_them_closed(data_dir) -> None:
    from desktop_memory.service import MemoryService
    from tests.fakes import FakeEmbedder

    write(data_dir, '{"capture_enabled": false, "max_bytes": 4096,}')
    with MemoryService(data_dir, embedder=FakeEmbedder()) as service:
        assert service.settings.problem and not service.settings.capture_enabled
        assert service.add("an explicit note the person typed").status == "added"  # adding still works
    assert (data_dir / FILENAME).read_text() == '{"capture_enabled": false, "max_bytes": 4096,}'


@hsettings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.one_of(st.binary(max_size=200), st.text(max_size=200).map(str.encode),
                      st.recursive(st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=10),
                               lambda kids: st.lists(kids, max_size=3) | st.dictionaries(
                                   st.sampled_from(["max_bytes", "capture_enabled", "capture_rules",
                                                    "capture_ignore_patterns", "x"]), kids, max_size=4),
                               max_leaves=8).map(lambda v: json.dumps(v).encode())))
def test_any_bytes_load_without_an_exception_and_never_capture_more(tmp_path, data) -> None:
    write(tmp_path, data)
    s = Settings.load(tmp_path, keep_copy=False)
    assert s.problem is None or (not s.capture_enabled and "\n" not in s.problem)
    assert isinstance(s.max_bytes, int) and s.max_bytes >= 1
    assert all(isinstance(p, str) for p in s.capture_ignore_patterns)
