"""`setup-mcp` for every AI app: each one's own format and file, JSONC comments kept, another app's file
refused, `--check` for each, never into the data folder, and the Claude Desktop bundle (.mcpb)."""

from __future__ import annotations

import json
import os
import sys
import textwrap
import tomllib
import zipfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from desktop_memory.cli.main import main
from desktop_memory.core.errors import InvalidInput
from desktop_memory.mcp import setup

NEW_CLIENTS = ("vscode", "windsurf", "zed", "codex", "gemini")
JSON_KEY = {"claude-desktop": "mcpServers", "claude-code": "mcpServers", "cursor": "mcpServers",
            "windsurf": "mcpServers", "gemini": "mcpServers", "vscode": "servers", "zed": "context_servers"}


def _home(monkeypatch, tmp_path: Path) -> Path:
    for name in ("HOME", "USERPROFILE"):
        monkeypatch.setenv(name, str(tmp_path))
    for name in ("XDG_CONFIG_HOME", "APPDATA", "CODEX_HOME"):
        monkeypatch.delenv(name, raising=False)
    return tmp_path


def _one_line_error(capsys) -> str:
    err = capsys.readouterr().err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1, err
    return err


def _ours(client: str, path: Path) -> dict:
    """Our entry as the app reads it from its file."""
    raw = path.read_text(encoding="utf-8")
    if client == "codex":
        return tomllib.loads(raw)["mcp_servers"]["desktop-memory"]
    return setup.loads_jsonc(raw)[JSON_KEY[client]]["desktop-memory"]


# -- where each app keeps its file, per OS -------------------------------------------------------------------
@pytest.mark.parametrize("platform", ["linux", "darwin", "win32"])
def test_each_app_has_its_file_on_each_os(monkeypatch, tmp_path: Path, platform: str):
    home = _home(monkeypatch, tmp_path)
    monkeypatch.setattr(setup, "current_platform", lambda: platform)
    appdata = home / "AppData" / "Roaming"
    if platform == "win32":
        monkeypatch.setenv("APPDATA", str(appdata))
    user = {"linux": home / ".config" / "Code" / "User", "darwin": home / "Library" / "Application Support" / "Code" /
            "User", "win32": appdata / "Code" / "User"}[platform]
    assert setup.config_path("vscode") == user / "mcp.json"
    zed = appdata / "Zed" if platform == "win32" else home / ".config" / "zed"
    assert setup.config_path("zed") == zed / "settings.json"
    assert setup.config_path("windsurf") == home / ".codeium" / "windsurf" / "mcp_config.json"
    assert setup.config_path("codex") == home / ".codex" / "config.toml"
    assert setup.config_path("gemini") == home / ".gemini" / "settings.json"
    if platform == "linux":  # $XDG_CONFIG_HOME moves VS Code's and Zed's folders; $CODEX_HOME moves Codex's
        monkeypatch.setenv("XDG_CONFIG_HOME", str(home / "xdg"))
        monkeypatch.setenv("CODEX_HOME", str(home / "codex-home"))
        assert setup.config_path("vscode") == home / "xdg" / "Code" / "User" / "mcp.json"
        assert setup.config_path("zed") == home / "xdg" / "zed" / "settings.json"
        assert setup.config_path("codex") == home / "codex-home" / "config.toml"


# -- each app's format ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("client", setup.CLIENTS)
def test_each_app_gets_its_own_format_and_check_reads_it_back(client: str, tmp_path: Path, monkeypatch):
    monkeypatch.setenv("DESKTOP_MEMORY_ENCRYPTION", "off")  # something in env, to see where env goes
    path = tmp_path / "app" / ("config.toml" if client == "codex" else "config.json")
    result = setup.merge(client, path, str(tmp_path / "mem"))
    assert result.changed and result.backup is None
    command = setup.server_command(str(tmp_path / "mem"))
    ours = _ours(client, path)
    assert ours["command"] == command["command"] and ours["args"] == command["args"]
    assert ours["env"] == {"DESKTOP_MEMORY_ENCRYPTION": "off"}
    assert ours.get("type") == ("stdio" if client in ("vscode", "claude-code") else None)
    if client == "codex":
        assert "[mcp_servers.desktop-memory]" in path.read_text()
    else:
        assert set(json.loads(path.read_text())) == {JSON_KEY[client]}
    entry = setup.configured_entry(client, path)  # what --check starts
    assert (entry["command"], entry["args"], entry["env"]) == (command["command"], command["args"], ours["env"])
    assert not setup.merge(client, path, str(tmp_path / "mem")).changed  # already there: nothing written


