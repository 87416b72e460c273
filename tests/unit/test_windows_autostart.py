"""Start at login on Windows: the HKCU Run value (qt/autostart.py), with a fake winreg (issue 18).

The module is told it runs on win32 (its own `sys` only); winreg is a stand-in that keeps values in a dict,
so what is checked is the value Windows would read at login. The real registry is not touched here.
"""

from __future__ import annotations

import sys
import types
from pathlib import Path

import pytest

from desktop_memory.qt import autostart

RUN = r"Software\Microsoft\Windows\CurrentVersion\Run"


class FakeWinreg(types.ModuleType):
    HKEY_CURRENT_USER = 0x80000001
    KEY_SET_VALUE, KEY_QUERY_VALUE, REG_SZ = 0x0002, 0x0001, 1

    def __init__(self) -> None:
        super().__init__("winreg")
        self.keys: dict[str, dict[str, tuple[str, int]]] = {}
        self.open: list[str] = []

    class _Key:
        def __init__(self, reg: FakeWinreg, path: str) -> None:
            self.reg, self.path = reg, path

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            self.reg.open.remove(self.path)

    def _key(self, root, path, create):
        assert root == self.HKEY_CURRENT_USER  # never the machine-wide key
        if path not in self.keys:
            if not create:
                raise FileNotFoundError(path)
            self.keys[path] = {}
        self.open.append(path)
        return self._Key(self, path)

    def CreateKeyEx(self, root, path, reserved=0, access=0):  # noqa: N802
        return self._key(root, path, True)

    def OpenKey(self, root, path, reserved=0, access=0):  # noqa: N802
        return self._key(root, path, False)

    def SetValueEx(self, key, name, reserved, kind, value):  # noqa: N802
        self.keys[key.path][name] = (value, kind)

    def QueryValueEx(self, key, name):  # noqa: N802
        try:
            return self.keys[key.path][name]
        except KeyError:
            raise FileNotFoundError(name) from None

    def DeleteValue(self, key, name):  # noqa: N802
        try:
            del self.keys[key.path][name]
        except KeyError:
            raise FileNotFoundError(name) from None


@pytest.fixture
def reg(monkeypatch, tmp_path):
    fake = FakeWinreg()
    monkeypatch.setitem(sys.modules, "winreg", fake)
    monkeypatch.setattr(autostart, "sys", types.SimpleNamespace(platform="win32", executable=sys.executable))
    monkeypatch.setenv("APPDATA", str(tmp_path / "Roaming"))
    return fake


def test_enabling_writes_the_run_value_and_disabling_removes_it(reg):
    assert autostart.supported() and not autostart.is_enabled()
    autostart.set_enabled(True)
    value, kind = reg.keys[RUN]["desktop-memory"]
    assert kind == reg.REG_SZ and value.endswith(" -m desktop_memory app")
    assert autostart.is_enabled()
    autostart.set_enabled(False)
    assert "desktop-memory" not in reg.keys[RUN] and not autostart.is_enabled()
    autostart.set_enabled(False)  # already off: no error
    assert reg.open == []  # every key handle closed


def test_the_frozen_exe_is_quoted_with_the_data_folder(reg, monkeypatch):
    exe = r"C:\Users\Ana Lima\AppData\Local\Programs\desktop-memory\desktop-memory.exe"
    monkeypatch.setattr(autostart, "sys", types.SimpleNamespace(platform="win32", executable=exe, frozen=True))
    autostart.set_enabled(True, Path(r"D:\My Memories"))
    value, _ = reg.keys[RUN]["desktop-memory"]
    assert value == f'"{exe}" --data-dir "D:\\My Memories" app'


def test_a_path_without_spaces_is_quoted_too(reg, monkeypatch):
    exe = r"C:\dm\desktop-memory.exe"
    monkeypatch.setattr(autostart, "sys", types.SimpleNamespace(platform="win32", executable=exe, frozen=True))
    assert autostart.windows_command() == f'"{exe}" app'


def test_a_python_run_starts_without_a_console_window(reg, monkeypatch, tmp_path):
    python = tmp_path / "Python311" / "python.exe"
    python.parent.mkdir()
    python.write_bytes(b"")
    (python.parent / "pythonw.exe").write_bytes(b"")
    monkeypatch.setattr(autostart, "sys", types.SimpleNamespace(platform="win32", executable=str(python)))
    assert autostart.windows_command().startswith(f'"{python.parent / "pythonw.exe"}" -m desktop_memory')


def test_a_startup_folder_shortcut_of_the_installer_counts_and_goes_when_turned_off(reg, tmp_path):
    shortcut = tmp_path / "Roaming" / "Microsoft" / "Windows" / "Start Menu" / "Programs" / "Startup"
    shortcut.mkdir(parents=True)
    link = shortcut / "desktop-memory.lnk"
    link.write_bytes(b"L\0\0\0")
    assert autostart.is_enabled()
    autostart.set_enabled(False)
    assert not link.exists() and not autostart.is_enabled()


def test_a_registry_that_refuses_is_one_line_error(reg, monkeypatch):
    def denied(*args, **kwargs):
        raise PermissionError(5, "Access is denied")

    monkeypatch.setattr(reg, "CreateKeyEx", denied)
    with pytest.raises(OSError, match="Access is denied"):
        autostart.set_enabled(True)
