"""The browser companion's spool: captures kept encrypted in `<data folder>/spool/` while the engine cannot start.

The native host may run when the engine cannot (a locked keyring, the folder held by a restore): it must not
lose a capture, and it must not need the database's key to keep one. So the engine, when it starts, writes
`spool/key.pub` (an X25519 public key; the private key stays in the OS keyring) and the host encrypts each
capture to it: a fresh X25519 key per file, the shared secret through HKDF-SHA256 into an AES-256-GCM key.
A file is the ephemeral public key (32 bytes), the nonce (12 bytes) and the ciphertext with its tag. Only the
engine can read it back (`open_file`); a damaged or altered file fails the tag and is refused.

Files are written as `<name>.part` (this user only), synced, and renamed into place: a crash leaves a `.part`
that `pending` never lists, never half a capture.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import time
from pathlib import Path
from typing import Any

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric.x25519 import X25519PrivateKey, X25519PublicKey
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.kdf.hkdf import HKDF
from cryptography.hazmat.primitives.serialization import Encoding, NoEncryption, PrivateFormat, PublicFormat

SPOOL_DIR = "spool"
PUBLIC_KEY = "key.pub"
KEY_ID = "key.id"  # the name of the keyring entry holding the private key (engine side: service/web.py)
SUFFIX = ".spool"
PART = ".part"
INFO = b"desktop-memory spool v1"
KEY_BYTES, NONCE_BYTES, TAG_BYTES = 32, 12, 16
DIR_MODE, FILE_MODE = 0o700, 0o600
NOT_STARTED = "desktop-memory has not been started yet on this computer"


class SpoolUnavailable(OSError):
    """No public key to encrypt to (the engine never started here), or the spool cannot be written."""


def spool_dir(folder: Path) -> Path:
    return Path(folder) / SPOOL_DIR


def new_keypair() -> tuple[bytes, bytes]:
    """(private, public), 32 raw bytes each."""
    private = X25519PrivateKey.generate()
    return (private.private_bytes(Encoding.Raw, PrivateFormat.Raw, NoEncryption()),
            private.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw))


def public_of(private: bytes) -> bytes:
    """The public half of a private key (ValueError when it is not one)."""
    return X25519PrivateKey.from_private_bytes(private).public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)


def _key(shared: bytes) -> bytes:
    return HKDF(algorithm=hashes.SHA256(), length=32, salt=None, info=INFO).derive(shared)


def _private_dir(folder: Path) -> Path:
    where = spool_dir(folder)
    where.mkdir(mode=DIR_MODE, parents=True, exist_ok=True)
    if os.name == "posix":
        os.chmod(where, DIR_MODE)
    return where


def _write_atomically(target: Path, data: bytes) -> None:
    """`target` through `<target>.part` (0600, never through a link), synced, renamed; nothing left on failure."""
    part = target.with_name(target.name + PART)
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0) | getattr(os, "O_NOFOLLOW", 0)
    part.unlink(missing_ok=True)
    fd = os.open(part, flags, FILE_MODE)
    try:
        try:
            if os.name == "posix":
                os.fchmod(fd, FILE_MODE)
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view):]
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(part, target)
    except BaseException:
        part.unlink(missing_ok=True)
        raise
    if os.name == "posix":  # the rename itself on disk
        with contextlib.suppress(OSError):
            dir_fd = os.open(target.parent, os.O_RDONLY)
            try:
                os.fsync(dir_fd)
            finally:
                os.close(dir_fd)


def write_key_id(folder: Path, key_id: str) -> Path:
    """The engine's side: which keyring entry holds the private key (`spool/key.id`)."""
    target = _private_dir(folder) / KEY_ID
    _write_atomically(target, key_id.encode("ascii"))
    return target


def key_id(folder: Path) -> str:
    try:
        return (spool_dir(folder) / KEY_ID).read_text(encoding="ascii").strip()
    except (FileNotFoundError, UnicodeDecodeError):
        return ""


def write_public_key(folder: Path, public: bytes) -> Path:
    """The engine's side: publish the key captures are encrypted to (`spool/key.pub`)."""
    if len(public) != KEY_BYTES:
        raise ValueError("a spool public key is 32 bytes")
    target = _private_dir(folder) / PUBLIC_KEY
    _write_atomically(target, public)
    return target


def public_key(folder: Path) -> bytes | None:
    try:
        raw = (spool_dir(folder) / PUBLIC_KEY).read_bytes()
    except FileNotFoundError:
        return None
    return raw if len(raw) == KEY_BYTES else None


def seal(public: bytes, message: dict[str, Any]) -> bytes:
    """The bytes of one spool file holding `message`."""
    ephemeral = X25519PrivateKey.generate()
    shared = ephemeral.exchange(X25519PublicKey.from_public_bytes(public))
    nonce = secrets.token_bytes(NONCE_BYTES)
    plain = json.dumps(message, ensure_ascii=False, separators=(",", ":")).encode("utf-8", "replace")
    return (ephemeral.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw) + nonce
            + AESGCM(_key(shared)).encrypt(nonce, plain, None))


def put(folder: Path, message: dict[str, Any]) -> Path:
    """Keep `message` (a JSON object) encrypted in the data folder's spool; the file written.
    SpoolUnavailable when the engine never published its key here (NOT_STARTED), OSError when writing fails."""
    public = public_key(folder)
    if public is None:
        raise SpoolUnavailable(NOT_STARTED)
    target = _private_dir(folder) / f"{time.time_ns()}-{secrets.token_hex(6)}{SUFFIX}"
    _write_atomically(target, seal(public, message))
    return target


def clear_parts(folder: Path) -> None:
    """Remove what a crash mid-write left (`.part` files): never a complete capture."""
    with contextlib.suppress(FileNotFoundError):
        for entry in os.scandir(spool_dir(folder)):
            if entry.name.endswith(SUFFIX + PART):
                Path(entry.path).unlink(missing_ok=True)


def pending(folder: Path) -> list[Path]:
    """The spooled files, oldest first (a `.part` left by a crash is not one)."""
    try:
        names = [e.name for e in os.scandir(spool_dir(folder)) if e.name.endswith(SUFFIX) and e.is_file()]
    except FileNotFoundError:
        return []

    def order(name: str) -> tuple[int, str]:
        stamp = name.split("-", 1)[0]
        return (int(stamp) if stamp.isdigit() else 0, name)

    return [spool_dir(folder) / n for n in sorted(names, key=order)]


def open_file(path: Path, private_key: bytes) -> dict[str, Any]:
    """The message in a spool file; ValueError (one line) for a damaged, cut or forged one."""
    data = Path(path).read_bytes()
    if len(data) < KEY_BYTES + NONCE_BYTES + TAG_BYTES:
        raise ValueError(f"spool file {Path(path).name} is cut short")
    ephemeral, nonce, sealed = data[:KEY_BYTES], data[KEY_BYTES:KEY_BYTES + NONCE_BYTES], data[KEY_BYTES + NONCE_BYTES:]
    try:
        shared = X25519PrivateKey.from_private_bytes(private_key).exchange(X25519PublicKey.from_public_bytes(ephemeral))
        plain = AESGCM(_key(shared)).decrypt(nonce, sealed, None)
    except (InvalidTag, ValueError):
        raise ValueError(f"spool file {Path(path).name} is damaged or was not written for this key") from None
    try:
        message = json.loads(plain.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError):
        raise ValueError(f"spool file {Path(path).name} does not hold a message") from None
    if not isinstance(message, dict):
        raise ValueError(f"spool file {Path(path).name} does not hold a message")
    return message
