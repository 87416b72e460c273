"""Screenshots of the search window, the preview and the settings window for docs/screenshots/.

    bash scripts/with-desktop.sh .venv/bin/python -m tests.gui.make_screenshots

Runs the real engine on a temporary data folder under the X server of the desktop session.
"""

from __future__ import annotations

import json
import sys
import tempfile
import time
from pathlib import Path

from PySide6.QtCore import QEventLoop, Qt, QTimer
from PySide6.QtWidgets import QApplication, QWidget

from desktop_memory.qt.bridge import EngineBridge
from desktop_memory.qt.search_window import SearchWindow
from desktop_memory.qt.settings_window import SettingsWindow
from desktop_memory.service import MemoryService

OUT = Path(__file__).resolve().parents[2] / "docs" / "screenshots"
DEMO = [
    ("Decision: the beta ships on March 3rd; Priya owns the release notes and the changelog.", "clipboard",
     "slack", ["work"], True),
    ("Beta release checklist: changelog, screenshots, signed installers for Windows and macOS, "
     "smoke test on a clean VM, then tag v0.9.0.", "hotkey", "firefox", ["work", "release"], False),
    ("To rotate the staging database password run: make rotate-db ENV=staging", "clipboard", "terminal",
     ["infra"], False),
    ("Pasta recipe: boil 100 g spaghetti 9 minutes, toss with garlic, olive oil and chili.", "manual", "",
     [], False),
    ("Retro notes: the release slipped a week because the installer signing certificate expired.", "clipboard",
     "obsidian", ["work"], False),
]


def settle(ms: int = 300) -> None:
    loop = QEventLoop()
    QTimer.singleShot(ms, loop.quit)
    loop.exec()


def wait_until(condition, timeout_s: float = 120) -> None:
    deadline = time.monotonic() + timeout_s
    while not condition():
        if time.monotonic() > deadline:
            raise SystemExit("timed out")
        settle(50)


def shoot(widget: QWidget, name: str) -> None:
    settle()
    widget.grab().save(str(OUT / name))
    print(f"wrote {OUT / name}")


def main() -> int:
    app = QApplication(sys.argv[:1])  # noqa: F841 - kept alive for the whole run
    folder = Path(tempfile.mkdtemp(prefix="screenshots-"))
    lines = [json.dumps({"content": c, "source": s, "source_app": a, "tags": t, "pinned": p,
                         "created_at": f"2026-0{2 + i % 3}-1{i}T10:0{i}:00"}) for i, (c, s, a, t, p) in enumerate(DEMO)]
    with MemoryService(folder) as service:
        service.import_records(lines)
    bridge = EngineBridge(lambda: MemoryService(folder))
    ready: list[bool] = []
    bridge.opened.connect(lambda: ready.append(True))
    bridge.start()
    wait_until(lambda: bool(ready))
    OUT.mkdir(parents=True, exist_ok=True)

    search = SearchWindow(bridge, service.settings)
    finished: list[str] = []
    search.search_finished.connect(lambda q, n: finished.append(q))
    search.show_and_focus()
    search.query.setText("beta release")
    wait_until(lambda: finished and finished[-1] == "beta release")
    search.list.selectionModel().select(search.model.index(1), search.list.selectionModel().SelectionFlag.Select)
    shoot(search, "search.png")
    search.list.setCurrentIndex(search.model.index(0))
    search.open_preview()
    shoot(search, "preview.png")

    settings = SettingsWindow(bridge, folder)
    settings.show_settings(service.settings)
    settings.ignore_patterns.setPlainText("^\\d{6}$")
    settings.ignore_apps.setPlainText("keepassxc")
    settings.adjustSize()
    shoot(settings, "settings.png")
    search.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
    bridge.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
