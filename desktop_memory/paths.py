"""Where the data lives: decided once at start, never at import time."""

from __future__ import annotations

import os
import stat
from pathlib import Path

from .core.errors import InvalidInput

APP_NAME = "desktop-memory"
ENV_HOME = "DESKTOP_MEMORY_HOME"


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


def checked(raw: str | os.PathLike[str], origin: str) -> Path:
    """`raw` resolved, when it is a folder or may become one (whether it is a data folder is the engine's to say)."""
    if not str(raw).strip():
        raise InvalidInput(f"{origin} is empty: name a data folder, or a new or empty folder to become one")
    path = Path(raw).expanduser().resolve()
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        return path  # made when the engine opens it
    except OSError as exc:  # too long, a file on the way, not allowed
        raise InvalidInput(f"{origin} {shown(path)} cannot be a data folder: {exc.strerror or exc}") from None
    if not stat.S_ISDIR(mode):
        raise InvalidInput(f"{origin} {shown(path)} is a file, not a folder")
    return path


def shown(path: Path, limit: int = 120) -> str:
    """A path for a one-line message: a very long one is shortened."""
    text = str(path)
    return text if len(text) <= limit else f"{text[:limit // 2]}...{text[-20:]} ({len(text):,} characters)"
