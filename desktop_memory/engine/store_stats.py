"""The store's figures and checks for the whole database (stats, doctor, retention), as `Store` methods."""

from __future__ import annotations

from typing import Any

import apsw


class StoreFigures:
    """Mixed into `Store` (engine/store.py): whole-database counts, checks and selections."""

    db: apsw.Connection

    def figures(self) -> dict[str, Any]:
        """Counts for `stats`: pinned, sessions, by_source (not forgotten), redactions, oldest and newest time."""
        one = self.db.execute
        by_source = dict(one("SELECT source, count(*) FROM memories WHERE forgotten = 0 GROUP BY source"))
        oldest, newest = one("SELECT min(created_at), max(created_at) FROM memories").fetchone()
        return {
            "pinned": one("SELECT count(*) FROM memories WHERE pinned = 1 AND forgotten = 0").fetchone()[0],
            "sessions": one("SELECT count(*) FROM sessions").fetchone()[0],
            "by_source": by_source,
            "redactions": one("SELECT coalesce(sum(redactions), 0) FROM memories").fetchone()[0],
            "oldest": oldest,
            "newest": newest,
        }

    def quick_check(self) -> bool:
        """SQLite's own page and index check (PRAGMA quick_check) passes."""
        return self.db.execute("PRAGMA quick_check").fetchone()[0] == "ok"

    def retention_candidates(self, cutoff: float, below_importance: float, *, forgotten_only: bool) -> list[str]:
        """Ids of memories created before `cutoff`, less important than `below_importance`, not pinned."""
        sql = ("SELECT id FROM memories WHERE pinned = 0 AND created_at < ? AND importance < ?"
               + (" AND forgotten = 1" if forgotten_only else ""))
        return [r[0] for r in self.db.execute(sql, (cutoff, below_importance))]

    def all_vector_copies(self) -> list[tuple[str, bytes]]:
        """Every memory's float16 vector copy as (id, raw bytes)."""
        return list(self.db.execute("SELECT m.id, v.vec FROM memories m JOIN memory_vectors v ON v.rowid = m.rowid"))
