"""The CLI's way into the desktop app: `desktop-memory` / `desktop-memory app` and `desktop-memory toggle`."""

from __future__ import annotations

import sys
from pathlib import Path

PROG = "desktop-memory"


def main(command: str | None, data_dir: Path) -> int:
    """Start the tray app (no command or `app`), or show/hide the running one's search window (`toggle`)."""
    if command in ("toggle", "capture-selection"):
        return toggle(data_dir, "toggle" if command == "toggle" else "selection")
    from .app import run_app

    return run_app(data_dir)


def toggle(data_dir: Path, what: str = "toggle") -> int:
    """Ask the running app to show/hide its search window ("toggle") or capture the selection."""
    from PySide6.QtCore import QCoreApplication

    from .single_instance import send_command, server_name

    _app = QCoreApplication.instance() or QCoreApplication([PROG])
    if send_command(server_name(data_dir), what):
        return 0
    print(f"{PROG}: the app is not running for {data_dir} (start it with: desktop-memory app)", file=sys.stderr)
    return 1
