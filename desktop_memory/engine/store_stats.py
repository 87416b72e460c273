"""Figures and checks for the whole database (stats, doctor, backup verification).

`StatsReads` is the store's `stats` part (engine/store.py): it reads through the store's one connection.
"""

from __future__ import annotations

from typing import Any

import apsw

from .store_sql import scalar


class StatsReads:
    """The store's `stats` part: whole-database counts and integrity checks."""

    def __init__(self, db: apsw.Connection) -> None:
        self.db = db

    def figures(self) -> dict[str, Any]:
        """Counts for `stats`: pinned, sessions, by_source (not forgotten), redactions, oldest and newest time."""
        one = self.db.execute
        by_source = dict(one("SELECT source, count(*) FROM memories WHERE forgotten = 0 GROUP BY source"))
        oldest, newest = next(one("SELECT min(created_at), max(created_at) FROM memories"))
        return {
            "pinned": scalar(self.db, "SELECT count(*) FROM memories WHERE pinned = 1 AND forgotten = 0"),
            "sessions": scalar(self.db, "SELECT count(*) FROM sessions"),
            "by_source": by_source,
            "redactions": scalar(self.db, "SELECT coalesce(sum(redactions), 0) FROM memories"),
            "oldest": oldest,
            "newest": newest,
        }

    def quick_check(self) -> bool:
        """SQLite's own page and index check (PRAGMA quick_check) passes."""
        return bool(scalar(self.db, "PRAGMA quick_check") == "ok")

    def fts_count(self) -> int:
        """Rows of the full-text index (one per memory when it is sound)."""
        return int(scalar(self.db, "SELECT count(*) FROM memories_fts"))

    def fts_integrity(self) -> bool:
        """FTS5's own check of the full-text index against the memories table passes."""
        try:
            self.db.execute("INSERT INTO memories_fts(memories_fts, rank) VALUES ('integrity-check', 0)")
        except apsw.Error:
            return False
        return True
