"""The CLI run in this process as a terminal would run it: its own stdin, a strict UTF-8 stdout, exit codes."""

from __future__ import annotations

import io
import os
import sys
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from desktop_memory.cli.main import main


@dataclass
class Run:
    argv: list[str]
    code: int
    out: str
    err: str

    def lines(self) -> list[str]:
        return [line for line in self.err.splitlines() if line.strip()]


@contextmanager
def inside(folder: Path):
    before = os.getcwd()
    os.chdir(folder)
    try:
        yield
    finally:
        os.chdir(before)


def cli(*argv: str, stdin: bytes = b"") -> Run:
    """`desktop-memory ARGV` with `stdin`; stdout strict UTF-8 (as Python's in a UTF-8 terminal), stderr
    backslash-escaped (as Python's always is). SystemExit (argparse) is its exit code."""
    out, err = io.BytesIO(), io.BytesIO()
    streams = sys.stdin, sys.stdout, sys.stderr
    sys.stdin = io.TextIOWrapper(io.BytesIO(stdin), encoding="utf-8")
    sys.stdout = io.TextIOWrapper(out, encoding="utf-8", errors="strict", write_through=True)
    sys.stderr = io.TextIOWrapper(err, encoding="utf-8", errors="backslashreplace", write_through=True)
    try:
        try:
            code = main(list(argv))
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    finally:
        for wrapper in (sys.stdin, sys.stdout, sys.stderr):  # detached: closing a wrapper closes its buffer
            wrapper.flush()
            wrapper.detach()
        sys.stdin, sys.stdout, sys.stderr = streams
    return Run(list(argv), code, out.getvalue().decode("utf-8"), err.getvalue().decode("utf-8"))


def assert_clean(run: Run) -> None:
    """Exit 0, 1 or 2; no traceback; a failure says so in one line of its own (argparse's usage aside)."""
    shown = f"argv={run.argv!r} exit={run.code}\nstderr={run.err[-2000:]!r}"
    assert run.code in (0, 1, 2), shown
    assert "Traceback" not in run.err and "Traceback" not in run.out, shown
    assert "unexpected error" not in run.err, shown
    if run.code == 1:
        errors = [line for line in run.lines() if not line.startswith(("line ", "committed ", "... and "))]
        assert len(errors) == 1 and errors[0].startswith("desktop-memory: "), shown
    if run.code == 2:
        assert run.lines() and run.lines()[-1].startswith("desktop-memory"), shown


def ids_in(folder: Path) -> set[str]:
    """Every memory id in the folder, forgotten ones too, read straight from the database (read-only; the
    fuzz tier runs unencrypted folders: DESKTOP_MEMORY_ENCRYPTION=off in tests/conftest.py)."""
    import apsw

    db = apsw.Connection(str(folder / "memories.sqlite3"), flags=apsw.SQLITE_OPEN_READONLY)
    try:
        return {row[0] for row in db.execute("SELECT id FROM memories")}
    finally:
        db.close()
