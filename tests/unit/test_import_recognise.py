"""Recognising what `import` is given (imports/feed.py) and the record lines made of it (issue 32)."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

import pytest

from desktop_memory.engine import records
from desktop_memory.imports import Item, recognise
from desktop_memory.imports.feed import KNOWN, Feed, record

from . import test_import_chatgpt as gpt
from . import test_import_claude as cl
from . import test_import_gemini as gm


def zipped(path: Path, members: dict[str, bytes | str]) -> Path:
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, data in members.items():
            zf.writestr(name, data)
    return path


def chatgpt_json() -> str:
    return json.dumps([gpt.chat("c1", "Harbour", ("Where is the harbour?", "By the old mill.")).export()])


def test_a_chatgpt_zip_as_openai_sends_it(tmp_path):
    path = zipped(tmp_path / "export.zip", {"conversations.json": chatgpt_json(), "chat.html": "<html></html>",
                                             "user.json": "{}", "file-abc.png": b"\x89PNG"})
    found = recognise(path)
    assert found is not None and found.name == "ChatGPT export"
    assert found.description == "a ChatGPT export (conversations.json in export.zip)"
    assert [i.content for i in found.items() if isinstance(i, Item)] == [
        "You: Where is the harbour?\n\nChatGPT: By the old mill."]


def test_a_bare_chatgpt_conversations_json(tmp_path):
    path = tmp_path / "conversations.json"
    path.write_text(chatgpt_json())
    found = recognise(path)
    assert found is not None and found.name == "ChatGPT export" and not found.jsonl


def test_a_claude_zip_and_json(tmp_path):
    data = json.dumps(cl.export())
    found = recognise(zipped(tmp_path / "data-2025.zip", {"conversations.json": data, "users.json": "[]"}))
    assert found is not None and found.name == "Claude export"
    assert "conversations.json in data-2025.zip" in found.description
    bare = tmp_path / "conversations.json"
    bare.write_text(data)
    assert (again := recognise(bare)) is not None and again.name == "Claude export"


def test_a_gemini_takeout_zip_and_json(tmp_path):
    data = json.dumps(gm.export())
    member = "Takeout/My Activity/Gemini Apps/MyActivity.json"
    found = recognise(zipped(tmp_path / "takeout-1.zip", {member: data}))
    assert found is not None and found.name == "Gemini activity" and member in found.description
    bare = tmp_path / "MyActivity.json"
    bare.write_text(data)
    assert (again := recognise(bare)) is not None and again.name == "Gemini activity"


def test_markdown_text_a_vault_and_a_folder_of_notes(tmp_path):
    (tmp_path / "a.md").write_text("# A\nhello")
    (tmp_path / "b.txt").write_text("plain")
    assert recognise(tmp_path / "a.md").name == "Markdown file"  # type: ignore[union-attr]
    assert recognise(tmp_path / "b.txt").name == "Text file"  # type: ignore[union-attr]
    assert recognise(tmp_path).name == "Markdown notes"  # type: ignore[union-attr]
    vault = tmp_path / "Vault"
    (vault / ".obsidian").mkdir(parents=True)
    (vault / "sub").mkdir()
    (vault / "sub" / "n.md").write_text("note")
    found = recognise(vault)
    assert found is not None and found.name == "Obsidian vault" and "Vault" in found.description


def test_own_json_lines_by_name_or_by_content(tmp_path):
    (tmp_path / "x.jsonl").write_text("")  # empty, but named so: imported as today (nothing)
    assert recognise(tmp_path / "x.jsonl").jsonl  # type: ignore[union-attr]
    (tmp_path / "export.data").write_text(json.dumps({"content": "a"}) + "\n")
    assert recognise(tmp_path / "export.data").jsonl  # type: ignore[union-attr]


@pytest.mark.parametrize("name, data", [
    ("picture.png", b"\x89PNG\r\n\x1a\n\0\0"), ("empty.json", b""), ("object.json", b'{"a": 1}'),
    ("list.json", b"[1, 2, 3]"), ("other.zip", None), ("broken.zip", b"PK\x03\x04 not really"),
])
def test_what_is_not_a_known_format_is_none(tmp_path, name, data):
    path = tmp_path / name
    if data is None:
        zipped(path, {"readme.pdf": b"%PDF"})
    else:
        path.write_bytes(data)
    assert recognise(path) is None


def test_a_folder_without_notes_and_a_missing_path_are_none(tmp_path):
    (tmp_path / "pics").mkdir()
    (tmp_path / "pics" / "a.png").write_bytes(b"\x89PNG")
    (tmp_path / "pics" / ".hidden.md").write_text("x")
    assert recognise(tmp_path / "pics") is None
    assert recognise(tmp_path / "missing.zip") is None
    assert "ChatGPT export (.zip or conversations.json)" in KNOWN and "Obsidian" in KNOWN


def test_the_feed_makes_valid_records_and_keeps_problems(tmp_path):
    good = gpt.chat("c1", "Harbour", ("Q1", "A1"), ("Q2", "A2")).export()
    path = tmp_path / "conversations.json"
    path.write_text(json.dumps([good, {"title": "broken"}, gpt.chat("c2", "Other", ("Q3", "A3")).export()]))
    found = recognise(path)
    assert found is not None
    feed = Feed(found, 1 << 20)
    lines = list(feed.lines())
    recs = [records.parse_line(line) for line in lines if isinstance(line, str)]
    assert [r.external_id for r in recs] == ["chatgpt:c1:c1-u0", "chatgpt:c1:c1-u1", "chatgpt:c2:c2-u0"]
    assert {r.session for r in recs} == {"chatgpt:c1", "chatgpt:c2"} and recs[0].source_app == "ChatGPT"
    assert recs[0].title == "Harbour" and recs[0].created_at is not None
    assert feed.items == 3 and feed.conversations == 2 and feed.unit == "item"
    assert len(feed.problems) == 1 and feed.problems[0].startswith('conversation 2 "broken"')


def test_an_item_as_a_record_round_trips_through_validation():
    item = Item("You: x", "notes:v/a.md", session="notes:v", title="T", created_at=1.7e9, tags=["a"],
                source_app="Obsidian", metadata={"path": "a.md"}, versions=[{"content": "old", "created_at": None}])
    rec = records.parse_line(json.dumps(record(item)))
    assert (rec.external_id, rec.session, rec.title, rec.created_at, rec.tags) == (
        "notes:v/a.md", "notes:v", "T", 1.7e9, ["a"])
    assert rec.versions[0].content == "old"


@pytest.mark.parametrize("bad", [5, ["x"], "x" * 1001])
def test_bad_import_keys_are_refused_in_one_line(bad):
    from desktop_memory.core.errors import InvalidInput

    for key in ("session", "external_id"):
        with pytest.raises(InvalidInput, match=key):
            records.parse_line(json.dumps({"content": "a", key: bad}))
