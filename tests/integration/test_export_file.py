"""`export_to_file`: the engine writes an export file itself, private (0600) and whole or not at all (issue 17).

The front ends (CLI `export -o`, the app's Export button) name a file; they never create it themselves.
"""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest

from desktop_memory.core.errors import InvalidInput, StorageError
from desktop_memory.ipc.client import connect
from desktop_memory.ipc.server import IpcServer
from desktop_memory.service import MemoryService

# the CLI with the engine in its own process (tests/conftest.py: engine_in_process)
pytestmark = [pytest.mark.integration, pytest.mark.usefixtures("engine_in_process")]

NOTES = ["Decision: the beta ships on March 3rd", "The Lisbon hotel is on Rua Augusta",
         "The Lisbon hotel is on Rua Augusta", "Pears, not apples, for the offsite " * 400]


@pytest.fixture
def service(data_dir: Path, real_embedder):
    with MemoryService(data_dir, embedder=real_embedder) as service:
        for note in NOTES:
            service.add(note)
        service.set_forgotten(service.search("beta", limit=1)[0].memory.id, True)
        yield service


@pytest.mark.skipif(os.name != "posix", reason="POSIX modes")
@pytest.mark.parametrize("fmt", ["jsonl", "markdown"])
def test_the_file_is_private_and_replaces_an_older_one(service, tmp_path, fmt) -> None:
    target = tmp_path / f"all.{fmt}"
    target.write_text("older export")
    target.chmod(0o644)
    old = os.umask(0o022)  # as a desktop session has it
    try:
        written = service.export_to_file(target, fmt=fmt, include_forgotten=True)
    finally:
        os.umask(old)
    assert written == 3  # the look-alike was bumped, not stored twice; the forgotten one included
    assert stat.S_IMODE(target.stat().st_mode) == 0o600
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith("all.")) == [target.name]  # no .partial
    text = target.read_text(encoding="utf-8")
    if fmt == "jsonl":
        assert text == "".join(json.dumps(r, ensure_ascii=False) + "\n"
                               for r in service.export_records(include_forgotten=True))
    else:
        assert text == "".join(service.export_markdown(include_forgotten=True))


def test_forgotten_memories_only_when_asked(service, tmp_path) -> None:
    assert service.export_to_file(tmp_path / "kept.jsonl") == 2
    assert "beta" not in (tmp_path / "kept.jsonl").read_text(encoding="utf-8")


def test_bad_targets_and_formats_are_one_line_errors(service, tmp_path) -> None:
    with pytest.raises(InvalidInput, match="format"):
        service.export_to_file(tmp_path / "x.csv", fmt="csv")
    with pytest.raises(StorageError, match="cannot write") as caught:
        service.export_to_file(tmp_path / "no such folder" / "x.jsonl")
    assert "\n" not in str(caught.value)
    (tmp_path / "a folder").mkdir()
    with pytest.raises(InvalidInput, match="is a folder: name the export file to write inside it"):
        service.export_to_file(tmp_path / "a folder")
    assert not list(tmp_path.glob("*.partial"))


def test_it_works_over_the_socket_with_a_relative_path(service, data_dir, tmp_path, monkeypatch) -> None:
    caller = tmp_path / "caller"
    caller.mkdir()
    monkeypatch.chdir(caller)
    with IpcServer(service, data_dir):
        remote = connect(data_dir)
        assert remote is not None
        with remote:
            assert remote.export_to_file(Path("out.md"), fmt="markdown") == 2
    assert (caller / "out.md").read_text(encoding="utf-8").startswith("# desktop-memory export")
