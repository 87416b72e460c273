"""The CLI on real small filesystems (a full tmpfs, a read-only mount) and with many commands at once.

Real SQLite, Chroma and MiniLM in subprocesses. Mounting needs root (the test machine runs as root);
where mounting is impossible the tests say so and skip.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import subprocess
import sys
import uuid
from pathlib import Path

import numpy as np
import pytest

from desktop_memory.core.errors import DiskFull
from desktop_memory.engine import index_health
from desktop_memory.engine.vectors import VectorIndex

# the CLI with the engine in its own process (tests/conftest.py: engine_in_process): a full disk under it, a queue
# of commands waiting for the folder lock
pytestmark = [pytest.mark.integration, pytest.mark.usefixtures("engine_in_process")]
CLI = [sys.executable, "-m", "desktop_memory"]
TOPICS = ["harbour", "orchard", "glacier", "violin", "compiler", "lantern", "meadow", "turbine", "saffron", "quarry"]


def run(data: Path, *args: str, stdin: bytes | None = None, timeout: float = 600) -> subprocess.CompletedProcess:
    return subprocess.run([*CLI, "--data-dir", str(data), *args], input=stdin, capture_output=True, timeout=timeout)


def ok(proc: subprocess.CompletedProcess) -> subprocess.CompletedProcess:
    assert proc.returncode == 0, f"exit {proc.returncode}: {proc.stderr.decode()}"
    return proc


def last_error_line(proc: subprocess.CompletedProcess) -> str:
    err = proc.stderr.decode()
    assert "Traceback" not in err, err
    lines = [line for line in err.splitlines() if line and not line.startswith("committed ")]
    assert len(lines) == 1, err
    return lines[0]


@pytest.fixture
def tmpfs(tmp_path):
    """A fresh tmpfs folder; `resize(size)` and `read_only()` change it in place."""
    where = tmp_path / "mnt"
    where.mkdir()

    def mount(*opts: str) -> None:
        proc = subprocess.run(["mount", *opts], capture_output=True, text=True)
        if proc.returncode != 0:
            pytest.skip(f"cannot mount a tmpfs here (needs root and mount rights): {proc.stderr.strip()}")

    mount("-t", "tmpfs", "-o", "size=8m,mode=0700", "tmpfs", str(where))

    class Mounted:
        path = where

        @staticmethod
        def resize(size: str) -> None:
            mount("-o", f"remount,size={size}", str(where))

        @staticmethod
        def read_only() -> None:
            mount("-o", "remount,ro", str(where))

    yield Mounted
    subprocess.run(["umount", "-l", str(where)], capture_output=True)


def _records(n: int, words: int = 120) -> list[str]:
    """Distinct, realistic-looking notes (each ~1 KB): a topic, numbers and dates that differ."""
    out = []
    for i in range(n):
        topic = TOPICS[i % len(TOPICS)]
        body = " ".join(f"{topic}{(i * 7 + k) % 997} step {k} of plan {i}" for k in range(words // 6))
        out.append(json.dumps({"content": f"Note {i} about the {topic} project, due {1 + i % 28} March: {body}",
                               "source": "notes", "tags": [topic]}))
    return out


def test_a_disk_full_import_exits_1_with_one_line_and_keeps_everything_acknowledged(tmpfs, tmp_path):
    data = tmpfs.path / "data"
    ok(run(data, "add", "the first note, so that the folder exists"))
    lines = _records(12_000)
    src = tmp_path / "notes.jsonl"
    src.write_text("\n".join(lines) + "\n")
    proc = run(data, "import", str(src))
    assert proc.returncode == 1, proc.stderr.decode()
    message = last_error_line(proc)
    assert message.startswith("desktop-memory: the disk is full: free some space and try again"), message
    committed = [int(n) for n in re.findall(r"^committed (\d+)$", proc.stderr.decode(), re.M)]
    found = re.search(r"([\d,]+) record\(s\) were stored, nothing after line ([\d,]+) was imported", message)
    assert found, message
    stored, last = (int(g.replace(",", "")) for g in found.groups())
    assert stored >= (committed[-1] if committed else 0) and last >= stored > 0

    tmpfs.resize("256m")  # space freed: everything acknowledged is there, and the folder works again
    exported = {json.loads(x)["content"] for x in ok(run(data, "export")).stdout.decode().splitlines()}
    assert all(json.loads(x)["content"] in exported for x in lines[:last])
    assert json.loads(lines[last])["content"] not in exported
    assert ok(run(data, "doctor", "--json")).returncode == 0
    assert ok(run(data, "add", "after freeing space")).returncode == 0


def test_an_add_on_a_full_disk_reports_exactly_what_it_stored(tmpfs):
    """Space comes back 12 KB at a time: each `add` either says it remembered (and it is there) or
    fails with one line about the full disk (and it is not there): never the one while the other."""
    data = tmpfs.path / "data"
    ok(run(data, "add", "the first note"))
    filler = tmpfs.path / "filler"
    subprocess.run(["dd", "if=/dev/zero", f"of={filler}", "bs=64k"], capture_output=True)  # fills the disk
    outcomes: dict[str, int] = {}
    for i in range(24):
        os.truncate(filler, max(0, filler.stat().st_size - 12 * 1024))
        text = f"note {i} written while the disk is full: invoice {9000 + i} for the {TOPICS[i % len(TOPICS)]}"
        proc = run(data, "add", text)
        assert proc.returncode in (0, 1), proc.stderr.decode()
        if proc.returncode == 1:
            assert "disk is full" in last_error_line(proc), proc.stderr.decode()
        outcomes[text] = proc.returncode
    assert 0 in outcomes.values() and 1 in outcomes.values(), outcomes  # both happened
    filler.unlink()
    exported = {json.loads(x)["content"] for x in ok(run(data, "export")).stdout.decode().splitlines()}
    assert {t for t, code in outcomes.items() if code == 0} <= exported
    assert not {t for t, code in outcomes.items() if code == 1} & exported
    assert ok(run(data, "doctor", "--json")).returncode == 0


def test_a_read_only_folder_is_a_one_line_error(tmpfs):
    data = tmpfs.path / "data"
    ok(run(data, "add", "a note before the folder became read-only"))
    tmpfs.read_only()
    for args in (["add", "a note on a read-only disk"], ["import", "-"], ["search", "note"]):
        proc = run(data, *args, stdin=b'{"content": "x"}\n')
        assert proc.returncode == 1, (args, proc.stderr.decode())
        assert "read-only" in last_error_line(proc), (args, proc.stderr.decode())
    fresh = run(tmpfs.path / "new", "add", "a note")
    assert fresh.returncode == 1 and "read-only" in last_error_line(fresh).lower()


def _short_records(start: int, n: int) -> list[str]:
    """Short notes (embedded fast): a topic pair, an order and a reference that differ."""
    return [json.dumps({"content": f"item {i}: {TOPICS[i % 10]} {TOPICS[i * 3 % 10]} order {i * 37 % 1009} "
                                   f"ref {i * 7919 % 10007}"}) for i in range(start, start + n)]


def _leave_free(where: Path, kb: int) -> None:
    """A filler file that leaves `kb` KiB free on the filesystem of `where`."""
    st = os.statvfs(where)
    left = max(0, st.f_bavail * st.f_frsize - kb * 1024)
    with open(where / "filler", "wb") as fh:
        while left > 0:
            chunk = min(left, 1 << 20)
            fh.write(b"\0" * chunk)
            left -= chunk


def _set_aside(folder: Path) -> list[str]:
    """Indexes in `folder` moved aside as damaged (vectors.broken-<time>), and a rebuild marked as under way."""
    moved = sorted(p.name for p in folder.glob(f"vectors{index_health.BROKEN_PREFIX}*"))
    return moved + ([index_health.REBUILDING_MARKER] if index_health.is_rebuilding(folder / "vectors") else [])


@pytest.fixture(scope="module")
def near_persist_folder(tmp_path_factory) -> Path:
    """960 memories imported by the CLI: the next import crosses Chroma's 1,024-entry point at which it
    applies its log to the metadata segment and persists the HNSW files."""
    root = tmp_path_factory.mktemp("near-persist")
    src = root / "base.jsonl"
    src.write_text("\n".join(_short_records(0, 960)) + "\n")
    ok(run(root / "base", "import", str(src)))
    return root / "base"


# Free KiB left before `import` at which the disk used to fill inside Chroma (issue 29, item 5): a new
# folder (Chroma cannot create its database: 550-725 KiB), and a folder at Chroma's persist point (applying
# its log fails as "Failed to apply logs to the metadata segment", the words of a damaged index: 670-760 KiB).
# Each became "vectors.broken-*" and "'RustBindingsAPI' object has no attribute 'bindings'" (exit 1 or 70).
# With nothing free the database cannot open its WAL index: "a disk error, or the disk is full".
FILL_POINTS = {"new-folder": (560, 620, 680, 720), "at-chroma-persist": (0, 670, 700, 730, 760)}


@pytest.mark.parametrize("folder", list(FILL_POINTS))
def test_a_disk_filling_inside_chroma_during_an_import_is_one_line_and_never_damage(tmpfs, tmp_path, folder,
                                                                                    request):
    base = request.getfixturevalue("near_persist_folder") if folder == "at-chroma-persist" else None
    lines = _short_records(5000, 150)
    src = tmp_path / "more.jsonl"
    src.write_text("\n".join(lines) + "\n")
    data = tmpfs.path / "data"
    for kb in FILL_POINTS[folder]:
        shutil.rmtree(data, ignore_errors=True)
        (tmpfs.path / "filler").unlink(missing_ok=True)
        tmpfs.resize("16m")
        if base is not None:
            shutil.copytree(base, data)
        _leave_free(tmpfs.path, kb)
        proc = run(data, "import", str(src))
        err = proc.stderr.decode()
        where = f"{folder}, {kb} KiB free: exit {proc.returncode}: {err[-600:]}"
        assert proc.returncode in (0, 1), where
        said = [line for line in err.splitlines() if line and not line.startswith("committed ")]
        assert "Traceback" not in err, where
        assert len(said) == proc.returncode, where  # exit 0 says nothing on stderr, exit 1 one line
        if proc.returncode == 1:
            assert said[0].startswith("desktop-memory: the disk is full: free some space and try again"), where
        assert not _set_aside(data), where  # a full disk is no damage: nothing moved aside, no rebuild

        tmpfs.resize("64m")  # space freed: the folder works and everything the import reported is there
        stored = len(lines)
        if proc.returncode == 1:  # no "nothing after line L": full before the import began, nothing stored
            found = re.search(r"every one up to line ([\d,]+)|nothing after line ([\d,]+)", said[0])
            stored = int((found.group(1) or found.group(2)).replace(",", "")) if found else 0
        for args in (["stats"], ["search", "glacier order"]):
            after = run(data, *args)
            assert after.returncode == 0 and b"Traceback" not in after.stderr, (where, args, after.stderr.decode())
        exported = {json.loads(x)["content"] for x in ok(run(data, "export")).stdout.decode().splitlines()}
        assert all(json.loads(x)["content"] in exported for x in lines[:stored]), where
        assert not _set_aside(data), where


def test_chroma_filling_the_disk_is_disk_full_and_the_index_opens_once_there_is_room(tmpfs):
    """In-process, the disk filling at each moment of Chroma's work: creating its database, appending to
    its log, applying the log to its metadata segment, persisting its HNSW files (the last two say only
    "Failed to apply logs to the ... segment", like a damaged index). Each is the one-line DiskFull; the
    index is neither moved aside nor marked for a rebuild; once there is room it opens again in this
    process (Chroma's cache of a client that failed to start is not handed out again) and works."""
    rng = np.random.default_rng(7)
    path = tmpfs.path / "vectors"
    causes: set[str] = set()
    for kb in range(150, 4150, 250):
        for old in tmpfs.path.iterdir():  # the index, and one the last reopen set aside (half-written files)
            shutil.rmtree(old)
        tmpfs.resize(f"{kb}k")
        index = None
        with pytest.raises(DiskFull) as info:
            index = VectorIndex(path)
            for batch in range(32):
                index.upsert([f"{batch}-{i}" for i in range(64)], rng.standard_normal((64, 384)).astype(np.float32))
        causes.add(str(info.value.__cause__))
        assert str(info.value) == "the disk is full: free some space and try again", (kb, info.value.__cause__)
        assert not _set_aside(tmpfs.path) and (index is None or index.damage is None), (kb, info.value.__cause__)
        if index is not None:
            index.close()
        with contextlib.suppress(DiskFull):  # still full: opens, or says so again (leaving half-written files)
            VectorIndex(path).close()
        assert not _set_aside(tmpfs.path), (kb, info.value.__cause__)
        tmpfs.resize("64m")
        again = VectorIndex(path)  # room again: opens (a half-written index is moved aside, to be rebuilt)
        before = again.count()
        again.upsert(["after"], rng.standard_normal((1, 384)).astype(np.float32))
        assert again.count() == before + 1 and again.query(rng.standard_normal(384).astype(np.float32), 3)
        again.close()
    assert any("database or disk is full" in c for c in causes), causes
    assert any("Failed to apply logs to the hnsw segment writer" in c for c in causes), causes


def test_parallel_cli_commands_wait_their_turn(tmp_path):
    data = tmp_path / "data"
    ok(run(data, "add", "the first note of the shared folder"))
    procs = []
    expected: set[str] = set()
    for i in range(24):
        kind = ("add", "search", "import")[i % 3]
        if kind == "add":
            text = f"parallel add {i}: the {TOPICS[i % len(TOPICS)]} review moved to room {100 + i}"
            expected.add(text)
            args, stdin = ["add", text], None
        elif kind == "search":
            args, stdin = ["search", "review room"], None
        else:
            texts = [f"parallel import {i}.{k}: {uuid.uuid4()} {TOPICS[k]} shipment {i * 10 + k}" for k in range(5)]
            expected.update(texts)
            args, stdin = ["import", "-"], "".join(json.dumps({"content": t}) + "\n" for t in texts).encode()
        given = tmp_path / f"stdin-{i}"  # a file: a process holding the lock never waits for us to write
        given.write_bytes(stdin or b"")
        with open(given, "rb") as fh:
            procs.append((args, subprocess.Popen([*CLI, "--data-dir", str(data), *args], stdin=fh,
                                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                                 env={**os.environ, "DESKTOP_MEMORY_ENCRYPTION": "off"})))
    failures = []
    waited = 0
    for args, proc in procs:
        out, err = proc.communicate(timeout=900)
        waited += b"waiting for another desktop-memory process" in err
        if proc.returncode != 0:
            failures.append((args[0], proc.returncode, err.decode()[-300:]))
        assert err.count(b"waiting for another") <= 1
    assert not failures, failures
    assert waited > 0  # they did overlap
    exported = {json.loads(x)["content"] for x in ok(run(data, "export")).stdout.decode().splitlines()}
    assert expected <= exported
