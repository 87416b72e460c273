"""`setup-mcp`: snippets per client and merging them into the client's config without losing anything."""

from __future__ import annotations

import json
import os
import sys
import tomllib
from pathlib import Path

import pytest

from desktop_memory.cli.main import main
from desktop_memory.core.errors import InvalidInput
from desktop_memory.mcp import setup


@pytest.mark.parametrize("client", setup.CLIENTS)
def test_snippet_starts_this_installation_over_stdio(client: str, tmp_path: Path):
    text = setup.snippet(client, str(tmp_path / "mem"))
    if client == "codex":
        entry = tomllib.loads(text)["mcp_servers"]["desktop-memory"]
    else:
        entry = json.loads(text[text.index("{"):])[setup.SERVERS_KEY[client]]["desktop-memory"]
    assert Path(entry["command"]).is_absolute() and Path(entry["command"]).exists()
    assert entry["args"][-1] == "mcp" and entry["args"][-3:-1] == ["--data-dir", str(tmp_path / "mem")]
    if client == "claude-code":
        assert text.startswith("claude mcp add --scope user desktop-memory -- ") and entry["type"] == "stdio"


def test_config_paths_follow_each_client(monkeypatch, tmp_path: Path):
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("USERPROFILE", str(tmp_path))  # Path.home() on Windows
    monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
    assert setup.config_path("cursor") == tmp_path / ".cursor" / "mcp.json"
    assert setup.config_path("claude-code") == tmp_path / ".claude.json"
    if sys.platform.startswith("linux"):
        assert setup.config_path("claude-desktop") == tmp_path / ".config" / "Claude" / "claude_desktop_config.json"
    with pytest.raises(InvalidInput):
        setup.config_path("notepad")


def test_merge_creates_a_missing_file(tmp_path: Path):
    path = tmp_path / "new" / "mcp.json"
    result = setup.merge("cursor", path)
    assert result.changed and result.backup is None
    # ["mcp"] beside an installed desktop-memory script, else ["-m", "desktop_memory", "mcp"] (a Python without it)
    assert json.loads(path.read_text())["mcpServers"]["desktop-memory"]["args"] == setup.server_command()["args"]


def test_merge_keeps_everything_else_and_a_backup(tmp_path: Path):
    path = tmp_path / "claude.json"
    original = {
        "numStartups": 12, "projects": {"/src/x": {"allowedTools": ["Bash"], "mcpServers": {}}},
        "mcpServers": {"github": {"command": "gh-mcp", "args": [], "env": {"TOKEN_REF": "keychain"}},
                       "desktop-memory": {"command": "/old/desktop-memory", "args": ["mcp"]}},
        "tipsHistory": {"é": 1},
    }
    raw = json.dumps(original, indent=4, ensure_ascii=False)
    path.write_text(raw, encoding="utf-8")
    path.chmod(0o600)
    result = setup.merge("claude-code", path)
    assert result.changed and result.backup is not None
    assert result.backup.read_text(encoding="utf-8") == raw  # byte for byte
    merged = json.loads(path.read_text(encoding="utf-8"))
    ours = merged["mcpServers"].pop("desktop-memory")
    assert ours["type"] == "stdio" and ours["args"] == setup.server_command()["args"]
    assert ours["command"] != "/old/desktop-memory"
    del original["mcpServers"]["desktop-memory"]
    assert merged == original
    assert os.name != "posix" or path.stat().st_mode & 0o777 == 0o600  # Windows: chmod sets read-only only
    again = setup.merge("claude-code", path)  # already there: nothing written, no second backup
    assert not again.changed and len(list(tmp_path.glob("*.bak"))) == 1


@pytest.mark.parametrize("content", ["{not json", "[1, 2]", '{"mcpServers": []}'])
def test_merge_refuses_a_file_it_cannot_understand_and_leaves_it_alone(tmp_path: Path, content: str):
    path = tmp_path / "mcp.json"
    path.write_text(content)
    with pytest.raises(InvalidInput, match="by hand"):
        setup.merge("cursor", path)
    assert path.read_text() == content and not list(tmp_path.glob("*.bak"))