@pytest.mark.parametrize("client", setup.CLIENTS)
def test_each_snippet_is_what_merge_writes(client: str, tmp_path: Path):
    text = setup.snippet(client, str(tmp_path / "mem"))
    body = text[text.index("[mcp_servers"):] if client == "codex" else text[text.index("{"):]
    path = tmp_path / "written"
    setup.merge(client, path, str(tmp_path / "mem"))
    if client == "codex":
        assert tomllib.loads(body) == tomllib.loads(path.read_text())
    else:
        assert json.loads(body) == json.loads(path.read_text())


def test_zed_gets_the_current_flat_command_and_keeps_its_other_settings(tmp_path: Path):
    path = tmp_path / "settings.json"
    path.write_text(textwrap.dedent("""\
        // Zed settings
        //
        // For information on how to configure Zed, see the Zed
        // documentation: https://zed.dev/docs/configuring-zed
        {
          "theme": "One Dark", // the dark one
          "context_servers": {
            "github": { "command": "gh-mcp", "args": [], "env": {} },
          },
          "agent": { "profiles": { "x": { "context_servers": {} } } },
        }
        """))
    setup.merge("zed", path)
    data = setup.loads_jsonc(path.read_text())
    ours = data["context_servers"]["desktop-memory"]
    assert isinstance(ours["command"], str) and isinstance(ours["args"], list)  # not {"path", "args"}
    assert data["context_servers"]["github"] == {"command": "gh-mcp", "args": [], "env": {}}
    assert data["theme"] == "One Dark" and data["agent"] == {"profiles": {"x": {"context_servers": {}}}}
    for comment in ("// Zed settings", "// documentation: https://zed.dev/docs/configuring-zed", "// the dark one"):
        assert comment in path.read_text()


# -- JSONC: comments and trailing commas read, and kept when written ---------------------------------------
VSCODE_MCP = """\
{
\t// my servers
\t"servers": {
\t\t/* the GitHub one */
\t\t"github": {
\t\t\t"type": "http",
\t\t\t"url": "https://api.githubcopilot.com/mcp/", // no token: OAuth
\t\t},
\t},
\t"inputs": [
\t\t{ "type": "promptString", "id": "key", "description": "API key // not a comment", "password": true },
\t],
}
"""


def test_a_vscode_file_with_comments_gets_our_server_and_keeps_every_comment(tmp_path: Path):
    path = tmp_path / "mcp.json"
    path.write_text(VSCODE_MCP)
    result = setup.merge("vscode", path)
    assert result.backup is not None and result.backup.read_text() == VSCODE_MCP
    text = path.read_text()
    for kept in ("\t// my servers\n", "\t\t/* the GitHub one */\n", "// no token: OAuth\n"):
        assert kept in text
    data = setup.loads_jsonc(text)
    assert data["servers"]["github"] == {"type": "http", "url": "https://api.githubcopilot.com/mcp/"}
    assert data["inputs"][0]["description"] == "API key // not a comment"
    assert data["servers"]["desktop-memory"]["type"] == "stdio"
    assert '\n\t\t"desktop-memory": {\n\t\t\t"type": "stdio",' in text  # written in the file's own indentation
    assert text.startswith(VSCODE_MCP[:VSCODE_MCP.index('\t\t\t"url"')])  # everything before: byte for byte
    again = setup.merge("vscode", path)
    assert not again.changed


