"""No output path lands in the data folder (issue 29): `export -o` onto the live database used to replace it with
the export (exit 0, then every command said the database was damaged).

Every file the engine writes where the person says (an export, a backup) is refused with one line and exit 1 when
it resolves into the data folder or onto one of its files: through `..`, a symlink to one of its files or to the
folder itself, or a hard link. Nothing in the folder changes and the memory still opens.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from desktop_memory.core.errors import InvalidInput
from desktop_memory.ipc.client import connect
from desktop_memory.ipc.server import IpcServer
from desktop_memory.service import DB_NAME, MemoryService

# the CLI with the engine in its own process (tests/conftest.py: engine_in_process)
pytestmark = [pytest.mark.integration, pytest.mark.usefixtures("engine_in_process")]
CLI = [sys.executable, "-m", "desktop_memory"]
NOTES = ["The Lisbon hotel is on Rua Augusta, check-in after 3 pm",
         "Decision: the beta ships on March 3rd"]
REFUSAL = "outside the data folder"


def dm(data: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "DESKTOP_MEMORY_ENCRYPTION": "off"}  # plain folders: no keyring needed, faster
    return subprocess.run([*CLI, "--data-dir", str(data), *args], capture_output=True, text=True, timeout=300,
                          env=env)


def contents(folder: Path) -> dict[str, str]:
    """Every file in the data folder (its lock file aside) and a digest of its bytes; symlinks by their target."""
    found = {}
    for p in sorted(folder.rglob("*")):
        name = p.relative_to(folder).as_posix()
        if p.is_symlink():
            found[name] = "-> " + os.readlink(p)
        elif p.is_file() and p.name != ".lock":
            found[name] = hashlib.sha256(p.read_bytes()).hexdigest()
    return found


@pytest.fixture(scope="module")
def pristine(tmp_path_factory) -> Path:
    """A data folder with two memories and settings, made once by the CLI."""
    data = tmp_path_factory.mktemp("outputs") / "data"
    for note in NOTES:
        assert dm(data, "add", note).returncode == 0
    (data / "settings.json").write_text('{"capture_enabled": true}\n', encoding="utf-8")
    return data


@pytest.fixture
def world(pristine: Path, tmp_path: Path) -> tuple[Path, Path]:
    """A copy of that folder (each test may only harm its own), and a folder beside it with links into it."""
    data, outside = tmp_path / "data", tmp_path / "outside"
    shutil.copytree(pristine, data, symlinks=True)
    (data / "sub").mkdir(mode=0o700)
    outside.mkdir()
    (outside / "db-link").symlink_to(data / DB_NAME)
    (outside / "folder-link").symlink_to(data, target_is_directory=True)
    (outside / "new-file-link").symlink_to(data / "not-yet.jsonl")  # dangling: it would create a file inside
    os.link(data / DB_NAME, outside / "db-hard-link")
    (outside / "x.out.partial").symlink_to(data / DB_NAME)  # left where the output is written first
    return data, outside


# Where the person asks for the file, from the data folder and the folder beside it.
INSIDE: dict[str, Callable[[Path, Path], str]] = {
    "the database": lambda d, o: str(d / DB_NAME),
    "settings.json": lambda d, o: str(d / "settings.json"),
    "the database through ..": lambda d, o: f"{d}/../{d.name}/{DB_NAME}",
    "a symlink outside to the database": lambda d, o: str(o / "db-link"),
    "a new file in a subfolder": lambda d, o: str(d / "sub" / "x.jsonl"),
    "a new file through a symlinked folder": lambda d, o: str(o / "folder-link" / "x.jsonl"),
    "a dangling symlink into the folder": lambda d, o: str(o / "new-file-link"),
    "a hard link to the database": lambda d, o: str(o / "db-hard-link"),
    "the folder itself": lambda d, o: str(d),
    "outside, but its .partial is a symlink to the database": lambda d, o: str(o / "x.out"),
    "a relative path inside": lambda d, o: os.path.relpath(d / DB_NAME),
}
COMMANDS = {
    "export": lambda target: ["export", "-o", target],
    "backup": lambda target: ["backup", "create", target, "--no-passphrase", "--force"],
    "backup, no --force": lambda target: ["backup", "create", target, "--no-passphrase"],  # refused first for this
}
MARKDOWN = {"export markdown": lambda target: ["export", "--format", "markdown", "-o", target]}


@pytest.mark.skipif(os.name != "posix", reason="symlinks and hard links as POSIX makes them")
@pytest.mark.parametrize("command", list(COMMANDS))
@pytest.mark.parametrize("where", list(INSIDE))
def test_an_output_into_the_data_folder_is_refused_and_changes_nothing(world, command, where) -> None:
    data, outside = world
    target = INSIDE[where](data, outside)
    before, outside_before = contents(data), contents(outside)
    db_bytes = (data / DB_NAME).read_bytes()
    r = dm(data, *COMMANDS[command](target))
    err = r.stderr.strip()
    assert r.returncode == 1, (r.returncode, err)
    assert len(err.splitlines()) == 1 and "Traceback" not in err, err
    assert REFUSAL in err, err
    assert contents(data) == before and (data / DB_NAME).read_bytes() == db_bytes
    assert contents(outside) == outside_before  # no `.partial` left beside the links either
    found = dm(data, "search", "Lisbon hotel")
    assert found.returncode == 0 and "Rua Augusta" in found.stdout, found.stderr


@pytest.mark.parametrize("command", [*COMMANDS, *MARKDOWN])
def test_an_output_beside_the_data_folder_still_works(world, command) -> None:
    data, outside = world
    beside = data.with_name(data.name + "-exports")  # shares the folder's name as a prefix: not inside it
    beside.mkdir(exist_ok=True)
    for target in (beside / f"{command}.out", outside / f"{command}.out"):
        r = dm(data, *{**COMMANDS, **MARKDOWN}[command](str(target)))
        assert r.returncode == 0, r.stderr
        assert target.stat().st_size > 0
        target.unlink()


def test_the_app_s_engine_refuses_it_too(tmp_path: Path, real_embedder) -> None:
    """The app's Export button and a CLI going through the running app reach the same check over the socket."""
    data = tmp_path / "data"
    with MemoryService(data, embedder=real_embedder) as service:
        service.add(NOTES[0])
        with IpcServer(service, data):
            remote = connect(data)
            assert remote is not None
            with remote:
                with pytest.raises(InvalidInput, match=REFUSAL):
                    remote.export_to_file(data / DB_NAME)
                with pytest.raises(InvalidInput, match=REFUSAL):
                    remote.export_to_file(data / "vectors" / "x.md", fmt="markdown")
                assert remote.export_to_file(tmp_path / "all.jsonl") == 1
        assert service.search("Lisbon hotel", limit=1)[0].memory.content == NOTES[0]


