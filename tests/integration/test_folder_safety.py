"""Never a silent empty memory, settings that fail closed, and a data folder private at rest (issue 16, 3-5).

Real parts: the CLI in its own processes, SQLite, Chroma and MiniLM.
"""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from desktop_memory.engine import folder as folder_files
from desktop_memory.service import DB_NAME, MemoryService

# the CLI with the engine in its own process (tests/conftest.py: engine_in_process)
pytestmark = [pytest.mark.integration, pytest.mark.usefixtures("engine_in_process")]

CLI = [sys.executable, "-m", "desktop_memory"]
OLD = [
    "The boiler service is booked for the 3rd of March with Ferreira Heating",
    "Ines prefers the aisle seat and vegetarian meals on long flights",
    "The garage door code changed after the locksmith visit in January",
]
NEW = [
    "Zanzibar the violet heron recites Portuguese sonnets at midnight",
    "Recipe: simmer the lentils 25 minutes with cumin, then add lemon juice",
    "The team retro moved to Thursday because of the release freeze",
    "Maya's flight lands at 18:40 at Terminal 2; she prefers the window seat",
]


def dm(data: Path, *args: str, stdin: str | None = None, umask: int | None = None,
       timeout: float = 300) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*CLI, "--data-dir", str(data), *args], capture_output=True, text=True, input=stdin,
                          timeout=timeout, preexec_fn=(lambda: os.umask(umask)) if umask is not None else None)


def stats(data: Path) -> dict:
    r = dm(data, "stats", "--json")
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def fill(data: Path, texts: list[str], embedder) -> None:
    with MemoryService(data, embedder=embedder) as service:
        for t in texts:
            service.add(t, source="test")


def contents(data: Path) -> set[str]:
    r = dm(data, "export")
    assert r.returncode == 0, r.stderr
    return {json.loads(line)["content"] for line in r.stdout.splitlines()}


@pytest.fixture
def plain_backup(tmp_path, real_embedder) -> Path:
    """A plain backup of a folder holding NEW."""
    source = tmp_path / "source"
    fill(source, NEW, real_embedder)
    (source / "settings.json").write_text(json.dumps({"context_budget": 900}))
    file = tmp_path / "new.dmbackup"
    r = dm(source, "backup", "create", str(file), "--no-passphrase")
    assert r.returncode == 0, r.stderr
    return file


# -- a restore killed between its renames ---------------------------------------------------------
# Runs the CLI's `backup restore` and SIGKILLs it just before or just after the N-th rename of a file in the
# data folder (1: the journal, 2: the database aside, 3: the copy in place, 4: the backup's settings).
KILLER = textwrap.dedent("""
    import os, signal, sys
    from pathlib import Path
    real, (when, n), data = os.replace, sys.argv[1].split(":"), Path(sys.argv[3]).resolve()
    seen = []
    def replace(src, dst, *a, **k):
        mine = Path(dst).resolve().parent == data
        seen.append(mine)
        if mine and when == "before" and seen.count(True) == int(n):
            os.kill(os.getpid(), signal.SIGKILL)
        real(src, dst, *a, **k)
        if mine and when == "after" and seen.count(True) == int(n):
            os.kill(os.getpid(), signal.SIGKILL)
    os.replace = replace
    from desktop_memory.cli.main import main
    sys.exit(main(sys.argv[2:]))
""")


def killed_restore(data: Path, kill: str, *args: str) -> None:
    proc = subprocess.run([sys.executable, "-c", KILLER, kill, "--data-dir", str(data), "backup", "restore", *args,
                           "--yes"], capture_output=True, text=True, timeout=300)
    assert proc.returncode == -9, proc.stdout + proc.stderr  # killed at that rename