def test_our_old_entry_is_replaced_in_place_among_comments(tmp_path: Path):
    path = tmp_path / "settings.json"
    original = ('{\r\n  // Gemini CLI\r\n  "mcpServers": {\r\n    "desktop-memory": {"command": "/old/desktop-memory", '
                '"args": ["mcp"]}, // ours, once\r\n    "other": {"command": "x"} /* keep */\r\n  },\r\n'
                '  "ui": {"theme": "GitHub"}\r\n}\r\n')
    path.write_bytes(original.encode())
    setup.merge("gemini", path)
    raw = path.read_bytes().decode()
    assert "\n" not in raw.replace("\r\n", "")  # its CRLF line ends stay CRLF
    for kept in ("// Gemini CLI", "// ours, once", "/* keep */"):
        assert kept in raw
    data = setup.loads_jsonc(raw)
    assert data["mcpServers"]["desktop-memory"]["command"] == setup.server_command()["command"]
    assert data["mcpServers"]["other"] == {"command": "x"} and data["ui"] == {"theme": "GitHub"}


@pytest.mark.parametrize("content", ["", "  \n", "// nothing yet\n", "/* empty */ {}", "\ufeff{}", "{ // open\n}"])
def test_an_empty_or_comment_only_file_gets_our_server(tmp_path: Path, content: str):
    path = tmp_path / "mcp.json"
    path.write_text(content, encoding="utf-8")
    setup.merge("cursor", path)
    text = path.read_text(encoding="utf-8")
    for comment in ("// nothing yet", "/* empty */", "// open"):
        assert comment not in content or comment in text
    assert "desktop-memory" in setup.loads_jsonc(text)["mcpServers"]


def test_a_one_line_file_stays_one_line(tmp_path: Path):
    path = tmp_path / "mcp.json"
    for original in ('{"mcpServers": {"x": {"command": "y"}}}', '{"mcpServers": {"x": {"command": "y"},}} /* c */'):
        path.write_text(original)
        setup.merge("cursor", path)
        text = path.read_text()
        assert "\n" not in text and text.startswith('{"mcpServers": {"x": {"command": "y"}')
        assert "/* c */" in text or "/* c */" not in original
        assert setup.loads_jsonc(text)["mcpServers"]["desktop-memory"] == setup.server_entry("cursor")


@pytest.mark.parametrize("content", ['{"a": 1 /* unclosed', '{"a": "unclosed}', '{"a": 1} trailing', '{"a": 1,,}',
                                     "{'a': 1}", '{"a": / 1}'])
def test_broken_jsonc_is_refused_in_one_line(tmp_path: Path, content: str, capsys):
    path = tmp_path / "mcp.json"
    path.write_text(content)
    with pytest.raises(InvalidInput, match="not valid JSON"):
        setup.merge("cursor", path)
    assert path.read_text() == content
    assert main(["setup-mcp", "--client", "cursor", "--write", "--config", str(path)]) == 1
    assert "not valid JSON" in _one_line_error(capsys)


def test_jsonc_reading_agrees_with_json_on_plain_json():
    for text in ['{"a": [1, 2.5e3, -0, true, false, null], "b": {"c": "d\\"/*e*/ //f"}}', '[]', '"x"', '{}']:
        assert setup.loads_jsonc(text) == json.loads(text)
    assert setup.loads_jsonc('{"a": [1, 2,], /* x */ "b": {"c": 3,},}') == {"a": [1, 2], "b": {"c": 3}}


# Hypothesis: any JSON config, with comments between any two tokens and trailing commas here and there
_scalars = st.one_of(st.none(), st.booleans(), st.integers(-10**6, 10**6),
                     st.sampled_from(["", "//", "/*", "*/", "a // b", "x /* y */", 'q"uote', "back\\slash",
                                      "https://example.com/mcp", "é ü 中文", "\t\n"]),
                     st.text(max_size=8))
_keys = st.sampled_from(["a", "servers2", "mcp", "inputs", "theme", "//", "/*", "k e y", "mcpServersX"])
_values = st.recursive(_scalars, lambda inner: st.one_of(st.lists(inner, max_size=3),
                                                         st.dictionaries(_keys, inner, max_size=3)), max_leaves=8)


