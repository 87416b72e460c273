"""`setup-mcp`: the configuration snippet for an MCP client, and merging it into the client's file.

Each app keeps its MCP servers under its own key in its own file (from each app's documentation):
Claude Desktop, Claude Code, Cursor, Windsurf and Gemini CLI under "mcpServers" (Claude Code with "type":
"stdio"); VS Code under "servers" with "type": "stdio" in the user profile's mcp.json; Zed under
"context_servers" in its settings.json, with "command" a string beside "args" and "env"; Codex CLI in TOML,
as a `[mcp_servers.NAME]` table in ~/.codex/config.toml.

The JSON files may be JSONC (VS Code's, Zed's and Gemini CLI's are: `//` and `/* */` comments, trailing
commas). They are read as such and changed by a textual edit of our entry alone, so every comment, the
indentation and the line ends stay; the edited text is read again and must give exactly the old configuration
plus our entry, or nothing is written. Codex's TOML is edited with tomlkit, which keeps comments and layout.
A file that holds another app's key and not this app's is refused: written there, our entry would be read by
neither app. The file is never written into the data folder (engine/outputs.py, as export and backup).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

from .. import paths
from ..core.errors import DesktopMemoryError, InvalidInput, StorageError
from ..engine import outputs, session_env
from ..paths import shown
from .jsonc import loads_jsonc, merge_member

SERVER_NAME = "desktop-memory"
CLIENTS = ("claude-desktop", "claude-code", "cursor", "vscode", "windsurf", "zed", "codex", "gemini")
CLIENT_NAMES = {"claude-desktop": "Claude Desktop", "claude-code": "Claude Code", "cursor": "Cursor",
                "vscode": "VS Code", "windsurf": "Windsurf", "zed": "Zed", "codex": "Codex CLI",
                "gemini": "Gemini CLI"}
# where each app keeps its MCP servers in its file
SERVERS_KEY = {"claude-desktop": "mcpServers", "claude-code": "mcpServers", "cursor": "mcpServers",
               "windsurf": "mcpServers", "gemini": "mcpServers", "vscode": "servers", "zed": "context_servers",
               "codex": "mcp_servers"}
JSON_KEYS = {"mcpServers": "Claude Desktop, Claude Code, Cursor, Windsurf or Gemini CLI", "servers": "VS Code",
             "context_servers": "Zed"}  # the apps whose file a JSON key marks
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
    note: str | None = None  # something else in the file that keeps the app from starting our server


def current_platform() -> str:
    return sys.platform


def server_command(data_dir: str | None = None) -> dict[str, Any]:
    """How a client starts our MCP server: this installation's `desktop-memory mcp`, by absolute path."""
    scripts = Path(sys.executable).parent
    exe = scripts / ("desktop-memory.exe" if sys.platform == "win32" else "desktop-memory")
    if exe.is_file():
        command, args = str(exe), []
    else:
        command, args = sys.executable, ["-m", "desktop_memory"]
    if data_dir:
        args += ["--data-dir", str(paths.expand(data_dir).resolve())]
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
    """Our entry in the client's file (for Codex, the keys of its TOML table)."""
    entry = server_command(data_dir)
    env = server_env(data_dir)
    if client == "claude-code":
        return {"type": "stdio", **entry, "env": env}
    if client == "vscode":  # "type" is required there
        return {"type": "stdio", **entry, **({"env": env} if env else {})}
    return {**entry, "env": env} if env else entry


