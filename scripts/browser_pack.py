"""Build the browser companion's store zips from extension/ (unsigned).

    python scripts/browser_pack.py [--out dist/browser]

writes desktop-memory-chromium.zip (the manifest without background.scripts) and desktop-memory-firefox.zip
(without "key" and background.service_worker). The zips are deterministic: entries sorted, fixed timestamps
and permissions, so the same extension/ gives the same bytes. The extension's own tests (extension/tests/)
and its README are not packed.
"""

from __future__ import annotations

import argparse
import json
import sys
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
EXTENSION = ROOT / "extension"
DEFAULT_OUT = ROOT / "dist" / "browser"
FIXED_TIME = (1980, 1, 1, 0, 0, 0)
LEFT_OUT_DIRS = {"tests"}
LEFT_OUT_FILES = {"README.md", "EXTENSION_ID", ".DS_Store"}


def manifest_for(manifest: dict, browser: str) -> dict:
    """The manifest as one browser's store wants it."""
    result = json.loads(json.dumps(manifest))
    background = result.get("background", {})
    if browser == "chromium":
        background.pop("scripts", None)
        result.pop("browser_specific_settings", None)
    elif browser == "firefox":
        result.pop("key", None)
        background.pop("service_worker", None)
    else:
        raise ValueError(f"unknown browser {browser!r}")
    return result


def packed_files(extension: Path) -> list[Path]:
    files = []
    for path in sorted(extension.rglob("*")):
        rel = path.relative_to(extension)
        if path.is_dir() or rel.parts[0] in LEFT_OUT_DIRS or rel.name in LEFT_OUT_FILES:
            continue
        files.append(path)
    return files


def build(browser: str, extension: Path, out: Path) -> Path:
    manifest = json.loads((extension / "manifest.json").read_text(encoding="utf-8"))
    target = out / f"desktop-memory-{browser}.zip"
    out.mkdir(parents=True, exist_ok=True)
    part = target.with_suffix(".zip.part")
    with zipfile.ZipFile(part, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        for path in packed_files(extension):
            name = path.relative_to(extension).as_posix()
            data = path.read_bytes()
            if name == "manifest.json":
                data = (json.dumps(manifest_for(manifest, browser), indent=2) + "\n").encode("utf-8")
            info = zipfile.ZipInfo(name, date_time=FIXED_TIME)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o644 << 16
            info.create_system = 3  # Unix, so the permissions above are read the same everywhere
            zf.writestr(info, data)
    part.replace(target)
    return target


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Build the browser companion's zips (unsigned).")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="folder for the zips (default dist/browser)")
    parser.add_argument("--extension", type=Path, default=EXTENSION, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if not (args.extension / "manifest.json").is_file():
        print(f"error: no manifest.json in {args.extension}", file=sys.stderr)
        return 1
    try:
        for browser in ("chromium", "firefox"):
            print(build(browser, args.extension, args.out))
    except (OSError, ValueError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
