"""Chroma as the vector index: ids and embeddings only, never the text.

The index heals itself (engine/index_health.py checks its files before Chroma opens them): a damaged
index is moved aside and opened empty; `needs_rebuild` then tells the service to refill it from
SQLite's vector copies, which `start_fill` does on a thread of its own while searches are answered
from an exact scan of those copies merged with what the new index already holds.

A full disk (a read-only folder, no permission) is not damage: moving the index aside would not free
it and the rebuild would fail the same way. Chroma's failure then becomes the one-line StorageError of
engine/failures.py, the index stays where it is, and the open marker stays until a clean close, so
the next open checks every element of files Chroma may have left half written.
"""

from __future__ import annotations

import logging
import os
import sys
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TypeVar

import numpy as np

from ..core.errors import StorageError, StorageFailure
from . import failures, index_health

log = logging.getLogger(__name__)

COLLECTION = "memories"
FILL_BATCH = 64  # vectors a rebuild writes per Chroma call (~80 ms with the GIL held at 10k)
_SCAN_CHUNK = 8192  # rows of float16 copies converted at a time by the exact scan

_T = TypeVar("_T")


def _is_damage(exc: BaseException) -> bool:
    """Chroma's own failures (a damaged segment, a Rust panic), as opposed to a bad argument."""
    from chromadb.errors import InternalError

    if failures.not_damage(exc):  # a full disk or a read-only folder: moving the index aside cannot help
        return False
    return isinstance(exc, InternalError) or type(exc).__name__ == "PanicException"


def _forget_unstarted_system(path: Path) -> None:
    """Drop Chroma's cached system for `path` if it never started.

    Chroma caches a path's system before starting it and keeps it when the start fails (a full disk while
    it creates its database); every later client of that path in the process got the same system, whose
    Rust bindings were never made: "'RustBindingsAPI' object has no attribute 'bindings'" (CLI exit 70).
    """
    from chromadb.api import ServerAPI
    from chromadb.api.shared_system_client import SharedSystemClient

    key = str(path)
    system = SharedSystemClient._identifier_to_system.get(key)  # Chroma offers no public way
    if system is None:
        return
    try:
        # Chroma finds the running implementation by its abstract type
        started = hasattr(system.instance(ServerAPI), "bindings")  # type: ignore[type-abstract]
    except Exception:  # noqa: BLE001 - a system that cannot even say is of no use either
        started = False
    if not started:
        SharedSystemClient._identifier_to_system.pop(key, None)
        SharedSystemClient._identifier_to_refcount.pop(key, None)


def release_process_cache() -> None:
    """Drop Chroma's per-process client cache so the next open of any index reads its folder afresh.

    For a process that closes its engine and may open the same folder again later (the MCP server);
    call it only after every `VectorIndex` of the process is closed.
    """
    if "chromadb" not in sys.modules:
        return
    from chromadb.api.shared_system_client import SharedSystemClient

    for system in list(SharedSystemClient._identifier_to_system.values()):  # Chroma offers no public way
        system.stop()
    SharedSystemClient.clear_system_cache()


