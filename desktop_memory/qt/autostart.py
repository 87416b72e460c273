"""Start at login: an XDG autostart entry on Linux (other systems: not supported yet)."""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path

ENTRY = "desktop-memory.desktop"


def supported() -> bool:
    return sys.platform.startswith("linux")


def entry_path() -> Path:
    config = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(config) / "autostart" / ENTRY


def command(data_dir: Path | None = None) -> str:
    """The command that starts the tray app with this Python and, if given, this data folder."""
    parts = [sys.executable, "-m", "desktop_memory", "app"]
    if data_dir is not None:
        parts[3:3] = ["--data-dir", str(data_dir)]
    return " ".join(_quote(p) for p in parts)


def _quote(arg: str) -> str:
    """Quote one Exec argument as the Desktop Entry spec wants (double quotes, backslash escapes)."""
    if re.fullmatch(r"[\w@%+=:,./-]+", arg):
        return arg
    return '"' + re.sub(r'(["`$\\])', r"\\\1", arg) + '"'


def set_enabled(enabled: bool, data_dir: Path | None = None) -> None:
    """Write (atomically) or remove the autostart entry."""
    if not supported():
        return
    path = entry_path()
    if not enabled:
        path.unlink(missing_ok=True)
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    text = ("[Desktop Entry]\nType=Application\nName=desktop-memory\n"
            "Comment=Private, offline memory for your desktop\n"
            f"Exec={command(data_dir)}\nX-GNOME-Autostart-enabled=true\nTerminal=false\n")
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)


def is_enabled() -> bool:
    return supported() and entry_path().exists()
