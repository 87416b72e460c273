"""The sync folder's files: names, encryption, immutable writes, and reading what a file-sync tool delivered.

Layout, inside the folder the person syncs (FOLDER/desktop-memory-sync/):
  set                     written once by the first machine: b"DMSYNCSET1", the set id (16 bytes), a key check
  epoch-<n>               one per key the set has had (n = 0, 1, ...): b"DMSYNCKEY1", n, a key check
  m-<machine>/            one per machine, written only by it: log segments `<seq:010d>.dms` and snapshots
                          `snap-<seq:010d>.dms` (every live change up to seq); complete files are never changed
  grant-<n>-<machine>.dms the key of epoch n sealed to that machine's public key (after a machine was removed)
  keys-<n>.dms            the keys of the epochs before n, sealed with epoch n's key (a machine joining later)
  removed-<machine>.dms   a removal: that machine's changes after a segment are ignored

A segment or snapshot is b"DMS1" + epoch (4 bytes) + nonce (12) + AES-256-GCM(zlib(JSON)), the key derived from
the epoch's set key by HKDF; the JSON says which machine wrote it and its sequence number, so a conflict copy or a
file renamed by a sync tool is recognised by what it holds, not by its name. A file cut short or changed fails
its tag and is skipped (looked at again later: a file still arriving becomes whole). No name and no byte outside
the ciphertext says anything about a memory.
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import json
import os
import re
import secrets
import struct
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.kdf.hkdf import HKDF

SYNC_DIR = "desktop-memory-sync"
SET_FILE = "set"
SET_MAGIC = b"DMSYNCSET1"
EPOCH_MAGIC = b"DMSYNCKEY1"
MAGIC = b"DMS1"
SUFFIX = ".dms"
NONCE = 12
HEADER = len(MAGIC) + 4 + NONCE
KEY_BYTES = 32
MAX_FILE = 256 * 1024 * 1024  # a file larger than this is not ours (never read into memory)
_SEGMENT = re.compile(r"^(snap-)?(\d{10})\.dms$")
_MACHINE_DIR = re.compile(r"^m-([0-9a-f]{32})$")
_GRANT = re.compile(r"^grant-(\d+)-([0-9a-f]{32})\.dms$")
_KEYS = re.compile(r"^keys-(\d+)\.dms$")
_REMOVED = re.compile(r"^removed-([0-9a-f]{32})\.dms$")
_EPOCH = re.compile(r"^epoch-(\d+)$")
DIR_MODE, FILE_MODE = 0o700, 0o600


class NotOurs(ValueError):
    """A file that is not a complete sync file for these keys (cut short, changed, another set's, foreign)."""


def new_key() -> bytes:
    return secrets.token_bytes(KEY_BYTES)


def new_machine_id() -> str:
    return secrets.token_hex(16)


def _derive(key: bytes, what: bytes) -> bytes:
    return HKDF(algorithm=hashes.SHA256(), length=32, salt=None, info=b"desktop-memory sync v1 " + what).derive(key)


def key_check(key: bytes) -> bytes:
    return hmac.new(_derive(key, b"check"), b"desktop-memory sync key check", hashlib.sha256).digest()[:16]


# -- sealing ---------------------------------------------------------------------------------------
def seal(key: bytes, epoch: int, payload: dict[str, Any]) -> bytes:
    head = MAGIC + struct.pack(">I", epoch) + secrets.token_bytes(NONCE)
    plain = zlib.compress(json.dumps(payload, ensure_ascii=False, separators=(",", ":")).encode("utf-8"), 6)
    return head + AESGCM(_derive(key, b"files")).encrypt(head[-NONCE:], plain, head[:len(MAGIC) + 4])


def epoch_of(data: bytes) -> int:
    if len(data) < HEADER + 16 or not data.startswith(MAGIC):
        raise NotOurs("not a sync file")
    return int(struct.unpack(">I", data[len(MAGIC):len(MAGIC) + 4])[0])


def unseal(keys: dict[int, bytes], data: bytes) -> dict[str, Any]:
    """The JSON object a sync file holds; NotOurs when it cannot be read with these keys."""
    epoch = epoch_of(data)
    key = keys.get(epoch)
    if key is None:
        raise NotOurs(f"written with a key this machine does not have (epoch {epoch})")
    try:
        plain = AESGCM(_derive(key, b"files")).decrypt(data[len(MAGIC) + 4:HEADER], data[HEADER:],
                                                         data[:len(MAGIC) + 4])
        payload = json.loads(zlib.decompress(plain).decode("utf-8"))
    except (InvalidTag, zlib.error, UnicodeDecodeError, json.JSONDecodeError, ValueError):
        raise NotOurs("cut short or damaged") from None
    if not isinstance(payload, dict):
        raise NotOurs("does not hold a sync record")
    return payload


# -- writing: whole files only -----------------------------------------------------------------------
def private_dir(path: Path) -> Path:
    path.mkdir(mode=DIR_MODE, parents=True, exist_ok=True)
    return path


def write_new(target: Path, data: bytes) -> bool:
    """Write `target` whole (a hidden temporary file, synced, then linked into place) unless it exists: a complete
    file is never changed. False when it already existed."""
    private_dir(target.parent)
    temp = target.with_name(f".tmp-{secrets.token_hex(6)}")
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0), FILE_MODE)
    try:
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view):]
            os.fsync(fd)
        finally:
            os.close(fd)
        try:
            os.link(temp, target)  # fails if it exists: never over a complete file
        except FileExistsError:
            return False
        except OSError:  # a file system without hard links (FAT on a USB stick): this machine is its only writer
            if target.exists():
                return False
            os.replace(temp, target)
            return True
        return True
    finally:
        temp.unlink(missing_ok=True)


