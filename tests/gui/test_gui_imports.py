"""The tray app's GUI process imports only what it needs: the engine's heavy libraries live in the host process.

numpy, chromadb, onnxruntime and apsw cost tens of MB of resident memory each; the GUI reaches the engine through
the socket (ipc/client.RemoteService) and must not load them (issue 19: GUI idle RSS <= 120 MB).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

HEAVY = ("numpy", "chromadb", "onnxruntime", "apsw", "llama_cpp", "tokenizers")

PROBE = """
import json, sys
from pathlib import Path
from PySide6.QtWidgets import QApplication
app = QApplication([])
from desktop_memory.qt.app import DesktopApp
desk = DesktopApp(Path(sys.argv[1]))  # the objects the tray app makes before its engine host starts
desk.search.show_and_focus()
app.processEvents()
desk.settings_window
print(json.dumps(sorted({m.split(".")[0] for m in sys.modules} & set(HEAVY_NAMES))))
""".replace("HEAVY_NAMES", repr(HEAVY))


def test_the_gui_process_does_not_import_the_engine_libraries(tmp_path: Path) -> None:
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen"}
    done = subprocess.run([sys.executable, "-c", PROBE, str(tmp_path / "data")], capture_output=True, text=True,
                          env=env, timeout=120, cwd=Path(__file__).resolve().parents[2])
    assert done.returncode == 0, done.stderr[-2000:]
    loaded = json.loads(done.stdout.strip().splitlines()[-1])
    assert not loaded, f"the GUI process imported {loaded}"
