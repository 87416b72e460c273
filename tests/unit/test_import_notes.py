"""Markdown files and folders, Obsidian vaults and plain text files as memories (issue 32, imports/notes.py).

Vaults are built in tmp_path: front matter variants, inline tags in and out of code, wikilinks, other scripts,
empty, binary, huge and unreadable files, symlinks out of the folder and in a cycle, CRLF and a BOM.
"""

from __future__ import annotations

import datetime as dt
import os
import sys
import tempfile
from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from desktop_memory.core.models import from_iso
from desktop_memory.core.text import normalise_tag
from desktop_memory.imports import Item, Problem, notes

MTIME = 1_700_000_000.0  # 2023-11-14, every file's modification time unless a test sets another


def write(path: Path, text: str | bytes, mtime: float = MTIME) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8", newline="")
    os.utime(path, (mtime, mtime))
    return path


def read_all(path: Path) -> list[Item | Problem]:
    return list(notes.read(path))


def by_path(results: list[Item | Problem]) -> dict[str, Item]:
    return {r.metadata["path"]: r for r in results if isinstance(r, Item)}


def problems(results: list[Item | Problem]) -> dict[str, str]:
    return {p.where: p.message for p in results if isinstance(p, Problem)}


WELCOME = """---
title: Welcome home
tags: [Inbox, "#meta", project/alpha]
aliases:
  - Start
  - Home page
created: 2024-01-05T10:30:00Z
---
# Welcome to the vault

See [[Projects/Alpha]] and [[Beta|the beta note]], or [[Alpha#Goals]] and [[#Local heading]].
An image: ![[pic.png]] and a sized one ![[attachments/board.png|300]], a transclusion ![[Journal/2024-01-05]].
A link to a file: [[doc.pdf]]. Tags here: #daily and #project/alpha and #Daily again.

```python
# not a heading
x = "#notatag"  # [[NotALink]]
```

Inline `#nope` and ``code with #nope2``; a link https://example.com/page#fragment and [a](#anchor),
an entity &#123; and an escaped \\#hash, a number #1984, and a real one at the end #last.
"""


def vault(tmp_path: Path) -> Path:
    """An Obsidian vault with one of everything; its files' modification time is MTIME."""
    root = tmp_path / "Vault"
    write(root / ".obsidian" / "app.json", "{}")
    write(root / ".obsidian" / "inside.md", "# settings, not a note")
    write(root / ".trash" / "old.md", "# deleted")
    write(root / ".git" / "HEAD", "ref: refs/heads/main")
    write(root / ".hidden.md", "# hidden")
    write(root / ".hiddendir" / "x.md", "# hidden folder")
    write(root / "attachments" / "pic.png", b"\x89PNG\r\n\x1a\n\x00\x00")
    write(root / "attachments" / "doc.pdf", b"%PDF-1.7\n")
    write(root / "attachments" / "audio.mp3", b"ID3\x00")
    write(root / "attachments" / "board.canvas", '{"nodes": []}')
    write(root / "Welcome.md", WELCOME)
    write(root / "Projects" / "Alpha.md", "---\ntags: '#project, work  #later'\ndate: 2024-03-01\n---\n"
          "Alpha goals. #project/alpha/phase-1\n")
    write(root / "Projects" / "Beta.md", "---\ntitle: [unclosed\ntags: x\n---\nBeta body #beta\n")
    write(root / "Journal" / "2024-01-05.md", "Just a day.\n", mtime=1_704_450_000.0)
    write(root / "Deutsch.md", "# Über Äpfel und Bücher\n\nGrüße aus Köln. #Bücher #straße\n")
    write(root / "中文.md", "# 笔记\n\n今天学习了很多。 #标签 #学习/中文\n")
    write(root / "عربي.md", "مرحبا بالعالم #وسم\n")
    write(root / "empty.md", "")
    write(root / "binary.md", b"\x00\x01\x02PNG\x00 not text")
    with open(root / "huge.md", "wb") as f:
        f.truncate(6 * 1024 * 1024)  # sparse: cheap on disk, too large to read
    write(root / "crlf.md", "---\r\ntitle: Windows\r\ntags: [dos]\r\n---\r\nLine one\r\nLine two #crlf\r\n")
    write(root / "bom.md", "\ufeff# BOM title\nBody after a BOM.\n")
    write(root / "latin1.md", "café au lait #café".encode("latin-1"))
    write(root / "notes.txt", "A plain text file. #nottag in text\n")
    return root


