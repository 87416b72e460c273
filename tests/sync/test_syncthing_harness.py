"""The Syncthing harness (tests/sync/syncthing.py) really syncs: two real instances on loopback, one folder."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from tests.sync.conftest import FOLDER_ID
from tests.sync.syncthing import (
    CONFLICT_RE,
    SYNCTHING,
    Syncthing,
    conflict_copies,
    make_conflict,
    processes_using,
    settle,
    wait_for,
)

pytestmark = [
    pytest.mark.skipif(SYNCTHING is None,
                       reason="syncthing is not installed (bash scripts/dev.sh setup installs Debian's syncthing)"),
    pytest.mark.slow,
]

SYNC_TIMEOUT_S = 30


def same_bytes(path: Path, data: bytes) -> bool:
    try:
        return path.read_bytes() == data
    except OSError:  # not there yet, or being renamed into place
        return False


def test_a_file_written_on_a_appears_byte_identical_on_b(syncthing_pair):
    a, b = syncthing_pair
    data = os.urandom(300_000) + "ünïcode ✓".encode()
    (a.folder / "m-aaaa").mkdir()
    (a.folder / "m-aaaa" / "0000000001.dms").write_bytes(data)

    wait_for(lambda: same_bytes(b.folder / "m-aaaa" / "0000000001.dms", data), SYNC_TIMEOUT_S,
             "a's file on b")


def test_a_file_written_on_b_appears_on_a(syncthing_pair):
    a, b = syncthing_pair
    data = os.urandom(4096)
    (b.folder / "from-b.dms").write_bytes(data)

    wait_for(lambda: same_bytes(a.folder / "from-b.dms", data), SYNC_TIMEOUT_S, "b's file on a")


def test_a_deletion_propagates(syncthing_pair):
    a, b = syncthing_pair
    (a.folder / "doomed.dms").write_bytes(b"short-lived")
    wait_for(lambda: same_bytes(b.folder / "doomed.dms", b"short-lived"), SYNC_TIMEOUT_S, "doomed.dms on b")
    settle(a, b, FOLDER_ID)

    (a.folder / "doomed.dms").unlink()

    wait_for(lambda: not (b.folder / "doomed.dms").exists(), SYNC_TIMEOUT_S, "doomed.dms gone from b")


def test_settle_is_a_barrier(syncthing_pair):
    a, b = syncthing_pair
    (b.folder / "barrier.dms").write_bytes(b"after the barrier it is there")

    settle(a, b, FOLDER_ID)

    assert (a.folder / "barrier.dms").read_bytes() == b"after the barrier it is there"


def test_a_real_conflict_copy_appears_with_syncthings_name(syncthing_pair):
    a, b = syncthing_pair

    copy = make_conflict(a, b, FOLDER_ID, "notes/note.txt", b"a's version\n", b"b's version\n")

    assert copy.parent == a.folder / "notes"
    assert CONFLICT_RE.search(copy.name)
    assert copy.name.startswith("note.sync-conflict-") and copy.name.endswith(".txt")
    assert copy.name[-len(".txt") - 7:-len(".txt")] in {a.device_id[:7], b.device_id[:7]}
    # both sides: b's version under the name, a's in the conflict copy, nothing else
    for side in (a, b):
        assert (side.folder / "notes" / "note.txt").read_bytes() == b"b's version\n"
        assert (side.folder / "notes" / copy.name).read_bytes() == b"a's version\n"
        assert [p.name for p in conflict_copies(side.folder)] == [copy.name]


def test_the_instances_listen_only_on_loopback(syncthing_pair):
    a, b = syncthing_pair
    assert a.listen_host != b.listen_host
    for side in (a, b):
        listening = side.listening()
        # what ss shows for the process: the REST API and the sync protocol, both on 127.0.0.x, nothing else
        assert sorted(listening) == sorted([f"127.0.0.1:{side.gui_port}", f"{side.listen_host}:{side.sync_port}"])
        assert all(address.startswith("127.") for address in listening)


def test_nothing_outside_tmp_path_is_used(tmp_path):
    st = Syncthing(tmp_path / "home", tmp_path / "folder", "x")
    st.write_config()
    out = subprocess.run([SYNCTHING or "syncthing", "serve", f"--home={st.home}", "--paths"], env=st.env(),
                         capture_output=True, text=True, check=True, timeout=30).stdout
    paths = [line.strip() for line in out.splitlines() if line.startswith("\t") and line.strip() != "-"]
    assert len(paths) >= 5
    for path in paths:
        assert Path(path).is_relative_to(tmp_path), path


def test_stop_leaves_no_process_behind_also_when_the_test_fails(tmp_path):
    pids = []
    with pytest.raises(RuntimeError, match="the test failed"), Syncthing(tmp_path / "home", tmp_path / "f", "s") as st:
        pids.extend(st.pids())
        assert st.pid in pids
        assert processes_using(tmp_path) == sorted(pids)
        raise RuntimeError("the test failed")

    assert processes_using(tmp_path) == []
    for pid in pids:
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)
