"""Native messaging host manifests (desktop_memory/browser/manifests.py, `setup-browser`): where each browser on
each OS finds ours, what it says, removing it, `--check`, and `desktop-memory` recognising a browser's start.

Linux and macOS with a fake home folder; Windows with a fake winreg (the real registry is never touched)."""

from __future__ import annotations

import json
import os
import stat
import sys
import types
from pathlib import Path

import pytest

from desktop_memory.browser import manifests
from desktop_memory.cli import browser_commands, main

REPO = Path(__file__).resolve().parents[2]
NAME = "org.desktop_memory.companion.json"
LINUX = {"chrome": ".config/google-chrome/NativeMessagingHosts", "chromium": ".config/chromium/NativeMessagingHosts",
         "edge": ".config/microsoft-edge/NativeMessagingHosts",
         "brave": ".config/BraveSoftware/Brave-Browser/NativeMessagingHosts",
         "firefox": ".mozilla/native-messaging-hosts"}
MACOS = {"chrome": "Library/Application Support/Google/Chrome/NativeMessagingHosts",
         "chromium": "Library/Application Support/Chromium/NativeMessagingHosts",
         "edge": "Library/Application Support/Microsoft Edge/NativeMessagingHosts",
         "brave": "Library/Application Support/BraveSoftware/Brave-Browser/NativeMessagingHosts",
         "firefox": "Library/Application Support/Mozilla/NativeMessagingHosts"}
WINDOWS = {"chrome": r"Software\Google\Chrome\NativeMessagingHosts",
           "chromium": r"Software\Chromium\NativeMessagingHosts",
           "edge": r"Software\Microsoft\Edge\NativeMessagingHosts",
           "brave": r"Software\BraveSoftware\Brave-Browser\NativeMessagingHosts",
           "firefox": r"Software\Mozilla\NativeMessagingHosts"}
ORIGIN = f"chrome-extension://{manifests.CHROMIUM_ID}/"


def test_the_chromium_id_is_the_extensions():
    id_file = REPO / "extension" / "EXTENSION_ID"
    if not id_file.exists():
        pytest.skip("extension/EXTENSION_ID not merged yet")
    assert id_file.read_text().strip() == manifests.CHROMIUM_ID


def test_the_ids_are_well_formed():
    assert len(manifests.CHROMIUM_ID) == 32 and set(manifests.CHROMIUM_ID) <= set("abcdefghijklmnop")
    assert browser_commands.FIREFOX_ID == manifests.FIREFOX_ID
    assert set(browser_commands.BROWSER_CHOICES) == {*manifests.NAMES, "all"}


@pytest.mark.parametrize(("platform", "where"), [("linux", LINUX), ("darwin", MACOS)])
def test_manifests_go_where_each_browser_looks(tmp_path, platform, where):
    system = manifests.System(platform, tmp_path, tmp_path / "config")
    exe = tmp_path / "bin" / "desktop-memory"
    lines = manifests.install(list(manifests.NAMES), system, exe, ("a" * 32,))
    assert len(lines) == 5
    for key, folder in where.items():
        path = tmp_path / folder / NAME
        data = json.loads(path.read_text())
        assert data["name"] == "org.desktop_memory.companion" and data["type"] == "stdio"
        assert data["path"] == str(exe)
        if key == "firefox":
            assert data["allowed_extensions"] == ["companion@desktop-memory.org"] and "allowed_origins" not in data
        else:
            assert data["allowed_origins"] == [ORIGIN, f"chrome-extension://{'a' * 32}/"]
        if os.name == "posix":
            assert stat.S_IMODE(path.stat().st_mode) == 0o644
        assert manifests.registered(manifests.BROWSERS[key], system) == path
    assert [p.name for p in (tmp_path / where["chrome"]).iterdir()] == [NAME]  # no scratch file left
    removed = manifests.remove(list(manifests.NAMES), system)
    assert all("removed" in line for line in removed)
    assert not any((tmp_path / folder / NAME).exists() for folder in where.values())
    assert all("was not set up" in line for line in manifests.remove(["chrome"], system))


class FakeWinreg(types.ModuleType):
    HKEY_CURRENT_USER = 0x80000001
    KEY_SET_VALUE, KEY_QUERY_VALUE, REG_SZ = 0x0002, 0x0001, 1

    def __init__(self) -> None:
        super().__init__("winreg")
        self.keys: dict[str, dict[str, tuple[str, int]]] = {}

    class _Key:
        def __init__(self, path: str) -> None:
            self.path = path

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            return None

    def CreateKeyEx(self, root, path, reserved=0, access=0):  # noqa: N802 - winreg's names
        assert root == self.HKEY_CURRENT_USER  # never the machine
        self.keys.setdefault(path, {})
        return self._Key(path)

    def OpenKey(self, root, path, reserved=0, access=0):  # noqa: N802
        if path not in self.keys:
            raise FileNotFoundError(path)
        return self._Key(path)

    def SetValueEx(self, key, name, reserved, kind, value):  # noqa: N802
        self.keys[key.path][name] = (value, kind)

    def QueryValueEx(self, key, name):  # noqa: N802
        return self.keys[key.path][name]

    def DeleteKey(self, root, path):  # noqa: N802
        if path not in self.keys:
            raise FileNotFoundError(path)
        del self.keys[path]