def test_sniff_takes_folders_and_note_files_only(tmp_path: Path) -> None:
    root = vault(tmp_path)
    assert notes.sniff(root)
    assert notes.sniff(root / "Welcome.md")
    assert notes.sniff(write(tmp_path / "x.markdown", "x"))
    assert notes.sniff(write(tmp_path / "X.TXT", "x"))
    assert notes.sniff(root / "notes.txt")
    assert not notes.sniff(root / "attachments" / "pic.png")
    assert not notes.sniff(write(tmp_path / "export.json", "{}"))
    assert not notes.sniff(tmp_path / "missing.md")


def test_an_obsidian_vault_gives_one_item_per_note_in_sorted_order(tmp_path: Path) -> None:
    results = read_all(vault(tmp_path))
    items = [r for r in results if isinstance(r, Item)]
    assert [i.metadata["path"] for i in items] == [
        "Deutsch.md", "Journal/2024-01-05.md", "Projects/Alpha.md", "Projects/Beta.md", "Welcome.md",
        "bom.md", "crlf.md", "latin1.md", "notes.txt", "عربي.md", "中文.md"]
    assert problems(results) == {
        "binary.md": "binary, not text (NUL bytes): skipped",
        "empty.md": "empty: nothing to import",
        "huge.md": "too large (6,291,456 bytes; the limit is 5,242,880 bytes): skipped",
    }
    for item in items:
        assert item.source_app == ("Text" if item.metadata["path"].endswith(".txt") else "Obsidian")
        assert item.session == "notes:Vault"
        assert item.external_id == "notes:Vault/" + item.metadata["path"]
        assert item.source_url == ""
    assert not any(".obsidian" in i.content or "hidden" in i.content or "deleted" in i.content for i in items)


def test_front_matter_headings_tags_and_wikilinks(tmp_path: Path) -> None:
    welcome = by_path(read_all(vault(tmp_path)))["Welcome.md"]
    assert welcome.title == "Welcome home"
    assert welcome.created_at == dt.datetime(2024, 1, 5, 10, 30, tzinfo=dt.UTC).timestamp()
    assert welcome.tags == ["inbox", "meta", "project/alpha", "daily", "last"]
    assert welcome.metadata["aliases"] == ["Start", "Home page"]
    assert welcome.metadata["links"] == ["Projects/Alpha", "Beta", "Alpha", "Journal/2024-01-05"]
    assert "problems" not in welcome.metadata
    content = welcome.content
    assert "title: Welcome home" not in content and "aliases" not in content and not content.startswith("---")
    assert content.startswith("# Welcome to the vault\n")
    assert "See Projects/Alpha and the beta note, or Alpha > Goals and Local heading." in content
    assert "An image: pic.png and a sized one board.png, a transclusion Journal/2024-01-05." in content
    assert "A link to a file: doc.pdf." in content
    assert 'x = "#notatag"  # [[NotALink]]' in content  # code is left exactly as written
    assert "[[" not in content.replace("[[NotALink]]", "")


def test_tag_strings_dates_and_broken_yaml(tmp_path: Path) -> None:
    items = by_path(read_all(vault(tmp_path)))
    alpha = items["Projects/Alpha.md"]
    assert alpha.tags == ["project", "work", "later", "project/alpha/phase-1"]
    assert alpha.created_at == from_iso("2024-03-01")  # a date alone: midnight, local time
    assert alpha.title == "Alpha"
    assert alpha.content == "Alpha goals. #project/alpha/phase-1"

    beta = items["Projects/Beta.md"]  # invalid YAML: imported with the block as text, the problem noted
    assert beta.content == "---\ntitle: [unclosed\ntags: x\n---\nBeta body #beta"
    assert beta.title == "Beta"
    assert beta.tags == ["beta"]
    assert beta.created_at == MTIME
    assert len(beta.metadata["problems"]) == 1 and "front matter" in beta.metadata["problems"][0]

    day = items["Journal/2024-01-05.md"]
    assert (day.title, day.content, day.tags, day.created_at) == ("2024-01-05", "Just a day.", [], 1_704_450_000.0)
    assert day.metadata == {"path": "Journal/2024-01-05.md", "links": []}


