"""The sync folder's files (sync/wire.py), the clocks (sync/hlc.py) and the recovery phrase (sync/phrases.py)."""

from __future__ import annotations

import os
import string
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from desktop_memory.core.errors import InvalidInput
from desktop_memory.sync import hlc, phrases, wire

KEY = bytes(range(32))


@given(st.dictionaries(st.text(max_size=20), st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(), lambda c: st.lists(c, max_size=4), max_leaves=20),
    max_size=8), st.integers(0, 2**32 - 1))
@settings(max_examples=60, deadline=None)
def test_a_sealed_file_opens_to_the_same_record(payload: dict, epoch: int) -> None:
    assert wire.unseal({epoch: KEY}, wire.seal(KEY, epoch, payload)) == payload


def test_a_cut_changed_or_foreign_file_is_refused() -> None:
    data = wire.seal(KEY, 0, {"machine": "m", "seq": 1, "ops": [{"o": "add", "v": "the secret text"}]})
    for broken in (data[:-1], data[: len(data) // 2], data[:10], b"", data[:-5] + b"xxxxx",
                   data[:20] + bytes([data[20] ^ 1]) + data[21:], b"DMS1" + os.urandom(200)):
        with pytest.raises(wire.NotOurs):
            wire.unseal({0: KEY}, broken)
    with pytest.raises(wire.NotOurs):
        wire.unseal({0: bytes(32)}, data)  # another set's key
    with pytest.raises(wire.NotOurs):
        wire.unseal({1: KEY}, data)  # a key of another epoch


def test_nothing_of_the_record_is_readable_in_the_file() -> None:
    data = wire.seal(KEY, 0, {"ops": [{"v": "passport number and the kitchen code 4711"}] * 20})
    assert b"passport" not in data and b"4711" not in data and b"kitchen" not in data


def test_write_new_never_replaces_a_complete_file(tmp_path: Path) -> None:
    target = tmp_path / "m-x" / "0000000001.dms"
    assert wire.write_new(target, b"first")
    assert not wire.write_new(target, b"second")
    assert target.read_bytes() == b"first"
    assert [p.name for p in target.parent.iterdir()] == ["0000000001.dms"]  # no temporary file left
    if os.name == "posix":
        assert target.stat().st_mode & 0o777 == 0o600


def test_the_listing_reads_sync_tools_names_and_skips_their_litter(tmp_path: Path) -> None:
    machine = "a" * 32
    d = tmp_path / f"m-{machine}"
    d.mkdir()
    for name in ("0000000001.dms", "snap-0000000002.dms", "0000000003.sync-conflict-20261128-101010-ABCDEFG.dms",
                 "0000000003 (conflicted copy 2026-11-28).dms", ".syncthing.0000000004.dms.tmp", ".tmp-abc",
                 "~0000000005.dms", ".DS_Store", "desktop.ini", "notes.txt"):
        (d / name).write_bytes(b"x")
    (tmp_path / ".stfolder").mkdir()
    (tmp_path / "m-nothex").mkdir()
    (tmp_path / f"grant-2-{machine}.dms").write_bytes(b"x")
    (tmp_path / "keys-2.dms").write_bytes(b"x")
    (tmp_path / f"removed-{machine}.dms").write_bytes(b"x")
    got = {(e.path.name, e.kind, e.seq, e.canonical) for e in wire.listing(tmp_path)}
    assert got == {
        ("0000000001.dms", "segment", 1, True), ("snap-0000000002.dms", "snapshot", 2, True),
        ("0000000003.sync-conflict-20261128-101010-ABCDEFG.dms", "segment", 0, False),
        ("0000000003 (conflicted copy 2026-11-28).dms", "segment", 0, False),
        (f"grant-2-{machine}.dms", "grant", 2, True), ("keys-2.dms", "keys", 2, True),
        (f"removed-{machine}.dms", "removed", 0, True)}


def test_a_set_is_opened_only_by_its_keys(tmp_path: Path) -> None:
    where = tmp_path / wire.SYNC_DIR
    set_id = wire.create_set(where, KEY)
    assert wire.read_set(where) == (set_id, wire.key_check(KEY))
    assert wire.epoch_for_key(where, KEY) == 0
    assert wire.epoch_for_key(where, bytes(32)) is None
    other = os.urandom(32)
    wire.write_epoch(where, 3, other)
    assert wire.epoch_for_key(where, other) == 3
    with pytest.raises(FileExistsError):
        wire.create_set(where, KEY)
    (where / wire.SET_FILE).write_bytes(b"damaged")
    with pytest.raises(wire.NotOurs):
        wire.read_set(where)
    assert wire.read_set(tmp_path / "none") is None


def test_clock_stamps_only_go_forward_and_take_up_others_within_a_day() -> None:
    now = [1_800_000_000.0]
    clock = hlc.Clock("a" * 32, wall=lambda: now[0])
    first = clock.now()
    now[0] -= 3600  # the wall clock set back an hour
    second = clock.now()
    assert second > first
    ahead = hlc.stamp(int((now[0] + 7200) * 1000), 5, "b" * 32)
    assert clock.see(ahead) == 0.0
    assert clock.now() > ahead  # a change made after seeing another wins over it
    far = hlc.stamp(int((now[0] + 10 * 86400) * 1000), 0, "c" * 32)
    assert clock.see(far) > hlc.MAX_AHEAD_S  # a clock ten days ahead is not taken up, and said
    assert clock.now() < far
    restarted = hlc.Clock("a" * 32, clock.last, wall=lambda: now[0])
    assert restarted.now() > clock.last
    with pytest.raises(ValueError):
        hlc.parse("yesterday")


def test_the_recovery_phrase_round_trips_and_forgives_how_it_is_typed() -> None:
    key = os.urandom(32)
    words = phrases.to_phrase(key).split()
    assert len(words) == 24
    typed = "\n".join(f"{i}. {w.upper() if i % 2 else w}," for i, w in enumerate(words, 1)) + "  \n"
    assert phrases.from_phrase(typed) == key
    assert phrases.from_phrase("-".join(words)) == key


@given(st.integers(0, 23), st.sampled_from(string.ascii_lowercase))
@settings(max_examples=40, deadline=None)
def test_a_mistyped_phrase_is_one_clear_line_never_a_wrong_key(position: int, letter: str) -> None:
    key = bytes(range(32, 64))
    words = phrases.to_phrase(key).split()
    words[position] = words[position][:-1] + letter
    text = " ".join(words)
    try:
        got = phrases.from_phrase(text)
    except InvalidInput as exc:
        assert "\n" not in str(exc) and "recovery phrase" in str(exc)
    else:
        assert got == key  # only when the letter typed was the right one


@pytest.mark.parametrize("text", ["", "word", "abandon " * 23, "abandon " * 25, "🙂 " * 24, "1 2 3"])
def test_wrong_lengths_and_non_words_are_refused(text: str) -> None:
    with pytest.raises(InvalidInput):
        phrases.from_phrase(text)