@pytest.fixture
def reg(monkeypatch):
    fake = FakeWinreg()
    monkeypatch.setitem(sys.modules, "winreg", fake)
    monkeypatch.setattr(manifests, "sys", types.SimpleNamespace(platform="win32", executable=sys.executable))
    return fake


def test_windows_registers_each_browser_under_hkcu(tmp_path, reg):
    system = manifests.System("win32", tmp_path / "home", tmp_path / "config")
    manifests.install(list(manifests.NAMES), system, Path(r"C:\dm\desktop-memory.exe"))
    for key, base in WINDOWS.items():
        value, kind = reg.keys[base + r"\org.desktop_memory.companion"][""]
        assert kind == reg.REG_SZ
        path = Path(value)
        assert path.parent.parent.parent == tmp_path / "config" and path.name == NAME
        data = json.loads(path.read_text())
        assert data["path"] == r"C:\dm\desktop-memory.exe"
        assert ("allowed_extensions" in data) == (key == "firefox")
        assert manifests.registered(manifests.BROWSERS[key], system) == path
    manifests.remove(["edge"], system)
    assert WINDOWS["edge"] + r"\org.desktop_memory.companion" not in reg.keys
    assert manifests.registered(manifests.BROWSERS["edge"], system) is None
    assert manifests.registered(manifests.BROWSERS["chrome"], system) is not None


def test_the_browsers_in_use_are_found(tmp_path):
    (tmp_path / ".config" / "chromium").mkdir(parents=True)
    (tmp_path / ".mozilla").mkdir()
    assert manifests.installed(manifests.System("linux", tmp_path, tmp_path)) == ["chromium", "firefox"]
    (tmp_path / "Library/Application Support/Microsoft Edge").mkdir(parents=True)
    assert manifests.installed(manifests.System("darwin", tmp_path, tmp_path)) == ["edge"]
    local, roaming = tmp_path / "Local", tmp_path / "Roaming"
    (local / "BraveSoftware/Brave-Browser/User Data").mkdir(parents=True)
    (roaming / "Mozilla/Firefox").mkdir(parents=True)
    assert manifests.installed(manifests.System("win32", tmp_path, tmp_path, local, roaming)) == ["brave", "firefox"]


# -- how the browser starts us ------------------------------------------------------------------------
@pytest.mark.parametrize("argv", [
    ["chrome-extension://meedcakikngijbgdgojfglooajkdbhbi/"],
    ["chrome-extension://meedcakikngijbgdgojfglooajkdbhbi/", "--parent-window=1234"],  # Chrome on Windows
    ["/home/ana/.mozilla/native-messaging-hosts/org.desktop_memory.companion.json", "companion@desktop-memory.org"],
    [r"C:\Users\Ana\AppData\x\org.desktop_memory.companion.json", "companion@desktop-memory.org"],
])
def test_a_browsers_arguments_run_the_native_host(argv):
    assert browser_commands.native_host_argv(argv) == ["native-host"]


@pytest.mark.parametrize("argv", [[], ["search", "chrome-extension://x"], ["import", "export.json"],
                                  ["notes.json", "someone@else.org"], ["--data-dir", "x", "stats"]])
def test_other_arguments_are_left_alone(argv):
    assert browser_commands.native_host_argv(argv) == argv


def test_main_runs_the_host_for_a_browsers_start(monkeypatch, tmp_path):
    seen = []
    monkeypatch.setitem(browser_commands.HANDLERS, "native-host", lambda args: seen.append(args.command) or 0)
    monkeypatch.setenv("DESKTOP_MEMORY_HOME", str(tmp_path))
    assert main.main([f"chrome-extension://{manifests.CHROMIUM_ID}/", "--parent-window=0"]) == 0
    assert main.main(["/x/org.desktop_memory.companion.json", "companion@desktop-memory.org"]) == 0
    assert seen == ["native-host", "native-host"]


# -- setup-browser ----------------------------------------------------------------------------------
@pytest.fixture
def here(monkeypatch, tmp_path):
    system = manifests.System("linux", tmp_path / "home", tmp_path / "config")
    monkeypatch.setattr(manifests.System, "here", classmethod(lambda cls: system))
    exe = tmp_path / "bin" / "desktop-memory"
    monkeypatch.setattr(manifests, "executable", lambda: exe)
    return system


def test_setup_browser_writes_every_browser_when_none_is_found(here, capsys):
    assert main.main(["setup-browser"]) == 0
    out = capsys.readouterr().out
    assert all(f"{b.name}: wrote" in out for b in manifests.BROWSERS.values())
    assert (here.home / LINUX["firefox"] / NAME).exists()


