"""Where the data lives: decided once at start, never at import time."""

from __future__ import annotations

import os
from pathlib import Path

APP_NAME = "desktop-memory"
ENV_HOME = "DESKTOP_MEMORY_HOME"


def data_dir(explicit: str | os.PathLike[str] | None = None) -> Path:
    """`--data-dir`, else $DESKTOP_MEMORY_HOME, else the platform's user data folder."""
    if explicit:
        return Path(explicit).expanduser().resolve()
    env = os.environ.get(ENV_HOME)
    if env:
        return Path(env).expanduser().resolve()
    from platformdirs import user_data_dir

    return Path(user_data_dir(APP_NAME, appauthor=False))