def config_path(client: str) -> Path:
    """The client's user-level configuration file on this OS."""
    home, platform = Path.home(), current_platform()
    appdata = Path(os.environ.get("APPDATA") or home / "AppData" / "Roaming")
    xdg_config = Path(os.environ.get("XDG_CONFIG_HOME") or home / ".config")
    if client == "claude-desktop":
        if platform == "darwin":
            return home / "Library" / "Application Support" / "Claude" / "claude_desktop_config.json"
        return (appdata if platform == "win32" else xdg_config) / "Claude" / "claude_desktop_config.json"
    if client == "claude-code":
        return home / ".claude.json"  # user scope: every project
    if client == "cursor":
        return home / ".cursor" / "mcp.json"
    if client == "vscode":  # the default profile's user folder (a workspace's own is .vscode/mcp.json)
        if platform == "darwin":
            return home / "Library" / "Application Support" / "Code" / "User" / "mcp.json"
        return (appdata if platform == "win32" else xdg_config) / "Code" / "User" / "mcp.json"
    if client == "windsurf":
        return home / ".codeium" / "windsurf" / "mcp_config.json"
    if client == "zed":  # Zed's paths.rs: ~/.config/zed on macOS too, $XDG_CONFIG_HOME/zed on Linux
        if platform == "win32":
            return appdata / "Zed" / "settings.json"
        return (xdg_config if platform.startswith("linux") else home / ".config") / "zed" / "settings.json"
    if client == "codex":
        return Path(os.environ.get("CODEX_HOME") or home / ".codex") / "config.toml"
    if client == "gemini":
        return home / ".gemini" / "settings.json"
    raise InvalidInput(f"unknown MCP client {client!r}; choose one of {', '.join(CLIENTS)}")


def snippet(client: str, data_dir: str | None = None) -> str:
    """What to put in the client's configuration (and for Claude Code, the one-line command too)."""
    entry = server_entry(client, data_dir)
    if client == "codex":
        return _toml_merge("", entry)
    text = json.dumps({SERVERS_KEY[client]: {SERVER_NAME: entry}}, indent=2, ensure_ascii=False)
    if client == "claude-code":
        cmd = " ".join(_quote(a) for a in ["claude", "mcp", "add", "--scope", "user", SERVER_NAME, "--",
                                           entry["command"], *entry["args"]])
        return f"{cmd}\n\n# or, in {config_path(client)}:\n{text}"
    return text


def _quote(arg: str) -> str:
    return arg if arg and all(c.isalnum() or c in "-_./:=@" for c in arg) else json.dumps(arg)


# -- reading a client's file: JSONC or TOML, and whose it is --------------------------------------------------
def _read_text(path: Path) -> str | None:
    """The file's text (a UTF-8 byte order mark dropped), or None when there is no file."""
    try:
        raw = path.read_bytes().decode("utf-8")  # as it is: CRLF line ends stay CRLF
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise StorageError(f"cannot read {shown(path)}: {exc.strerror or exc}") from None
    except UnicodeDecodeError as exc:
        raise InvalidInput(f"{shown(path)} is not UTF-8 text ({exc.reason} at byte {exc.start}); fix it or add "
                           "the snippet by hand") from None
    return raw.removeprefix("\ufeff")


def _load(client: str, path: Path, writing: bool = False, data_dir: str | None = None
          ) -> tuple[str | None, dict[str, Any]]:
    """(the file's text or None, its configuration: {} when missing or empty), refusing a file it cannot read
    and a file that belongs to another app; when `writing` it, a file in the data folder too."""
    if "\0" in str(path):
        raise InvalidInput(f"{shown(path)} is not a file name (it holds a NUL character)")
    if writing:
        refuse_in_data_folder(Path(os.path.realpath(path)), data_dir, "MCP configuration")
    raw = _read_text(path)
    if raw is None:
        return None, {}
    if client == "codex":
        config = _toml_config(path, raw)
    else:
        config = _json_config(path, raw)
        _refuse_foreign_json(client, path, config)
    return raw, config


