"""Build the one-folder app with PyInstaller: export MiniLM to ONNX, run the spec, trim, pack.

    .venv/bin/python installers/build.py [--out dist]     # -> dist/desktop-memory/ and a .tar.gz

Needs the `build` extra (pyinstaller) and the engine's own dependencies (torch and onnx only for the
export, never bundled).
"""

from __future__ import annotations

import argparse
import hashlib
import os
import platform
import re
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

# The same for PySide6's Windows wheel (its files live under PySide6/, not PySide6/Qt/), plus what only Windows
# ships: Mesa's software OpenGL (opengl32sw.dll, 20 MB; the widgets never use OpenGL), the Direct2D platform
# (the app runs on qwindows), TLS backends and network-information (Qt Network serves the local socket only)
DROP_WINDOWS = ["PySide6/translations", "PySide6/qml", "PySide6/opengl32sw.dll", "PySide6/plugins/tls",
                "PySide6/plugins/networkinformation", "PySide6/plugins/platforms/qdirect2d.dll",
                "PySide6/plugins/generic", "PySide6/plugins/imageformats/qpdf.dll", "PySide6/plugins/sqldrivers",
                "PySide6/plugins/multimedia", "PySide6/plugins/designer"]

# Libraries PyInstaller collected for the GTK3 platform theme dropped above; removed when nothing left needs them
GTK_FAMILY = re.compile(r"^lib(gtk-3|gdk-3|gdk_pixbuf|atk|atspi|cairo|pango|pixman|epoxy|harfbuzz|graphite2|fribidi|"
                        r"thai|datrie|jpeg)[-.\w]*\.so")


def needed_by(path: Path) -> set[str]:
    """The shared libraries an ELF file names as DT_NEEDED (readelf from binutils)."""
    out = subprocess.run(["readelf", "-d", str(path)], capture_output=True, text=True).stdout
    return set(re.findall(r"\(NEEDED\).*\[(.+?)\]", out))


def drop_orphan_gtk(internal: Path, exe: Path) -> list[str]:
    """Remove GTK-family libraries that no remaining library, module or the launcher needs."""
    if not sys.platform.startswith("linux") or shutil.which("readelf") is None:
        return []
    top = {f.name for f in internal.iterdir() if ".so" in f.name and f.is_file() and not f.is_symlink()}
    roots = [exe] + [f for f in internal.rglob("*.so*") if f.parent != internal and f.is_file()]
    roots += [internal / n for n in top if not GTK_FAMILY.match(n)]
    seen: set[str] = set()
    stack = list(roots)
    while stack:
        for name in needed_by(stack.pop()):
            if name in top and name not in seen:
                seen.add(name)
                stack.append(internal / name)
    dropped = sorted(n for n in top - seen if GTK_FAMILY.match(n))
    for name in dropped:
        (internal / name).unlink()
    return dropped


def link_copies(internal: Path) -> int:
    """Turn identical copies of one library (libx.so, libx.so.0, libx.so.0.1) into symlinks; bytes saved."""
    saved = 0
    if not sys.platform.startswith("linux"):
        return saved
    groups: dict[tuple[Path, str, str], list[Path]] = {}
    for f in internal.rglob("*.so*"):
        if f.is_file() and not f.is_symlink():
            digest = hashlib.sha256(f.read_bytes()).hexdigest()
            groups.setdefault((f.parent, f.name.split(".so")[0], digest), []).append(f)
    for files in groups.values():
        if len(files) > 1:
            keep = max(files, key=lambda f: len(f.name))  # the fully versioned name holds the bytes
            for f in files:
                if f != keep:
                    saved += f.stat().st_size
                    f.unlink()
                    f.symlink_to(keep.name)
    return saved


def trim(internal: Path, patterns: list[str]) -> None:
    """Remove the files and folders matching `patterns` (globs relative to _internal)."""
    for pattern in patterns:
        for target in internal.glob(pattern):
            if target.is_dir() and not target.is_symlink():
                shutil.rmtree(target)
            else:
                target.unlink()


def tree_size(folder: Path) -> int:
    return sum(f.lstat().st_size for f in folder.rglob("*") if f.is_file() and not f.is_symlink())


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", type=Path, default=ROOT / "dist")
    ap.add_argument("--onnx", type=Path, help="MiniLM already exported to ONNX (skips the export, which needs "
                    "torch: the Windows build under Wine exports on the Linux side)")
    ap.add_argument("--workpath", type=Path, help="PyInstaller's work folder (default: a temporary one)")
    args = ap.parse_args()

    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="dm-build-") as tmp:
        graph = args.onnx
        if graph is None:
            from desktop_memory.engine import onnx_export
            from desktop_memory.engine.embed import model_path

            graph = Path(tmp) / onnx_export.BUNDLED_NAME
            onnx_export.export(model_path(), graph)
        env = {**os.environ, "DM_ONNX_GRAPH": str(graph)}
        subprocess.run([sys.executable, "-m", "PyInstaller", "--noconfirm", "--clean", "--log-level", "WARN",
                        "--distpath", str(args.out), "--workpath", str(args.workpath or Path(tmp) / "work"),
                        str(ROOT / "installers" / "desktop-memory.spec")], check=True, env=env, cwd=ROOT)
    app = args.out / "desktop-memory"
    internal = app / "_internal"
    before = tree_size(app)
    trim(internal, DROP_WINDOWS if sys.platform == "win32" else DROP)
    dropped = drop_orphan_gtk(internal, app / "desktop-memory")
    linked = link_copies(internal)
    print(f"trimmed: {len(dropped)} unused GTK libraries, {linked / 2**20:.0f} MB of duplicate library copies")
    size = tree_size(app)
    print(f"unpacked: {before / 2**20:.0f} MB before trims, {size / 2**20:.0f} MB after")
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
