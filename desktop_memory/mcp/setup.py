"""`setup-mcp`: the configuration snippet for an MCP client, and merging it into the client's file."""

from __future__ import annotations

import json
import os
import shutil
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..core.errors import InvalidInput, StorageError

SERVER_NAME = "desktop-memory"
CLIENTS = ("claude-desktop", "claude-code", "cursor")


@dataclass
class MergeResult:
    path: Path
    changed: bool
    backup: Path | None


def server_command(data_dir: str | None = None) -> dict[str, Any]:
    """How a client starts our MCP server: this installation's `desktop-memory mcp`, by absolute path."""
    scripts = Path(sys.executable).parent
    exe = scripts / ("desktop-memory.exe" if sys.platform == "win32" else "desktop-memory")
    if exe.is_file():
        command, args = str(exe), []
    else:
        command, args = sys.executable, ["-m", "desktop_memory"]
    if data_dir:
        args += ["--data-dir", str(Path(data_dir).expanduser().resolve())]
    return {"command": command, "args": [*args, "mcp"]}


def server_entry(client: str, data_dir: str | None = None) -> dict[str, Any]:
    entry = server_command(data_dir)
    if client == "claude-code":
        return {"type": "stdio", **entry, "env": {}}
    return entry


def config_path(client: str) -> Path:
    """The client's user-level configuration file on this OS."""
    home = Path.home()
    if client == "claude-desktop":
        if sys.platform == "darwin":
            return home / "Library" / "Application Support" / "Claude" / "claude_desktop_config.json"
        if sys.platform == "win32":
            return Path(os.environ.get("APPDATA") or home / "AppData" / "Roaming") / "Claude" / \
                "claude_desktop_config.json"
        return Path(os.environ.get("XDG_CONFIG_HOME") or home / ".config") / "Claude" / "claude_desktop_config.json"
    if client == "claude-code":
        return home / ".claude.json"  # user scope: every project
    if client == "cursor":
        return home / ".cursor" / "mcp.json"
    raise InvalidInput(f"unknown MCP client {client!r}; choose one of {', '.join(CLIENTS)}")


def snippet(client: str, data_dir: str | None = None) -> str:
    """What to put in the client's configuration (and for Claude Code, the one-line command too)."""
    entry = server_entry(client, data_dir)
    text = json.dumps({"mcpServers": {SERVER_NAME: entry}}, indent=2)
    if client == "claude-code":
        cmd = " ".join(_quote(a) for a in ["claude", "mcp", "add", "--scope", "user", SERVER_NAME, "--",
                                           entry["command"], *entry["args"]])
        return f"{cmd}\n\n# or, in {config_path(client)}:\n{text}"
    return text


def _quote(arg: str) -> str:
    return arg if arg and all(c.isalnum() or c in "-_./:=@" for c in arg) else json.dumps(arg)


def merge(client: str, path: Path | None = None, data_dir: str | None = None) -> MergeResult:
    """Add or replace our entry under "mcpServers", keep everything else, back up the old file first."""
    path = path or config_path(client)
    config: dict[str, Any] = {}
    if path.exists():
        try:
            raw = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise StorageError(f"cannot read {path}: {exc}") from exc
        if raw.strip():
            try:
                config = json.loads(raw)
            except ValueError as exc:
                raise InvalidInput(f"{path} is not valid JSON ({exc}); fix it or add the snippet by hand") from None
            if not isinstance(config, dict):
                raise InvalidInput(f"{path} does not hold a JSON object; add the snippet by hand")
    servers = config.setdefault("mcpServers", {})
    if not isinstance(servers, dict):
        raise InvalidInput(f'"mcpServers" in {path} is not a JSON object; add the snippet by hand')
    entry = server_entry(client, data_dir)
    if servers.get(SERVER_NAME) == entry:
        return MergeResult(path, False, None)
    servers[SERVER_NAME] = entry
    backup = None
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        if path.exists():
            stamp, n = time.strftime("%Y%m%d-%H%M%S"), 0
            while (backup := path.with_name(f"{path.name}.{stamp}{f'-{n}' if n else ''}.bak")).exists():
                n += 1
            shutil.copy2(path, backup)
        tmp = path.with_name(path.name + ".desktop-memory.tmp")
        tmp.write_text(json.dumps(config, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
        if backup is not None:
            shutil.copymode(backup, tmp)
        os.replace(tmp, path)
    except OSError as exc:
        raise StorageError(f"cannot write {path}: {exc.strerror or exc}") from exc
    return MergeResult(path, True, backup)
