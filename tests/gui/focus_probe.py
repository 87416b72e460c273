"""Open the search panel on a real X server, then let focus go (1) to another window of this app (a message box),
(2) to a window of another X client; report, as JSON, whether the panel stayed open each time.

    python -m tests.gui.focus_probe
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("DESKTOP_MEMORY_ENCRYPTION", "off")
os.environ.setdefault("QT_QPA_PLATFORM", "xcb")

OTHER_APP = """
import sys
from PySide6.QtWidgets import QApplication, QLineEdit
app = QApplication([])
w = QLineEdit("another application")
w.setWindowTitle("another application")
w.resize(300, 60)
w.move(40, 600)
w.show()
w.activateWindow()
print("shown", flush=True)
app.exec()
"""


def main() -> dict[str, object]:
    from PySide6.QtWidgets import QApplication, QMessageBox

    from desktop_memory.engine.settings import Settings
    from desktop_memory.qt.bridge import EngineBridge
    from desktop_memory.qt.search_window import SearchWindow
    from desktop_memory.service import MemoryService
    from tests.fakes import FakeEmbedder
    from tests.gui.search_probe import seed

    app = QApplication.instance() or QApplication([])
    folder = Path(tempfile.mkdtemp(prefix="focus-probe-"))
    seed(folder)
    bridge = EngineBridge(lambda: MemoryService(folder, embedder=FakeEmbedder()))
    window = SearchWindow(bridge, Settings())
    out: dict[str, object] = {}

    def wait(cond, seconds: float) -> bool:
        end = time.monotonic() + seconds
        while not cond() and time.monotonic() < end:
            app.processEvents()
            time.sleep(0.01)
        return bool(cond())

    opened: list[bool] = []
    bridge.opened.connect(lambda: opened.append(True))
    bridge.start()
    try:
        wait(lambda: opened, 30)
        window.show_and_focus()
        out["panel_active"] = wait(window.isActiveWindow, 5)
        box = QMessageBox(QMessageBox.Icon.Information, "desktop-memory", "a window of this app")
        box.show()
        box.activateWindow()
        out["box_active"] = wait(box.isActiveWindow, 5)
        wait(lambda: False, 0.6)
        out["open_after_own_window"] = window.isVisible()
        box.close()
        window.show_and_focus()
        out["panel_active_again"] = wait(window.isActiveWindow, 5)
        other = subprocess.Popen([sys.executable, "-c", OTHER_APP], stdout=subprocess.PIPE, text=True,
                                 env={**os.environ, "QT_QPA_PLATFORM": "xcb"})
        try:
            out["other_shown"] = other.stdout.readline().strip() == "shown" if other.stdout else False
            out["panel_lost_focus"] = wait(lambda: not window.isActiveWindow(), 5)
            wait(lambda: not window.isVisible(), 3)
            out["open_after_other_app"] = window.isVisible()
        finally:
            other.kill()
            other.wait()
    finally:
        window.hide()
        bridge.stop()
    return out


if __name__ == "__main__":
    print(json.dumps(main()))