def test_other_scripts_crlf_bom_and_bad_utf8(tmp_path: Path) -> None:
    items = by_path(read_all(vault(tmp_path)))
    assert (items["Deutsch.md"].title, items["Deutsch.md"].tags) == ("Über Äpfel und Bücher", ["bücher", "straße"])
    assert (items["中文.md"].title, items["中文.md"].tags) == ("笔记", ["标签", "学习/中文"])
    assert (items["عربي.md"].title, items["عربي.md"].tags) == ("عربي", ["وسم"])
    assert items["عربي.md"].content == "مرحبا بالعالم #وسم"

    crlf = items["crlf.md"]
    assert (crlf.title, crlf.content, crlf.tags) == ("Windows", "Line one\nLine two #crlf", ["dos", "crlf"])
    bom = items["bom.md"]
    assert (bom.title, bom.content) == ("BOM title", "# BOM title\nBody after a BOM.")
    latin = items["latin1.md"]
    assert latin.content == "caf\ufffd au lait #caf\ufffd"
    assert latin.tags == ["caf\ufffd"]
    assert latin.metadata["problems"] == ["not valid UTF-8: undecodable bytes shown as \ufffd"]

    text = items["notes.txt"]  # plain text: no front matter, no tags, no links
    assert (text.title, text.content, text.tags) == ("notes", "A plain text file. #nottag in text", [])


def test_date_forms(tmp_path: Path) -> None:
    cases = {
        "a.md": ("created: 2024-01-05", from_iso("2024-01-05")),
        "b.md": ("created: 2024-01-05T10:30:00+02:00", dt.datetime(2024, 1, 5, 8, 30, tzinfo=dt.UTC).timestamp()),
        "c.md": ("date: '2024-01-05 10:30'", from_iso("2024-01-05T10:30")),
        "d.md": ("date: 2024-01-05T10:30:00.250Z", dt.datetime(2024, 1, 5, 10, 30, 0, 250000, dt.UTC).timestamp()),
        "e.md": ("created: next tuesday\ndate: 2023-02-03", from_iso("2023-02-03")),
        "f.md": ("created: 2024-13-45", MTIME),
        "g.md": ("created: 0001-01-01", MTIME),
        "h.md": ("created: 1700000000", MTIME),
        "i.md": ("Created: 2022-06-07", from_iso("2022-06-07")),
    }
    for name, (line, _) in cases.items():
        write(tmp_path / "d" / name, f"---\n{line}\n---\nbody of {name}\n")
    items = by_path(read_all(tmp_path / "d"))
    assert {n: i.created_at for n, i in items.items()} == {n: want for n, (_, want) in cases.items()}
    for name in ("e.md", "f.md", "g.md", "h.md"):
        assert any("not a date" in p for p in items[name].metadata["problems"]), name
    assert "problems" not in items["a.md"].metadata


def test_toml_front_matter(tmp_path: Path) -> None:
    write(tmp_path / "n" / "hugo.md", '+++\ntitle = "Hugo post"\ntags = ["go", "web"]\ndate = 2024-02-03T04:05:06Z\n'
          '+++\nBody.\n')
    write(tmp_path / "n" / "bad.md", "+++\ntitle = \n+++\nBody.\n")
    items = by_path(read_all(tmp_path / "n"))
    hugo = items["hugo.md"]
    assert (hugo.title, hugo.tags, hugo.content) == ("Hugo post", ["go", "web"], "Body.")
    assert hugo.created_at == dt.datetime(2024, 2, 3, 4, 5, 6, tzinfo=dt.UTC).timestamp()
    assert items["bad.md"].content == "+++\ntitle = \n+++\nBody."
    assert "front matter" in items["bad.md"].metadata["problems"][0]


@pytest.mark.parametrize("text", [
    "---\ntitle: never closed\nbody",
    "---\n- a list\n- not a mapping\n---\nbody",
    "---\njust a string\n---\nbody",
    "---\nkey: [1, 2\n---\nbody",
    "---\nkey: !!python/object:os.system x\n---\nbody",
    "---\na: !!timestamp not-a-time\n---\nbody",
    "---\n" + "[" * 5000 + "\n---\nbody",
])
def test_malformed_front_matter_is_text_and_noted(tmp_path: Path, text: str) -> None:
    [item] = read_all(write(tmp_path / "n.md", text))
    assert item.content == text
    assert any("front matter" in p for p in item.metadata["problems"])