def test_setup_browser_writes_the_ones_found_or_named(here, capsys):
    (here.home / ".config" / "chromium").mkdir(parents=True)
    assert main.main(["setup-browser"]) == 0
    assert capsys.readouterr().out.startswith("Chromium: wrote")
    assert not (here.home / LINUX["chrome"] / NAME).exists()
    assert main.main(["setup-browser", "--browser", "edge", "--browser", "firefox"]) == 0
    assert (here.home / LINUX["edge"] / NAME).exists() and (here.home / LINUX["firefox"] / NAME).exists()
    assert main.main(["setup-browser", "--browser", "edge", "--remove"]) == 0
    assert not (here.home / LINUX["edge"] / NAME).exists()


@pytest.mark.parametrize("argv", [["--browser", "netscape"], ["--extension-id", "xyz"], ["--remove", "--check"],
                                  ["--check", "--extension-id", "a" * 32]])
def test_setup_browser_usage_errors_exit_2(here, argv, capsys):
    try:
        code = main.main(["setup-browser", *argv])
    except SystemExit as exit_:
        code = exit_.code
    assert code == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and err.strip()


def test_check_says_what_is_wrong_and_how_to_fix_it(here, capsys, tmp_path):
    assert main.main(["setup-browser", "--check"]) == 1
    assert "No browser is set up yet" in capsys.readouterr().out
    assert main.main(["setup-browser", "--check", "--browser", "chrome"]) == 1
    assert capsys.readouterr().out.strip() == ("Chrome: not set up; run `desktop-memory setup-browser --browser "
                                               "chrome`")
    main.main(["setup-browser", "--browser", "chromium"])  # the executable named does not exist
    capsys.readouterr()
    assert main.main(["setup-browser", "--check"]) == 1
    assert "Chromium: the program it names does not exist" in capsys.readouterr().out
    (here.home / LINUX["chromium"] / NAME).write_text("{not json")
    assert main.main(["setup-browser", "--check"]) == 1
    assert "cannot be read" in capsys.readouterr().out


@pytest.mark.skipif(os.name != "posix", reason="a shell script as the host")
def test_check_starts_the_host_as_the_browser_would(here, capsys, tmp_path):
    """The manifest's program with the browser's arguments; a stand-in host that answers hello."""
    seen = tmp_path / "argv"
    script = tmp_path / "bin" / "desktop-memory"
    script.parent.mkdir(parents=True)
    script.write_text(f"#!{sys.executable}\nimport sys, struct, json\n"
                      f"open({str(seen)!r}, 'a').write(repr(sys.argv[1:]) + '\\n')\n"
                      "n = struct.unpack('=I', sys.stdin.buffer.read(4))[0]\n"
                      "req = json.loads(sys.stdin.buffer.read(n))\n"
                      "body = json.dumps({'id': req['id'], 'ok': True, 'version': '9.9', 'engine': 'offline', "
                      "'paused': False}).encode()\nsys.stdout.buffer.write(struct.pack('=I', len(body)) + body)\n")
    script.chmod(0o755)
    main.main(["setup-browser", "--browser", "chromium", "--browser", "firefox"])
    capsys.readouterr()
    assert main.main(["setup-browser", "--check"]) == 0
    assert capsys.readouterr().out.splitlines() == [
        "Chromium: ready (desktop-memory 9.9, engine offline: captures are kept until it can start)",
        "Firefox: ready (desktop-memory 9.9, engine offline: captures are kept until it can start)"]
    assert seen.read_text().splitlines() == [
        repr([ORIGIN]), repr([str(here.home / LINUX["firefox"] / NAME), "companion@desktop-memory.org"])]
    script.chmod(0o644)
    assert main.main(["setup-browser", "--check", "--browser", "chromium"]) == 1
    assert "is not executable" in capsys.readouterr().out


def test_native_host_is_hidden_and_setup_browser_listed():
    text = main.build_parser().format_help()
    assert "native-host" not in text and "setup-browser" in text


def test_the_app_registers_the_host_on_macos_for_the_browsers_used_there(tmp_path: Path, caplog):
    """A disk image has no install step: the app writes the manifest for each browser used on this Mac that has
    none, once (a manifest the person changed is left alone), and a problem never stops it."""
    home = tmp_path / "home"
    system = manifests.System("darwin", home, tmp_path / "config")
    (home / "Library/Application Support/Google/Chrome").mkdir(parents=True)
    (home / "Library/Application Support/Firefox").mkdir(parents=True)
    exe = tmp_path / "desktop-memory.app" / "Contents" / "MacOS" / "desktop-memory"
    wrote = manifests.register_on_start(system, exe)
    assert [line.split(":")[0] for line in wrote] == ["Chrome", "Firefox"]
    chrome = home / "Library/Application Support/Google/Chrome/NativeMessagingHosts" / f"{manifests.HOST_NAME}.json"
    assert json.loads(chrome.read_text())["path"] == str(exe)
    assert not (home / "Library/Application Support/Chromium").exists()  # a browser not used here: nothing
    assert manifests.register_on_start(system, exe) == []  # registered already: nothing written again
    (home / "Library/Application Support/Chromium").write_text("a file where a folder should be")
    (home / "Library/Application Support/Microsoft Edge").mkdir()
    (home / "Library/Application Support/Microsoft Edge/NativeMessagingHosts").write_text("not a folder")
    assert manifests.register_on_start(system, exe) == []  # cannot write: one log line, no exception
    assert "could not be registered" in caplog.text