@pytest.mark.parametrize("command", [["backup", "verify"], ["backup", "restore", "--yes"], ["import"]])
def test_reading_a_file_of_the_data_folder_never_writes_it(world, command) -> None:
    """Restore, verify and import only read the file they are given: the live database given to them stays."""
    data, _ = world
    before = contents(data)
    r = dm(data, *command[:2], str(data / DB_NAME), *command[2:])
    assert r.returncode == 1 and "Traceback" not in r.stderr, r.stderr
    assert contents(data) == before
    assert "Rua Augusta" in dm(data, "search", "Lisbon hotel").stdout


def test_a_partial_link_to_a_file_of_the_persons_is_never_written_through(tmp_path: Path) -> None:
    """export -o writes through <target>.partial: a symlink planted there (to a file outside the data folder) is
    replaced, and the file it points to keeps its bytes."""
    data = tmp_path / "data"
    assert dm(data, "add", "a note about the Lisbon offsite").returncode == 0
    precious = tmp_path / "thesis.txt"
    precious.write_text("years of work", encoding="utf-8")
    target = tmp_path / "out.jsonl"
    (tmp_path / "out.jsonl.partial").symlink_to(precious)
    done = dm(data, "export", "-o", str(target))
    assert done.returncode == 0, done.stderr
    assert precious.read_text(encoding="utf-8") == "years of work"
    assert "Lisbon" in target.read_text(encoding="utf-8") and not (tmp_path / "out.jsonl.partial").exists()
