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

from .. import paths
from ..core.errors import DesktopMemoryError, InvalidInput, StorageError
from ..engine import session_env

SERVER_NAME = "desktop-memory"
CLIENTS = ("claude-desktop", "claude-code", "cursor")
CLIENT_NAMES = {"claude-desktop": "Claude Desktop", "claude-code": "Claude Code", "cursor": "Cursor"}
CHECK_TIMEOUT_S = 180.0  # a first start loads the embedding model (and may prepare it once)
CHECK_QUERY = "desktop-memory setup check"
ENCRYPTION_ENV = "DESKTOP_MEMORY_ENCRYPTION"  # engine/encryption.py: ENV (not imported: it pulls in the database)


class CheckFailed(DesktopMemoryError):
    """`setup-mcp --check`: the configured server did not start or did not answer."""


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


def minimal_env_data_dir() -> Path:
    """The data folder a process started with only HOME, PATH, ... (as AI apps start MCP servers) resolves."""
    if session_env.applies():  # platformdirs: $XDG_DATA_HOME, which such a process lacks, else ~/.local/share
        return Path.home() / ".local" / "share" / paths.APP_NAME
    from platformdirs import user_data_dir  # macOS: from HOME; Windows: the known folder (APPDATA is passed)

    return Path(user_data_dir(paths.APP_NAME, appauthor=False))


def server_env(data_dir: str | None = None) -> dict[str, str]:
    """What the server needs and a client's minimal environment would not pass: this shell's data folder
    (when $DESKTOP_MEMORY_HOME or $XDG_DATA_HOME chose another than the default) and an encryption opt-out."""
    env: dict[str, str] = {}
    if not data_dir and (here := paths.data_dir()) != minimal_env_data_dir():
        env[paths.ENV_HOME] = str(here)
    if os.environ.get(ENCRYPTION_ENV, "").strip():
        env[ENCRYPTION_ENV] = os.environ[ENCRYPTION_ENV].strip()
    return env


def server_entry(client: str, data_dir: str | None = None) -> dict[str, Any]:
    entry = server_command(data_dir)
    env = server_env(data_dir)
    if client == "claude-code":
        return {"type": "stdio", **entry, "env": env}
    return {**entry, "env": env} if env else entry


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


def _read_config(path: Path) -> dict[str, Any]:
    """The client's configuration as a JSON object ({} when the file is missing or empty)."""
    if not path.exists():
        return {}
    try:
        raw = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise StorageError(f"cannot read {path}: {exc}") from exc
    if not raw.strip():
        return {}
    try:
        config = json.loads(raw)
    except ValueError as exc:
        raise InvalidInput(f"{path} is not valid JSON ({exc}); fix it or add the snippet by hand") from None
    if not isinstance(config, dict):
        raise InvalidInput(f"{path} does not hold a JSON object; add the snippet by hand")
    return config


def merge(client: str, path: Path | None = None, data_dir: str | None = None) -> MergeResult:
    """Add or replace our entry under "mcpServers", keep everything else, back up the old file first."""
    path = path or config_path(client)
    config = _read_config(path)
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


# -- `setup-mcp --check`: start the server as the client would, list its tools, run one search --------------
def configured_entry(client: str, path: Path | None = None) -> dict[str, Any]:
    """Our server's entry in the client's configuration, as written there."""
    path = path or config_path(client)
    servers = _read_config(path).get("mcpServers")
    entry = servers.get(SERVER_NAME) if isinstance(servers, dict) else None
    if not isinstance(entry, dict) or not isinstance(entry.get("command"), str):
        raise InvalidInput(f"{path} does not start desktop-memory's MCP server; run "
                           f"`desktop-memory setup-mcp --client {client} --write` first")
    if entry.get("type", "stdio") != "stdio":
        raise InvalidInput(f"{path}: desktop-memory's entry is not a stdio server; run setup-mcp --write again")
    args, env = entry.get("args", []), entry.get("env") or {}
    if not (isinstance(args, list) and all(isinstance(a, str) for a in args)) or not (
            isinstance(env, dict) and all(isinstance(v, str) for v in env.values())):
        raise InvalidInput(f"{path}: desktop-memory's args or env are not strings; run setup-mcp --write again")
    return entry


def check(client: str, path: Path | None = None, timeout_s: float = CHECK_TIMEOUT_S) -> str:
    """Start the configured server exactly as the client would (its command, args and env over the MCP
    SDK's default environment, through the SDK's own stdio client), list its tools and run one search.

    Returns one line for the person; raises `CheckFailed` (one line, what is wrong) otherwise.
    """
    import tempfile

    import anyio
    from mcp.client.stdio import StdioServerParameters

    entry = configured_entry(client, path)
    params = StdioServerParameters(command=entry["command"], args=list(entry.get("args", [])),
                                   env=dict(entry.get("env") or {}) or None)
    with tempfile.TemporaryFile("w+", encoding="utf-8", errors="replace") as errlog:
        try:
            tools, failure = anyio.run(_probe, params, errlog, timeout_s)
        except Exception as exc:  # noqa: BLE001 - whatever stopped it, said in one line
            errlog.seek(0)
            raise CheckFailed(_start_failure(entry["command"], _leaf(exc), errlog.read(), timeout_s)) from None
    if failure:
        raise CheckFailed(f"the MCP server starts but its search fails: {failure}")
    return f"desktop-memory MCP server works with {CLIENT_NAMES.get(client, client)}: {tools} tools"


async def _probe(params: Any, errlog: Any, timeout_s: float) -> tuple[int, str | None]:
    """(number of tools, a failed search's message or None)."""
    import anyio
    from mcp import ClientSession
    from mcp.client.stdio import stdio_client

    with anyio.fail_after(timeout_s):
        async with stdio_client(params, errlog=errlog) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            tools = (await session.list_tools()).tools
            result = await session.call_tool("search_memories", {"query": CHECK_QUERY, "limit": 1})
    text = " ".join(getattr(c, "text", "") for c in result.content).strip()
    message = text.split(": ", 1)[1] if text.startswith("Error executing tool") and ": " in text else text
    return len(tools), (message or "unknown error") if result.is_error else None


def _leaf(exc: BaseException) -> BaseException:
    """The first real error inside anyio's exception groups."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return exc


def _start_failure(command: str, exc: BaseException, stderr: str, timeout_s: float) -> str:
    if isinstance(exc, TimeoutError):
        return f"the MCP server did not answer within {timeout_s:.0f} s ({command})"
    if isinstance(exc, OSError):
        return (f"the configured command cannot be started: {command} ({exc.strerror or exc}); "
                "run setup-mcp --write again")
    lines = [line.strip() for line in stderr.splitlines() if line.strip()]
    said = lines[-1] if lines else f"{type(exc).__name__}: {exc}"
    return f"the MCP server stopped before answering: {said[:300]}"