def _render(value, draw, comments: list[str], depth: int = 0) -> str:
    """`value` as JSONC text, with comments and line breaks drawn between its tokens."""
    def gap() -> str:
        kind = draw(st.sampled_from(["", " ", "nl", "line", "block"]))
        if kind == "nl":
            return "\n" + "  " * (depth + 1)
        if kind in ("line", "block"):
            comments.append(f"// c{len(comments)} x\n" if kind == "line" else f"/* c{len(comments)} // */")
            return " " + comments[-1] + ("  " * depth if kind == "line" else " ")
        return kind

    if isinstance(value, (dict, list)):
        items = list(value.items()) if isinstance(value, dict) else list(enumerate(value))
        parts = []
        for key, item in items:  # drawn in the order they appear in the text
            part = gap()
            if isinstance(value, dict):
                part += json.dumps(key) + gap()
                part += ":" + gap()
            part += _render(item, draw, comments, depth + 1)
            parts.append(part + gap())
        trailing = "," + gap() if items and draw(st.booleans()) else ""
        trailing += gap()
        open_, close = "{}" if isinstance(value, dict) else "[]"
        return open_ + ",".join(parts) + trailing + close
    return json.dumps(value)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                   HealthCheck.function_scoped_fixture])
@given(data=st.data(), config=st.dictionaries(_keys, _values, max_size=4),
       others=st.dictionaries(st.sampled_from(["github", "fs", "a b"]), st.dictionaries(_keys, _scalars, max_size=2),
                              max_size=2), client=st.sampled_from(["vscode", "zed", "cursor", "gemini"]))
def test_any_commented_config_gets_our_server_and_keeps_every_comment(tmp_path: Path, data, config, others,
                                                                      client):
    config = {**config, JSON_KEY[client]: others} if data.draw(st.booleans()) else config
    comments: list[str] = []
    text = data.draw(st.sampled_from(["", "// head\n", "/* head */\n"])) + _render(config, data.draw, comments) + "\n"
    path = tmp_path / f"{client}-{abs(hash(text))}.json"
    path.write_text(text, encoding="utf-8")
    setup.merge(client, path)
    written = path.read_text(encoding="utf-8")
    at = 0
    for comment in comments:  # every comment still there, in the same order
        found = written.find(comment, at)
        assert found >= 0, (comment, text, written)
        at = found + len(comment)
    expected = json.loads(json.dumps(config))
    expected.setdefault(JSON_KEY[client], {})["desktop-memory"] = setup.server_entry(client)
    assert setup.loads_jsonc(written) == expected


# -- Codex CLI: TOML, comments and the rest of the file kept ----------------------------------------------
CODEX_TOML = """\
# my Codex settings
model = "gpt-5-codex"  # the default

[mcp_servers.github]
command = "gh-mcp"
args = []

[mcp_servers.desktop-memory]
command = "/old/desktop-memory"
args = ["mcp"]
startup_timeout_sec = 60

# approvals the person gave
[mcp_servers.desktop-memory.tools.search_memories]
approval_mode = "approve"

[profiles.fast]
model = "o4-mini"
"""


def test_codex_toml_keeps_comments_tables_and_the_persons_settings_of_our_server(tmp_path: Path):
    path = tmp_path / "config.toml"
    path.write_text(CODEX_TOML)
    result = setup.merge("codex", path)
    assert result.changed and result.backup.read_text() == CODEX_TOML
    text = path.read_text()
    for kept in ("# my Codex settings", '# the default', "# approvals the person gave", "[profiles.fast]"):
        assert kept in text
    data = tomllib.loads(text)
    ours = data["mcp_servers"]["desktop-memory"]
    assert ours["command"] == setup.server_command()["command"] and ours["args"] == setup.server_command()["args"]
    assert ours["startup_timeout_sec"] == 60 and ours["tools"] == {"search_memories": {"approval_mode": "approve"}}
    assert data["mcp_servers"]["github"] == {"command": "gh-mcp", "args": []}
    assert data["model"] == "gpt-5-codex" and data["profiles"] == {"fast": {"model": "o4-mini"}}
    assert not setup.merge("codex", path).changed


def test_codex_adds_a_table_to_a_file_without_one(tmp_path: Path):
    path = tmp_path / "config.toml"
    path.write_text('# just a model\nmodel = "o3"\n\n[profiles.x]\nmodel = "a"\n')
    setup.merge("codex", path, str(tmp_path / "mem"))
    data = tomllib.loads(path.read_text())
    assert data["model"] == "o3" and data["profiles"] == {"x": {"model": "a"}}
    assert data["mcp_servers"]["desktop-memory"]["args"][-3:] == ["--data-dir", str(tmp_path / "mem"), "mcp"]
    assert path.read_text().startswith("# just a model\n")


