"""The scratch table of a switch to another embedding model (service/reembed.py).

`ReembedScratch` is the store's `reembed` part (engine/store.py): it writes through the store's one
connection. The table lives only while a switch is under way, so it is made here, not by a migration.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

import apsw
import numpy as np

_TABLE = "CREATE TABLE IF NOT EXISTS reembed_vectors(id TEXT PRIMARY KEY, hash TEXT NOT NULL, vec BLOB NOT NULL)"
_MISSING = ("SELECT m.id FROM memories m LEFT JOIN reembed_vectors r ON r.id = m.id "
            "WHERE r.id IS NULL OR r.hash IS NOT m.content_hash ORDER BY m.rowid")
_CHUNK = 5000


class ReembedScratch:
    """The store's `reembed` part: new-model vectors kept while a switch runs."""

    def __init__(self, db: apsw.Connection) -> None:
        self.db = db

    def begin(self, keep: bool) -> None:
        """Make the scratch table (emptied first unless `keep`: vectors of the same target stay useful)."""
        if not keep:
            self.drop()
        self.db.execute(_TABLE)

    def drop(self) -> None:
        self.db.execute("DROP TABLE IF EXISTS reembed_vectors")

    def missing(self) -> list[str]:
        """Memories without a new-model vector for their current text."""
        return [row[0] for row in self.db.execute(_MISSING)]

    def put(self, rows: Iterable[tuple[str, str, np.ndarray]]) -> None:
        """(id, content hash, vector) kept as float16."""
        self.db.executemany("INSERT OR REPLACE INTO reembed_vectors(id, hash, vec) VALUES (?, ?, ?)",
                            [(i, h, np.asarray(v, np.float16).tobytes()) for i, h, v in rows])

    def vectors(self) -> Iterator[list[tuple[str, np.ndarray]]]:
        """Every kept vector, in chunks."""
        for start in range(0, 1 << 62, _CHUNK):
            chunk = list(self.db.execute("SELECT id, vec FROM reembed_vectors ORDER BY id LIMIT ? OFFSET ?",
                                         (_CHUNK, start)))
            yield [(i, np.frombuffer(v, np.float16)) for i, v in chunk]
            if len(chunk) < _CHUNK:
                return
