"""Where the data lives: decided once at start, never at import time."""

from __future__ import annotations

import os
import stat
from pathlib import Path

from .core.errors import InvalidInput

APP_NAME = "desktop-memory"
ENV_HOME = "DESKTOP_MEMORY_HOME"
MAX_NAME, MAX_PATH = 255, 4000  # a folder name, a whole path: what file systems and sockets' folders take


def data_dir(explicit: str | os.PathLike[str] | None = None) -> Path:
    """`--data-dir`, else $DESKTOP_MEMORY_HOME, else the platform's user data folder.

    A given path that cannot be a folder (empty, too long, a file) is an InvalidInput of one line."""
    if explicit is not None:
        return checked(explicit, "--data-dir")
    env = os.environ.get(ENV_HOME)
    if env:
        return checked(env, ENV_HOME)
    from platformdirs import user_data_dir

    return Path(user_data_dir(APP_NAME, appauthor=False))


def expand(raw: str | os.PathLike[str]) -> Path:
    """`raw` with a leading `~` or `~user` expanded; `~name` with no such user (or no home) kept as written, as a
    shell does."""
    try:
        return Path(raw).expanduser()
    except RuntimeError:
        return Path(raw)


def checked(raw: str | os.PathLike[str], origin: str) -> Path:
    """`raw` resolved, when it is a folder or may become one (whether it is a data folder is the engine's to say)."""
    if not str(raw).strip():
        raise InvalidInput(f"{origin} is empty: name a data folder, or a new or empty folder to become one")
    path = expand(raw).resolve()
    if len(str(path)) > MAX_PATH or any(len(part) > MAX_NAME for part in path.parts):  # the same on every OS
        raise InvalidInput(f"{origin} {shown(path)} cannot be a data folder: its name is too long")
    try:
        str(path).encode("utf-8")
    except UnicodeEncodeError:  # bytes that are not UTF-8 (Python carries them as lone surrogates): SQLite and the
        raise InvalidInput(f"{origin} {shown(path)} cannot be a data folder: its name is not valid UTF-8 "
                           "(rename it)") from None  # keyring take names as UTF-8 text only
    for where in (path, *path.parents):  # the path, or its nearest existing part (Windows says "not found"
        try:                             # for a path under a file, POSIX "not a directory")
            mode = os.stat(where).st_mode
        except FileNotFoundError:
            continue
        except OSError as exc:  # a file on the way, not allowed
            raise InvalidInput(f"{origin} {shown(path)} cannot be a data folder: {exc.strerror or exc}") from None
        if not stat.S_ISDIR(mode):
            raise InvalidInput(f"{origin} {shown(path)} is a file, not a folder" if where == path else
                               f"{origin} {shown(path)} cannot be a data folder: {shown(where)} is a file")
        return path  # a folder, or one to be made inside a folder
    return path


def utf8_shown(text: str) -> str:
    """Text that prints: the bytes of a name that is not UTF-8 (carried as lone surrogates) as \\xe9."""
    try:
        return text.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
    except UnicodeEncodeError:  # a lone surrogate that was never a byte
        return text.encode("utf-8", "backslashreplace").decode("utf-8")


def shown(path: Path, limit: int = 120) -> str:
    """A path for a one-line message: a very long one is shortened."""
    text = utf8_shown(str(path))
    return text if len(text) <= limit else f"{text[:limit // 2]}...{text[-20:]} ({len(text):,} characters)"
