"""Files written where the person says (an export, a backup): never into the data folder or onto one of its files.

`export -o` onto the live database once replaced it with the export (issue 29). Every output path the engine
writes goes through `check_outside` first: the path is resolved as the OS will open it (`..`, a symlink to a
file or a folder, a dangling symlink that would create a file), then compared with the data folder by name and
by identity (the same folder reached under another name: a case-insensitive file system, a bind mount), and an
existing file is compared with the folder's files (a hard link to the database). The scratch file the output is
written through first (`<name>.partial`) is checked the same way: a symlink left there would be written through.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from ..core.errors import InvalidInput

SCRATCH = ".partial"  # an output is written as `<name>.partial` beside it first, then renamed into place


def scratch(target: Path) -> Path:
    """Where `target` is written before it is complete."""
    return target.with_name(target.name + SCRATCH)


def check_outside(folder: Path, target: Path, what: str) -> Path:
    """`target`, or InvalidInput (one line, nothing written) when it or its scratch file leads into the data
    folder `folder`, or when it names a folder.

    `what` names the file in the message ("export", "backup").
    """
    _refuse_inside(folder, target, what)  # first: "-o <the data folder>" is refused as inside it
    if not target.name or target.name == ".." or _is_folder(target):  # ".", "/", "..", an existing folder
        raise InvalidInput(f"{target} is a folder: name the {what} file to write inside it; nothing was written")
    _refuse_inside(folder, scratch(target), what)
    return target


def _is_folder(path: Path) -> bool:
    try:
        return path.is_dir()
    except OSError:  # a name too long, a NUL: writing it fails later, in one line
        return False


def _refuse_inside(folder: Path, path: Path, what: str) -> None:
    how = reaches_into(folder, path)
    if how is not None:
        raise InvalidInput(f"write the {what} outside the data folder ({folder}): {path} {how}; nothing was written")


def reaches_into(folder: Path, target: Path) -> str | None:
    """How writing `target` would land in `folder` (a phrase for the message), or None when it stays outside."""
    real = Path(_real(target))
    if real.is_relative_to(_real(folder)):
        plainly = Path(os.path.abspath(target)).is_relative_to(os.path.abspath(folder))
        return "is in it" if plainly else "leads into it"
    try:
        home = os.stat(folder)
    except OSError:
        return None  # no folder: nothing in it to harm
    for place in (real, *real.parents):  # the folder itself under another name
        try:
            if os.path.samestat(os.stat(place), home):
                return "leads into it"
        except OSError:
            continue
    try:
        info = os.stat(real)
    except OSError:
        return None
    if stat.S_ISREG(info.st_mode) and info.st_nlink > 1 and any(os.path.samestat(info, f) for f in _files(folder)):
        return "is one of its files (a hard link)"
    return None


def _real(path: Path | str) -> str:
    return os.path.normcase(os.path.realpath(path))


def _files(folder: Path) -> list[os.stat_result]:
    """The regular files in the folder and its subfolders (symlinks not followed): a few dozen."""
    found = []
    for where, _dirs, names in os.walk(folder):
        for name in names:
            try:
                info = os.lstat(os.path.join(where, name))
            except OSError:
                continue
            if stat.S_ISREG(info.st_mode):
                found.append(info)
    return found
