"""Small SQL helpers the store (engine/store.py) and its parts share."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import apsw


def scalar(db: apsw.Connection, sql: str, params: Sequence[Any] = ()) -> Any:
    """The first column of the first row (None when there is none)."""
    row = db.execute(sql, params).fetchone()
    return row[0] if row else None


def in_list(values: Sequence[Any]) -> tuple[str, list[Any]]:
    """Placeholders and parameters for `x IN (...)` over up to 500 values, padded with NULLs (never equal to
    anything) to 8, 16, 32, ... 512 places: a search's statements then repeat the same few texts, which
    the connection's statement cache keeps prepared (a new IN list of ~200 ids is ~0.05 ms to prepare)."""
    size = 8
    while size < len(values):
        size *= 2
    return ",".join("?" * size), [*values, *[None] * (size - len(values))]