def _json_config(path: Path, raw: str) -> dict[str, Any]:
    try:
        config = loads_jsonc(raw, empty={})
    except ValueError as exc:
        if (toml := _toml_or_none(raw)) is not None and "mcp_servers" in toml:
            raise InvalidInput(f"{shown(path)} is Codex CLI's TOML configuration ([mcp_servers]); use "
                               "--client codex for it") from None
        raise InvalidInput(f"{shown(path)} is not valid JSON ({exc}); fix it or add the snippet by hand") from None
    if not isinstance(config, dict):
        raise InvalidInput(f"{shown(path)} does not hold a JSON object; add the snippet by hand")
    return config


def _refuse_foreign_json(client: str, path: Path, config: dict[str, Any]) -> None:
    """Another app's file: it has another app's key for MCP servers, and not this app's."""
    ours = SERVERS_KEY[client]
    if ours in config:
        return
    mcp = config.get("mcp")
    if isinstance(mcp, dict) and "servers" in mcp:
        raise InvalidInput(f'{shown(path)} looks like VS Code\'s settings.json ("mcp" holds "servers"); VS Code '
                           "reads MCP servers from mcp.json in the same folder: pass that one with --config")
    for key, apps in JSON_KEYS.items():
        if key != ours and key in config:
            raise InvalidInput(f'{shown(path)} is another app\'s configuration: it has "{key}" ({apps}), and '
                               f'{CLIENT_NAMES[client]} reads "{ours}"; choose that app with --client, or pass '
                               f"{CLIENT_NAMES[client]}'s own file with --config")


def _toml_or_none(raw: str) -> dict[str, Any] | None:
    import tomllib

    try:
        return tomllib.loads(raw)
    except ValueError:
        return None


def _toml_config(path: Path, raw: str) -> dict[str, Any]:
    import tomllib

    try:
        config = tomllib.loads(raw)
    except ValueError as exc:
        try:
            other = loads_jsonc(raw)
        except ValueError:
            other = None
        if isinstance(other, dict):
            for key, apps in JSON_KEYS.items():
                if key in other:
                    raise InvalidInput(f'{shown(path)} is another app\'s configuration: it has "{key}" ({apps}), and '
                                       "Codex CLI reads [mcp_servers] from TOML; choose that app with --client, "
                                       "or pass Codex's config.toml with --config") from None
        raise InvalidInput(f"{shown(path)} is not valid TOML ({exc}); fix it or add the snippet by hand") from None
    servers = config.get("mcp_servers", {})
    if not isinstance(servers, dict) or not isinstance(servers.get(SERVER_NAME, {}), dict):
        raise InvalidInput(f"[mcp_servers] in {shown(path)} is not a table of tables; add the snippet by hand")
    return config


# -- TOML (Codex CLI) -------------------------------------------------------------------------------------------
def _toml_merge(raw: str, entry: dict[str, Any]) -> str:
    """Codex's config.toml with `[mcp_servers.desktop-memory]` set: command, args and env written, the person's
    other keys of our table (a start-up timeout, tool approvals) and everything else in the file kept."""
    import tomlkit
    from tomlkit.items import InlineTable, Table

    doc = tomlkit.parse(raw)
    servers = doc.get("mcp_servers")
    if servers is None:
        servers = tomlkit.table(is_super_table=True)
        doc["mcp_servers"] = servers
    ours = servers.get(SERVER_NAME)
    if ours is None:
        ours = tomlkit.inline_table() if isinstance(servers, InlineTable) else tomlkit.table()
        _toml_fill(ours, entry)
        if isinstance(ours, Table):
            ours.add(tomlkit.nl())  # a blank line before whatever table follows
        servers[SERVER_NAME] = ours
    else:
        for key in ("url", "bearer_token_env_var", "http_headers", "env_http_headers"):  # never an HTTP server
            ours.pop(key, None)
        _toml_fill(ours, entry)
    text = tomlkit.dumps(doc)
    if text.endswith("\n\n") and not raw.endswith("\n\n"):
        text = text.rstrip("\n") + "\n"
    if "\r\n" in raw:  # tomlkit writes what it adds with LF: CRLF like the rest (when no value changes by it)
        crlf = re.sub(r"(?<!\r)\n", "\r\n", text)
        text = crlf if _toml_or_none(crlf) == _toml_or_none(text) else text
    return text