def test_codex_crlf_stays_crlf(tmp_path: Path):
    path = tmp_path / "config.toml"
    path.write_bytes(b'# windows\r\nmodel = "o3"\r\n\r\n[mcp_servers.github]\r\ncommand = "gh"\r\n')
    setup.merge("codex", path)
    raw = path.read_bytes().decode()
    assert "\n" not in raw.replace("\r\n", "") and "desktop-memory" in tomllib.loads(raw)["mcp_servers"]


@pytest.mark.parametrize("content", ["model = ", "[mcp_servers]\n[mcp_servers]\n", "mcp_servers = 5\n",
                                     "[mcp_servers]\ndesktop-memory = 3\n"])
def test_codex_refuses_a_toml_file_it_cannot_use(tmp_path: Path, content: str, capsys):
    path = tmp_path / "config.toml"
    path.write_text(content)
    assert main(["setup-mcp", "--client", "codex", "--write", "--config", str(path)]) == 1
    _one_line_error(capsys)
    assert path.read_text() == content and not list(tmp_path.glob("*.bak"))


# -- another app's file is refused -----------------------------------------------------------------------
@pytest.mark.parametrize(("client", "content", "said"), [
    ("vscode", '{"mcpServers": {"github": {"command": "gh"}}}', '"mcpServers"'),  # Claude Desktop's
    ("vscode", '{"editor.fontSize": 14, "mcp": {"servers": {}}}', "settings.json"),  # VS Code's settings, not mcp.json
    ("zed", '{"theme": "x", "mcpServers": {}}', '"mcpServers"'),
    ("cursor", '// VS Code\n{"servers": {}, "inputs": []}', '"servers"'),
    ("claude-desktop", '{"context_servers": {}}', '"context_servers"'),
    ("gemini", '[mcp_servers.github]\ncommand = "gh"\n', "Codex CLI"),
    ("codex", '{"mcpServers": {}}', '"mcpServers"'),
    ("codex", '{"servers": {}}', '"servers"'),
])
def test_a_file_of_another_app_is_refused(client: str, content: str, said: str, tmp_path: Path, capsys):
    path = tmp_path / "some-config"
    path.write_text(content)
    with pytest.raises(InvalidInput, match=said):
        setup.merge(client, path)
    assert main(["setup-mcp", "--client", client, "--write", "--config", str(path)]) == 1
    assert said in _one_line_error(capsys)
    assert main(["setup-mcp", "--client", client, "--check", "--config", str(path)]) == 1
    assert said in _one_line_error(capsys)
    assert path.read_text() == content and not list(tmp_path.glob("*.bak"))


# -- --check starts each app's entry ---------------------------------------------------------------------
STUB_SERVER = """\
from mcp.server.mcpserver import MCPServer

server = MCPServer("stub")


@server.tool()
def search_memories(query: str, limit: int = 10) -> str:
    return "no memories yet"


server.run("stdio")
"""


def _point_at_stub(client: str, path: Path, stub: Path) -> None:
    """The app's file as setup-mcp writes it, with our command swapped for the stub server."""
    setup.merge(client, path)
    raw = path.read_text()
    command = setup.server_command()
    new = {"command": sys.executable, "args": [str(stub)]}
    if client == "codex":
        data = tomllib.loads(raw)
        path.write_text(f"[mcp_servers.desktop-memory]\ncommand = {json.dumps(new['command'])}\n"
                        f"args = [{json.dumps(new['args'][0])}]\n")
        assert data["mcp_servers"]["desktop-memory"]["command"] == command["command"]
        return
    data = json.loads(raw)
    data[JSON_KEY[client]]["desktop-memory"].update(new)
    path.write_text(json.dumps(data))


@pytest.mark.parametrize("client", setup.CLIENTS)
def test_check_passes_for_every_app(client: str, tmp_path: Path, capsys):
    stub = tmp_path / "stub_server.py"
    stub.write_text(STUB_SERVER)
    path = tmp_path / "app-config"
    _point_at_stub(client, path, stub)
    assert main(["setup-mcp", "--client", client, "--check", "--config", str(path)]) == 0, capsys.readouterr().err
    said = capsys.readouterr().out.strip()
    assert said == f"desktop-memory MCP server works with {setup.CLIENT_NAMES[client]}: 1 tools"


