"""`import` of other tools' exports through the real CLI (issue 32): real SQLite, Chroma and MiniLM."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path
from typing import Any

import pytest

from desktop_memory.engine.store import Store
from tests.unit import test_import_chatgpt as gpt
from tests.unit import test_import_claude as cl

pytestmark = pytest.mark.integration
CLI = [sys.executable, "-m", "desktop_memory"]
ENV = {**os.environ, "DESKTOP_MEMORY_ENCRYPTION": "off", "DESKTOP_MEMORY_SERVICE": "off"}


def run(data: Path, *args: str) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run([*CLI, "--data-dir", str(data), *args], capture_output=True, timeout=600, env=ENV,
                          text=True)
    assert "Traceback" not in proc.stderr, proc.stderr
    return proc


def summary(proc: subprocess.CompletedProcess[str]) -> str:
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.strip()


def rows(data: Path) -> list[dict[str, Any]]:
    store = Store(data / "memories.sqlite3")
    try:
        out = []
        for m in store.iter_all():
            title = store.scalar("SELECT title FROM sessions WHERE id = ?", (m.session_id,))
            out.append({"content": m.content, "title": m.title, "app": m.source_app, "session": m.session_id,
                        "session_title": title, "created": m.created_at, "meta": m.metadata, "tags": m.tags,
                        "versions": [v.content for v in store.versions(m.id)]})
        return out
    finally:
        store.close()


def chatgpt_zip(path: Path, conversations: list[Any]) -> Path:
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("conversations.json", json.dumps(conversations))
        zf.writestr("chat.html", "<html></html>")
        zf.writestr("user.json", "{}")
    return path


def harbour() -> gpt.Conv:
    conv = gpt.Conv("c-harbour", "Harbour trip")
    conv.user("h-u0", "Where is the harbour?")
    first = conv.assistant("h-a0", "By the old mill.")
    conv.assistant("h-a0b", "Next to the old mill, past the bridge.", parent="h-u0")  # regenerated: a branch
    conv.user("h-u1", "And the ferry?", parent=first)
    conv.assistant("h-a1", "Every hour from pier 2.")
    return conv


def bergen() -> gpt.Conv:
    return gpt.chat("c-bergen", "Reise nach Bergen", ("Wie weit ist Bergen von Oslo?", "Etwa 460 km. 🚆"),
                    ("東京は？", "とても遠いです。"))


def test_a_chatgpt_zip_imports_once_and_a_newer_export_adds_only_what_is_new(tmp_path):
    data = tmp_path / "data"
    h, b = harbour(), bergen()
    first = chatgpt_zip(tmp_path / "export.zip", [h.export(current="h-a1"), {"title": "broken"}, b.export()])
    proc = run(data, "import", str(first))
    assert "Reading a ChatGPT export (conversations.json in export.zip)" in proc.stderr
    assert 'conversation 2 "broken"' in proc.stderr
    assert summary(proc).startswith("Imported 4 new")
    stored = rows(data)
    assert len(stored) == 4 and {r["app"] for r in stored} == {"ChatGPT"}
    sessions = {r["session"] for r in stored}
    assert len(sessions) == 2
    by_title = {r["session_title"] for r in stored}
    assert by_title == {"Harbour trip", "Reise nach Bergen"}
    harbour_first = next(r for r in stored if "Where is the harbour" in r["content"])
    assert harbour_first["versions"] == [
        "You: Where is the harbour?\n\nChatGPT: Next to the old mill, past the bridge."]
    assert any("とても遠いです。" in r["content"] for r in stored)

    again = run(data, "import", str(first))
    assert summary(again).startswith("Imported 0 new") and len(rows(data)) == 4

    h.user("h-u2", "Is there a café?")
    h.assistant("h-a2", "Yes, on the pier.")
    newer = chatgpt_zip(tmp_path / "newer.zip", [
        h.export(current="h-a2"), b.export(), gpt.chat("c-new", "New one", ("Q new", "A new")).export()])
    proc = run(data, "import", str(newer))
    assert summary(proc).startswith("Imported 2 new"), proc.stdout
    stored = rows(data)
    assert len(stored) == 6
    cafe = next(r for r in stored if "café" in r["content"])
    assert cafe["session"] == harbour_first["session"]  # the old conversation's session, whatever the times


def test_an_answer_edited_in_a_newer_export_updates_the_memory_keeping_the_old_text(tmp_path):
    data = tmp_path / "data"
    summary(run(data, "import", str(chatgpt_zip(tmp_path / "a.zip", [
        gpt.chat("c1", "T", ("Question", "Old answer")).export()]))))
    proc = run(data, "import", str(chatgpt_zip(tmp_path / "b.zip", [
        gpt.chat("c1", "T", ("Question", "New answer")).export()])))
    assert "1 updated" in summary(proc)
    (row,) = rows(data)
    assert row["content"].endswith("New answer") and row["versions"] == ["You: Question\n\nChatGPT: Old answer"]


def test_a_claude_export_imports_once_and_a_newer_one_adds_only_what_is_new(tmp_path):
    data = tmp_path / "data"
    convs = [cl.kyoto(), cl.steuer()]
    first = tmp_path / "claude.zip"
    with zipfile.ZipFile(first, "w") as zf:
        zf.writestr("conversations.json", json.dumps(convs))
        zf.writestr("users.json", "[]")
    proc = run(data, "import", str(first))
    assert "Reading a Claude export (conversations.json in claude.zip)" in proc.stderr
    n = len(rows(data))
    assert n >= 2 and {r["app"] for r in rows(data)} == {"Claude"}
    assert len({r["session"] for r in rows(data)}) == 2
    assert summary(run(data, "import", str(first))).startswith("Imported 0 new")
    newer = tmp_path / "conversations.json"
    newer.write_text(json.dumps([*convs, cl.branches()]))
    assert not summary(run(data, "import", str(newer))).startswith("Imported 0 new")
    assert summary(run(data, "import", str(newer))).startswith("Imported 0 new")


def test_an_obsidian_vault_with_front_matter(tmp_path):
    data, vault = tmp_path / "data", tmp_path / "Vault"
    (vault / ".obsidian").mkdir(parents=True)
    (vault / ".obsidian" / "workspace.md").write_text("not a note")
    (vault / "Trips").mkdir()
    (vault / "Trips" / "Bergen.md").write_text(
        "---\ntitle: Bergen trip\ntags: [travel, norway]\ncreated: 2021-03-04T05:06:07Z\n---\n"
        "Train from Oslo, see [[Packing list]]. #rail\n")
    (vault / "Packing list.md").write_text("# Packing\n- boots\n- rain jacket\n")
    proc = run(data, "import", str(vault))
    assert "Reading an Obsidian vault (the folder Vault)" in proc.stderr
    assert summary(proc).startswith("Imported 2 new")
    stored = {r["title"]: r for r in rows(data)}
    assert set(stored) == {"Bergen trip", "Packing"} and {r["app"] for r in stored.values()} == {"Obsidian"}
    bergen_note = stored["Bergen trip"]
    assert set(bergen_note["tags"]) >= {"travel", "norway", "rail"} and bergen_note["created"] == 1614834367.0
    assert len({r["session"] for r in stored.values()}) == 1
    assert summary(run(data, "import", str(vault))).startswith("Imported 0 new")


def test_an_unknown_format_is_one_line_exit_1_and_nothing_stored(tmp_path):
    data, odd = tmp_path / "data", tmp_path / "picture.png"
    odd.write_bytes(b"\x89PNG\r\n\x1a\n\0\0\0")
    proc = run(data, "import", str(odd))
    assert proc.returncode == 1 and proc.stdout == ""
    (line,) = proc.stderr.strip().splitlines()
    assert line.startswith(f"desktop-memory: {odd} is not a format desktop-memory imports; it imports: ChatGPT")
    assert not (data / "memories.sqlite3").exists() or rows(data) == []


def test_add_with_created_at_title_and_metadata(tmp_path):
    data = tmp_path / "data"
    proc = run(data, "add", "The boots are in the attic", "--created-at", "2021-03-04T05:06:07Z", "--title", "T",
               "--meta", "k=v", "--metadata", '{"n": 1, "k": "old"}', "--json")
    assert proc.returncode == 0, proc.stderr
    (row,) = rows(data)
    assert row["title"] == "T" and row["created"] == 1614834367.0 and row["meta"] == {"n": 1, "k": "v"}


@pytest.mark.parametrize("args, code", [
    (["--created-at", "yesterday"], 1), (["--created-at", "0001-01-01"], 1), (["--metadata", "[1]"], 1),
    (["--metadata", "{not json"], 1), (["--meta", "novalue"], 2),
])
def test_add_refuses_bad_values_in_one_line(tmp_path, args, code):
    proc = run(tmp_path / "data", "add", "text", *args)
    assert proc.returncode == code, proc.stderr
    err = proc.stderr.strip().splitlines()
    # bad input: one line; a usage error: argparse's usage, then its one line
    assert err and err[-1].startswith(("desktop-memory: ", "desktop-memory add: error:"))
    assert len(err) == 1 if code == 1 else err[0].startswith("usage:")
