"""A data folder is the only place the product writes or changes modes (issue 29, items 1 and 7).

A `--data-dir` that is empty, too long, a file, or a non-empty folder that is not a data folder is refused
with one line, touching nothing; an empty or new folder becomes a data folder; data folders of every kind
(older versions, interrupted restores, only settings) keep opening; inside a data folder only the product's
own files are made private.
"""

from __future__ import annotations

import io
import json
import os
import shutil
import stat
from pathlib import Path

import pytest

from desktop_memory import paths
from desktop_memory.core.errors import InvalidInput, StorageError
from desktop_memory.engine import folder as folder_files
from desktop_memory.ipc import address
from desktop_memory.service import DB_NAME, MemoryService
from tests.fakes import FakeEmbedder

POSIX = os.name == "posix"
SCHEMA_V1 = Path(__file__).resolve().parent.parent / "data" / "schema_v1.sqlite3"


def snapshot(root: Path) -> dict[str, tuple[int, int]]:
    """Every entry under `root` (itself included): its mode and size."""
    return {("." if p == root else p.relative_to(root).as_posix()): (p.lstat().st_mode, p.lstat().st_size)
            for p in [root, *root.rglob("*")]}


def one_line(exc: BaseException) -> str:
    text = str(exc)
    assert text and "\n" not in text and len(text) < 400, text
    return text


@pytest.fixture
def foreign(tmp_path: Path) -> Path:
    """Someone's project folder: a script, a note and a subfolder, modes as a person left them."""
    root = tmp_path / "project"
    (root / "src").mkdir(parents=True)
    (root / "run.sh").write_text("#!/bin/sh\necho hi\n")
    (root / "notes.txt").write_text("my notes\n")
    (root / "src" / "main.py").write_text("print('hi')\n")
    for path, mode in ((root, 0o755), (root / "src", 0o755), (root / "run.sh", 0o755), (root / "notes.txt", 0o644),
                       (root / "src" / "main.py", 0o644)):
        path.chmod(mode)
    return root


def add_and_find(folder: Path, text: str = "The boiler service is booked with Ferreira Heating") -> None:
    with MemoryService(folder, embedder=FakeEmbedder()) as service:
        service.add(text)
        assert service.search("Ferreira boiler", limit=1)[0].memory.content == text


