"""The browser companion's encrypted spool (desktop_memory/browser/spool.py): what the native host keeps while the
engine cannot start, readable only with the engine's private key, never half a file."""

from __future__ import annotations

import os
import stat
import sys

import pytest

from desktop_memory.browser import spool

CAPTURE = {"type": "capture", "capture": {"kind": "exchange", "site": "claude.ai", "prompt": "What is a kettle?",
                                          "answer": "A pot for boiling water. ☕", "private": False}}


@pytest.fixture
def keyed(tmp_path):
    private, public = spool.new_keypair()
    folder = tmp_path / "data"
    spool.write_public_key(folder, public)
    return folder, private


def test_a_message_comes_back_with_the_private_key_only(keyed):
    folder, private = keyed
    path = spool.put(folder, CAPTURE)
    assert spool.pending(folder) == [path] and path.name.endswith(".spool")
    assert b"kettle" not in path.read_bytes()  # encrypted at rest
    assert spool.open_file(path, private) == CAPTURE
    other, _ = spool.new_keypair()
    with pytest.raises(ValueError, match="damaged or was not written for this key"):
        spool.open_file(path, other)


def test_pending_lists_them_oldest_first(keyed):
    folder, _ = keyed
    paths = [spool.put(folder, {"n": n}) for n in range(5)]
    assert spool.pending(folder) == paths


@pytest.mark.parametrize("damage", ["flip", "cut", "short", "swap_key", "empty"])
def test_damaged_cut_or_forged_files_are_refused_in_one_line(keyed, damage):
    folder, private = keyed
    path = spool.put(folder, CAPTURE)
    data = bytearray(path.read_bytes())
    if damage == "flip":
        data[-5] ^= 0x01
    elif damage == "cut":
        data = data[:-3]
    elif damage == "short":
        data = data[:20]
    elif damage == "swap_key":  # another sender's key put in front of this ciphertext
        data[:32] = spool.new_keypair()[1]
    else:
        data = bytearray()
    path.write_bytes(bytes(data))
    with pytest.raises(ValueError) as err:
        spool.open_file(path, private)
    assert "\n" not in str(err.value) and path.name in str(err.value)


def test_a_forged_file_that_decrypts_to_no_object_is_refused(keyed):
    folder, private = keyed
    public = (folder / "spool" / "key.pub").read_bytes()
    path = folder / "spool" / "1-x.spool"
    path.write_bytes(spool.seal(public, {"a": 1})[:-16] + b"\0" * 16)
    with pytest.raises(ValueError):
        spool.open_file(path, private)


def test_without_the_engines_key_nothing_is_written(tmp_path):
    with pytest.raises(spool.SpoolUnavailable, match="has not been started yet"):
        spool.put(tmp_path / "data", CAPTURE)
    assert spool.pending(tmp_path / "data") == []


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX modes")
def test_files_are_the_users_alone(keyed):
    folder, _ = keyed
    old = os.umask(0o022)
    try:
        path = spool.put(folder, CAPTURE)
    finally:
        os.umask(old)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE((folder / "spool").stat().st_mode) == 0o700
    assert stat.S_IMODE((folder / "spool" / "key.pub").stat().st_mode) == 0o600


def test_a_crash_mid_write_leaves_no_half_file(keyed, monkeypatch):
    folder, private = keyed
    first = spool.put(folder, CAPTURE)

    def crash(fd):
        raise OSError(5, "Input/output error")

    monkeypatch.setattr(spool.os, "fsync", crash)
    with pytest.raises(OSError):
        spool.put(folder, CAPTURE)
    monkeypatch.undo()
    assert sorted(p.name for p in (folder / "spool").iterdir()) == sorted(["key.pub", first.name])
    (folder / "spool" / "123-abc.spool.part").write_bytes(b"half")  # a process killed before its rename
    assert spool.pending(folder) == [first]
    assert spool.open_file(first, private) == CAPTURE