def read_small(path: Path) -> bytes:
    """A file's bytes (NotOurs when it is not a regular file of a sensible size, or cannot be read now)."""
    try:
        st = path.stat()
        if not path.is_file() or st.st_size > MAX_FILE:
            raise NotOurs("not a sync file")
        return path.read_bytes()
    except OSError as exc:
        raise NotOurs(f"cannot be read now ({exc.strerror or exc})") from None


# -- the set ---------------------------------------------------------------------------------------
def sync_dir(folder: Path) -> Path:
    return Path(folder) / SYNC_DIR


def create_set(where: Path, key: bytes) -> str:
    """Write the set file and epoch 0's check into a new sync dir; the set id (hex)."""
    set_id = secrets.token_bytes(16)
    private_dir(where)
    if not write_new(where / SET_FILE, SET_MAGIC + set_id + key_check(key)):
        raise FileExistsError(where / SET_FILE)
    write_epoch(where, 0, key)
    return set_id.hex()


def read_set(where: Path) -> tuple[str, bytes] | None:
    """(set id, key check) of the set in this sync dir; None when there is none (NotOurs when damaged)."""
    try:
        data = (where / SET_FILE).read_bytes()
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise NotOurs(f"cannot be read ({exc.strerror or exc})") from None
    if len(data) != len(SET_MAGIC) + 32 or not data.startswith(SET_MAGIC):
        raise NotOurs("damaged")
    return data[len(SET_MAGIC):len(SET_MAGIC) + 16].hex(), data[len(SET_MAGIC) + 16:]


def write_epoch(where: Path, epoch: int, key: bytes) -> None:
    write_new(where / f"epoch-{epoch}", EPOCH_MAGIC + struct.pack(">I", epoch) + key_check(key))


def epoch_for_key(where: Path, key: bytes) -> int | None:
    """Which of the set's keys this is (its epoch), or None when it opens none of them."""
    check = key_check(key)
    found = None
    with contextlib.suppress(FileNotFoundError):
        for entry in os.scandir(where):
            m = _EPOCH.match(entry.name)
            if not m:
                continue
            with contextlib.suppress(OSError):
                data = Path(entry.path).read_bytes()
                if data.startswith(EPOCH_MAGIC) and hmac.compare_digest(data[-16:], check):
                    found = max(found or 0, int(m.group(1)))
    return found


# -- listing what is there --------------------------------------------------------------------------
@dataclass(frozen=True)
class Entry:
    path: Path
    kind: str  # "segment", "snapshot", "grant", "keys", "removed", "other"
    machine: str = ""  # the machine whose dir holds it (segments, snapshots), or a grant's or removal's machine
    seq: int = 0  # a segment's or snapshot's sequence number (by name), a grant's or keys' epoch
    canonical: bool = True  # False: a conflict copy or other variant of a name (read by what it holds)


def listing(where: Path) -> list[Entry]:
    """Everything in the sync dir that may be ours; names a sync tool made (conflict copies: `x.sync-conflict-…`,
    `x (conflicted copy …)`, `x (1)`) are listed as variants of the name they came from."""
    out: list[Entry] = []
    try:
        top = list(os.scandir(where))
    except OSError:
        return out
    for entry in top:
        name = entry.name
        if name.startswith((".", "~")):
            continue
        if entry.is_dir(follow_symlinks=False):
            m = _MACHINE_DIR.match(name)
            if not m:
                continue
            with contextlib.suppress(OSError):
                for sub in os.scandir(entry.path):
                    if sub.name.startswith((".", "~")) or not sub.is_file(follow_symlinks=False):
                        continue
                    sm = _SEGMENT.match(sub.name)
                    if sm:
                        out.append(Entry(Path(sub.path), "snapshot" if sm.group(1) else "segment", m.group(1),
                                         int(sm.group(2))))
                    elif sub.name.startswith(("snap-", "0", "1", "2", "3", "4", "5", "6", "7", "8", "9")):
                        snap = sub.name.startswith("snap-")
                        out.append(Entry(Path(sub.path), "snapshot" if snap else "segment", m.group(1), 0, False))
            continue
        if not entry.is_file(follow_symlinks=False):
            continue
        for pattern, kind in ((_GRANT, "grant"), (_KEYS, "keys"), (_REMOVED, "removed")):
            m = pattern.match(name)
            if m:
                if kind == "grant":
                    out.append(Entry(Path(entry.path), kind, m.group(2), int(m.group(1))))
                elif kind == "keys":
                    out.append(Entry(Path(entry.path), kind, "", int(m.group(1))))
                else:
                    out.append(Entry(Path(entry.path), kind, m.group(1)))
                break
    return out


def segment_name(seq: int, *, snapshot: bool = False) -> str:
    return f"{'snap-' if snapshot else ''}{seq:010d}{SUFFIX}"


def machine_dir(where: Path, machine: str) -> Path:
    return where / f"m-{machine}"
