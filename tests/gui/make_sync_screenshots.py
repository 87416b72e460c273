"""Screenshots of the Settings window's Sync tab (issue 35) for README.md, light and dark.

    bash scripts/with-desktop.sh .venv/bin/python -m tests.gui.make_sync_screenshots

A sync set of three machines in a temporary folder (this one, "desktop" and "work laptop", each a data folder
with the real engine; the keys in the session's keyring), then the tab as the person sees it: the line, the
folder, the machines and what each has seen.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from tests.gui.make_screenshots import OUT, THEMES, dark_palette, shoot, wait_until


def prepare(root: Path) -> None:
    from desktop_memory.service import MemoryService

    shared = root / "Sync" / "memory"
    shared.mkdir(parents=True)
    with MemoryService(root / "laptop") as laptop:
        laptop.add("Decision: the beta ships on March 3rd; Priya owns the release notes.")
        laptop.sync_setup(shared, name="laptop")
        phrase = laptop.sync_phrase()
        for name, text in (("desktop", "The staging proxy listens on port 8443, behind the VPN."),
                           ("work laptop", "Retro notes: the installer signing certificate expired.")):
            with MemoryService(root / name.replace(" ", "-")) as other:
                other.add(text)
                other.sync_setup(shared, phrase=phrase, name=name)
        laptop.sync_now()


def run_theme(theme: str, root: Path) -> int:
    from PySide6.QtWidgets import QApplication

    from desktop_memory.engine.settings import Settings
    from desktop_memory.qt.bridge import EngineBridge
    from desktop_memory.qt.settings_window import SettingsWindow
    from desktop_memory.service import MemoryService

    app = QApplication(sys.argv[:1])
    app.setStyle("Fusion")
    if theme == "dark":
        app.setPalette(dark_palette())
    folder = root / "laptop"
    bridge = EngineBridge(lambda: MemoryService(folder))
    ready: list[bool] = []
    bridge.opened.connect(lambda: ready.append(True))
    bridge.start()
    wait_until(lambda: bool(ready))
    window = SettingsWindow(bridge, folder)
    window.show_settings(Settings.load(folder))
    window.tabs.setCurrentWidget(window.sync)
    window.sync.refresh()
    wait_until(lambda: window.sync.line.text().startswith("Synced"))
    shoot(window, "settings-sync", theme)
    window.hide()
    bridge.stop()
    return 0


def main() -> int:
    if len(sys.argv) > 2 and sys.argv[1] == "--theme":
        return run_theme(sys.argv[2], Path(sys.argv[3]))
    OUT.mkdir(parents=True, exist_ok=True)
    root = Path(tempfile.mkdtemp(prefix="sync-screenshots-"))
    try:
        prepare(root)
        env = {k: v for k, v in os.environ.items() if k != "QT_QPA_PLATFORM"}
        for theme in THEMES:
            done = subprocess.run([sys.executable, "-m", "tests.gui.make_sync_screenshots", "--theme", theme,
                                   str(root)], env=env, timeout=600)
            if done.returncode:
                return done.returncode
    finally:
        from desktop_memory.service import MemoryService

        for name in ("laptop", "desktop", "work-laptop"):  # the keys out of the session's keyring
            with MemoryService(root / name) as service:
                service.sync_leave()
        shutil.rmtree(root, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
