"""The search panel in a real desktop session: Openbox on the X server of scripts/with-desktop.sh, another
application's window (a text box in its own process), real key presses and clicks (xdotool, through the X server
and the window manager's focus). Reports, as JSON, what a person would see in each scenario of issue 33:

- keys_after_preview: type "parse dates", Shift+Space, Esc, Ctrl+A, BackSpace, type "gift": the query and what is
  selected;
- failed_paste: the panel opened over the other window, Enter, the paste fails: the panel comes back with the
  problem; then two clicks into the other window: is the panel still shown, above it, and where does Esc go;
- geometry: the panel's x and width while typing, with the preview open and closed, and with look-alikes open.

    QT_QPA_PLATFORM=xcb python -m tests.gui.session_probe
"""

from __future__ import annotations

import json
import os
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

from tests.gui.paste_probe import Reader

os.environ.setdefault("DESKTOP_MEMORY_ENCRYPTION", "off")
os.environ.setdefault("QT_QPA_PLATFORM", "xcb")

OTHER_APP = """
import json, sys
from PySide6.QtWidgets import QApplication, QPlainTextEdit
app = QApplication([])
box = QPlainTextEdit()
box.setWindowTitle("another application")
box.resize(520, 220)
box.move(30, 540)
box.textChanged.connect(lambda: print(json.dumps({"text": box.toPlainText()}), flush=True))
box.show()
box.activateWindow()
print(json.dumps({"shown": int(box.winId())}), flush=True)
app.exec()
"""


EXTRA = [
    "To parse dates in Python use datetime.strptime(text, '%Y-%m-%d'); dateutil.parser.parse guesses the format.",
    "Parse dates from the CSV export with pandas: pd.read_csv(path, parse_dates=['created'])",
    "Gift ideas for Mum's birthday: a gardening book, the blue scarf from the market, concert tickets",
    "rsync -avz --delete ./build/ deploy@10.0.4.17:/srv/www/release/",
    *(f"Invoice INV-{n} for Calder & Finch: 14 units of part PX-204 shipped from the Leeds warehouse by ground "
      "freight, payment due within 30 days to the usual account" for n in (3101, 3102, 3103, 3104)),
]


class Other(Reader):
    """The other application; its stdout reports its window id and every change of its text."""

    def __init__(self) -> None:
        super().__init__(["-c", OTHER_APP])

    @property
    def wid(self) -> int:
        return next((int(r["shown"]) for r in self.records if "shown" in r), 0)

    @property
    def text(self) -> str:
        return next((str(r["text"]) for r in reversed(self.records) if "text" in r), "")


def xdo(*args: str) -> None:
    subprocess.run(["xdotool", *args], check=True, timeout=20)


