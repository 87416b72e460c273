"""Start at login: an XDG autostart entry on Linux, a LaunchAgent in ~/Library/LaunchAgents on macOS, the
`desktop-memory` value of HKCU\\...\\CurrentVersion\\Run on Windows (winreg, imported there only)."""

from __future__ import annotations

import contextlib
import os
import plistlib
import re
import subprocess
import sys
from pathlib import Path

ENTRY = "desktop-memory.desktop"
LAUNCH_AGENT = "org.desktop-memory.app"  # the LaunchAgent's label and file name (macOS)
RUN_KEY = r"Software\Microsoft\Windows\CurrentVersion\Run"  # under HKEY_CURRENT_USER (Windows)
RUN_VALUE = "desktop-memory"


def supported() -> bool:
    return sys.platform.startswith("linux") or sys.platform in ("darwin", "win32")


def entry_path() -> Path:
    if sys.platform == "darwin":
        return Path.home() / "Library" / "LaunchAgents" / f"{LAUNCH_AGENT}.plist"
    config = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(config) / "autostart" / ENTRY


def arguments(data_dir: Path | None = None) -> list[str]:
    """The tray app's command line: the frozen app's own executable (in a .app: Contents/MacOS/desktop-memory),
    else this Python with `-m desktop_memory`; with `--data-dir` when one is given."""
    parts = [sys.executable] if getattr(sys, "frozen", False) else [sys.executable, "-m", "desktop_memory"]
    if data_dir is not None:
        parts += ["--data-dir", str(data_dir)]
    return [*parts, "app"]


def command(data_dir: Path | None = None) -> str:
    """The command that starts the tray app with this Python (or frozen app) and, if given, this data folder."""
    return " ".join(_quote(p) for p in arguments(data_dir))


def _quote(arg: str) -> str:
    """Quote one Exec argument as the Desktop Entry spec wants (double quotes, backslash escapes)."""
    if re.fullmatch(r"[\w@%+=:,./-]+", arg):
        return arg
    return '"' + re.sub(r'(["`$\\])', r"\\\1", arg) + '"'


def launch_agent(data_dir: Path | None = None) -> dict[str, object]:
    """The LaunchAgent launchd reads at login (macOS): start the app once, in the person's GUI session."""
    return {"Label": LAUNCH_AGENT, "ProgramArguments": arguments(data_dir), "RunAtLoad": True,
            "KeepAlive": False, "ProcessType": "Interactive", "LimitLoadToSessionType": "Aqua"}


def windows_command(data_dir: Path | None = None) -> str:
    """The Run value: the program quoted (a path with spaces unquoted is a classic hijack), then its arguments;
    a Python run starts pythonw.exe beside python.exe when there is one (no console window at login)."""
    program, *rest = arguments(data_dir)
    if not getattr(sys, "frozen", False):
        windowless = Path(program).with_name("pythonw.exe")
        program = str(windowless) if windowless.is_file() else program
    return f'"{program}" ' + subprocess.list2cmdline(rest)


def startup_shortcut() -> Path | None:
    """The Startup-folder shortcut the installer makes when asked to start at login (Windows), if APPDATA is set."""
    appdata = os.environ.get("APPDATA")
    if not appdata:
        return None
    return Path(appdata) / "Microsoft" / "Windows" / "Start Menu" / "Programs" / "Startup" / "desktop-memory.lnk"


def _set_windows(enabled: bool, data_dir: Path | None) -> None:
    if sys.platform != "win32":  # (winreg has these names on Windows only, for mypy too)
        raise OSError("the Run key is on Windows only")
    import winreg

    with winreg.CreateKeyEx(winreg.HKEY_CURRENT_USER, RUN_KEY, 0, winreg.KEY_SET_VALUE) as key:
        if enabled:
            winreg.SetValueEx(key, RUN_VALUE, 0, winreg.REG_SZ, windows_command(data_dir))
            return
        with contextlib.suppress(FileNotFoundError):  # already off
            winreg.DeleteValue(key, RUN_VALUE)
    shortcut = startup_shortcut()  # turned off means off, also when the installer made the entry
    if shortcut is not None:
        shortcut.unlink(missing_ok=True)


def _windows_enabled() -> bool:
    if sys.platform != "win32":  # (winreg has these names on Windows only, for mypy too)
        raise OSError("the Run key is on Windows only")
    import winreg

    shortcut = startup_shortcut()
    if shortcut is not None and shortcut.exists():
        return True
    try:
        with winreg.OpenKey(winreg.HKEY_CURRENT_USER, RUN_KEY, 0, winreg.KEY_QUERY_VALUE) as key:
            winreg.QueryValueEx(key, RUN_VALUE)
    except FileNotFoundError:
        return False
    return True


def set_enabled(enabled: bool, data_dir: Path | None = None) -> None:
    """Write (atomically) or remove the autostart entry (an OSError says why it could not)."""
    if not supported():
        return
    if sys.platform == "win32":
        _set_windows(enabled, data_dir)
        return
    path = entry_path()
    if not enabled:
        path.unlink(missing_ok=True)
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    if sys.platform == "darwin":
        tmp = path.with_name(path.name + ".tmp")
        tmp.write_bytes(plistlib.dumps(launch_agent(data_dir)))
        os.chmod(tmp, 0o644)  # launchd ignores an agent that others may write (a umask of 002 would allow it)
        os.replace(tmp, path)
        return
    text = ("[Desktop Entry]\nType=Application\nName=desktop-memory\n"
            "Comment=Private, offline memory for your desktop\n"
            f"Exec={command(data_dir)}\nX-GNOME-Autostart-enabled=true\nTerminal=false\n")
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)


def is_enabled() -> bool:
    if sys.platform == "win32":
        return _windows_enabled()
    return supported() and entry_path().exists()