# -- what --data-dir may name ---------------------------------------------------------------------
@pytest.mark.parametrize("raw", ["", "   "])
def test_an_empty_data_dir_is_refused(raw: str, tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    with pytest.raises(InvalidInput) as caught:
        paths.data_dir(raw)
    assert "--data-dir" in one_line(caught.value)


@pytest.mark.parametrize("shape", ["one long name", "many short names"])
def test_an_overlong_data_dir_is_one_line(tmp_path: Path, shape: str) -> None:
    raw = str(tmp_path / ("a" * 5000)) if shape == "one long name" else str(tmp_path.joinpath(*["abcdefgh"] * 600))
    with pytest.raises(InvalidInput) as caught:
        paths.data_dir(raw)
    assert "--data-dir" in one_line(caught.value)


def test_a_file_is_not_a_data_dir(tmp_path: Path) -> None:
    file = tmp_path / "notes.txt"
    file.write_text("mine\n")
    for raw in (file, file / "data"):
        with pytest.raises(InvalidInput) as caught:
            paths.data_dir(raw)
        assert str(file) in one_line(caught.value)
    assert file.read_text() == "mine\n"


def test_the_environment_variable_is_checked_the_same_way(tmp_path: Path, monkeypatch) -> None:
    file = tmp_path / "notes.txt"
    file.write_text("mine\n")
    monkeypatch.setenv(paths.ENV_HOME, str(file))
    with pytest.raises(InvalidInput) as caught:
        paths.data_dir()
    assert paths.ENV_HOME in one_line(caught.value)


def test_a_tilde_naming_no_user_is_kept_as_written_like_a_shell_does(tmp_path: Path, monkeypatch) -> None:
    """`--data-dir '~0'` was exit 70 ("Could not determine home directory")."""
    monkeypatch.chdir(tmp_path)
    if os.name != "posix":  # Windows' Python takes "~name" for a sibling of your home folder: no error either
        assert paths.data_dir("~0no-such-user").name in ("0no-such-user", "~0no-such-user")
        return
    assert paths.data_dir("~0no-such-user") == tmp_path / "~0no-such-user"
    assert paths.expand("~0no-such-user/notes.jsonl") == Path("~0no-such-user/notes.jsonl")


def test_a_name_that_is_not_utf8_is_refused_in_one_line(tmp_path: Path) -> None:
    raw = str(tmp_path) + "/caf\udce9"  # "café" in Latin-1 on a UTF-8 system: byte 0xE9 as Python carries it
    with pytest.raises(InvalidInput, match=r"caf\\xe9 cannot be a data folder: its name is not valid UTF-8") as e:
        paths.data_dir(raw)
    one_line(e.value).encode("utf-8")  # printable
    assert list(tmp_path.iterdir()) == []


def test_a_new_or_existing_folder_is_a_data_dir(tmp_path: Path) -> None:
    assert paths.data_dir(tmp_path / "new" / "data") == (tmp_path / "new" / "data").resolve()
    assert paths.data_dir(str(tmp_path)) == tmp_path.resolve()


# -- a folder that is not a data folder -----------------------------------------------------------
def test_a_folder_that_is_not_a_data_folder_is_refused_untouched(foreign: Path) -> None:
    before = snapshot(foreign)
    with pytest.raises(StorageError) as caught:
        MemoryService(foreign, embedder=FakeEmbedder())
    assert str(foreign) in one_line(caught.value)
    assert snapshot(foreign) == before


def test_the_mcp_server_and_the_engine_host_refuse_it_too(foreign: Path) -> None:
    from desktop_memory.ipc import host
    from desktop_memory.mcp.engine import EngineAccess

    before = snapshot(foreign)
    access = EngineAccess(foreign, embedder=FakeEmbedder())
    try:
        with pytest.raises(StorageError) as caught:
            access.call(lambda engine: engine.stats())
        assert str(foreign) in one_line(caught.value)
    finally:
        access.close()
    read, write = os.pipe()
    out = io.StringIO()
    try:
        assert host.serve(foreign, enrich=False, stdin_fd=read, out=out) == 1
    finally:
        os.close(write)
    line = out.getvalue().strip()
    assert line.startswith(host.ERROR) and str(foreign) in line and "\n" not in line
    assert snapshot(foreign) == before


@pytest.mark.parametrize("name", [".DS_Store", None])
def test_an_empty_or_new_folder_becomes_a_data_folder(tmp_path: Path, name: str | None) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    if name:  # what a file manager leaves in a folder it showed: still empty to a person
        (empty / name).write_bytes(b"\x00\x00\x00\x01Bud1")
    for folder in (empty, tmp_path / "new" / "data"):
        add_and_find(folder)
        assert (folder / DB_NAME).is_file()
        assert not POSIX or stat.S_IMODE(folder.stat().st_mode) == 0o700


OLD_KINDS = {
    "only settings.json": {"settings.json": '{"context_budget": 900}'},
    "only a restore's staged settings": {"settings.json.restoring": "{}"},
    "only a half-made restore copy": {DB_NAME + ".restoring": "SQLite format 3\x00"},
    "only a finished restore's journal": {"restore.json": json.dumps({"format": 1, "kept": None, "staged_bytes": 0})},
    "only the lock file": {".lock": "12345"},
    "only an empty vector index": {"vectors/": ""},
    "a database of the first schema": {DB_NAME: SCHEMA_V1},
}


@pytest.mark.parametrize("kind", OLD_KINDS)
def test_data_folders_of_every_kind_keep_opening(tmp_path: Path, kind: str) -> None:
    data = tmp_path / "data"
    data.mkdir()
    # a lock or an empty vectors folder beside other files is not ours (pytest's temporary root holds a `.lock`):
    # those two leftovers open a folder that holds nothing else
    mine = kind not in ("only the lock file", "only an empty vector index")
    if mine:
        (data / "my notes.txt").write_text("a file the person keeps here\n")
    for name, content in OLD_KINDS[kind].items():
        if name.endswith("/"):
            (data / name).mkdir()
        elif isinstance(content, Path):
            shutil.copy(content, data / name)
        else:
            (data / name).write_text(content)
    add_and_find(data)
    assert not mine or (data / "my notes.txt").read_text() == "a file the person keeps here\n"
    if kind == "a database of the first schema":
        with MemoryService(data, embedder=FakeEmbedder()) as service:
            assert "Priya" in service.search("Priya", limit=1)[0].memory.content


# -- private at rest: only our own files ----------------------------------------------------------
@pytest.mark.skipif(not POSIX, reason="POSIX modes")
def test_only_the_products_own_files_are_made_private(tmp_path: Path) -> None:
    data = tmp_path / "data"
    add_and_find(data)
    (data / "tools").mkdir()
    (data / "tools" / "sync.sh").write_text("#!/bin/sh\n")
    (data / "run.sh").write_text("#!/bin/sh\n")
    for p in [data, *data.rglob("*")]:
        p.chmod(0o755 if p.is_dir() or p.suffix == ".sh" else 0o644)
    theirs = {k: v for k, v in snapshot(data).items() if k.split("/")[0] in ("tools", "run.sh")}
    with MemoryService(data, embedder=FakeEmbedder()) as service:
        assert service.stats().memories == 1
    after = snapshot(data)
    assert {k: v for k, v in after.items() if k in theirs} == theirs  # a script keeps its execute bit
    ours = {k: stat.S_IMODE(mode) for k, (mode, _) in after.items() if k not in theirs}
    assert ours["."] == 0o700 and ours[DB_NAME] == 0o600 and ours["vectors"] == 0o700
    assert all(mode == (0o700 if (data / k).is_dir() else 0o600) for k, mode in ours.items()), ours


def test_the_products_names_include_the_engine_socket_and_token() -> None:
    for name in (address.SOCKET_NAME, address.TOKEN_NAME, DB_NAME, DB_NAME + "-wal", "settings.json.damaged-1",
                 "vectors.broken-20260101T000000", ".lock", "encryption.json", ".settings-abc.tmp"):
        assert folder_files.ours(name), name
    for name in ("notes.txt", "run.sh", "src", "vectorsx", "memories.sqlite", ".git"):
        assert not folder_files.ours(name), name


@pytest.mark.parametrize(("name", "content"), [
    (".lock", "12345"),  # pytest's basetemp, editors, build tools: a .lock beside the person's files
    ("vectors", None),  # an ML project's folder of vectors (no Chroma database in it)
    ("encryption.json", '{"algorithm": "aes"}'),
    ("restore.json", '{"snapshot": 3}'),
])
def test_a_common_name_beside_the_persons_files_does_not_make_a_data_folder(tmp_path: Path, name, content) -> None:
    """Found by the fuzz tier: `--data-dir` naming pytest's temporary root (which holds a `.lock`) made a database
    there. A name other programs use too marks a data folder only by what it holds."""
    from desktop_memory.core.errors import StorageError
    from desktop_memory.engine.folder import check_data_folder

    project = tmp_path / "project"
    project.mkdir()
    (project / "notes.txt").write_text("mine")
    if content is None:
        (project / name).mkdir()
        (project / name / "embeddings.npy").write_bytes(b"\x93NUMPY")
    else:
        (project / name).write_text(content)
    with pytest.raises(StorageError, match="not a desktop-memory data folder"):
        check_data_folder(project)


def test_a_folder_left_with_only_our_lock_may_become_a_data_folder(tmp_path: Path) -> None:
    from desktop_memory.core.errors import StorageError
    from desktop_memory.engine.folder import check_data_folder

    (tmp_path / ".lock").write_text("4242")
    check_data_folder(tmp_path)  # an engine stopped between taking the folder and making its database
    (tmp_path / ".lock").write_text("held by some other tool")
    with pytest.raises(StorageError):
        check_data_folder(tmp_path)


def test_a_projects_own_settings_json_does_not_make_it_a_data_folder(tmp_path: Path) -> None:
    """Many projects keep a settings.json: only one that reads as ours (our keys) marks a data folder."""
    from desktop_memory.core.errors import StorageError
    from desktop_memory.engine.folder import check_data_folder

    project = tmp_path / "project"
    project.mkdir()
    (project / "settings.json").write_text('{"theme": "dark", "editor.fontSize": 14}', encoding="utf-8")
    with pytest.raises(StorageError, match="not a desktop-memory data folder"):
        check_data_folder(project)
    (project / "settings.json").write_text('{"theme": "dark",}', encoding="utf-8")  # not JSON, and not ours
    with pytest.raises(StorageError, match="not a desktop-memory data folder"):
        check_data_folder(project)
    (project / "settings.json").write_text('{"capture_enabled": false,}', encoding="utf-8")  # ours, hand-damaged
    check_data_folder(project)
    ours = tmp_path / "ours"
    ours.mkdir()
    (ours / "settings.json").write_text('{"capture_enabled": false, "welcome_shown": true}', encoding="utf-8")
    check_data_folder(ours)  # the app saved its settings before the database was made
