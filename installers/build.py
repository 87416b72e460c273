"""Build the one-folder app with PyInstaller: export MiniLM to ONNX, run the spec, trim, pack.

    .venv/bin/python installers/build.py [--out dist]     # -> dist/desktop-memory/ and a .tar.gz

Needs the `build` extra (pyinstaller) and the engine's own dependencies (torch and onnx only for the
export, never bundled).
"""

from __future__ import annotations

import argparse
import os
import platform
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

# Qt plugins and libraries the tray app does not use (PLATFORM.md: ~55 MB of the bundle)
DROP = ["PySide6/Qt/plugins/platformthemes/libqgtk3.so", "PySide6/Qt/qml", "PySide6/Qt/translations",
        "PySide6/Qt/plugins/imageformats/libqpdf.so", "PySide6/Qt/plugins/sqldrivers",
        "PySide6/Qt/plugins/multimedia", "PySide6/Qt/plugins/designer"]


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", type=Path, default=ROOT / "dist")
    args = ap.parse_args()
    from desktop_memory.engine import onnx_export
    from desktop_memory.engine.embed import model_path

    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="dm-build-") as tmp:
        graph = Path(tmp) / onnx_export.BUNDLED_NAME
        onnx_export.export(model_path(), graph)
        env = {**os.environ, "DM_ONNX_GRAPH": str(graph)}
        subprocess.run([sys.executable, "-m", "PyInstaller", "--noconfirm", "--clean", "--log-level", "WARN",
                        "--distpath", str(args.out), "--workpath", str(Path(tmp) / "work"),
                        str(ROOT / "installers" / "desktop-memory.spec")], check=True, env=env, cwd=ROOT)
    app = args.out / "desktop-memory"
    internal = app / "_internal"
    for rel in DROP:
        target = internal / rel
        if target.is_dir():
            shutil.rmtree(target)
        elif target.exists():
            target.unlink()
    size = sum(f.stat().st_size for f in app.rglob("*") if f.is_file())
    packed = ""
    if sys.platform.startswith("linux"):  # Windows: Inno Setup; macOS: installers/macos/build_dmg.sh
        archive = args.out / f"desktop-memory-linux-{platform.machine()}.tar.gz"
        with tarfile.open(archive, "w:gz") as tar:
            tar.add(app, arcname="desktop-memory")
            for extra in ("install.sh", "desktop-memory.desktop"):
                tar.add(ROOT / "installers" / "linux" / extra, arcname=f"desktop-memory/{extra}")
        packed = f", {archive.name} ({archive.stat().st_size / 2**20:.0f} MB)"
    print(f"built {app} ({size / 2**20:.0f} MB unpacked){packed} in {time.perf_counter() - started:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