def test_a_yaml_alias_bomb_is_never_expanded(tmp_path: Path) -> None:
    levels = ["a0: &a0 [x, x, x, x, x, x, x, x, x]"] + [
        f"a{n}: &a{n} [{', '.join([f'*a{n - 1}'] * 9)}]" for n in range(1, 12)]
    text = "---\n" + "\n".join(levels) + "\ntitle: *a11\ntags: *a11\naliases: *a11\ncreated: *a11\n---\nbody #ok\n"
    [item] = read_all(write(tmp_path / "n.md", text))  # 9**12 strings if expanded
    assert (item.content, item.title, item.tags, item.created_at) == ("body #ok", "n", ["ok"], MTIME)
    assert "created: a list is not a date (ISO 8601, 1970 to 2999): ignored" in item.metadata["problems"]


def test_front_matter_values_of_odd_types(tmp_path: Path) -> None:
    text = "---\ntitle: 2024\ntags:\n  - 12\n  - [nested]\n  - two words\n  - null\naliases: a, b\n---\nbody\n"
    [item] = read_all(write(tmp_path / "n.md", text))
    assert item.title == "2024"
    assert item.tags == ["12", "two", "words"]
    assert item.metadata["aliases"] == ["a", "b"]
    [empty_fm] = read_all(write(tmp_path / "e.md", "---\n---\n# Heading only\n"))
    assert (empty_fm.title, empty_fm.content, empty_fm.metadata.get("problems")) == (
        "Heading only", "# Heading only", None)
    assert read_all(write(tmp_path / "f.md", "---\ntitle: only front matter\n---\n")) == [
        Problem("f.md", "empty: nothing to import")]


def test_code_spans_fences_and_the_title_heading(tmp_path: Path) -> None:
    text = ("## Not the title\n#notheading\n#  \n# Real `code` [[Link|title]] ##\n"
            "``a ` #in1 b`` #out1 `unclosed #out2\n\nnext ` paragraph #out3\n\n`#in2` [[Only text]]\n"
            "   ```\n#in3 [[NotALink]]\n   ```\n~~~~\n#in4\n~~~\n~~~~\n#out4 ```` still #out5\n```js\n#in5")
    [item] = read_all(write(tmp_path / "n.md", text))
    assert item.title == "Real `code` title"
    assert item.tags == ["notheading", "out1", "out2", "out3", "out4", "out5"]
    assert item.metadata["links"] == ["Link", "Only text"]
    assert "#in3 [[NotALink]]" in item.content and "`#in2` Only text" in item.content


def test_pathological_text_is_read_in_linear_time(tmp_path: Path) -> None:
    # unmatched backtick runs of every length and a heading of spaces: quadratic scanning would take minutes
    text = " ".join("`" * k for k in range(1, 500)) + "\n# " + " " * 100_000 + "x #end\n" + "[[a " * 50_000
    [item] = read_all(write(tmp_path / "n.md", text))
    assert (item.title, item.tags) == ("x #end", ["end"])


def test_a_plain_folder_is_markdown_with_a_session_per_note(tmp_path: Path) -> None:
    write(tmp_path / "docs" / "guide" / "Setup.markdown", "# Setup\nSteps.\n")
    write(tmp_path / "docs" / "README.md", "Read me.\n")
    write(tmp_path / "docs" / "todo.txt", "buy milk\n")
    items = read_all(tmp_path / "docs")
    assert [(i.metadata["path"], i.source_app, i.session, i.external_id) for i in items] == [
        ("README.md", "Markdown", "notes:README", "notes:docs/README.md"),
        ("guide/Setup.markdown", "Markdown", "notes:guide/Setup", "notes:docs/guide/Setup.markdown"),
        ("todo.txt", "Text", "notes:todo", "notes:docs/todo.txt"),
    ]


def test_one_file_alone(tmp_path: Path) -> None:
    path = write(tmp_path / "box" / "Idea.md", "---\ntags: solo\n---\nAn idea.\n")
    [item] = read_all(path)
    assert (item.title, item.tags, item.content, item.source_app) == ("Idea", ["solo"], "An idea.", "Markdown")
    assert (item.session, item.external_id, item.metadata["path"]) == ("notes:Idea", "notes:box/Idea.md", "Idea.md")
    assert read_all(write(tmp_path / "box" / "pic.png", b"\x89PNG")) == [
        Problem("pic.png", "not a Markdown or text file")]
    [missing] = read_all(tmp_path / "nowhere")  # why, in the system's words ("File not found" on Windows)
    assert isinstance(missing, Problem) and missing.where == "nowhere" and missing.message.startswith("cannot read: ")
    assert missing.message != "cannot read: " and "\n" not in missing.message