def _toml_fill(table: Any, entry: dict[str, Any]) -> None:
    import tomlkit

    table["command"] = entry["command"]
    table["args"] = list(entry["args"])
    if entry.get("env"):
        env = tomlkit.inline_table()
        env.update(entry["env"])
        table["env"] = env
    elif "env" in table:
        del table["env"]


# -- writing --------------------------------------------------------------------------------------------------
def _data_folders(data_dir: str | None) -> list[Path]:
    """The data folders a file must stay out of: this invocation's, and the one a client's server would use."""
    folders = [paths.data_dir(data_dir)]
    if (default := minimal_env_data_dir()) not in folders:
        folders.append(default)
    return folders


def refuse_in_data_folder(target: Path, data_dir: str | None, what: str) -> None:
    for folder in _data_folders(data_dir):
        outputs.check_outside(folder, target, what)


def merge(client: str, path: Path | None = None, data_dir: str | None = None) -> MergeResult:
    """Add or replace our entry in the client's file, keep everything else, back up the old file first."""
    path = path or config_path(client)
    raw, config = _load(client, path, writing=True, data_dir=data_dir)
    key, entry = SERVERS_KEY[client], server_entry(client, data_dir)
    servers = config.get(key, {})
    if not isinstance(servers, dict):
        raise InvalidInput(f'"{key}" in {shown(path)} is not a JSON object; add the snippet by hand')
    if client == "codex":
        current = servers.get(SERVER_NAME) or {}
        if {k: current.get(k) for k in ("command", "args")} == {k: entry[k] for k in ("command", "args")} and \
                current.get("env", {}) == entry.get("env", {}) and "url" not in current:
            return MergeResult(path, False, None, _held_back(client, config))
        try:
            text = _toml_merge(raw or "", entry)
            written = _toml_or_none(text)
        except Exception:  # noqa: BLE001 - tomlkit could not place it: said below, nothing written
            written, text = None, ""
        expected = _expected_toml(config, entry)
    else:
        if servers.get(SERVER_NAME) == entry:
            return MergeResult(path, False, None, _held_back(client, config))
        try:
            text = merge_member(raw, key, SERVER_NAME, entry)
            written = loads_jsonc(text)
        except (ValueError, AssertionError, AttributeError, TypeError, IndexError, RecursionError):
            written, text = None, ""
        expected = {**config, key: {**servers, SERVER_NAME: entry}}
    if written != expected:  # never write what would change anything but our entry
        raise InvalidInput(f"cannot add desktop-memory to {shown(path)} without changing something else; add the "
                           "snippet by hand")
    backup = _write(Path(os.path.realpath(path)), text.encode("utf-8"))  # a symlink (dotfiles): where it points
    return MergeResult(path, True, backup, _held_back(client, config))


def _held_back(client: str, config: dict[str, Any]) -> str | None:
    """What else in the app's file keeps it from starting our server (left for the person to change)."""
    mcp = config.get("mcp") if client == "gemini" else None
    if isinstance(mcp, dict):
        allowed, excluded = mcp.get("allowed"), mcp.get("excluded")
        if isinstance(allowed, list) and SERVER_NAME not in allowed:
            return f'Gemini CLI starts only the servers in "mcp": {{"allowed": [...]}}: add "{SERVER_NAME}" there'
        if isinstance(excluded, list) and SERVER_NAME in excluded:
            return f'"{SERVER_NAME}" is in "mcp": {{"excluded": [...]}}, so Gemini CLI skips it: take it out there'
    ours = config.get("mcp_servers", {}).get(SERVER_NAME, {}) if client == "codex" else {}
    if isinstance(ours, dict) and ours.get("enabled") is False:
        return f"[mcp_servers.{SERVER_NAME}] has enabled = false, so Codex CLI skips it: remove that line"
    return None


