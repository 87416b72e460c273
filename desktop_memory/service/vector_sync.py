"""Keeping the Chroma index in line with SQLite: open, heal, rebuild, drain the durable queue, reconcile.

`VectorSync` owns the data folder's vector index. It receives the store, the embedder and the
foreground gate; the store is replaced (its `store` attribute set again) when the database file is.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ..core.errors import DesktopMemoryError
from ..core.models import Passage
from ..core.passages import LONG_CHARS, split
from ..engine import failures
from ..engine.embed import DIMENSIONS, Embedder
from ..engine.foreground import Foreground
from ..engine.index_health import remove_moved_aside
from ..engine.store import Store
from ..engine.vectors import VectorIndex
from ..engine.vectors import release_process_cache as release_process_cache  # re-exported for the MCP server
from .passage_backlog import PassageBacklog, embed_queued
from .reports import IndexStatus

log = logging.getLogger(__name__)

EMBEDDING_MODEL_KEY = "embedding_model"  # meta key: which model and precision made the stored vectors
INDEX_REPAIR_KEY = "vector_index_repair"  # the last rebuild of a damaged or missing vector index (JSON)
VECTOR_COPIES_KEY = "vector_copies"  # "complete" once the vectors of a store older than m004 are copied
VECTORS_DIR = "vectors"
SYNC_BATCH = 256  # queue entries handled per round
PASSAGE_BATCH = 16  # long memories whose passages are embedded per round (`sync_passages`)
PENDING_FLUSH = 32  # vectors an `add` leaves for Chroma: written together once this many wait


def no_vectors() -> np.ndarray:
    """An empty matrix of vectors (no rows)."""
    return np.zeros((0, DIMENSIONS), np.float32)


def passage_vectors(embedder: Embedder, texts: Sequence[str]) -> list[list[tuple[Passage, np.ndarray]]]:
    """The passages of each text (core/passages.split) with their vectors, all embedded in one call; a text of
    one passage gets none (its own vector is that passage's), and a short one is not even split."""
    cuts = [split(t) if len(t) > LONG_CHARS else [] for t in texts]
    cuts = [c if len(c) > 1 else [] for c in cuts]
    pieces = [p.of_text(t) for t, c in zip(texts, cuts, strict=True) for p in c]
    if not pieces:
        return [[] for _ in texts]
    vecs = iter(embedder.encode(pieces))
    return [[(p, next(vecs)) for p in c] for c in cuts]


class VectorSync:
    """The vector index of one data folder, opened on first use and kept in line with the store."""

    def __init__(self, folder: Path, store: Store, embedder: Embedder, foreground: Foreground,
                 on_reembed: Callable[[], None] = lambda: None) -> None:
        """`on_reembed`: told when every stored vector is dropped (a cache of vectors must be read again)."""
        self.folder = folder
        self.store = store
        self.embedder = embedder
        self.foreground = foreground
        self.on_reembed = on_reembed
        self._vectors: VectorIndex | None = None
        self.model_adopted = False  # the store's vectors checked against this embedder's model
        self._index_repair: dict[str, Any] | None = None  # the index this process found damaged and rebuilt
        self._open_repairs: dict[str, int] | None = None  # what `reconcile` repaired at open (for doctor)
        self.before_use: Callable[[], None] = lambda: None  # before the index or the model is used (reembed.py)
        self.switched_model = False  # reembed.py deleted the old model's index: its rebuild is no repair
        self.backlog: PassageBacklog | None = None  # the passages still to embed, drained in the background

    # -- the index ----------------------------------------------------------------------------
    @property
    def index(self) -> VectorIndex:
        """The Chroma index, opened (checked, healed, reconciled with SQLite) on first use."""
        self.before_use()
        if self._vectors is None:
            self._vectors = VectorIndex(self.folder / VECTORS_DIR)
            self._open_repairs = self.reconcile()
        elif self._vectors.needs_rebuild:  # Chroma failed at work: the index was replaced by an empty one
            self._rebuild_index(self._vectors)
        return self._vectors

    @property
    def opened(self) -> VectorIndex | None:
        """The index if this process has opened it, else None (nothing is opened here)."""
        return self._vectors

    def drop_opened(self) -> None:
        """Forget the (closed) index: the next use opens the folder's again (reembed.py deleted it)."""
        self._vectors = None

    def close(self) -> None:
        """Write what `add` left queued (or leave it for the next start), finish a rebuild under way and
        release the index (marked closed cleanly)."""
        try:
            self.flush_at_close()
        finally:
            if self._vectors is not None:
                self._vectors.close()

    def store_replaced(self, store: Store) -> None:
        """The database file was replaced (restore, encryption on/off): use the new store."""
        self.store = store
        self.model_adopted = False

    def take_open_repairs(self) -> dict[str, int]:
        """What was repaired when the index opened, once (for doctor)."""
        found, self._open_repairs = self._open_repairs or {}, None
        return found

    def _rebuild_index(self, index: VectorIndex) -> None:
        """Refill a moved-aside, missing or half-rebuilt index from the vector copies, in the background.

        Memories without a copy are queued for embedding (the next `sync` writes them).
        """
        index.needs_rebuild = False
        index.stop_fill()  # an index replaced during a rebuild starts over
        ids, matrix = self._all_vector_copies()
        if queued := set(self.store.vectors.queued_upserts(1 << 30)):  # `sync` writes these anyway
            keep = [r for r, mid in enumerate(ids) if mid not in queued]
            ids, matrix = [ids[r] for r in keep], matrix[keep]
        if without := [mid for mid in self.store.vectors.ids_without_copy() if mid not in queued]:
            with self.store.transaction():
                self.store.vectors.enqueue(without, "upsert")
        if not ids and not without and index.damage is None:
            return  # a new, empty data folder
        cause = "was damaged" if index.damage else "was left half rebuilt" if index.resuming else "was missing"
        cause, self.switched_model = "was switched" if self.switched_model and not index.damage else cause, False
        self._index_repair = {"cause": cause, "reason": index.damage or "", "vectors": len(ids),
                              "embedded": len(without), "state": "rebuilding", "at": time.time(),
                              "moved_to": index.moved_to.name if index.moved_to else ""}
        log.info("the vector index %s; rebuilding it from the database (%d vectors, %d to embed)",
                 cause, len(ids), len(without))
        with self.store.transaction():  # for a later `doctor` in another process
            self.store.set_meta(INDEX_REPAIR_KEY, json.dumps(self._index_repair))
        index.start_fill(ids, matrix, self._index_rebuilt, self.foreground.wait_quiet)

    def _all_vector_copies(self) -> tuple[list[str], np.ndarray]:
        """Every memory's float16 vector copy: (ids, one row each)."""
        ids: list[str] = []
        rows = list(self.store.vectors.all_copies())
        matrix = np.empty((len(rows), DIMENSIONS), dtype=np.float16)
        for mid, blob in rows:
            if len(blob) == DIMENSIONS * 2:
                matrix[len(ids)] = np.frombuffer(blob, dtype=np.float16)
                ids.append(mid)
        return ids, matrix[: len(ids)]

    def _index_rebuilt(self, count: int) -> None:
        """On the rebuild's thread, once every vector is written: say so once, drop the damaged copy."""
        if self._index_repair is not None:
            self._index_repair["state"] = "rebuilt"
        remove_moved_aside(self.folder / VECTORS_DIR)
        log.info("%s", self.status().message)

    def status(self) -> IndexStatus:
        """What this process did to the vector index: state "ok", "rebuilding", "rebuilt" or
        "interrupted", and a sentence for a person (empty when there is nothing to say)."""
        repair = self._index_repair
        if repair is None:
            return IndexStatus("ok", "")
        index = self._vectors
        state = repair["state"]
        total = repair["vectors"]
        done = index.filled if state == "rebuilding" and index is not None else total
        what = {"was damaged": "The vector index was damaged", "was missing": "The vector index was missing",
                "was left half rebuilt": "A rebuild of the vector index was interrupted",
                "was switched": "The vector index was switched to the new embedding model"}[repair["cause"]]
        embedded = f", {repair['embedded']:,} to embed again" if repair["embedded"] else ""
        if state == "rebuilt":
            message = f"{what} and has been rebuilt from the database ({total:,} vectors{embedded})."
        elif index is not None and index.fill_error:
            state, message = "interrupted", f"{what}; its rebuild stopped and continues at the next start."
        else:
            message = (f"{what} and is being rebuilt from the database ({done:,} of {total:,} vectors{embedded});"
                       " search works meanwhile.")
        return IndexStatus(state, message, cause=repair["cause"], reason=repair["reason"], vectors=total,
                           embedded=repair["embedded"], at=repair["at"], moved_to=repair["moved_to"], done=done)

    # -- the embedding model ------------------------------------------------------------------
    def embedding_ready(self) -> None:
        """Adopt this embedder's model before its first vector meets the index (once per store).

        Called where the engine embeds, not where it opens: purge, retention, stats and the
        like never load the model.
        """
        self.before_use()
        if self.model_adopted:
            return
        queued = self._adopt_embedding_model()
        self.model_adopted = True
        if queued:
            self.sync()
        else:
            self.passages_later()

    def _adopt_embedding_model(self) -> int:
        """Queue every memory for re-embedding when the store's vectors came from another model.

        Vectors of two models (or precisions) must not be mixed in one index: their cosines are not
        comparable. The queue and the new model's name are written in one transaction, so a crash
        part-way resumes the re-embedding on the next start.
        """
        current = self.embedder.vectors_id
        stored = self.store.get_meta(EMBEDDING_MODEL_KEY)
        if stored == current:
            return 0
        ids = self.store.all_ids()
        with self.store.transaction():
            self.store.vectors.drop_copies()
            self.store.passages.drop_all()
            self.store.vectors.enqueue(ids, "upsert")
            self.store.set_meta(EMBEDDING_MODEL_KEY, current)
        if ids:
            log.info("re-embedding %d memories for %s (was %s), once", len(ids), current, stored or "an older model")
        self.on_reembed()
        return len(ids)

    # -- sync ---------------------------------------------------------------------------------
    def sync(self) -> int:
        """Drain the durable queue into Chroma; returns how many entries were handled."""
        index = self._vectors if self._vectors is not None else self.index
        if not self.model_adopted and self.store.vectors.queued_upserts(1):
            self.embedding_ready()  # only this model's vectors may reach the index
        done = 0
        while batch := self.store.vectors.queued(SYNC_BATCH):
            deletes = [mid for mid, op in batch if op == "delete"]
            upserts = [mid for mid, op in batch if op == "upsert"]
            index.delete(deletes)
            rows = self.store.get_many(upserts)
            present = [mid for mid in upserts if mid in rows]
            vecs = self.store.vectors.stored(present)
            if need := [mid for mid in present if mid not in vecs]:
                made = self.embedder.encode([rows[m].content for m in need])
                with self.store.transaction():
                    self.store.vectors.put(zip(need, made, strict=True))
                vecs.update(zip(need, made, strict=True))
            if present:
                index.upsert(present, np.stack([vecs[m] for m in present]))
            self.store.vectors.dequeue([mid for mid, _ in batch])
            done += len(batch)
        self.passages_later()
        return done

    def passages_later(self) -> None:
        """Long memories queued without their passages (an upgrade, a new model, a restored backup): the
        background backlog embeds them (service/passage_backlog.py); no request waits for it. Without a
        backlog (a bare VectorSync) they are embedded here."""
        if not self.model_adopted or not self.store.passages.queued(1):
            return  # not before this model is the store's: its vectors alone may be written
        if self.backlog is not None:
            self.backlog.wake()
        else:
            self.sync_passages()

    def embed_passages(self, ids: Sequence[str]) -> None:
        """Embed the passages of these memories now if they are queued (an edit, a restored version: one text,
        bounded), on the request's connection."""
        if (queued := self.store.passages.queued_among(ids)):
            self.embedding_ready()
            embed_queued(self.store, self.embedder, queued, EMBEDDING_MODEL_KEY)

    def sync_passages(self) -> int:
        """Embed the passages of every long memory still without them, on this thread (benchmarks, a bare
        VectorSync; the service leaves them to its backlog); returns how many memories were handled."""
        self.embedding_ready()
        done = 0
        while ids := self.store.passages.queued(PASSAGE_BATCH):
            if not embed_queued(self.store, self.embedder, ids, EMBEDDING_MODEL_KEY):
                break
            done += len(ids)
        return done

    def write_waiting(self) -> None:
        """Write the vectors `add` left queued; on a full disk or a read-only folder they stay queued.

        The memories are committed with their vector copies (found by meaning meanwhile) and the queue
        is durable, so the command that stored them reports success; the next start writes them.
        """
        try:
            self.sync()
        except Exception as exc:
            if (error := failures.storage_error(exc)) is None or not failures.not_damage(exc):
                raise
            log.info("vectors stay queued for the next start: %s", error)

    def flush_at_close(self) -> None:
        """At close: write what `add` left for Chroma, or leave it queued for the next start."""
        try:
            if self.store.vectors.queued_upserts(1):
                self.write_waiting()
        except DesktopMemoryError as exc:
            log.warning("vectors left queued for the next start: %s", exc)

    def reconcile(self, *, full: bool = False) -> dict[str, int]:
        """Bring Chroma in line with SQLite: drain the queue, then embed missing and drop orphans.

        The id-by-id comparison runs when asked (`full`, which first waits for a rebuild under way) or
        when the counts disagree (not while a rebuild fills the index).
        """
        index = self._vectors if self._vectors is not None else self.index
        if index.needs_rebuild:
            self._rebuild_index(index)
        if full:
            index.wait_for_fill()
        report = {"queued": self.sync(), "missing": 0, "orphans": 0}
        report["copied"] = self._copy_vectors_from_index(index)
        if not index.filling and (full or index.count() != self.store.count(include_forgotten=True)):
            in_db, in_index = self.store.all_ids(), index.all_ids()
            orphans = sorted(in_index - in_db)
            missing = sorted(in_db - in_index)
            index.delete(orphans)
            with self.store.transaction():
                self.store.vectors.enqueue(missing, "upsert")
            self.sync()
            report.update(missing=len(missing), orphans=len(orphans))
        return report

    def _copy_vectors_from_index(self, index: VectorIndex) -> int:
        """Once per store from before the vector copies (m004): copy Chroma's vectors into SQLite."""
        if self.store.get_meta(VECTOR_COPIES_KEY) == "complete":
            return 0
        lacking = self.store.vectors.ids_without_copy()
        copied = 0
        for start in range(0, len(lacking), 1000):
            found = index.vectors(lacking[start : start + 1000])
            with self.store.transaction():
                self.store.vectors.put(found.items())
            copied += len(found)
        with self.store.transaction():
            self.store.set_meta(VECTOR_COPIES_KEY, "complete")
        if copied:
            log.info("copied %d vectors from the vector index into the database, once", copied)
        return copied

    # -- reading vectors ----------------------------------------------------------------------
    def vectors_of(self, ids: Sequence[str]) -> dict[str, np.ndarray]:
        """Stored vectors by id: the copies in SQLite, Chroma for any memory without one."""
        found = self.store.vectors.stored(ids)
        if rest := [i for i in ids if i not in found]:
            found.update(self.index.vectors(rest))
        return found

    def similarities(self, qvec: np.ndarray, ids: Sequence[str],
                     known: Mapping[str, np.ndarray] | None = None) -> dict[str, float]:
        """Exact cosine of the query to each memory that has a vector (`known`: vectors already read)."""
        ids = list(dict.fromkeys(ids))
        known = known or {}
        read = self.vectors_of([i for i in ids if i not in known])
        got = {i: v for i in ids if (v := known[i] if i in known else read.get(i)) is not None}
        if not got:
            return {}
        keys = list(got)
        sims = np.stack([got[k] for k in keys]) @ np.asarray(qvec, dtype=np.float32)
        return dict(zip(keys, sims.tolist(), strict=True))

    def index_and_dequeue(self, vectors: dict[str, np.ndarray]) -> None:
        """Write these vectors to Chroma now and take them off the queue."""
        if vectors:
            ids = list(vectors)
            self.index.upsert(ids, np.stack(list(vectors.values())))
            self.store.vectors.dequeue(ids)
