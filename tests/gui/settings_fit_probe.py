"""Open the settings window on a real X server and print where it landed (run by test_settings_window.py).

    DISPLAY=:N python -m tests.gui.settings_fit_probe DATA_DIR [PICTURE_PREFIX]
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from PySide6.QtCore import QPoint, QRect, QTimer
from PySide6.QtWidgets import QApplication, QPushButton

from desktop_memory.engine.settings import Settings
from desktop_memory.qt.settings_window import SettingsWindow


def _rect(r: QRect) -> list[int]:
    return [r.x(), r.y(), r.width(), r.height()]


def main() -> int:
    app = QApplication(sys.argv[:1])
    window = SettingsWindow(None, Path(sys.argv[1]))  # type: ignore[arg-type] - never saves here
    window.show_settings(Settings())

    def report() -> None:
        buttons = {b.text().replace("&", ""): b for b in window.findChildren(QPushButton)}
        out = {"screen": _rect(window.screen().availableGeometry()), "frame": _rect(window.frameGeometry()),
               "buttons": {name: _rect(QRect(b.mapToGlobal(QPoint(0, 0)), b.size())) + [b.isVisible()]
                           for name, b in buttons.items() if name in ("Save", "Close")}}
        print(json.dumps(out), flush=True)
        for n in range(window.tabs.count() if len(sys.argv) > 2 else 0):  # pictures to look at, one per tab
            window.tabs.setCurrentIndex(n)
            window.grab().save(f"{sys.argv[2]}-{n}.png")
        app.quit()

    QTimer.singleShot(1500, report)
    return app.exec()


if __name__ == "__main__":
    sys.exit(main())
