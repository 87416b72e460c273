"""Start at login on macOS: a LaunchAgent plist in ~/Library/LaunchAgents (qt/autostart.py).

The module is told it runs on darwin (its own `sys` only) and HOME is a temporary folder; launchd
itself cannot run here, so what is checked is the file it would read at login.
"""

from __future__ import annotations

import os
import plistlib
import stat
import sys
import types
from pathlib import Path

import pytest

from desktop_memory.qt import autostart


@pytest.fixture
def darwin(monkeypatch, tmp_path) -> Path:
    monkeypatch.setattr(autostart, "sys", types.SimpleNamespace(platform="darwin", executable=sys.executable))
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("USERPROFILE", str(tmp_path))  # Path.home() under the Windows Python (the Wine tier)
    return tmp_path / "Library" / "LaunchAgents" / "org.desktop-memory.app.plist"


def test_enabling_writes_a_launch_agent_that_starts_the_app_at_login(darwin):
    assert autostart.supported() and autostart.entry_path() == darwin and not autostart.is_enabled()
    old = os.umask(0o002)  # a group-writable default must not reach the agent
    try:
        autostart.set_enabled(True)
    finally:
        os.umask(old)
    agent = plistlib.loads(darwin.read_bytes())
    assert agent["Label"] == "org.desktop-memory.app" and agent["RunAtLoad"] is True
    assert agent["KeepAlive"] is False and agent["LimitLoadToSessionType"] == "Aqua"
    assert agent["ProgramArguments"] == [sys.executable, "-m", "desktop_memory", "app"]
    assert autostart.is_enabled() and not list(darwin.parent.glob("*.tmp"))
    if os.name == "posix":  # launchd refuses an agent others may write to
        assert not darwin.stat().st_mode & (stat.S_IWGRP | stat.S_IWOTH)


def test_the_frozen_app_starts_its_own_executable_with_the_chosen_data_folder(darwin, monkeypatch):
    exe = "/Applications/desktop-memory.app/Contents/MacOS/desktop-memory"
    monkeypatch.setattr(autostart, "sys", types.SimpleNamespace(platform="darwin", executable=exe, frozen=True))
    folder = Path("/Users/ana/Memories with spaces & 'quotes'")
    autostart.set_enabled(True, folder)
    agent = plistlib.loads(darwin.read_bytes())
    assert agent["ProgramArguments"] == [exe, "--data-dir", str(folder), "app"]  # a list: no shell quoting


def test_enabling_again_replaces_the_agent_and_disabling_removes_it(darwin):
    autostart.set_enabled(True, Path("/tmp/first"))
    autostart.set_enabled(True, Path("/tmp/second"))
    assert plistlib.loads(darwin.read_bytes())["ProgramArguments"][-2] == str(Path("/tmp/second"))
    autostart.set_enabled(False)
    assert not darwin.exists() and not autostart.is_enabled()
    autostart.set_enabled(False)  # already off: nothing to do, no error


def test_linux_keeps_its_xdg_entry(monkeypatch, tmp_path):
    monkeypatch.setattr(autostart, "sys", types.SimpleNamespace(platform="linux", executable="/usr/bin/python3"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))
    autostart.set_enabled(True)
    entry = (tmp_path / "autostart" / "desktop-memory.desktop").read_text()
    assert "Exec=/usr/bin/python3 -m desktop_memory app\n" in entry