@pytest.mark.skipif(sys.platform == "win32", reason="symlinks need privileges on Windows (Wine's are Unix links "
                    "its Python sees as plain files)")
def test_symlinks_out_of_the_folder_and_cycles_are_not_followed(tmp_path: Path, monkeypatch) -> None:
    root = tmp_path / "Vault"
    write(root / ".obsidian" / "app.json", "{}")
    write(root / "a.md", "inside")
    write(tmp_path / "secret.md", "SECRET outside the vault")
    write(tmp_path / "secretdir" / "s.md", "SECRET folder outside")
    (root / "out.md").symlink_to(tmp_path / "secret.md")
    (root / "outdir").symlink_to(tmp_path / "secretdir", target_is_directory=True)
    (root / "sub").mkdir()
    (root / "sub" / "loop").symlink_to(root, target_is_directory=True)
    (root / "sub" / "self.md").symlink_to(root / "sub" / "self.md")
    (root / "sub" / "twin.md").symlink_to(root / "a.md")
    (root / "inlink").symlink_to(root / "sub", target_is_directory=True)

    touched: list[str] = []
    real_open, real_scandir = open, os.scandir

    def spy_open(file, *args, **kwargs):
        touched.append(os.path.realpath(file))
        return real_open(file, *args, **kwargs)

    def spy_scandir(path="."):
        touched.append(os.path.realpath(path))
        return real_scandir(path)

    monkeypatch.setattr(notes, "open", spy_open, raising=False)
    monkeypatch.setattr(os, "scandir", spy_scandir)
    results = read_all(root)
    monkeypatch.undo()

    assert [i.content for i in results if isinstance(i, Item)] == ["inside"]
    assert problems(results) == {  # links inside the folder are skipped: what they lead to is read in its place
        "out.md": "a link to outside the folder: skipped",
        "outdir": "a link to outside the folder: skipped",
    }
    real_root = os.path.realpath(root)
    assert touched and all(p == real_root or p.startswith(real_root + os.sep) for p in touched), touched
    assert not any("SECRET" in str(r) for r in results)


def test_unreadable_files_are_problems_and_reading_goes_on(tmp_path: Path, monkeypatch) -> None:
    write(tmp_path / "v" / "a.md", "first")
    write(tmp_path / "v" / "b.md", "locked")
    write(tmp_path / "v" / "c.md", "last")
    real_open = open

    def refusing(file, *args, **kwargs):
        if str(file).endswith("b.md"):
            raise PermissionError(13, "Permission denied", str(file))
        return real_open(file, *args, **kwargs)

    monkeypatch.setattr(notes, "open", refusing, raising=False)
    results = read_all(tmp_path / "v")
    assert [r.content if isinstance(r, Item) else r for r in results] == [
        "first", Problem("b.md", "cannot read: Permission denied"), "last"]


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() == 0, reason="root reads every file")
def test_a_file_without_read_permission(tmp_path: Path) -> None:
    write(tmp_path / "v" / "a.md", "first")
    locked = write(tmp_path / "v" / "b.md", "locked")
    locked.chmod(0)
    (tmp_path / "v" / "closed").mkdir()
    write(tmp_path / "v" / "closed" / "x.md", "hidden")
    (tmp_path / "v" / "closed").chmod(0)
    try:
        results = read_all(tmp_path / "v")
    finally:
        locked.chmod(0o600)
        (tmp_path / "v" / "closed").chmod(0o700)
    assert [r.content for r in results if isinstance(r, Item)] == ["first"]
    assert problems(results) == {"b.md": "cannot read: Permission denied",
                                 "closed": "cannot read the folder: Permission denied"}


def test_utf16_with_a_bom_is_text(tmp_path: Path) -> None:
    write(tmp_path / "w" / "notepad.txt", "\ufeffSaved by Notepad. Grüße\r\n".encode("utf-16-le"))
    [item] = read_all(tmp_path / "w")
    assert (item.content, item.title, item.source_app) == ("Saved by Notepad. Grüße", "notepad", "Text")