@pytest.mark.parametrize("kill", ["before:1", "after:1", "after:2", "after:3", "after:4"])
def test_a_restore_killed_at_any_rename_is_finished_or_undone_never_empty(tmp_path, real_embedder, plain_backup,
                                                                          kill) -> None:
    data = tmp_path / "data"
    fill(data, OLD, real_embedder)
    (data / "settings.json").write_text(json.dumps({"context_budget": 777}))
    killed_restore(data, kill, str(plain_backup))
    done = kill != "before:1"  # once the journal is on disk the restore is finished at the next open
    assert stats(data)["memories"] == len(NEW if done else OLD)
    assert contents(data) == set(NEW if done else OLD)
    leftovers = [p.name for p in data.iterdir() if p.name.endswith((".restoring", "restore.json", ".tmp"))]
    assert leftovers == []
    assert json.loads((data / "settings.json").read_text())["context_budget"] == (900 if done else 777)
    assert len(folder_files.kept_databases(data / DB_NAME)) == (1 if done else 0)  # the replaced one, whole
    if kill == "after:2":  # the state of issue 16: old database aside, the copy not yet in place
        with MemoryService(data, embedder=real_embedder) as service:
            doctor = service.doctor()
            assert doctor.ok, doctor
            assert service.vectors.all_ids() == service.store.all_ids()
            assert service.search("a bird reading poems", limit=1)[0].memory.content == NEW[0]
            assert service.store.count() == len(NEW)


