"""Where a data folder's engine socket lives, and the token that opens it."""

from __future__ import annotations

import hashlib
import os
import secrets
import sys
import tempfile
from pathlib import Path

from ..core.errors import StorageError

SOCKET_NAME = "engine.sock"
TOKEN_NAME = "engine.token"
# sun_path holds 108 bytes on Linux and 104 on macOS (both including the final NUL)
MAX_UNIX_PATH = 100


def family() -> str:
    """multiprocessing.connection family: named pipes on Windows, Unix sockets elsewhere."""
    return "AF_PIPE" if sys.platform == "win32" else "AF_UNIX"


def _folder_key(data_dir: Path) -> str:
    return hashlib.sha256(str(Path(data_dir).resolve()).encode("utf-8")).hexdigest()[:16]


def socket_address(data_dir: Path) -> str:
    """The socket of this data folder: inside it when the path is short enough, else a private run dir."""
    if sys.platform == "win32":
        return rf"\\.\pipe\desktop-memory-{_folder_key(data_dir)}"
    inside = Path(data_dir).resolve() / SOCKET_NAME
    if len(os.fsencode(inside)) <= MAX_UNIX_PATH:
        return str(inside)
    return str(_private_run_dir() / f"{_folder_key(data_dir)}.sock")


def _private_run_dir() -> Path:
    """$XDG_RUNTIME_DIR (per user by design), else a 0700 folder of ours in the temp folder."""
    runtime = os.environ.get("XDG_RUNTIME_DIR")
    if runtime and Path(runtime).is_dir():
        return Path(runtime)
    folder = Path(tempfile.gettempdir()) / f"desktop-memory-{os.getuid()}"
    folder.mkdir(mode=0o700, exist_ok=True)
    info = folder.lstat()
    if info.st_uid != os.getuid() or info.st_mode & 0o077 or not folder.is_dir() or folder.is_symlink():
        raise StorageError(f"{folder} is not a private folder of this user; remove it and start again")
    return folder


# -- the token: one small set of functions, so it can move into the OS keyring later ------------
def token_path(data_dir: Path) -> Path:
    return Path(data_dir) / TOKEN_NAME


def store_token(data_dir: Path) -> bytes:
    """A new random token for this host start, saved readable by this user only (0600)."""
    token = secrets.token_hex(32).encode("ascii")
    path = token_path(data_dir)
    tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    tmp.unlink(missing_ok=True)
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        os.write(fd, token)
    finally:
        os.close(fd)
    os.replace(tmp, path)
    return token


def load_token(data_dir: Path) -> bytes | None:
    """The running host's token, or None when there is none (or it cannot be read)."""
    try:
        token = token_path(data_dir).read_bytes().strip()
    except OSError:
        return None
    return token or None


def discard_token(data_dir: Path, token: bytes) -> None:
    """Remove the token file if it is still this token (a later host may have written its own)."""
    if load_token(data_dir) == token:
        token_path(data_dir).unlink(missing_ok=True)