@pytest.mark.parametrize("content", ['{"context_servers": {"desktop-memory": {"url": "http://x"}}}',
                                     '{"context_servers": {"desktop-memory": {"command": {"path": 5}}}}'])
def test_check_without_a_usable_zed_entry_says_what_to_do(tmp_path: Path, content: str, capsys):
    path = tmp_path / "settings.json"
    path.write_text(content)
    assert main(["setup-mcp", "--client", "zed", "--check", "--config", str(path)]) == 1
    assert "setup-mcp" in _one_line_error(capsys)


def test_check_reads_zeds_older_nested_command(tmp_path: Path):
    path = tmp_path / "settings.json"
    path.write_text('{"context_servers": {"desktop-memory": {"source": "custom", "command": '
                    '{"path": "/bin/dm", "args": ["mcp"], "env": {"A": "b"}}}}}')
    entry = setup.configured_entry("zed", path)
    assert (entry["command"], entry["args"], entry["env"]) == ("/bin/dm", ["mcp"], {"A": "b"})


# -- never into the data folder (issue 29) ---------------------------------------------------------------
def _data_folder(tmp_path: Path) -> Path:
    folder = tmp_path / "data"
    folder.mkdir()
    (folder / "memories.sqlite3").write_bytes(b"SQLite format 3\x00 the person's memories")
    return folder


POSIX_LINKS = pytest.mark.skipif(os.name != "posix", reason="symlinks as POSIX makes them (tests/unit/test_outputs.py)")


@pytest.mark.parametrize("how", ["onto the database", "a new file in it", "through ..",
                                 pytest.param("through a symlink", marks=POSIX_LINKS),
                                 pytest.param("a symlinked folder", marks=POSIX_LINKS)])
def test_write_refuses_a_config_path_in_the_data_folder(tmp_path: Path, how: str, capsys, monkeypatch):
    folder = _data_folder(tmp_path)
    monkeypatch.setenv("DESKTOP_MEMORY_HOME", str(folder))
    (tmp_path / "elsewhere").mkdir()
    target = {"onto the database": folder / "memories.sqlite3", "a new file in it": folder / "mcp.json",
              "through ..": tmp_path / "elsewhere" / ".." / "data" / "memories.sqlite3",
              "through a symlink": tmp_path / "link.json", "a symlinked folder": tmp_path / "dir" / "mcp.json"}[how]
    if how == "through a symlink":
        target.symlink_to(folder / "memories.sqlite3")
    if how == "a symlinked folder":
        (tmp_path / "dir").symlink_to(folder, target_is_directory=True)
    before = {p.name: p.read_bytes() for p in folder.iterdir()}
    assert main(["setup-mcp", "--client", "cursor", "--write", "--config", str(target)]) == 1
    assert "outside the data folder" in _one_line_error(capsys)
    assert {p.name: p.read_bytes() for p in folder.iterdir()} == before  # nothing written, no backup there


def test_write_refuses_the_folder_named_by_data_dir_too(tmp_path: Path, capsys):
    folder = _data_folder(tmp_path)
    assert main(["--data-dir", str(folder), "setup-mcp", "--client", "codex", "--write", "--config",
                 str(folder / "config.toml")]) == 1
    assert "outside the data folder" in _one_line_error(capsys)
    assert not (folder / "config.toml").exists()


@pytest.mark.skipif(os.name != "posix", reason="symlinks need privileges on Windows")
def test_a_symlinked_config_stays_a_symlink(tmp_path: Path):
    dotfiles = tmp_path / "dotfiles"
    dotfiles.mkdir()
    real = dotfiles / "mcp.json"
    real.write_text('{"mcpServers": {}}')
    link = tmp_path / "mcp.json"
    link.symlink_to(real)
    setup.merge("cursor", link)
    assert link.is_symlink() and "desktop-memory" in json.loads(real.read_text())["mcpServers"]