@pytest.mark.parametrize("damaged", [False, True])
def test_an_encrypted_restore_killed_after_its_first_rename(tmp_path, real_embedder, monkeypatch, damaged) -> None:
    """The staged copy is checked again with the folder's key from the OS keyring before it is swapped in."""
    from desktop_memory.engine import encryption
    from tests.integration.test_keyring_session import secret_service

    with secret_service(tmp_path / "keyring"):
        monkeypatch.delenv(encryption.ENV, raising=False)
        source, data, file = tmp_path / "source", tmp_path / "data", tmp_path / "new.dmbackup"
        fill(source, NEW, real_embedder)
        pw = tmp_path / "pw"
        pw.write_text("correct horse battery staple\n")
        assert dm(source, "backup", "create", str(file), "--passphrase-file", str(pw)).returncode == 0
        fill(data, OLD, real_embedder)
        killed_restore(data, "after:2", str(file), "--passphrase-file", str(pw))
        staged = data / (DB_NAME + ".restoring")
        assert not encryption.is_plain(staged)
        if damaged:  # a page in the middle changed: the size is right, the authenticated page is not
            with open(staged, "r+b") as fh:
                fh.seek(staged.stat().st_size // 2)
                fh.write(b"\x00" * 64)
        assert contents(data) == (set(OLD) if damaged else set(NEW))
        assert not staged.exists() and not (data / "restore.json").exists()
        assert not encryption.is_plain(data / DB_NAME)


def test_leftovers_of_an_older_restore_swap_are_rolled_back(tmp_path, real_embedder, plain_backup) -> None:
    """The exact state of issue 16: no database, `.before-restore-*` (old) and `.restoring` (new), no journal."""
    data = tmp_path / "data"
    fill(data, OLD, real_embedder)
    staged = data / (DB_NAME + ".restoring")
    shutil.copyfile(data / DB_NAME, staged)
    (data / DB_NAME).rename(data / (DB_NAME + ".before-restore-20260101T000000"))
    assert stats(data)["memories"] == len(OLD)
    assert not staged.exists() and contents(data) == set(OLD)
    r = dm(data, "doctor", "--json")
    assert r.returncode == 0 and json.loads(r.stdout)["ok"], r.stdout + r.stderr


def test_a_damaged_staged_copy_is_rolled_back(tmp_path, real_embedder, plain_backup) -> None:
    data = tmp_path / "data"
    fill(data, OLD, real_embedder)
    killed_restore(data, "after:2", str(plain_backup))
    staged = data / (DB_NAME + ".restoring")
    with open(staged, "r+b") as fh:  # the copy lost its tail (a disk that lied about the sync)
        fh.truncate(staged.stat().st_size - 4096)
    r = dm(data, "stats", "--json")
    assert r.returncode == 0 and json.loads(r.stdout)["memories"] == len(OLD), r.stderr
    assert "interrupted" in r.stderr
    assert contents(data) == set(OLD) and not staged.exists() and not (data / "restore.json").exists()


def test_a_half_made_restore_copy_is_removed(tmp_path, real_embedder) -> None:
    data = tmp_path / "data"
    fill(data, OLD, real_embedder)
    (data / (DB_NAME + ".restoring")).write_bytes(b"SQLite format 3\x00" + b"\x00" * 100)
    (data / "settings.json.restoring").write_text("{}")
    assert stats(data)["memories"] == len(OLD)
    assert not list(data.glob("*.restoring"))


# -- a database that vanished -----------------------------------------------------------------
@pytest.mark.parametrize("how", ["zero-length", "deleted"])
def test_a_missing_or_empty_database_next_to_vectors_is_refused(tmp_path, real_embedder, plain_backup,
                                                                how) -> None:
    data = tmp_path / "data"
    fill(data, OLD, real_embedder)
    db = data / DB_NAME
    if how == "zero-length":
        db.write_bytes(b"")
    else:
        db.unlink()
    before = sorted(p.relative_to(data).as_posix() for p in data.rglob("*"))
    for command in (["stats"], ["search", "boiler"], ["doctor"], ["add", "a new note"]):
        r = dm(data, *command)
        assert r.returncode == 1, (command, r.stdout, r.stderr)
        line = r.stderr.strip()
        assert "\n" not in line and "Traceback" not in line
        assert ("empty" if how == "zero-length" else "missing") in line and "3 entries" in line
        assert "backup restore FILE --start-fresh" in line and "doctor --start-fresh" in line
    assert sorted(p.relative_to(data).as_posix() for p in data.rglob("*")) == before  # nothing was changed
    assert (not db.exists()) if how == "deleted" else db.stat().st_size == 0
    # the two ways out the message names
    r = dm(data, "backup", "restore", str(plain_backup), "--yes", "--start-fresh")
    assert r.returncode == 0, r.stderr
    assert contents(data) == set(NEW) and list(data.glob("vectors.set-aside-*"))
    r = dm(data, "doctor", "--json")
    assert r.returncode == 0 and json.loads(r.stdout)["ok"]


def test_doctor_start_fresh_keeps_the_old_files_aside(tmp_path, real_embedder) -> None:
    data = tmp_path / "data"
    fill(data, OLD, real_embedder)
    (data / DB_NAME).unlink()
    r = dm(data, "doctor", "--start-fresh", "--json")
    assert r.returncode == 0, r.stderr
    assert "kept aside" in r.stderr and stats(data)["memories"] == 0
    (aside,) = data.glob("vectors.set-aside-*")
    assert folder_files.vector_entries(aside) == 3 and folder_files.vector_entries(data / "vectors") == 0
    assert dm(data, "stats").returncode == 0  # an ordinary empty folder from now on


def test_a_new_or_emptied_folder_opens_as_before(tmp_path, real_embedder) -> None:
    data = tmp_path / "data"
    assert stats(data)["memories"] == 0  # a new folder
    fill(data, OLD, real_embedder)
    with MemoryService(data, embedder=real_embedder) as service:  # everything purged: vectors empty too
        service.purge(sorted(service.store.all_ids()))
    (data / DB_NAME).unlink()
    assert stats(data)["memories"] == 0


# -- settings that fail closed --------------------------------------------------------------------
def test_the_cli_reports_a_damaged_settings_file_and_still_runs(tmp_path, real_embedder) -> None:
    data = tmp_path / "data"
    fill(data, OLD, real_embedder)
    broken = '{"capture_enabled": false,}'
    (data / "settings.json").write_text(broken)
    r = dm(data, "stats", "--json")
    assert r.returncode == 0 and json.loads(r.stdout)["memories"] == 3
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and "settings.json is damaged" in lines[0] and "capture is off" in lines[0]
    assert (data / "settings.json").read_text() == broken
    (copy,) = data.glob("settings.json.damaged-*")
    assert copy.read_text() == broken
    r = dm(data, "search", "boiler")
    assert r.returncode == 0 and "Ferreira" not in r.stderr and len(r.stderr.strip().splitlines()) == 1
    assert len(list(data.glob("settings.json.damaged-*"))) == 1  # the same damage is copied once


# -- private at rest ------------------------------------------------------------------------------
def modes(root: Path) -> dict[str, str]:
    return {("." if p == root else p.relative_to(root).as_posix()): oct(stat.S_IMODE(p.lstat().st_mode))
            for p in [root, *root.rglob("*")] if not p.is_symlink()}


def assert_private(root: Path) -> None:
    found = modes(root)
    wrong = {k: v for k, v in found.items()
             if v != ("0o700" if (root / k).is_dir() else "0o600")}
    assert not wrong, wrong


@pytest.mark.skipif(os.name != "posix", reason="POSIX modes")
def test_a_fresh_folder_is_private_under_umask_022(tmp_path) -> None:
    data, out = tmp_path / "data", tmp_path / "out"
    out.mkdir()
    jsonl = tmp_path / "in.jsonl"
    jsonl.write_text("\n".join(json.dumps({"content": t}) for t in NEW) + "\n")
    for command in (["add", OLD[0]], ["import", str(jsonl)], ["search", "heron"],
                    ["backup", "create", str(out / "b.dmbackup"), "--no-passphrase"],
                    ["export", "-o", str(out / "all.jsonl")], ["export", "--format", "markdown",
                                                                  "-o", str(out / "all.md")]):
        r = dm(data, *command, umask=0o022)
        assert r.returncode == 0, (command, r.stderr)
    assert (data / "vectors" / "chroma.sqlite3").exists() and list((data / "vectors").glob("*/*.bin"))
    assert_private(data)
    for name in ("b.dmbackup", "all.jsonl", "all.md"):
        assert stat.S_IMODE((out / name).stat().st_mode) == 0o600, name


@pytest.mark.skipif(os.name != "posix", reason="POSIX modes")
def test_the_open_folder_with_its_wal_is_private(tmp_path, real_embedder) -> None:
    old = os.umask(0o022)
    try:
        data = tmp_path / "data"
        with MemoryService(data, embedder=real_embedder) as service:
            service.add(OLD[1])
            service.sync_vectors()
            assert (data / (DB_NAME + "-wal")).exists() and (data / (DB_NAME + "-shm")).exists()
            assert_private(data)
    finally:
        os.umask(old)


@pytest.mark.skipif(os.name != "posix", reason="POSIX modes")
def test_an_old_open_folder_is_tightened(tmp_path, real_embedder) -> None:
    data = tmp_path / "data"
    fill(data, OLD, real_embedder)
    (data / "settings.json").write_text("{}")
    for p in [data, *data.rglob("*")]:
        p.chmod(0o755 if p.is_dir() else 0o644)
    assert modes(data)["."] == "0o755"
    assert dm(data, "stats").returncode == 0
    assert_private(data)


@pytest.mark.skipif(os.name != "posix" or os.geteuid() != 0 or not shutil.which("useradd"),
                    reason="needs root to create a second local user")
def test_another_local_user_cannot_read_the_folder(tmp_path, real_embedder) -> None:
    import tempfile

    user = f"dmother{os.getpid()}"
    subprocess.run(["useradd", "--no-create-home", "--shell", "/bin/sh", user], check=True, capture_output=True)
    home = Path(tempfile.mkdtemp(dir="/tmp", prefix="dm-perm-"))
    try:
        home.chmod(0o755)  # a parent anyone may pass through, as a home folder often is
        data = home / "data"
        r = dm(data, "add", OLD[2], umask=0o022)
        assert r.returncode == 0, r.stderr

        def as_other(command: str) -> subprocess.CompletedProcess[str]:
            return subprocess.run(["su", "-s", "/bin/sh", user, "-c", command], capture_output=True, text=True,
                                  timeout=60)

        assert as_other(f"ls {home}").returncode == 0  # the check itself works
        for command in (f"ls {data}", f"cat {data / DB_NAME}", f"cat {data / 'vectors' / 'chroma.sqlite3'}"):
            r = as_other(command)
            assert r.returncode != 0 and "Permission denied" in r.stderr, (command, r.stdout[:200])
    finally:
        subprocess.run(["userdel", user], capture_output=True)
        shutil.rmtree(home, ignore_errors=True)


@pytest.mark.skipif(os.name != "posix", reason="POSIX modes")
def test_the_apps_export_is_private(tmp_path, real_embedder) -> None:
    pytest.importorskip("PySide6")
    from desktop_memory.qt.settings_window import _export

    data, out = tmp_path / "data", tmp_path / "out"
    out.mkdir()
    with MemoryService(data, embedder=real_embedder) as service:
        service.add(OLD[0])
        old = os.umask(0o022)  # as the GUI process has it
        try:
            for name in ("memories.jsonl", "memories.md"):
                (out / name).write_text("older export")
                (out / name).chmod(0o644)
                assert _export(service, out / name) == 1
                assert stat.S_IMODE((out / name).stat().st_mode) == 0o600
        finally:
            os.umask(old)


# -- a --data-dir that is not a data folder (issue 29, items 1 and 7) ------------------------------
def cli(data_dir: str, *args: str, cwd: Path | None = None,
        home: Path | None = None) -> subprocess.CompletedProcess[str]:
    """The CLI with `--data-dir` exactly as given (the empty string too)."""
    env = os.environ | ({"HOME": str(home), "XDG_DATA_HOME": str(home / "share")} if home else {})
    env.pop("DESKTOP_MEMORY_HOME", None)
    return subprocess.run([*CLI, "--data-dir", data_dir, *args], capture_output=True, text=True, timeout=300,
                          cwd=cwd, env=env)


def refused(r: subprocess.CompletedProcess[str]) -> str:
    line = r.stderr.strip()
    assert r.returncode in (1, 2), (r.returncode, r.stderr)
    assert "\n" not in line and "Traceback" not in line and line.startswith("desktop-memory: "), line
    assert len(line) < 400 and r.stdout == "", (line, r.stdout)
    return line


def tree(root: Path) -> dict[str, tuple[int, int]]:
    return {("." if p == root else p.relative_to(root).as_posix()): (p.lstat().st_mode, p.lstat().st_size)
            for p in [root, *root.rglob("*")]}


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A folder of someone's own: a script (0755), a note and a subfolder."""
    root = tmp_path / "project"
    (root / "src").mkdir(parents=True)
    (root / "build.sh").write_text("#!/bin/sh\nmake\n")
    (root / "README").write_text("my project\n")
    (root / "src" / "main.c").write_text("int main(void) { return 0; }\n")
    for path, mode in ((root, 0o755), (root / "src", 0o755), (root / "build.sh", 0o755), (root / "README", 0o644),
                       (root / "src" / "main.c", 0o644)):
        path.chmod(mode)
    return root


def test_a_folder_that_is_not_a_data_folder_is_refused_and_left_alone(project: Path) -> None:
    before = tree(project)
    for command in (["stats"], ["search", "anything"], ["add", "a note"], ["doctor"], ["export"]):
        line = refused(cli(str(project), *command))
        assert str(project) in line and "not a desktop-memory data folder" in line, line
    assert tree(project) == before  # no mode changed, nothing made (no memories.sqlite3, no .lock)
    assert os.access(project / "build.sh", os.X_OK)


def test_an_empty_data_dir_is_refused(tmp_path: Path) -> None:
    cwd, home = tmp_path / "here", tmp_path / "home"
    cwd.mkdir()
    home.mkdir()
    (cwd / "run.sh").write_text("#!/bin/sh\n")
    (cwd / "run.sh").chmod(0o755)
    before, home_before = tree(cwd), tree(home)
    for command in (["stats"], ["add", "a note"]):
        assert "--data-dir" in refused(cli("", *command, cwd=cwd, home=home))
    assert tree(cwd) == before and tree(home) == home_before


def test_a_data_dir_that_cannot_be_a_folder_is_one_line(tmp_path: Path) -> None:
    file = tmp_path / "notes.txt"
    file.write_text("mine\n")
    for raw in ("x" * 5000, str(tmp_path / ("y" * 5000)), str(file), str(file / "data")):
        line = refused(cli(raw, "stats", cwd=tmp_path))
        assert "--data-dir" in line or "data folder" in line, line
    assert file.read_text() == "mine\n" and sorted(p.name for p in tmp_path.iterdir()) == ["notes.txt"]


def test_an_empty_folder_becomes_a_data_folder_and_keeps_working(tmp_path: Path) -> None:
    data = tmp_path / "empty"
    data.mkdir()
    data.chmod(0o755)
    for text in OLD:
        r = dm(data, "add", text)
        assert r.returncode == 0, r.stderr
    r = dm(data, "search", "who fixes the heating", "--json")
    assert r.returncode == 0 and json.loads(r.stdout)[0]["content"] == OLD[0], r.stdout + r.stderr
    (data / "my-notes.txt").write_text("kept beside the data\n")  # a data folder may hold a file of the person's
    (data / "my-notes.txt").chmod(0o644)
    assert stats(data)["memories"] == len(OLD)
    assert stat.S_IMODE((data / "my-notes.txt").stat().st_mode) == 0o644
    if os.name == "posix":
        assert stat.S_IMODE(data.stat().st_mode) == 0o700 and stat.S_IMODE((data / DB_NAME).stat().st_mode) == 0o600
