"""Every CLI command with generated arguments and stdin: exit 0/1/2, one line, and every acknowledged write kept."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from desktop_memory.cli.main import build_parser

from .cli_runner import assert_clean, cli, ids_in, inside
from .conftest import FUZZ
from .strategies import argv_text, junk_lines, words

pytestmark = pytest.mark.integration

# commands that run until stopped, start the desktop app, load the local model (seconds each), change the
# folder's encryption, speak a browser's binary frames on the process's own stdin/stdout (native-host) or write
# into the person's browser folders (setup-browser) or into any folder named (sync setup makes the sync dir there
# and keeps a key in the keyring): covered by their own tests, not drawn here
LEFT_OUT = {"app", "toggle", "capture-selection", "engine-host", "mcp", "enrich", "model verify", "model set",
            "encryption on", "encryption off", "native-host", "setup-browser", "sync setup"}


def _subparsers(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    for action in parser._actions:  # argparse keeps them here; the parser is the one source of the commands
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    return {}


def _commands() -> dict[str, argparse.ArgumentParser]:
    out: dict[str, argparse.ArgumentParser] = {}
    for name, p in _subparsers(build_parser()).items():
        nested = _subparsers(p)
        for sub, q in (nested.items() if nested else [("", p)]):
            full = f"{name} {sub}".strip()
            if full not in LEFT_OUT and name not in LEFT_OUT:
                out[full] = q
    return out


COMMANDS = _commands()


@st.composite
def command_lines(draw) -> list[str]:
    """A command and any of its options, each with a drawn value; positionals drawn too."""
    name = draw(st.sampled_from(sorted(COMMANDS)))
    argv = name.split()
    for action in COMMANDS[name]._actions:
        if isinstance(action, argparse._HelpAction):
            continue
        if not action.option_strings:  # a positional
            low = 0 if action.nargs in ("*", "?") else 1
            argv += draw(st.lists(argv_text, min_size=low, max_size=1 if action.nargs in (None, "?") else 3))
            continue
        if not draw(st.booleans()):
            continue
        flag = draw(st.sampled_from(action.option_strings))
        if action.nargs == 0:
            argv.append(flag)
        elif action.choices:
            argv += [flag, draw(st.one_of(st.sampled_from(sorted(action.choices)), argv_text))]
        else:
            argv += [flag, draw(argv_text)]
    if name == "retention" and "--dry-run" not in argv:
        argv.append("--dry-run")  # a real retention run deletes on purpose: asked as a dry run only
    return argv


@pytest.fixture(scope="module")
def place(tmp_path_factory) -> dict:
    """One data folder for the whole run, inside a sandbox that is the working folder of every command."""
    sandbox = tmp_path_factory.mktemp("fuzz-cli")
    folder = sandbox / "data"
    acknowledged = set()
    for text in ("Decision: the beta ships on March 3rd", "Тимур's flight lands at 9:40 in 北京",
                 "def area(r):\n    return 3.14159 * r ** 2"):
        run = cli("--data-dir", str(folder), "add", "--json", text)
        assert run.code == 0, run.err
        acknowledged.add(json.loads(run.out)["id"])
    return {"sandbox": sandbox, "folder": folder, "acknowledged": acknowledged}


@FUZZ
@given(argv=command_lines(), stdin=st.one_of(junk_lines, words.map(str.encode)))
def test_any_command_line_exits_0_1_or_2_in_one_line_and_keeps_every_write(place, argv, stdin):
    folder, acknowledged = place["folder"], place["acknowledged"]
    if argv[0] in ("add", "capture") and "--json" not in argv:
        argv = [argv[0], "--json", *argv[1:]]
    with inside(place["sandbox"]):
        run = cli("--data-dir", str(folder), *argv, stdin=stdin)
    assert_clean(run)
    if run.code == 0 and argv[0] == "add":
        acknowledged.add(json.loads(run.out)["id"])
    if run.code == 0 and argv[0] == "capture" and json.loads(run.out).get("stored"):
        acknowledged.add(json.loads(run.out)["memory_id"])
    missing = acknowledged - ids_in(folder)
    if argv[0] == "purge":  # a purge removes what it names, on purpose
        missing = {m for m in missing if not any(m.startswith(a.strip()) for a in argv[1:] if len(a.strip()) >= 4)}
    assert not missing, f"acknowledged memories lost after {argv!r}: {sorted(missing)}"
    acknowledged.difference_update(acknowledged - ids_in(folder))


PERSON = {"notes.txt": b"my notes\n", "run.sh": b"#!/bin/sh\necho hi\n", "photos/cat.jpg": b"\xff\xd8\xff"}


@FUZZ
@given(name=st.one_of(argv_text, st.lists(st.sampled_from(["person", "photos", "..", ".", "new", "notes.txt",
                                                             "x" * 300, "run.sh", ""]), min_size=1, max_size=4)
                      .map("/".join)))
def test_any_data_dir_leaves_the_persons_files_as_they_were(tmp_path_factory, name):
    """`--data-dir NAME` (relative to a working folder holding a person's files): nothing of theirs changes."""
    sandbox = tmp_path_factory.mktemp("fuzz-dir")
    person = sandbox / "person"
    for rel, data in PERSON.items():
        (person / rel).parent.mkdir(parents=True, exist_ok=True)
        (person / rel).write_bytes(data)
    (person / "run.sh").chmod(0o755)
    before = {p: (p.stat().st_mode, p.read_bytes() if p.is_file() else None) for p in [person, *person.rglob("*")]}
    with inside(person):
        run = cli("--data-dir", name, "stats")
    assert_clean(run)
    for p, (mode, data) in before.items():
        assert p.exists() and p.stat().st_mode == mode, f"{p} changed by --data-dir {name!r}"
        assert data is None or p.read_bytes() == data


def _settings_bytes() -> st.SearchStrategy[bytes]:
    from .strategies import dumps, json_values

    keys = st.sampled_from(["capture", "clipboard", "max_bytes", "rules", "hotkey", "enrichment", "retention",
                            "llm_idle_unload_s", "embedding_model", "exclude_apps", "theme", "paste"])
    shaped = st.dictionaries(keys, json_values, max_size=6).map(lambda d: dumps(d).encode())
    return st.one_of(shaped, json_values.map(lambda v: dumps(v).encode()), st.binary(max_size=120))


@FUZZ
@given(settings=_settings_bytes(), text=words)
def test_any_settings_file_is_one_line_and_never_rewritten_behind_the_persons_back(place, settings, text):
    folder = place["folder"]
    target = folder / "settings.json"
    kept = target.read_bytes() if target.exists() else None
    target.write_bytes(settings)
    try:
        for argv in (["stats"], ["add", "--json", text], ["search", text], ["capture", "--json", text]):
            run = cli("--data-dir", str(folder), *argv)
            assert_clean(run)
            if run.code == 0 and argv[0] == "add":
                place["acknowledged"].add(json.loads(run.out)["id"])
        assert target.read_bytes() == settings  # the person's file, damaged or not, is theirs to fix
        assert place["acknowledged"] <= ids_in(folder)
    finally:
        if kept is None:
            target.unlink()
        else:
            target.write_bytes(kept)


def test_the_commands_drawn_cover_the_parser():
    """A new command is fuzzed without anyone listing it here."""
    assert {"add", "search", "context", "import", "export", "purge", "backup create", "setup-mcp", "stats",
            "sync status", "sync remove"} <= set(COMMANDS)


def test_run_helper_sees_a_traceback(monkeypatch):
    """The runner cannot pass a crash: an exception outside the CLI's barrier reaches the test."""
    from desktop_memory.cli import main as cli_main

    monkeypatch.setattr(cli_main, "build_parser", lambda: (_ for _ in ()).throw(RuntimeError("boom")))
    with pytest.raises(RuntimeError):
        cli("stats")


def test_sandbox_is_not_the_project(place):
    assert Path.cwd() != place["sandbox"]
