"""The durable vector queue and the float16 vector copies (m004) in SQLite.

`VectorRows` is the store's `vectors` part (engine/store.py): it reads and writes through the store's one
connection. The queue holds what Chroma (engine/vectors.py) still has to be told; the copies are what
SQLite keeps of every memory's vector itself.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import apsw
import numpy as np

from .store_sql import in_list, scalar


def vector_matrix(blobs: Sequence[bytes]) -> np.ndarray:
    """Float16 vector copies (as stored) as one float32 matrix, a row each: one conversion, not one per blob."""
    if not blobs:
        return np.zeros((0, 0), dtype=np.float32)
    return np.frombuffer(b"".join(blobs), dtype=np.float16).reshape(len(blobs), -1).astype(np.float32)


class VectorRows:
    """The store's `vectors` part: queue rows for Chroma and the vector copies SQLite keeps itself."""

    def __init__(self, db: apsw.Connection) -> None:
        self.db = db

    # -- vector queue -------------------------------------------------------------------------
    def queued(self, limit: int = 512) -> list[tuple[str, str]]:
        """(memory id, "upsert" or "delete") of the oldest queued changes."""
        return [
            (r[0], r[1])
            for r in self.db.execute("SELECT memory_id, op FROM vector_queue ORDER BY queued_at LIMIT ?", (limit,))
        ]

    def queued_upserts(self, limit: int) -> list[str]:
        return [r[0] for r in self.db.execute(
            "SELECT memory_id FROM vector_queue WHERE op = 'upsert' LIMIT ?", (limit,))]

    def queue_length(self) -> int:
        return int(scalar(self.db, "SELECT count(*) FROM vector_queue"))

    def enqueue(self, ids: Iterable[str], op: str) -> None:
        self.db.executemany("INSERT OR REPLACE INTO vector_queue(memory_id, op) VALUES (?, ?)", [(i, op) for i in ids])

    def dequeue(self, ids: Iterable[str]) -> None:
        with self.db:
            self.db.executemany("DELETE FROM vector_queue WHERE memory_id = ?", [(i,) for i in ids])

    # -- vector copies (m004) -----------------------------------------------------------------
    def put(self, pairs: Iterable[tuple[str, np.ndarray]]) -> None:
        """Keep a float16 copy of each memory's vector (call inside the transaction that wrote it)."""
        self.db.executemany(
            "INSERT OR REPLACE INTO memory_vectors(rowid, vec) SELECT rowid, ? FROM memories WHERE id = ?",
            [(np.asarray(v, dtype=np.float16).tobytes(), i) for i, v in pairs],
        )

    def stored(self, ids: Iterable[str]) -> dict[str, np.ndarray]:
        """The float32 vectors of those memories that have a copy."""
        ids = list(ids)
        out: dict[str, np.ndarray] = {}
        for start in range(0, len(ids), 500):
            marks, chunk = in_list(ids[start : start + 500])
            sql = ("SELECT m.id, v.vec FROM memories m JOIN memory_vectors v ON v.rowid = m.rowid "
                   f"WHERE m.id IN ({marks})")
            rows: list[tuple[str, bytes]] = list(self.db.execute(sql, chunk))
            blobs = [r[1] for r in rows]
            if len({len(b) for b in blobs}) == 1:  # one conversion for the chunk; each vector a row of it
                out.update(zip([r[0] for r in rows], vector_matrix(blobs), strict=True))
            else:  # none, or copies of different sizes (never kept together; read one by one all the same)
                out.update((mid, np.frombuffer(blob, dtype=np.float16).astype(np.float32)) for mid, blob in rows)
        return out

    def previous(self, ids: Sequence[str]) -> dict[str, np.ndarray]:
        """For each id, the vector copy of the memory just before it in its session (forgotten ones skipped);
        none for a session's first memory or one without a session."""
        out: dict[str, np.ndarray] = {}
        for start in range(0, len(ids), 500):
            chunk = list(ids[start : start + 500])
            sql = ("WITH s AS (SELECT rowid, id, session_id FROM memories "
                   f"WHERE id IN ({','.join('?' * len(chunk))}) AND session_id IS NOT NULL), "
                   "p AS (SELECT s.id AS id, (SELECT m.rowid FROM memories m WHERE m.session_id = s.session_id "
                   "AND m.rowid < s.rowid AND m.forgotten = 0 ORDER BY m.rowid DESC LIMIT 1) AS prev FROM s) "
                   "SELECT p.id, v.vec FROM p JOIN memory_vectors v ON v.rowid = p.prev")
            for mid, blob in self.db.execute(sql, chunk):
                out[mid] = np.frombuffer(blob, dtype=np.float16).astype(np.float32)
        return out

    def all_copies(self) -> list[tuple[str, bytes]]:
        """Every memory's float16 vector copy as (id, raw bytes)."""
        return list(self.db.execute("SELECT m.id, v.vec FROM memories m JOIN memory_vectors v ON v.rowid = m.rowid"))

    def ids_without_copy(self) -> list[str]:
        """Memories SQLite keeps no vector copy of, in the order they were added."""
        return [r[0] for r in self.db.execute(
            "SELECT m.id FROM memories m WHERE NOT EXISTS "
            "(SELECT 1 FROM memory_vectors v WHERE v.rowid = m.rowid) ORDER BY m.rowid")]

    def drop_copies(self) -> None:
        """Forget every copy (the embedding model changed)."""
        self.db.execute("DELETE FROM memory_vectors")