def main() -> dict[str, Any]:
    from PySide6.QtWidgets import QApplication

    from desktop_memory.engine.settings import Settings
    from desktop_memory.qt.bridge import EngineBridge
    from desktop_memory.qt.search_window import SearchWindow
    from desktop_memory.service import MemoryService
    from tests.fakes import FakeEmbedder
    from tests.gui.openbox import openbox
    from tests.gui.search_probe import seed

    app = QApplication.instance() or QApplication([])
    folder = Path(tempfile.mkdtemp(prefix="session-probe-"))
    seed(folder)
    service = MemoryService(folder, embedder=FakeEmbedder())
    try:
        for text in EXTRA:
            service.add(text, source="clipboard")
    finally:
        service.close()
    bridge = EngineBridge(lambda: MemoryService(folder, embedder=FakeEmbedder()))
    out: dict[str, Any] = {}

    def wait(cond, seconds: float) -> bool:  # type: ignore[no-untyped-def]
        end = time.monotonic() + seconds
        while not cond() and time.monotonic() < end:
            app.processEvents()
            other.poll()
            time.sleep(0.01)
        return bool(cond())

    def settle(seconds: float = 0.3) -> None:
        wait(lambda: False, seconds)

    with openbox() as wm:
        out["wm"] = wm.name
        window = SearchWindow(bridge, Settings())
        opened: list[bool] = []
        bridge.opened.connect(lambda: opened.append(True))
        bridge.start()
        other = Other()
        try:
            wait(lambda: bool(opened) and other.wid != 0, 30)
            out["other_active"] = wait(lambda: wm.active_window() == other.wid, 10)
            panel = int(window.winId())

            def show(query: str = "") -> bool:
                window.query.clear()
                window.show_and_focus()
                ok = wait(window.isActiveWindow, 5)
                if query:
                    xdo("type", "--delay", "40", query)
                ok = wait(lambda: window.query.text() == query and window.model.rowCount() > 0, 10) and ok
                settle()
                return ok

            # -- 2: keys after a preview --------------------------------------------------------
            out["keys_opened"] = show("parse dates")
            xdo("key", "shift+space")
            out["keys_preview_opened"] = wait(lambda: window.preview_control.is_open, 5)
            xdo("key", "Escape")
            out["keys_preview_closed"] = wait(lambda: not window.preview_control.is_open, 5)
            settle()
            xdo("key", "ctrl+a")
            xdo("key", "BackSpace")
            xdo("type", "--delay", "40", "gift")
            wait(lambda: window.query.text() == "gift", 3)
            settle()
            out["keys"] = {"query": window.query.text(), "selected": len(window.list.selected_memories()),
                           "focus_in_query": window.query.hasFocus(), "panel_visible": window.isVisible()}
            # the footer with three results selected: nothing it shows is cut (item 4)
            from tests.gui.test_search_footer import assert_nothing_clipped

            xdo("key", "ctrl+a", "BackSpace")  # the newest memories
            wait(lambda: window.query.text() == "" and window.model.rowCount() >= 3, 5)
            settle(0.5)
            window.list.select_row(0)
            window.list.select_row(1, extend=True)
            window.list.select_row(2, extend=True)
            window.update_status()
            settle()
            out["footer_selected"] = len(window.list.selected_memories())
            try:
                assert_nothing_clipped(window)
                out["footer_clipped"] = ""
            except AssertionError as exc:
                out["footer_clipped"] = str(exc)
            out["footer_text"] = window.footer.text()
            xdo("key", "ctrl+a")
            xdo("type", "--delay", "30", "gift")
            wait(lambda: window.query.text() == "gift", 5)
            settle()
            # rows (item 5), contrast (item 8) and the preview (item 9), as this session draws them
            from desktop_memory.qt.kinds import kind_info
            from desktop_memory.qt.result_row import contrast, row_colours
            from tests.gui.test_preview import visible

            xdo("key", "ctrl+a")
            xdo("type", "--delay", "30", "rsync deploy")
            wait(lambda: window.query.text() == "rsync deploy" and window.model.rowCount() > 0, 5)
            settle(0.5)
            memories = window.model.memories
            rsync = next((r for r, m in enumerate(memories) if m.content.startswith("rsync")), None)
            out["rows"] = {"rsync_kind": kind_info(memories[rsync]).name if rsync is not None else None,
                           "rsync_height": window.list.sizeHintForRow(rsync) if rsync is not None else 0,
                           "heights": sorted({window.list.sizeHintForRow(r) for r in range(len(memories))})}
            pal = window.list.palette()
            worst = min(min(contrast(c.text, c.background), contrast(c.dim, c.background), contrast(c.hit, c.mark))
                        for c in (row_colours(pal, selected=sel, current=cur, hovered=hov)
                                  for sel in (False, True) for cur in (False, True) for hov in (False, True)))
            out["rows"]["worst_contrast"] = round(worst, 2)
            if rsync is not None:
                window.list.select_row(rsync)
                xdo("key", "shift+space")
                wait(lambda: window.preview_control.is_open, 5)
                settle(0.4)
                shown = visible(window.preview)
                out["preview"] = {"open": window.preview_control.is_open,
                                  "id_shown": memories[rsync].id in shown, "raw_json": '{"' in shown,
                                  "importance": "Importance" in shown, "text_shown": "deploy@10.0.4.17" in shown,
                                  "width": window.width()}
                xdo("key", "Escape")
                wait(lambda: not window.preview_control.is_open, 3)
            xdo("key", "ctrl+a")
            xdo("type", "--delay", "30", "gift")
            wait(lambda: window.query.text() == "gift", 5)
            settle()
            # the actions menu: Ctrl+K opens it, Esc closes it, typing goes on in the query
            xdo("key", "ctrl+k")
            menu = window.footer.menu
            out["menu_opened"] = wait(menu.isVisible, 3)
            out["menu_entries"] = [label for label, _key in menu.entries()] if menu.isVisible() else []
            xdo("key", "Escape")
            out["menu_closed"] = wait(lambda: not menu.isVisible(), 3)
            settle()
            xdo("type", "s")
            wait(lambda: window.query.text() == "gifts", 3)
            out["after_menu"] = {"query": window.query.text(), "panel_visible": window.isVisible(),
                                 "panel_active": window.isActiveWindow()}
            # look-alikes: Ctrl+Right opens the current result's; the list grows to show them (no scrollbar)
            from desktop_memory.qt.results import SimilarRole

            xdo("key", "ctrl+a")
            xdo("type", "--delay", "30", "invoice INV-3103 Calder")
            wait(lambda: window.query.text() == "invoice INV-3103 Calder", 5)
            settle(0.6)

            lead = next((r for r in range(window.model.rowCount())
                         if window.model.index(r, 0).data(SimilarRole)), None)
            out["similar_found"] = lead is not None
            if lead is not None:
                window.list.select_row(lead)
                rows_before = window.model.rowCount()
                xdo("key", "ctrl+Right")
                wait(lambda: window.model.rowCount() > rows_before, 3)
                settle(0.5)
                out["similar"] = {"rows": window.model.rowCount(), "rows_before": rows_before,
                                  "scrollbar_max": window.list.verticalScrollBar().maximum(),
                                  "viewport_h": window.list.viewport().height(),
                                  "rows_h": sum(window.list.sizeHintForRow(r)
                                                for r in range(window.model.rowCount()))}
            xdo("key", "Escape")
            wait(lambda: not window.isVisible(), 3)

            # -- 7: geometry ----------------------------------------------------------------------
            xdo("mousemove", "640", "400")  # the panel opens on the screen under the mouse
            out["geometry_opened"] = show()
            shapes = [("opened", window.x(), window.width(), window.height())]
            for ch in "release notes":
                xdo("type", ch)
                settle(0.25)
                shapes.append((ch, window.x(), window.width(), window.height()))
            xdo("key", "shift+space")
            wait(lambda: window.preview_control.is_open, 5)
            settle(0.5)
            shapes.append(("preview", window.x(), window.width(), window.height()))
            xdo("key", "Escape")
            wait(lambda: not window.preview_control.is_open, 5)
            settle(0.5)
            shapes.append(("preview closed", window.x(), window.width(), window.height()))
            list_h, rows_h = window.list.viewport().height(), sum(
                window.list.sizeHintForRow(r) for r in range(window.model.rowCount()))
            shapes.append(("rows", list_h, rows_h, window.model.rowCount()))
            out["geometry"] = shapes
            xdo("key", "Escape")
            wait(lambda: not window.isVisible(), 3)

            # -- 3: a failed paste, then clicks into the other window --------------------------------
            xdo("windowactivate", "--sync", str(other.wid))
            out["paste_other_active"] = wait(lambda: wm.active_window() == other.wid, 5)
            out["paste_opened"] = show()
            backend = window.paster.support.backend
            out["paste_backend"] = backend is not None
            if backend is not None:
                backend.paste_into = lambda target: "the window did not take the paste"  # type: ignore[method-assign]
            xdo("key", "Return")
            out["paste_problem_shown"] = wait(lambda: window.isVisible() and window.paste_problem.isVisible(), 5)
            out["paste_problem"] = window.paste_problem.text()
            out["paste_panel_active"] = wait(window.isActiveWindow, 2)
            settle(0.5)
            # two clicks into the other window, where the panel does not cover it
            geo = window.frameGeometry()
            x, y = 60, 740
            out["click_point_outside_panel"] = not geo.contains(x, y)
            for _ in range(2):
                xdo("mousemove", str(x), str(y), "click", "1")
                settle(0.4)
            settle(0.6)
            out["after_clicks"] = {
                "panel_visible": window.isVisible(),
                "other_active": wm.active_window() == other.wid,
                "panel_above_other": window.isVisible() and wm.above(panel, other.wid),
            }
            before = other.text
            xdo("type", "--delay", "30", "ok")
            wait(lambda: other.text != before, 3)
            out["typing_after_clicks_reached_other"] = other.text.endswith("ok")
        finally:
            window.hide()
            bridge.stop()
            other.stop()
    return out


if __name__ == "__main__":
    print(json.dumps(main()))
