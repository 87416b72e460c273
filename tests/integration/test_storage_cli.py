"""The CLI on real small filesystems (a full tmpfs, a read-only mount) and with many commands at once.

Real SQLite, Chroma and MiniLM in subprocesses. Mounting needs root (the test machine runs as root);
where mounting is impossible the tests say so and skip.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

pytestmark = pytest.mark.integration
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