# -- Claude Desktop's one-click bundle ------------------------------------------------------------------
MANIFEST_KEYS = {"$schema", "manifest_version", "name", "display_name", "version", "description", "long_description",
                 "author", "repository", "homepage", "documentation", "support", "icon", "icons", "screenshots",
                 "localization", "server", "tools", "tools_generated", "prompts", "prompts_generated", "keywords",
                 "license", "privacy_policies", "compatibility", "user_config", "_meta"}


def test_bundle_is_a_manifest_that_starts_the_installed_command(tmp_path: Path, capsys, monkeypatch):
    monkeypatch.setenv("DESKTOP_MEMORY_ENCRYPTION", "off")
    out = tmp_path / "desktop-memory.mcpb"
    assert main(["--data-dir", str(tmp_path / "mem"), "setup-mcp", "--client", "claude-desktop", "--bundle",
                 str(out)]) == 0
    assert str(out) in capsys.readouterr().out
    with zipfile.ZipFile(out) as bundle:
        manifest = json.loads(bundle.read("manifest.json"))
        names = bundle.namelist()
    assert set(manifest) <= MANIFEST_KEYS  # the schema allows no other key
    assert {"manifest_version", "name", "version", "description", "author", "server"} <= set(manifest)
    server = manifest["server"]
    assert server["type"] == "binary" and server["entry_point"] in names
    assert set(server["mcp_config"]) <= {"command", "args", "env"}
    command = setup.server_command(str(tmp_path / "mem"))
    assert server["mcp_config"]["command"] == command["command"] and server["mcp_config"]["args"] == command["args"]
    assert server["mcp_config"]["env"] == {"DESKTOP_MEMORY_ENCRYPTION": "off"}
    assert manifest["compatibility"]["platforms"] == [sys.platform if sys.platform in ("darwin", "win32") else "linux"]


@pytest.mark.parametrize("argv", [["--client", "cursor", "--bundle", "x.mcpb"],
                                  ["--client", "claude-desktop", "--bundle", "x.mcpb", "--write"]])
def test_bundle_usage_errors(argv: list[str], tmp_path: Path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert main(["setup-mcp", *argv]) == 2
    assert "--bundle" in _one_line_error(capsys)
    assert not (tmp_path / "x.mcpb").exists()


def test_bundle_refuses_a_bad_output(tmp_path: Path, capsys, monkeypatch):
    folder = _data_folder(tmp_path)
    monkeypatch.setenv("DESKTOP_MEMORY_HOME", str(folder))
    assert main(["setup-mcp", "--client", "claude-desktop", "--bundle", str(folder / "x.mcpb")]) == 1
    assert "outside the data folder" in _one_line_error(capsys)
    assert main(["setup-mcp", "--client", "claude-desktop", "--bundle", str(tmp_path / "x.zip")]) == 1
    assert ".mcpb" in _one_line_error(capsys)
    assert not (folder / "x.mcpb").exists() and not (tmp_path / "x.zip").exists()


@pytest.mark.parametrize("name", ["a\x00b", "x" * 5000, "d/" + "y" * 300 + "/z"])
@pytest.mark.parametrize("how", [["--write", "--config"], ["--check", "--config"], ["--bundle"]])
def test_an_unusable_file_name_is_one_line(tmp_path: Path, name: str, how: list[str], capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    arg = name + ".mcpb" if how == ["--bundle"] else name
    assert main(["setup-mcp", "--client", "claude-desktop", *how, arg]) == 1
    _one_line_error(capsys)
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(("client", "content", "said"), [
    ("gemini", '{"mcp": {"allowed": ["github"]}}', '"allowed"'),
    ("gemini", '{"mcp": {"excluded": ["desktop-memory"]}}', '"excluded"'),
    ("codex", "[mcp_servers.desktop-memory]\ncommand = 'x'\nenabled = false\n", "enabled = false"),
])
def test_what_else_keeps_the_app_from_starting_it_is_said(client: str, content: str, said: str, tmp_path: Path,
                                                          capsys):
    path = tmp_path / "config"
    path.write_text(content)
    assert main(["setup-mcp", "--client", client, "--write", "--config", str(path)]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[-1].startswith("Note: ") and said in out
    assert setup.merge(client, path).note is not None  # said again when nothing changes
