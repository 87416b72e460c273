"""`desktop-memory sync ...` as a person runs it: two data folders (two machines) and one shared folder, real CLI
subprocesses, the real keyring of scripts/with-desktop.sh."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from .test_cli import one_line_error, run

pytestmark = pytest.mark.integration


@pytest.fixture
def two(tmp_path: Path) -> tuple[Path, Path, Path]:
    shared = tmp_path / "shared"
    shared.mkdir()
    return tmp_path / "a", tmp_path / "b", shared


def _phrase(data: Path) -> str:
    return run(data, "sync", "phrase").stdout.decode().strip()


def test_a_memory_added_on_one_machine_is_found_on_the_other(two):
    a, b, shared = two
    made = run(a, "sync", "setup", str(shared), "--name", "laptop").stdout.decode()
    phrase = _phrase(a)
    assert len(phrase.split()) == 24 and phrase in made
    assert "--phrase -" in made and "sync phrase" in made
    joined = run(b, "sync", "setup", str(shared), "--phrase", "-", "--name", "desktop",
                 stdin="\n" + phrase.upper().replace(" ", "  \n") + "\n").stdout.decode()
    assert phrase not in joined  # only a new set shows it
    assert joined.startswith("Synced")

    run(a, "add", "The boiler service is booked for Thursday at 8")
    run(a, "sync", "now")
    assert "with 1 other machine" in run(b, "sync", "now").stdout.decode()
    found = json.loads(run(b, "search", "boiler service", "--json").stdout)
    assert found and "Thursday at 8" in found[0]["content"]

    table = run(b, "sync", "status").stdout.decode()
    assert "desktop (this machine)" in table and "laptop" in table
    assert re.fullmatch(r"Synced (just now|\d+ min ago) with 1 other machine", table.splitlines()[0])
    status = json.loads(run(b, "sync", "status", "--json").stdout)
    assert status["configured"] and {m["name"] for m in status["machines"]} == {"laptop", "desktop"}
    assert run(b, "sync").stdout.decode() == table  # `sync` alone is `sync status`

    run(b, "add", "The desktop's backup disk is the grey one")  # A knows B once B has written
    run(b, "sync", "now")
    run(a, "sync", "now")
    assert "grey one" in run(a, "search", "backup disk").stdout.decode()
    run(a, "sync", "remove", "desktop")
    assert "removed" in run(a, "sync", "status").stdout.decode()
    removed = run(b, "sync", "now", check=False)
    assert removed.returncode == 1 and "removed from the sync set" in removed.stdout.decode()
    assert run(b, "sync", "status", "--json", check=False).returncode == 1

    run(b, "sync", "leave")
    assert run(b, "sync", "status").stdout.decode().strip() == "Sync is off"


def _one_word_changed(phrase: str) -> str:
    words = phrase.split()
    words[5] = "abandon" if words[5] != "abandon" else "ability"
    return " ".join(words)


def test_a_wrong_phrase_a_typo_and_a_missing_folder_are_one_line_and_exit_1(two):
    a, b, shared = two
    run(a, "sync", "setup", str(shared))
    phrase = _phrase(a)
    typo = phrase.split()
    typo[3] = typo[3][:-1] + ("q" if typo[3][-1] != "q" else "x")
    for wrong in (_one_word_changed(phrase), " ".join(typo), "one two three"):
        proc = run(b, "sync", "setup", str(shared), "--phrase", "-", stdin=wrong, check=False)
        err = one_line_error(proc)
        assert proc.returncode == 1 and "phrase" in err, err
    proc = run(b, "sync", "setup", str(shared), check=False)  # a set there, no phrase
    assert proc.returncode == 1 and "recovery phrase" in one_line_error(proc)
    proc = run(b, "sync", "setup", str(shared.parent / "nowhere"), "--phrase", "-", stdin=phrase, check=False)
    assert proc.returncode == 1 and "not a folder" in one_line_error(proc)
    assert run(b, "sync", "status").stdout.decode().strip() == "Sync is off"
    for argv in (["sync", "phrase"], ["sync", "now"], ["sync", "remove", "laptop"]):
        proc = run(b, *argv, check=False)
        assert proc.returncode == 1, argv
        one_line_error(proc)
    proc = run(b, "sync", "frobnicate", check=False)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr.decode()
