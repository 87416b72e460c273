"""Open the search window over the realistic memories and report, as JSON, how the results list behaves for 1 s
once it has settled: scrollbar range changes, GUI thread CPU, rows painted. Run as a script so a test can run it on
a real X server (QT_QPA_PLATFORM=xcb) while the pytest process itself stays offscreen.

    python -m tests.gui.search_probe [QUERY]
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("DESKTOP_MEMORY_ENCRYPTION", "off")
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")


def seed(folder: Path) -> None:
    """Store the realistic memories in a fresh data folder (fake embedder)."""
    from desktop_memory.service import MemoryService
    from tests.fakes import FakeEmbedder
    from tests.gui.realistic import REALISTIC

    service = MemoryService(folder, embedder=FakeEmbedder())
    try:
        for record in REALISTIC:
            service.add(**record)
    finally:
        service.close()


def main(query: str = "") -> dict[str, object]:
    from PySide6.QtCore import QTimer
    from PySide6.QtWidgets import QApplication

    from desktop_memory.engine.settings import Settings
    from desktop_memory.qt.bridge import EngineBridge
    from desktop_memory.qt.search_window import SearchWindow
    from desktop_memory.service import MemoryService
    from tests.fakes import FakeEmbedder

    app = QApplication.instance() or QApplication([])
    folder = Path(tempfile.mkdtemp(prefix="search-probe-"))
    seed(folder)
    bridge = EngineBridge(lambda: MemoryService(folder, embedder=FakeEmbedder()))
    window = SearchWindow(bridge, Settings())
    changes: list[int] = []
    window.list.verticalScrollBar().rangeChanged.connect(lambda _lo, hi: changes.append(hi))
    out: dict[str, object] = {}
    shown: list[int] = []
    window.search_finished.connect(lambda q, n: shown.append(n) if q == query else None)

    def opened() -> None:
        window.show_and_focus()
        window.query.setText(query)

    def start() -> None:
        changes.clear()
        out["cpu"], out["t"] = time.thread_time(), time.perf_counter()
        QTimer.singleShot(1000, stop)

    def stop() -> None:
        out["cpu_pct"] = round(100 * (time.thread_time() - float(out.pop("cpu")))
                               / (time.perf_counter() - float(out.pop("t"))), 1)
        out["range_changes"] = len(changes)
        out["rows"] = window.model.rowCount()
        first = window.list.visualRect(window.model.index(0))
        out["first_row_visible"] = first.isValid() and window.list.viewport().rect().intersects(first)
        view = window.list.viewport().rect()
        out["painted_rows"] = sum(view.intersects(window.list.visualRect(window.model.index(r)))
                                  for r in range(window.model.rowCount()))
        out["shown"] = shown[-1] if shown else None
        app.quit()

    bridge.opened.connect(opened)
    window.search_finished.connect(lambda q, n: QTimer.singleShot(1500, start) if q == query and "cpu" not in out
                                   and "rows" not in out else None)
    QTimer.singleShot(30_000, app.quit)
    bridge.start()
    app.exec()
    window.hide()
    bridge.stop()
    return out


if __name__ == "__main__":
    print(json.dumps(main(sys.argv[1] if len(sys.argv) > 1 else "")))