def test_cli_prints_the_snippet_and_writes_with_write(tmp_path: Path, capsys, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("USERPROFILE", str(tmp_path))  # Path.home() on Windows
    assert main(["setup-mcp", "--client", "cursor"]) == 0
    printed = capsys.readouterr().out
    assert '"desktop-memory"' in printed and str(tmp_path / ".cursor" / "mcp.json") in printed
    assert not (tmp_path / ".cursor").exists()  # showing writes nothing
    assert main(["setup-mcp", "--client", "cursor", "--write"]) == 0
    assert "Added desktop-memory" in capsys.readouterr().out
    assert "desktop-memory" in json.loads((tmp_path / ".cursor" / "mcp.json").read_text())["mcpServers"]
    bad = tmp_path / "bad.json"
    bad.write_text("{oops")
    assert main(["setup-mcp", "--client", "claude-desktop", "--write", "--config", str(bad)]) == 1
    err = capsys.readouterr().err
    assert "not valid JSON" in err and "Traceback" not in err and len(err.strip().splitlines()) == 1


def test_the_entry_carries_what_a_minimal_environment_would_lose(tmp_path: Path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv("XDG_DATA_HOME", raising=False)
    monkeypatch.delenv("DESKTOP_MEMORY_HOME", raising=False)
    monkeypatch.delenv("DESKTOP_MEMORY_ENCRYPTION", raising=False)
    assert "env" not in setup.server_entry("cursor")  # the default folder: nothing to pin
    assert setup.server_entry("claude-code")["env"] == {}
    assert setup.server_entry("cursor", str(tmp_path / "mem"))["args"][-3:] == ["--data-dir", str(tmp_path / "mem"),
                                                                                "mcp"]
    if sys.platform.startswith("linux"):  # another $XDG_DATA_HOME in this shell: the folder is written down
        monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
        assert setup.server_entry("claude-desktop")["env"] == {"DESKTOP_MEMORY_HOME": str(tmp_path / "xdg" /
                                                                                           "desktop-memory")}
        monkeypatch.delenv("XDG_DATA_HOME")
    monkeypatch.setenv("DESKTOP_MEMORY_HOME", str(tmp_path / "mine"))
    monkeypatch.setenv("DESKTOP_MEMORY_ENCRYPTION", "off")
    assert setup.server_entry("cursor")["env"] == {"DESKTOP_MEMORY_HOME": str(tmp_path / "mine"),
                                                   "DESKTOP_MEMORY_ENCRYPTION": "off"}
    assert "DESKTOP_MEMORY_HOME" not in setup.server_entry("cursor", str(tmp_path / "mem"))["env"]  # in args


@pytest.mark.parametrize("content", ['{}', '{"mcpServers": {"other": {"command": "x"}}}',
                                     '{"mcpServers": {"desktop-memory": {"command": 5}}}',
                                     '{"mcpServers": {"desktop-memory": {"command": "x", "args": [1]}}}',
                                     '{"mcpServers": {"desktop-memory": {"type": "http", "command": "x"}}}'])
def test_check_without_a_usable_entry_says_what_to_do(tmp_path: Path, content: str, capsys):
    path = tmp_path / "mcp.json"
    path.write_text(content)
    assert main(["setup-mcp", "--client", "cursor", "--check", "--config", str(path)]) == 1
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "setup-mcp" in err and "Traceback" not in err


def test_check_reports_a_command_that_cannot_start_in_one_line(tmp_path: Path, capsys):
    path = tmp_path / "mcp.json"
    path.write_text(json.dumps({"mcpServers": {"desktop-memory": {"command": str(tmp_path / "gone"), "args": []}}}))
    assert main(["setup-mcp", "--client", "cursor", "--check", "--config", str(path)]) == 1
    err = capsys.readouterr().err
    assert "cannot be started" in err and len(err.strip().splitlines()) == 1
    if sys.platform == "win32":
        return  # the rest starts a shell script, which Windows cannot run as a command
    broken = tmp_path / "broken.sh"  # starts, says why on stderr, and exits
    broken.write_text("#!/bin/sh\necho 'desktop-memory: the data folder is damaged' >&2\nexit 1\n")
    broken.chmod(0o755)
    path.write_text(json.dumps({"mcpServers": {"desktop-memory": {"command": str(broken)}}}))
    assert main(["setup-mcp", "--client", "cursor", "--check", "--config", str(path)]) == 1
    err = capsys.readouterr().err
    assert "stopped before answering: desktop-memory: the data folder is damaged" in err
    assert len(err.strip().splitlines()) == 1
