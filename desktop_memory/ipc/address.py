"""Where a data folder's engine socket lives, and the token that opens it."""

from __future__ import annotations

import contextlib
import hashlib
import logging
import os
import secrets
import stat
import sys
from pathlib import Path

from ..core.errors import KeyringUnavailable, StorageError
from ..engine import keys, session_env

log = logging.getLogger(__name__)

SOCKET_NAME = "engine.sock"
TOKEN_NAME = "engine.token"
# The Unix socket: read and write for its owner (connecting needs write), no execute, in a 0700 folder (the data
# folder, or the private run folder of `_private`); bound under umask 077 (0700), then set to this
SOCKET_MODE = 0o600
# sun_path holds 108 bytes on Linux and 104 on macOS (both including the final NUL)
MAX_UNIX_PATH = 100


def family() -> str:
    """multiprocessing.connection family: named pipes on Windows, Unix sockets elsewhere."""
    return "AF_PIPE" if sys.platform == "win32" else "AF_UNIX"


def _folder_key(data_dir: Path) -> str:
    return hashlib.sha256(str(Path(data_dir).resolve()).encode("utf-8")).hexdigest()[:16]


def socket_address(data_dir: Path) -> str:
    """The socket of this data folder: inside it when the path is short enough, else a private run folder.

    Nothing here reads environment variables: the app and a process started with a minimal environment (an
    MCP server started by an AI app, `env -i`) must find the same socket.
    """
    if sys.platform == "win32":  # a pipe only this user may open, named with the user's SID (ipc/pipe_windows.py)
        from . import pipe_windows

        return pipe_windows.pipe_name(_folder_key(data_dir))
    inside = Path(data_dir).resolve() / SOCKET_NAME
    if len(os.fsencode(inside)) <= MAX_UNIX_PATH:
        return str(inside)
    name = f"{_folder_key(data_dir)}.sock"
    folders = _run_folders()
    for folder in folders:  # a host started before the login folder existed listens in the next one
        if (folder / name).exists():
            return str(_private(folder) / name)
    return str(_private(folders[0]) / name)


def _run_folders() -> list[Path]:
    """Where a long folder's socket may live, in order: the login's `/run/user/<uid>` (logind's, 0700), then
    `/tmp/desktop-memory-<uid>` (not $XDG_RUNTIME_DIR or $TMPDIR, which a minimal environment lacks)."""
    login = session_env.login_runtime_dir()
    return [*([login] if login is not None else []), Path("/tmp") / f"desktop-memory-{os.getuid()}"]


def _private(folder: Path) -> Path:
    """The folder, made 0700 when it is ours to make; refused when another user could reach into it."""
    folder.mkdir(mode=0o700, exist_ok=True)
    info = folder.lstat()
    if info.st_uid != os.getuid() or info.st_mode & 0o077 or not stat.S_ISDIR(info.st_mode):
        raise StorageError(f"{folder} is not a private folder of this user; remove it and start again")
    return folder


# -- the token: in the OS keyring; a 0600 file only where the person runs without a keyring by choice --
TOKEN_SECRET_PREFIX = "engine-token:"


def token_path(data_dir: Path) -> Path:
    return Path(data_dir) / TOKEN_NAME


def _secret_name(data_dir: Path) -> str:
    return TOKEN_SECRET_PREFIX + _folder_key(data_dir)


def _plain_by_choice(data_dir: Path) -> bool:
    """Whether the person keeps this folder without the keyring (DESKTOP_MEMORY_ENCRYPTION=off or `encryption off`)."""
    from ..engine import encryption

    return encryption.env_off() or encryption.State.load(Path(data_dir)).plain_by_choice


def store_token(data_dir: Path) -> bytes:
    """A new random token for this host start, kept in the OS keyring.

    Only when the keyring cannot be used AND the person chose to run this folder without one does it go to
    a file readable by this user only (0600); otherwise a missing keyring is an error, never a silent file.
    """
    token = secrets.token_hex(32)
    try:
        keys.set_secret(_secret_name(data_dir), token)
    except KeyringUnavailable:
        if not _plain_by_choice(data_dir):
            raise
        _write_private(token_path(data_dir), token.encode("ascii"))
        log.info("no usable OS keyring: the engine socket's token is in a 0600 file (plain folder by choice)")
    else:
        token_path(data_dir).unlink(missing_ok=True)  # left by an earlier start without a keyring
    return token.encode("ascii")


def _write_private(path: Path, data: bytes) -> None:
    tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    tmp.unlink(missing_ok=True)
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        os.write(fd, data)
    finally:
        os.close(fd)
    os.replace(tmp, path)


def load_token(data_dir: Path) -> bytes | None:
    """The running host's token (the file of a keyring-less start, else the keyring), or None.

    A keyring that cannot be used is the error to report (the app runs, but its token cannot be read), not
    "no host", which would end in a misleading "in use by another process"; only for a folder kept without
    a keyring by choice does it count as no host.
    """
    try:
        token = (token_path(data_dir).read_bytes().strip() or None)
    except OSError:
        token = None
    if token is None:
        try:
            found = keys.get_secret(_secret_name(data_dir))
        except KeyringUnavailable:
            if not _plain_by_choice(data_dir):
                raise
            log.debug("no usable OS keyring to read the engine token from", exc_info=True)
            return None
        token = found.encode("ascii") if found else None
    return token


def discard_token(data_dir: Path, token: bytes) -> None:
    """Remove the token if it is still this one (a later host may have stored its own)."""
    try:
        if load_token(data_dir) != token:
            return
    except KeyringUnavailable:  # locked or gone since the start: nothing can be removed from it now
        log.debug("the OS keyring cannot be used to remove the engine token", exc_info=True)
        return
    if token_path(data_dir).is_file():
        token_path(data_dir).unlink(missing_ok=True)
        return
    with contextlib.suppress(KeyringUnavailable):
        keys.delete_secret(_secret_name(data_dir))
