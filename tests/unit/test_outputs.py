"""`outputs.check_outside`: the one check of every file written where the person says (issue 29)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from desktop_memory.core.errors import InvalidInput
from desktop_memory.engine import outputs

posix_links = pytest.mark.skipif(os.name != "posix", reason="symlinks and hard links as POSIX makes them")


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    data = tmp_path / "data"
    (data / "vectors").mkdir(parents=True)
    (data / "memories.sqlite3").write_bytes(b"SQLite format 3\0")
    (data / "vectors" / "chroma.sqlite3").write_bytes(b"SQLite format 3\0")
    return data


def test_paths_in_the_folder_are_refused_in_one_line(folder: Path) -> None:
    for target in (folder, folder / "memories.sqlite3", folder / "settings.json", folder / "vectors" / "new.md",
                   folder / ".." / "data" / "memories.sqlite3", folder / "vectors" / ".." / "x.jsonl"):
        assert outputs.reaches_into(folder, target) == "is in it", target
    with pytest.raises(InvalidInput, match=r"write the export outside the data folder .*; nothing was written$") as e:
        outputs.check_outside(folder, folder / "memories.sqlite3", "export")
    assert "\n" not in str(e.value)


def test_paths_outside_pass_unchanged(folder: Path, tmp_path: Path) -> None:
    (tmp_path / "data-exports").mkdir()  # the folder's name as a prefix is not the folder
    for target in (tmp_path / "data-exports" / "all.jsonl", tmp_path / "data.jsonl", tmp_path / "all.jsonl",
                   folder / ".." / "beside.jsonl", tmp_path / "no such folder" / "x.jsonl"):
        assert outputs.reaches_into(folder, target) is None, target
        assert outputs.check_outside(folder, target, "backup") is target
    assert outputs.reaches_into(tmp_path / "not made yet", tmp_path / "x.jsonl") is None


@pytest.mark.parametrize("name", [".", "..", "/", "", "person"])
def test_a_folder_is_no_file_to_write(folder: Path, tmp_path: Path, monkeypatch, name: str) -> None:
    """`export -o .` once ended in a ValueError (exit 70); `-o ..` in "Device or resource busy"."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "person").mkdir()
    with pytest.raises(InvalidInput, match=r"is a folder: name the export file to write inside it; nothing was"):
        outputs.check_outside(folder, Path(name), "export")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["data", "person"]


def test_a_relative_path_is_taken_from_the_working_folder(folder: Path, monkeypatch) -> None:
    monkeypatch.chdir(folder / "vectors")
    assert outputs.reaches_into(folder, Path("..") / "memories.sqlite3") == "is in it"
    assert outputs.reaches_into(folder, Path("..") / ".." / "out.jsonl") is None


@posix_links
def test_symlinks_into_the_folder_are_refused(folder: Path, tmp_path: Path) -> None:
    (tmp_path / "to-db").symlink_to(folder / "memories.sqlite3")
    (tmp_path / "to-folder").symlink_to(folder, target_is_directory=True)
    (tmp_path / "dangling").symlink_to(folder / "would-be-created.jsonl")
    (tmp_path / "relative").symlink_to(Path("data") / "vectors")
    for target in (tmp_path / "to-db", tmp_path / "to-folder" / "x.jsonl", tmp_path / "to-folder",
                   tmp_path / "dangling", tmp_path / "relative" / "chroma.sqlite3"):
        assert outputs.reaches_into(folder, target) == "leads into it", target
    (tmp_path / "elsewhere").symlink_to(tmp_path / "out.jsonl")
    assert outputs.reaches_into(folder, tmp_path / "elsewhere") is None


@posix_links
def test_a_hard_link_to_one_of_its_files_is_refused(folder: Path, tmp_path: Path) -> None:
    os.link(folder / "vectors" / "chroma.sqlite3", tmp_path / "copy.sqlite3")
    assert outputs.reaches_into(folder, tmp_path / "copy.sqlite3") == "is one of its files (a hard link)"
    (tmp_path / "other").write_text("x")
    os.link(tmp_path / "other", tmp_path / "other-link")  # linked, but not to the folder's files
    assert outputs.reaches_into(folder, tmp_path / "other-link") is None


@posix_links
def test_the_folder_under_a_name_the_resolver_keeps_is_known_by_identity(folder: Path, tmp_path: Path,
                                                                         monkeypatch) -> None:
    """A case-insensitive file system or a bind mount gives the folder another name realpath does not undo."""
    (tmp_path / "other-name").symlink_to(folder, target_is_directory=True)
    monkeypatch.setattr(outputs, "_real", lambda p: os.path.normcase(os.path.abspath(p)))  # sees no link
    assert outputs.reaches_into(folder, tmp_path / "other-name" / "new.jsonl") == "leads into it"
    assert outputs.reaches_into(folder, tmp_path / "other-name") == "leads into it"
    assert outputs.reaches_into(folder, tmp_path / "beside.jsonl") is None


@posix_links
def test_a_scratch_file_that_leads_into_the_folder_is_refused(folder: Path, tmp_path: Path) -> None:
    """The output is written as `<name>.partial` first: a symlink left there would be written through."""
    (tmp_path / "out.jsonl.partial").symlink_to(folder / "memories.sqlite3")
    with pytest.raises(InvalidInput, match=r"out\.jsonl\.partial leads into it"):
        outputs.check_outside(folder, tmp_path / "out.jsonl", "export")
    assert outputs.scratch(tmp_path / "out.jsonl") == tmp_path / "out.jsonl.partial"