def test_two_reads_give_the_same_ids_and_a_changed_note_keeps_its_id(tmp_path: Path) -> None:
    root = vault(tmp_path)
    first = [(r.external_id, r.session) for r in read_all(root) if isinstance(r, Item)]
    assert first == [(r.external_id, r.session) for r in read_all(root) if isinstance(r, Item)]
    write(root / "Welcome.md", "# Rewritten\nNew text.\n")
    again = by_path(read_all(root))["Welcome.md"]
    assert (again.external_id, again.content) == ("notes:Vault/Welcome.md", "# Rewritten\nNew text.")
    assert len({e for e, _ in first}) == len(first)


def test_reading_is_streamed(tmp_path: Path) -> None:
    root = vault(tmp_path)
    stream = notes.read(root)
    first = next(stream)
    assert isinstance(first, Item) and first.metadata["path"] == "Deutsch.md"
    stream.close()


# Hypothesis: random Markdown under random front matter. The sentinel key's value uses letters the body's
# alphabet lacks, so finding it in the content would mean the front matter leaked into it.
SENTINEL = "QZXW-front-matter-QZXW"
BODY = st.text(alphabet=st.sampled_from(list("abcdeé中 \n\t#[]|!`~-_/:.,*+=>0123456789\r")) | st.characters(
    blacklist_categories=("Cs",), blacklist_characters="QZXW"), max_size=300)
SCALAR = st.one_of(st.text(max_size=20), st.integers(), st.none(), st.booleans())
FRONT = st.fixed_dictionaries({}, optional={
    "title": SCALAR,
    "tags": st.one_of(st.lists(SCALAR, max_size=5), st.text(max_size=40)),
    "aliases": st.one_of(st.lists(SCALAR, max_size=3), st.text(max_size=20)),
    "created": st.one_of(st.text(max_size=25), st.dates().map(str), st.datetimes().map(dt.datetime.isoformat)),
})


def well_formed(tag: str) -> bool:
    return bool(tag) and tag == normalise_tag(tag) and not any(c.isspace() for c in tag) and not tag.startswith("#")


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(front=FRONT, body=BODY, crlf=st.booleans())
def test_random_markdown_with_front_matter(front: dict, body: str, crlf: bool) -> None:
    block = "---\n" + yaml.safe_dump({**front, "sentinel": SENTINEL}, allow_unicode=True) + "---\n"
    text = block + body
    if crlf:
        text = text.replace("\n", "\r\n")
    with tempfile.TemporaryDirectory() as folder:
        results = read_all(write(Path(folder) / "note.md", text))
    assert len(results) == 1
    [result] = results
    if isinstance(result, Problem):
        assert result.message == ("binary, not text (NUL bytes): skipped" if "\x00" in body else
                                  "empty: nothing to import")
        return
    assert SENTINEL not in result.content and "sentinel:" not in result.content
    assert all(well_formed(t) for t in result.tags), result.tags
    assert len(set(result.tags)) == len(result.tags)
    assert result.title
    assert all(isinstance(link, str) and link for link in result.metadata["links"])


YAMLISH = st.text(alphabet=st.sampled_from(list(":-[]{}&*!|>'\"%@`#,?\n\t abcé0123")), max_size=80)


@settings(max_examples=200, deadline=None)
@given(text=st.one_of(st.text(max_size=400), st.builds("---\n{}\n---\n{}".format, YAMLISH, st.text(max_size=80)),
                      st.builds("+++\n{}\n+++\n{}".format, YAMLISH, st.text(max_size=80))))
def test_any_text_never_raises(text: str) -> None:
    with tempfile.TemporaryDirectory() as folder:
        results = read_all(write(Path(folder) / "note.md", text))
    assert len(results) == 1
    for r in results:
        if isinstance(r, Item):
            assert all(well_formed(t) for t in r.tags)
            if any("front matter" in p for p in r.metadata.get("problems", [])):
                assert r.content.startswith(text.lstrip("\ufeff")[:3])  # the block is kept as text


@pytest.mark.skipif(sys.platform == "win32", reason="Windows file names are UTF-16: no name holds undecodable bytes")
def test_a_file_name_that_is_not_utf8(tmp_path: Path) -> None:
    try:
        write(tmp_path / "v" / os.fsdecode(b"caf\xe9.md"), "# Caf\u00e9\n")
    except (OSError, UnicodeEncodeError):
        pytest.skip("this file system takes only UTF-8 names")
    [item] = read_all(tmp_path / "v")
    assert (item.metadata["path"], item.external_id, item.session) == ("caf\ufffd.md", "notes:v/caf\ufffd.md",
                                                                        "notes:caf\ufffd")
    item.external_id.encode("utf-8")