class VectorIndex:
    """A persistent Chroma collection in cosine space, fed with our own embeddings."""

    def __init__(self, path: Path) -> None:
        os.environ["ANONYMIZED_TELEMETRY"] = "False"
        self.path = path
        self._lock = threading.RLock()  # every Chroma call; a rebuild's batch runs whole
        self._client: Any = None
        self.damage: str | None = None  # why the index was moved aside (at open or since), for the service
        self.moved_to: Path | None = None
        self.needs_rebuild = False  # set with `damage`, or when no index existed; the service clears it
        self._fresh: set[str] = set()  # during a fill: ids written or deleted since its snapshot
        self._fresh_vecs: dict[str, np.ndarray] = {}  # ... and the vectors of those written
        self._snapshot: tuple[list[str], np.ndarray] | None = None
        self._fill: threading.Thread | None = None
        self._stop = threading.Event()
        self.filled = 0
        self.fill_total = 0
        self.fill_error: str | None = None
        self._unfinished_write = False  # a Chroma write failed on the disk: keep the open marker at close
        resuming = index_health.is_rebuilding(path)
        if reason := index_health.inspect(path, thorough=index_health.was_left_open(path)):
            if failures.disk_full(path):  # no room to rebuild it (Chroma's write may have failed on this very disk):
                raise failures.DiskFull(failures.DISK_FULL)  # it is moved aside once there is
            self._set_aside(reason)
        self.created = not (path / "chroma.sqlite3").exists()
        self.needs_rebuild = self.needs_rebuild or resuming or self.created  # the service skips an empty store
        self.resuming = resuming and self.damage is None
        index_health.mark_open(path)
        try:
            self._connect()
            self._col.count()  # Chroma loads the segment and applies its log here: damage shows now
        except BaseException as exc:  # Chroma raises many types, all meaning "cannot open"; a Rust panic too
            if not isinstance(exc, Exception) and not _is_damage(exc):
                raise  # KeyboardInterrupt, SystemExit
            self._disconnect()
            if (blocked := self._blocked(exc, damage_like=not isinstance(exc, OSError))) is not None:
                raise blocked from exc  # the marker stays: Chroma may have written part of its files
            if isinstance(exc, OSError):
                raise StorageError(f"cannot open the vector index at {path}: {exc}") from exc
            self._replace(f"Chroma cannot open it ({str(exc)[:200]})")

    # -- opening, damage, closing -------------------------------------------------------------
    def _connect(self) -> None:
        import chromadb
        from chromadb.config import Settings

        try:
            self._client = chromadb.PersistentClient(
                path=str(self.path), settings=Settings(anonymized_telemetry=False, allow_reset=False)
            )
        except BaseException:
            _forget_unstarted_system(self.path)  # else every later open in this process fails the same way
            raise
        self._col = self._client.get_or_create_collection(
            COLLECTION, embedding_function=None, configuration={"hnsw": {"space": "cosine"}}
        )

    def _disconnect(self) -> None:
        client, self._client, self._col = self._client, None, None  # a stopped client's collection fails
        if client is not None:
            try:
                client.close()  # stops Chroma's system for this path, so a new client opens the files again
            except Exception as exc:  # noqa: BLE001 - a damaged index may fail to close; it is dropped anyway
                log.debug("closing the vector index: %s", exc)

    def _set_aside(self, reason: str) -> None:
        try:
            self.moved_to = index_health.move_aside(self.path)
        except OSError as exc:
            raise StorageError(f"the vector index at {self.path} is damaged and cannot be moved aside "
                               f"({exc.strerror}): move or delete that folder; it is rebuilt from the database "
                               "at the next start") from exc
        self.damage = reason
        self.needs_rebuild = True
        log.info("the vector index was damaged (%s); moved it to %s, rebuilding it from the database",
                 reason, self.moved_to.name if self.moved_to else "nowhere")  # front ends: index_status()

    def _blocked(self, exc: BaseException, *, damage_like: bool) -> StorageFailure | None:
        """The full disk (read-only folder, missing permission) behind a Chroma failure, else None.

        Chroma mostly says so ("database or disk is full"), but when the disk fills while it applies its
        log it says only "Failed to apply logs to the metadata segment" (or "... the hnsw segment
        writer"), the words of a damaged index: a failure that looks like damage (`damage_like`) on a
        disk with almost no space left (failures.disk_full) is taken for a full disk.
        """
        if (told := failures.disk_error(exc)) is not None:
            return told
        if damage_like and failures.disk_full(self.path):
            return failures.DiskFull(failures.DISK_FULL)
        return None

    def _replace(self, reason: str) -> None:
        """Move the damaged index aside and open a new, empty one in its place."""
        self._disconnect()
        self._set_aside(reason)
        index_health.mark_open(self.path)
        try:
            self._connect()
        except Exception as exc:  # noqa: BLE001 - an empty index that cannot open is a real storage error
            raise (self._blocked(exc, damage_like=True)
                   or StorageError(f"cannot create the vector index at {self.path}: {exc}")) from exc
        self.created = True

    def _call(self, op: Callable[[], _T]) -> _T:
        """Run one Chroma operation; on a sign of damage replace the index and run it once more.

        A full disk (or a read-only folder) is no damage: its one-line StorageError is raised and the
        index stays. After an open or a replacement that failed so, the next call connects again.
        """
        with self._lock:
            try:
                if self._client is None:
                    self._connect()
                return op()
            except BaseException as exc:
                damage = _is_damage(exc)
                if not isinstance(exc, Exception) and not damage:
                    raise  # KeyboardInterrupt, SystemExit
                if (blocked := self._blocked(exc, damage_like=damage)) is not None:
                    self._unfinished_write = True
                    raise blocked from exc
                if not damage:
                    raise
                self._replace(f"Chroma failed at work ({str(exc)[:200]})")
                return op()

    def close(self) -> None:
        """Finish a rebuild under way, release Chroma and mark the index closed cleanly (unless a write of
        Chroma's failed on the disk: the open marker then has the next open check every element)."""
        if self._fill is not None:
            self._fill.join()
        with self._lock:
            self._disconnect()
        if not self._unfinished_write:
            index_health.mark_closed(self.path)

    # -- operations ---------------------------------------------------------------------------
    def count(self) -> int:
        return int(self._call(lambda: self._col.count()))

    def upsert(self, ids: Sequence[str], vectors: np.ndarray) -> None:
        if len(ids):
            with self._lock:
                if self.filling:
                    self._fresh.update(ids)
                    self._fresh_vecs.update(zip(ids, np.asarray(vectors, dtype=np.float32), strict=True))
                for start in range(0, len(ids), 4096):
                    chunk, vecs = list(ids[start : start + 4096]), vectors[start : start + 4096]
                    self._upsert(chunk, vecs)

    def _upsert(self, ids: list[str], vecs: np.ndarray) -> None:
        self._call(lambda: self._col.upsert(ids=ids, embeddings=vecs))

    def delete(self, ids: Sequence[str]) -> None:
        if len(ids):
            with self._lock:
                if self.filling:
                    self._fresh.update(ids)
                    for i in ids:
                        self._fresh_vecs.pop(i, None)
                self._call(lambda: self._col.delete(ids=list(ids)))

    def all_ids(self) -> set[str]:
        out: set[str] = set()
        offset, page = 0, 10000
        while True:
            got = self._ids_page(offset, page)
            out.update(got)
            if len(got) < page:
                return out
            offset += page

    def _ids_page(self, offset: int, limit: int) -> list[str]:
        return self._call(lambda: self._col.get(include=[], limit=limit, offset=offset))["ids"]

    def vectors(self, ids: Sequence[str]) -> dict[str, np.ndarray]:
        if not ids:
            return {}
        got = self._call(lambda: self._col.get(ids=list(ids), include=["embeddings"]))
        return {i: np.asarray(v, dtype=np.float32) for i, v in zip(got["ids"], got["embeddings"], strict=True)}

    def query(self, vector: np.ndarray, limit: int) -> list[tuple[str, float]]:
        """(id, cosine similarity) of the nearest `limit` vectors (approximate, HNSW).

        During a rebuild: exact, over the database copies it started from (less those written or
        deleted since) and the vectors written since, without Chroma: never missing a memory because
        the index is half built, and never waiting for the rebuild's batch.
        """
        if limit <= 0:
            return []
        snapshot = self._snapshot
        if snapshot is None:
            return self._query_index(vector, limit)
        return self._scan(snapshot, vector, limit)

    def _query_index(self, vector: np.ndarray, limit: int) -> list[tuple[str, float]]:
        try:
            res = self._call(lambda: self._col.query(query_embeddings=[vector], n_results=limit,
                                                     include=["distances"]))
        except StorageFailure:  # a full disk: said as such
            raise
        except Exception as exc:  # noqa: BLE001 - an empty collection is not an error for us
            if self.count() == 0:
                return []
            raise StorageError(f"semantic search failed: {exc}") from exc
        return [(i, 1.0 - float(d)) for i, d in zip(res["ids"][0], res["distances"][0], strict=True)]

    def _scan(self, snapshot: tuple[list[str], np.ndarray], vector: np.ndarray, limit: int
              ) -> list[tuple[str, float]]:
        """Exact cosine top-`limit` over the rebuild's float16 copies, skipping ids changed since."""
        ids, mat = snapshot
        q = np.asarray(vector, dtype=np.float32)
        q = q / (np.linalg.norm(q) or 1.0)
        sims = np.empty(len(ids), dtype=np.float32)
        for start in range(0, len(ids), _SCAN_CHUNK):
            block = mat[start : start + _SCAN_CHUNK].astype(np.float32)
            norms = np.linalg.norm(block, axis=1)
            sims[start : start + len(block)] = (block @ q) / np.where(norms > 0, norms, 1.0)
        fresh, written = self._fresh, list(self._fresh_vecs.items())
        want = min(len(ids), limit + len(fresh))
        top = np.argpartition(-sims, want - 1)[:want] if want > 0 else np.zeros(0, dtype=np.intp)
        out = [(ids[i], float(sims[i])) for i in top if ids[i] not in fresh]
        for mid, vec in written:
            out.append((mid, float(vec @ q / (np.linalg.norm(vec) or 1.0))))
        return sorted(out, key=lambda kv: -kv[1])[:limit]

    # -- rebuilding from the database copies --------------------------------------------------
    @property
    def filling(self) -> bool:
        return self._fill is not None and self._fill.is_alive()

    def start_fill(self, ids: list[str], matrix: np.ndarray, on_done: Callable[[int], None],
                   wait_quiet: Callable[[Callable[[], bool]], object] = lambda stopping: None) -> None:
        """Write these vectors (float16 copies, one row per id) into the index on a background thread.

        Ids written or deleted meanwhile by anyone else are skipped (theirs is the newer state);
        `on_done(n)` runs on that thread once all are written. Before each batch it calls `wait_quiet`
        (the service's Foreground: the person's requests go first; Chroma holds the GIL while it
        writes). The rebuilding marker stays on disk until the end, so a kill part-way resumes at the
        next open.
        """
        index_health.set_rebuilding(self.path, True)
        self._fresh, self._fresh_vecs = set(), {}
        self._snapshot = (ids, matrix)
        self.filled, self.fill_total, self.fill_error = 0, len(ids), None
        self._fill = threading.Thread(target=self._run_fill, args=(on_done, wait_quiet), name="dm-vector-rebuild",
                                      daemon=True)
        self._fill.start()

    def wait_for_fill(self) -> None:
        if self._fill is not None:
            self._fill.join()

    def stop_fill(self) -> None:
        """Abandon a rebuild under way (after its current batch); the rebuilding marker stays."""
        if self._fill is not None:
            self._stop.set()
            self._fill.join()
            self._stop.clear()
            self._fill = None
            self._snapshot = None

    def _run_fill(self, on_done: Callable[[int], None], wait_quiet: Callable[[Callable[[], bool]], object]
                  ) -> None:
        assert self._snapshot is not None
        ids, matrix = self._snapshot
        try:
            present = self.all_ids()  # resuming: what an interrupted rebuild already wrote
            for start in range(0, len(ids), FILL_BATCH):
                wait_quiet(self._stop.is_set)
                if self._stop.is_set():
                    return  # stop_fill: a new rebuild replaces this one
                with self._lock:
                    rows = [r for r in range(start, min(start + FILL_BATCH, len(ids)))
                            if ids[r] not in self._fresh and ids[r] not in present]
                    if rows:
                        vecs = matrix[rows].astype(np.float32)
                        self._upsert([ids[i] for i in rows], vecs)
                    self.filled = min(start + FILL_BATCH, len(ids))
        except BaseException as exc:  # noqa: BLE001 - reported; the marker makes the next open resume
            self.fill_error = f"{type(exc).__name__}: {str(exc)[:200]}"
            log.warning("rebuilding the vector index stopped (%s); it resumes at the next start", self.fill_error)
            with self._lock:
                self._snapshot = None
            return
        with self._lock:
            self._snapshot = None
            self._fresh, self._fresh_vecs = set(), {}
        index_health.set_rebuilding(self.path, False)
        self.resuming = False
        on_done(len(ids))
