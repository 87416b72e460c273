"""Claude Desktop's one-click bundle (.mcpb): a manifest that starts this installation's `desktop-memory mcp`."""

from __future__ import annotations

import io
import json
import os
import zipfile
from pathlib import Path

from .. import __version__
from ..core.errors import InvalidInput, StorageError
from ..engine import outputs
from ..paths import shown
from . import setup

BUNDLE_SUFFIX = ".mcpb"
BUNDLE_MANIFEST_VERSION = "0.3"  # MCPB's MANIFEST.md: the current version (0.4 adds only the "uv" server type)


def write_bundle(out: Path, data_dir: str | None = None) -> Path:
    """A .mcpb bundle whose manifest starts the installed `desktop-memory mcp` (nothing else inside but a note:
    the bundle needs this installation and works on this computer only)."""
    if "\0" in str(out):
        raise InvalidInput(f"{shown(out)} is not a file name (it holds a NUL character)")
    if not out.name.lower().endswith(BUNDLE_SUFFIX):
        raise InvalidInput(f"{shown(out)} does not end in {BUNDLE_SUFFIX}, the files Claude Desktop opens; name it "
                           f"e.g. desktop-memory{BUNDLE_SUFFIX}")
    if os.path.isdir(out):
        raise InvalidInput(f"{shown(out)} is a folder; name the bundle file in it, e.g. desktop-memory.mcpb")
    target = Path(os.path.realpath(out))
    setup.refuse_in_data_folder(target, data_dir, "bundle")
    entry = setup.server_entry("claude-desktop", data_dir)
    platform = setup.current_platform()
    note = ("This bundle starts the desktop-memory installed on this computer:\n"
            f"  {' '.join([entry['command'], *entry['args']])}\n"
            "It holds no program of its own; reinstall it (desktop-memory setup-mcp --client claude-desktop "
            "--bundle FILE) after moving or reinstalling desktop-memory.\n")
    manifest = {
        "manifest_version": BUNDLE_MANIFEST_VERSION,
        "name": setup.SERVER_NAME,
        "display_name": "Desktop Memory",
        "version": __version__,
        "description": "Your private, offline memory: search, add and pin what you remember, from Claude.",
        "author": {"name": "desktop-memory"},
        "server": {"type": "binary", "entry_point": "server/README.txt",
                   "mcp_config": {"command": entry["command"], "args": entry["args"],
                                  **({"env": entry["env"]} if entry.get("env") else {})}},
        "tools_generated": True,
        "keywords": ["memory", "offline", "private", "search"],
        "license": "MIT",
        "compatibility": {"platforms": [platform if platform in ("darwin", "win32") else "linux"]},
    }
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as bundle:
        bundle.writestr("manifest.json", json.dumps(manifest, indent=2, ensure_ascii=False) + "\n")
        bundle.writestr("server/README.txt", note)
    setup.check_name_fits(target)
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        tmp = outputs.scratch(target)
        tmp.write_bytes(buffer.getvalue())
        os.replace(tmp, target)
    except OSError as exc:
        raise StorageError(f"cannot write {shown(out)}: {exc.strerror or exc}") from exc
    return out