def _expected_toml(config: dict[str, Any], entry: dict[str, Any]) -> dict[str, Any]:
    servers = dict(config.get("mcp_servers", {}))
    ours = {k: v for k, v in servers.get(SERVER_NAME, {}).items()
            if k not in ("url", "bearer_token_env_var", "http_headers", "env_http_headers", "env")}
    ours.update(command=entry["command"], args=entry["args"], **({"env": entry["env"]} if entry.get("env") else {}))
    servers[SERVER_NAME] = ours
    return {**config, "mcp_servers": servers}


def check_name_fits(target: Path) -> None:
    """A name too long for the file system is said before any folder on its way is made."""
    if len(str(target)) > paths.MAX_PATH or any(len(part) > paths.MAX_NAME for part in target.parts):
        raise InvalidInput(f"cannot write {shown(target)}: the name is too long")


def _write(target: Path, data: bytes) -> Path | None:
    """Write `target` through its scratch file, the old one kept beside it as a dated .bak (returned)."""
    check_name_fits(target)
    backup = None
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        if target.exists():
            stamp, n = time.strftime("%Y%m%d-%H%M%S"), 0
            while (backup := target.with_name(f"{target.name}.{stamp}{f'-{n}' if n else ''}.bak")).exists():
                n += 1
            shutil.copy2(target, cast(Path, backup))  # the loop leaves it set
        tmp = outputs.scratch(target)
        tmp.write_bytes(data)
        if backup is not None:
            shutil.copymode(backup, tmp)
        os.replace(tmp, target)
    except OSError as exc:
        raise StorageError(f"cannot write {shown(target)}: {exc.strerror or exc}") from exc
    return backup


# -- `setup-mcp --check`: start the server as the client would, list its tools, run one search --------------
def configured_entry(client: str, path: Path | None = None) -> dict[str, Any]:
    """Our server's entry in the client's configuration: {"command", "args", "env"} as written there."""
    path = path or config_path(client)
    servers = _load(client, path)[1].get(SERVERS_KEY[client])
    entry = servers.get(SERVER_NAME) if isinstance(servers, dict) else None
    if client == "zed" and isinstance(entry, dict) and isinstance(entry.get("command"), dict):
        entry = {**entry, "command": entry["command"].get("path"), "args": entry["command"].get("args", []),
                 "env": entry["command"].get("env") or {}}  # Zed's older form: "command": {"path", "args", "env"}
    if not isinstance(entry, dict) or not isinstance(entry.get("command"), str):
        raise InvalidInput(f"{shown(path)} does not start desktop-memory's MCP server; run "
                           f"`desktop-memory setup-mcp --client {client} --write` first")
    if entry.get("type", "stdio") != "stdio":
        raise InvalidInput(f"{shown(path)}: desktop-memory's entry is not a stdio server; run setup-mcp --write again")
    args, env = entry.get("args", []), entry.get("env") or {}
    if not (isinstance(args, list) and all(isinstance(a, str) for a in args)) or not (
            isinstance(env, dict) and all(isinstance(v, str) for v in env.values())):
        raise InvalidInput(f"{shown(path)}: desktop-memory's args or env are not strings; run setup-mcp --write again")
    return {"command": entry["command"], "args": list(args), "env": dict(env)}


def check(client: str, path: Path | None = None, timeout_s: float = CHECK_TIMEOUT_S) -> str:
    """Start the configured server exactly as the client would (its command, args and env over the MCP
    SDK's default environment, through the SDK's own stdio client), list its tools and run one search.

    Returns one line for the person; raises `CheckFailed` (one line, what is wrong) otherwise.
    """
    import tempfile

    import anyio
    from mcp.client.stdio import StdioServerParameters

    entry = configured_entry(client, path)
    params = StdioServerParameters(command=entry["command"], args=entry["args"], env=entry["env"] or None)
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
