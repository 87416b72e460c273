"""Start at login: an XDG autostart entry on Linux, a LaunchAgent in ~/Library/LaunchAgents on macOS."""

from __future__ import annotations

import os
import plistlib
import re
import sys
from pathlib import Path

ENTRY = "desktop-memory.desktop"
LAUNCH_AGENT = "org.desktop-memory.app"  # the LaunchAgent's label and file name (macOS)


def supported() -> bool:
    return sys.platform.startswith("linux") or sys.platform == "darwin"


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


def set_enabled(enabled: bool, data_dir: Path | None = None) -> None:
    """Write (atomically) or remove the autostart entry."""
    if not supported():
        return
    path = entry_path()
    if not enabled:
        path.unlink(missing_ok=True)
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    if sys.platform == "darwin":
        tmp = path.with_name(path.name + ".tmp")
        tmp.write_bytes(plistlib.dumps(launch_agent(data_dir)))
        os.replace(tmp, path)
        return
    text = ("[Desktop Entry]\nType=Application\nName=desktop-memory\n"
            "Comment=Private, offline memory for your desktop\n"
            f"Exec={command(data_dir)}\nX-GNOME-Autostart-enabled=true\nTerminal=false\n")
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)


def is_enabled() -> bool:
    return supported() and entry_path().exists()
