"""The vectors of long memories' passages (m006) and the queue of long memories still without them.

`PassageRows` is the store's `passages` part (engine/store.py): it reads and writes through the store's one
connection. Searches scan every passage vector exactly (`matrix`, read once and kept until the table
changes: `passage_state.generation`); a store of short memories has none.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import apsw
import numpy as np

from ..core.models import Passage
from ..core.passages import LONG_CHARS
from .store_sql import in_list, scalar

SCAN_CHUNK = 1024  # rows converted to float32 at a time by the scan: 1.5 MB, within the cache (8192: 3x slower)


@dataclass(frozen=True)
class PassageMatrix:
    """Every passage vector, grouped by memory: `ids[k]` owns rows `starts[k]:starts[k + 1]` of `vectors`.

    The vectors stay float16, as stored (768 bytes a passage with MiniLM; 20k passages ~15 MB, not 30), and
    are converted a chunk at a time while scanning: float16 arithmetic in numpy has no BLAS and is far slower.
    """

    ids: list[str]
    starts: np.ndarray  # int64, len(ids) + 1
    vectors: np.ndarray  # float16, a row each

    def best(self, qvec: np.ndarray) -> dict[str, float]:
        """Each memory's best passage cosine to the query vector (the vectors are unit length)."""
        if not self.ids:
            return {}
        q = np.asarray(qvec, dtype=np.float32)
        sims = np.empty(len(self.vectors), dtype=np.float32)
        for at in range(0, len(self.vectors), SCAN_CHUNK):
            sims[at : at + SCAN_CHUNK] = self.vectors[at : at + SCAN_CHUNK].astype(np.float32) @ q
        return dict(zip(self.ids, np.maximum.reduceat(sims, self.starts[:-1]).tolist(), strict=True))


_EMPTY = PassageMatrix([], np.zeros(1, dtype=np.int64), np.zeros((0, 0), dtype=np.float16))


class PassageRows:
    """The store's `passages` part."""

    def __init__(self, db: apsw.Connection) -> None:
        self.db = db
        self._cache: tuple[int, PassageMatrix] | None = None

    def generation(self) -> int:
        return int(scalar(self.db, "SELECT generation FROM passage_state WHERE one = 1") or 0)

    # -- writing (inside the transaction that wrote the memory) --------------------------------
    def put(self, memory_id: str, passages: Sequence[tuple[Passage, np.ndarray]]) -> None:
        """Keep a memory's passages and their vectors (replacing any), and take it off the queue. One passage
        (or none) keeps nothing: the memory's own vector is that passage's."""
        rowid = scalar(self.db, "SELECT rowid FROM memories WHERE id = ?", (memory_id,))
        if rowid is None:
            return
        self.db.execute("DELETE FROM passage_vectors WHERE memory = ?", (rowid,))
        if len(passages) > 1:
            self.db.executemany(
                'INSERT INTO passage_vectors(memory, ord, start, "end", vec) VALUES (?, ?, ?, ?, ?)',
                [(rowid, k, p.start, p.end, np.asarray(v, dtype=np.float16).tobytes())
                 for k, (p, v) in enumerate(passages)])
        self.db.execute("DELETE FROM passage_queue WHERE memory = ?", (rowid,))

    def queued(self, limit: int) -> list[str]:
        """Ids of long memories whose passages are not embedded yet, oldest first."""
        return [r[0] for r in self.db.execute(
            "SELECT m.id FROM passage_queue q JOIN memories m ON m.rowid = q.memory ORDER BY q.memory LIMIT ?",
            (limit,))]

    def queued_among(self, ids: Sequence[str]) -> list[str]:
        """Those of these memories that are queued, in the order given."""
        if not ids:
            return []
        marks, chunk = in_list(list(ids)[:500])
        found = {r[0] for r in self.db.execute(
            f"SELECT m.id FROM passage_queue q JOIN memories m ON m.rowid = q.memory WHERE m.id IN ({marks})", chunk)}
        return [i for i in ids if i in found]

    def queue_length(self) -> int:
        return int(scalar(self.db, "SELECT count(*) FROM passage_queue"))

    def drop_all(self) -> None:
        """Forget every passage vector and queue every long memory again (the embedding model changed)."""
        self.db.execute("DELETE FROM passage_vectors")
        self.db.execute("INSERT OR IGNORE INTO passage_queue(memory) SELECT rowid FROM memories "
                        "WHERE length(content) > ?", (LONG_CHARS,))  # as m006's triggers (which cannot import it)

    # -- reading -------------------------------------------------------------------------------
    def count(self) -> int:
        return int(scalar(self.db, "SELECT count(*) FROM passage_vectors"))

    def spans(self, ids: Iterable[str]) -> dict[str, list[tuple[Passage, np.ndarray]]]:
        """The passages (in order) and their float32 vectors of those memories that have passages."""
        ids = list(ids)
        out: dict[str, list[tuple[Passage, np.ndarray]]] = {}
        for at in range(0, len(ids), 500):
            marks, chunk = in_list(ids[at : at + 500])
            sql = ('SELECT m.id, p.start, p."end", p.vec FROM memories m JOIN passage_vectors p ON p.memory = m.rowid '
                   f"WHERE m.id IN ({marks}) ORDER BY p.memory, p.ord")
            for mid, start, end, blob in self.db.execute(sql, chunk):
                out.setdefault(mid, []).append(
                    (Passage(start, end), np.frombuffer(blob, dtype=np.float16).astype(np.float32)))
        return out

    def matrix(self) -> PassageMatrix:
        """Every passage vector as one float16 matrix, read again only after the table changed (read row by row
        into the matrix: no list of every row's bytes on the way)."""
        generation = self.generation()
        if self._cache is not None and self._cache[0] == generation:
            return self._cache[1]
        self._cache = None  # the stale matrix goes before the new one is read
        found = _EMPTY
        total = self.count()
        blob_size = scalar(self.db, "SELECT length(vec) FROM passage_vectors LIMIT 1")
        if total and blob_size and blob_size % 2 == 0:
            vectors = np.empty((total, blob_size // 2), dtype=np.float16)
            ids: list[str] = []
            firsts: list[int] = []
            k = 0
            for mid, blob in self.db.execute(
                    "SELECT m.id, p.vec FROM passage_vectors p JOIN memories m ON m.rowid = p.memory "
                    "ORDER BY p.memory, p.ord"):
                if len(blob) != blob_size or k >= total:  # vectors of two sizes are never kept together
                    k = -1
                    break
                if not ids or ids[-1] != mid:
                    ids.append(mid)
                    firsts.append(k)
                vectors[k] = np.frombuffer(blob, dtype=np.float16)
                k += 1
            if k == total:
                found = PassageMatrix(ids, np.array([*firsts, total], dtype=np.int64), vectors)
        self._cache = (generation, found)
        return found
