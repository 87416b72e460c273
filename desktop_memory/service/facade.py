"""The one memory service: every front end (CLI, tray app, MCP) calls this and gets plain data."""

from __future__ import annotations

import functools
import json
import logging
import time
import uuid
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, TypeVar

import numpy as np

from ..core.capture import CaptureResult, Snapshot
from ..core.context import Context, build_context
from ..core.errors import DesktopMemoryError, InvalidInput, NotFound, StorageError
from ..core.models import Hit, Memory, Version, from_iso
from ..core.query import Filters, entity_matches, parse, terms
from ..core.ranking import (
    SIMILAR_CAP,
    RankingParams,
    collapse_families,
    collapse_near_duplicates,
    first_slots,
    fuse,
    spread_to_neighbours,
)
from ..core.redact import redact
from ..core.text import check_content, content_hash, decode, first_line
from ..engine import encryption, failures, records
from ..engine import folder as folder_files
from ..engine.embed import DIMENSIONS, Embedder
from ..engine.enrichment import Enricher, EnrichReport
from ..engine.enrichment import status as enrichment_status
from ..engine.foreground import Foreground
from ..engine.index_health import remove_moved_aside
from ..engine.lock import DataDirLock
from ..engine.settings import Settings
from ..engine.store import Store
from ..engine.vectors import VectorIndex
from . import capture

log = logging.getLogger(__name__)

EMBEDDING_MODEL_KEY = "embedding_model"  # meta key: which model and precision made the stored vectors
INDEX_REPAIR_KEY = "vector_index_repair"  # the last rebuild of a damaged or missing vector index (JSON)
VECTOR_COPIES_KEY = "vector_copies"  # "complete" once the vectors of a store older than m004 are copied

CANDIDATES = 100
EXACT_SEMANTIC_CAP = 300  # filters this selective: exact cosine over all that pass
DEEP_SEMANTIC_CAP = 3_000  # otherwise an HNSW search this deep at most, filtered afterwards
IMPORT_BATCH = 256
IMPORT_BATCH_BYTES = 8 * 1024 * 1024  # and at most this much text per batch (two are in flight): bounded memory
EXTEND_WINDOW_S = 5 * 60  # a capture extending the previous one from its source within this replaces it
PENDING_FLUSH = 32  # vectors an `add` leaves for Chroma: written together once this many wait
DB_NAME = "memories.sqlite3"
VECTORS_DIR = "vectors"


@dataclass
class AddResult:
    """What happened to one piece of text given to `add`."""

    memory: Memory
    status: str  # "added", "related" (added, grouped with a look-alike), "duplicate" (exact, bumped)
    #              or "extended" (a capture extending the previous one; the earlier text kept as a version)
    redactions: dict[str, int] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {"status": self.status, "id": self.memory.id, "redactions": self.redactions}


@dataclass
class ImportReport:
    """Counts of an import, and each bad line with its number and reason."""

    added: int = 0  # new memories with no look-alike
    duplicates: int = 0  # exact repeats of a stored text (bumped)
    related: int = 0  # new memories grouped with a look-alike (kept, not merged)
    redacted: int = 0
    errors: list[tuple[int, str]] = field(default_factory=list)

    @property
    def stored(self) -> int:
        """Records acknowledged: new memories (related or not) and duplicates."""
        return self.added + self.related + self.duplicates

    def to_dict(self) -> dict[str, Any]:
        return {"added": self.added, "duplicates": self.duplicates, "related": self.related,
                "redacted": self.redacted, "errors": [{"line": n, "error": e} for n, e in self.errors]}


@dataclass
class _Prepared:
    line: int
    memory: Memory
    redactions: dict[str, int]
    versions: list[Version] = field(default_factory=list)  # earlier texts an import carries back


def _no_vectors() -> np.ndarray:
    return np.zeros((0, DIMENSIONS), np.float32)


def _clean_tags(tags: Iterable[Any]) -> list[str]:
    out: list[str] = []
    for tag in tags:
        tag = " ".join(str(tag).split()).strip().lstrip("#").lower()
        if tag and tag not in out:
            out.append(tag[:64])
    return out


def _redact_json(value: Any, counts: dict[str, int]) -> Any:
    """Redact secrets inside string values of a JSON structure (other values stay verbatim)."""
    if isinstance(value, str):
        r = redact(value)
        for kind, n in r.counts.items():
            counts[kind] = counts.get(kind, 0) + n
        return r.text
    if isinstance(value, list):
        return [_redact_json(v, counts) for v in value]
    if isinstance(value, dict):
        return {k: _redact_json(v, counts) for k, v in value.items()}
    return value


_F = TypeVar("_F", bound=Callable[..., Any])


def serves_the_person(method: _F) -> _F:
    """A request someone waits for: background enrichment pauses while it runs (engine/foreground.py)."""

    @functools.wraps(method)
    def wrapper(self: MemoryService, *args: Any, **kwargs: Any) -> Any:
        with self.foreground.busy():
            return method(self, *args, **kwargs)

    return wrapper  # type: ignore[return-value]


class MemoryService:
    """Owns one data folder: its lock, the SQLite store, the Chroma index and the embedder."""

    def __init__(
        self,
        folder: Path,
        *,
        embedder: Embedder | None = None,
        settings: Settings | None = None,
        ranking: RankingParams | None = None,
        lock_wait_s: float = 2.0,
        start_fresh: bool = False,
        on_lock_wait: Callable[[str], None] | None = None,
        lock_give_up: Callable[[], bool] | None = None,
    ) -> None:
        """`start_fresh`: a missing or empty database next to old data starts empty (the rest set aside)."""
        self.folder = folder
        folder_files.private_umask()  # every file this process makes from now on is for its user only
        try:
            folder.mkdir(parents=True, exist_ok=True, mode=folder_files.DIR_MODE)
        except OSError as exc:
            raise StorageError(f"cannot create the data folder {folder}: {exc.strerror}") from exc
        # another process holds the folder: wait up to `lock_wait_s` for each holder (engine/lock.py)
        self._lock = DataDirLock(folder, wait_s=lock_wait_s, on_wait=on_lock_wait, give_up=lock_give_up)
        try:
            # before the store: finish or undo a restore, refuse a database that vanished (engine/folder.py)
            self.open_notes = folder_files.open_folder(folder, start_fresh=start_fresh)
            self.settings = settings or Settings.load(folder)
            self.store = Store(folder / DB_NAME, key=encryption.prepare(folder, folder / DB_NAME))
        except BaseException:
            self._lock.release()
            raise
        self.embedder = embedder or Embedder()
        self.ranking = ranking or RankingParams()
        self._vectors: VectorIndex | None = None
        self._model_adopted = False  # the store's vectors checked against this embedder's model
        self._recent: tuple[list[str], np.ndarray] | None = None
        self._enricher: Enricher | None = None
        self.foreground = Foreground()  # requests it serves go before background enrichment
        self._embed_lane = ThreadPoolExecutor(1, thread_name_prefix="dm-embed-lane")  # queries; imports ahead

    # -- lifecycle of the service -------------------------------------------------------------
    def close(self) -> None:
        self.stop_enrichment()
        self._embed_lane.shutdown(wait=True)
        try:
            if self.store.queued_upserts(1):  # what `add` left for Chroma
                self._write_waiting_vectors()
        except DesktopMemoryError as exc:  # still queued: the next start writes it
            log.warning("vectors left queued for the next start: %s", exc)
        finally:
            try:
                if self._vectors is not None:
                    self._vectors.close()  # finishes a rebuild under way; marks the index closed cleanly
            finally:
                self.store.close()
                self._lock.release()

    def _write_waiting_vectors(self) -> None:
        """Write the vectors `add` left queued; on a full disk or a read-only folder they stay queued.

        The memories are committed with their vector copies (found by meaning meanwhile) and the queue
        is durable, so the command that stored them reports success; the next start writes them.
        """
        try:
            self.sync_vectors()
        except Exception as exc:
            if (error := failures.storage_error(exc)) is None or not failures.not_damage(exc):
                raise
            log.info("vectors stay queued for the next start: %s", error)

    def reopen_store(self) -> None:
        """Open the database again after its file was replaced (restore, encryption on/off)."""
        self.store.close()
        self.open_notes += folder_files.open_folder(self.folder)  # a swap a failure left half-done
        self.store = Store(self.folder / DB_NAME, key=encryption.prepare(self.folder, self.folder / DB_NAME))
        self._recent = None
        self._model_adopted = False

    def __enter__(self) -> MemoryService:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    _index_repair: dict[str, Any] | None = None  # the index this process found damaged or missing and rebuilt
    _open_repairs: dict[str, int] | None = None  # what `reconcile` repaired when the index opened (for doctor)

    @property
    def vectors(self) -> VectorIndex:
        """The Chroma index, opened (checked, healed, reconciled with SQLite) on first use."""
        if self._vectors is None:
            self._vectors = VectorIndex(self.folder / VECTORS_DIR)
            self._open_repairs = self.reconcile()
        elif self._vectors.needs_rebuild:  # Chroma failed at work: the index was replaced by an empty one
            self._rebuild_index(self._vectors)
        return self._vectors

    def _rebuild_index(self, index: VectorIndex) -> None:
        """Refill a moved-aside, missing or half-rebuilt index from the vector copies, in the background.

        Memories without a copy are queued for embedding (the next `sync_vectors` writes them).
        """
        index.needs_rebuild = False
        index.stop_fill()  # an index replaced during a rebuild starts over
        ids, matrix = self._all_vector_copies()
        if queued := set(self.store.queued_upserts(1 << 30)):  # `sync_vectors` writes these anyway
            keep = [r for r, mid in enumerate(ids) if mid not in queued]
            ids, matrix = [ids[r] for r in keep], matrix[keep]
        if without := [mid for mid in self.store.ids_without_vector() if mid not in queued]:
            with self.store.transaction():
                self.store.enqueue(without, "upsert")
        if not ids and not without and index.damage is None:
            return  # a new, empty data folder
        cause = "was damaged" if index.damage else "was left half rebuilt" if index.resuming else "was missing"
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
        n = int(self.store.scalar("SELECT count(*) FROM memory_vectors"))
        ids: list[str] = []
        matrix = np.empty((n, DIMENSIONS), dtype=np.float16)
        cursor = self.store.db.execute(
            "SELECT m.id, v.vec FROM memories m JOIN memory_vectors v ON v.rowid = m.rowid")
        for mid, blob in cursor:
            if len(ids) < n and len(blob) == DIMENSIONS * 2:
                matrix[len(ids)] = np.frombuffer(blob, dtype=np.float16)
                ids.append(mid)
        return ids, matrix[: len(ids)]

    def _index_rebuilt(self, count: int) -> None:
        """On the rebuild's thread, once every vector is written: say so once, drop the damaged copy."""
        if self._index_repair is not None:
            self._index_repair["state"] = "rebuilt"
        remove_moved_aside(self.folder / VECTORS_DIR)
        log.info("%s", self.index_status()["message"])

    def index_status(self) -> dict[str, Any]:
        """What this process did to the vector index, for front ends: state "ok", "rebuilding" or
        "rebuilt", and a sentence for a person (empty when there is nothing to say)."""
        repair = self._index_repair
        if repair is None:
            return {"state": "ok", "message": ""}
        index = self._vectors
        state = repair["state"]
        total = repair["vectors"]
        done = index.filled if state == "rebuilding" and index is not None else total
        what = {"was damaged": "The vector index was damaged", "was missing": "The vector index was missing",
                "was left half rebuilt": "A rebuild of the vector index was interrupted"}[repair["cause"]]
        embedded = f", {repair['embedded']:,} to embed again" if repair["embedded"] else ""
        if state == "rebuilt":
            message = f"{what} and has been rebuilt from the database ({total:,} vectors{embedded})."
        elif index is not None and index.fill_error:
            state, message = "interrupted", f"{what}; its rebuild stopped and continues at the next start."
        else:
            message = (f"{what} and is being rebuilt from the database ({done:,} of {total:,} vectors{embedded});"
                       " search works meanwhile.")
        return {**repair, "state": state, "done": done, "message": message}

    def _embedding_ready(self) -> None:
        """Adopt this embedder's model before its first vector meets the index (once per store).

        Called where the engine embeds, not where it opens: purge, retention, stats and the
        like never load the model.
        """
        if self._model_adopted:
            return
        queued = self._adopt_embedding_model()
        self._model_adopted = True
        if queued:
            self.sync_vectors()

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
            self.store.drop_vectors()
            self.store.enqueue(ids, "upsert")
            self.store.set_meta(EMBEDDING_MODEL_KEY, current)
        if ids:
            log.info("re-embedding %d memories for %s (was %s), once", len(ids), current, stored or "an older model")
        self._recent = None
        return len(ids)

    # -- vector sync --------------------------------------------------------------------------
    def sync_vectors(self) -> int:
        """Drain the durable queue into Chroma; returns how many entries were handled."""
        index = self._vectors if self._vectors is not None else self.vectors
        if not self._model_adopted and self.store.queued_upserts(1):
            self._embedding_ready()  # only this model's vectors may reach the index
        done = 0
        while batch := self.store.queued(IMPORT_BATCH):
            deletes = [mid for mid, op in batch if op == "delete"]
            upserts = [mid for mid, op in batch if op == "upsert"]
            index.delete(deletes)
            rows = self.store.get_many(upserts)
            present = [mid for mid in upserts if mid in rows]
            vecs = self.store.stored_vectors(present)
            if need := [mid for mid in present if mid not in vecs]:
                made = self.embedder.encode([rows[m].content for m in need])
                with self.store.transaction():
                    self.store.put_vectors(zip(need, made, strict=True))
                vecs.update(zip(need, made, strict=True))
            if present:
                index.upsert(present, np.stack([vecs[m] for m in present]))
            self.store.dequeue([mid for mid, _ in batch])
            done += len(batch)
        return done

    def reconcile(self, *, full: bool = False) -> dict[str, int]:
        """Bring Chroma in line with SQLite: drain the queue, then embed missing and drop orphans.

        The id-by-id comparison runs when asked (`full`, which first waits for a rebuild under way) or
        when the counts disagree (not while a rebuild fills the index).
        """
        index = self._vectors if self._vectors is not None else self.vectors
        if index.needs_rebuild:
            self._rebuild_index(index)
        if full:
            index.wait_for_fill()
        report = {"queued": self.sync_vectors(), "missing": 0, "orphans": 0}
        report["copied"] = self._copy_vectors_from_index(index)
        if not index.filling and (full or index.count() != self.store.count(include_forgotten=True)):
            in_db, in_index = self.store.all_ids(), index.all_ids()
            orphans = sorted(in_index - in_db)
            missing = sorted(in_db - in_index)
            index.delete(orphans)
            with self.store.transaction():
                self.store.enqueue(missing, "upsert")
            self.sync_vectors()
            report.update(missing=len(missing), orphans=len(orphans))
        return report

    def _copy_vectors_from_index(self, index: VectorIndex) -> int:
        """Once per store from before the vector copies (m004): copy Chroma's vectors into SQLite."""
        if self.store.get_meta(VECTOR_COPIES_KEY) == "complete":
            return 0
        lacking = self.store.ids_without_vector()
        copied = 0
        for start in range(0, len(lacking), 1000):
            found = index.vectors(lacking[start : start + 1000])
            with self.store.transaction():
                self.store.put_vectors(found.items())
            copied += len(found)
        with self.store.transaction():
            self.store.set_meta(VECTOR_COPIES_KEY, "complete")
        if copied:
            log.info("copied %d vectors from the vector index into the database, once", copied)
        return copied

    def _vectors_of(self, ids: Sequence[str]) -> dict[str, np.ndarray]:
        """Stored vectors by id: the copies in SQLite, Chroma for any memory without one."""
        found = self.store.stored_vectors(ids)
        if rest := [i for i in ids if i not in found]:
            found.update(self.vectors.vectors(rest))
        return found

    def _similarities(self, qvec: np.ndarray, ids: Sequence[str]) -> dict[str, float]:
        """Exact cosine of the query to each memory that has a vector."""
        got = self._vectors_of(list(dict.fromkeys(ids)))
        if not got:
            return {}
        keys = list(got)
        sims = np.stack([got[k] for k in keys]) @ np.asarray(qvec, dtype=np.float32)
        return dict(zip(keys, sims.tolist(), strict=True))

    # -- adding -------------------------------------------------------------------------------
    def _prepare(
        self,
        content: str | bytes,
        *,
        source: str,
        title: str = "",
        tags: Iterable[Any] = (),
        pinned: bool = False,
        metadata: dict[str, Any] | None = None,
        created_at: float | None = None,
        source_app: str = "",
        source_url: str = "",
        importance: float | None = None,
    ) -> tuple[Memory, dict[str, int]]:
        # the one check of every field, whoever gives it (import line, CLI, MCP, app, socket): engine/records.py
        f = records.check_fields(source=source, title=title, tags=tags, pinned=pinned, metadata=metadata,
                                 created_at=created_at, source_app=source_app, source_url=source_url,
                                 importance=importance)
        text = check_content(content if isinstance(content, str) else content.decode("utf-8", "replace"),
                             self.settings.max_bytes)
        red = redact(text)
        counts = dict(red.counts)
        text = red.text
        title_r = redact(" ".join(f.title.split())[:200])
        for kind, n in title_r.counts.items():
            counts[kind] = counts.get(kind, 0) + n
        meta = _redact_json(f.metadata, counts)
        now = time.time()
        memory = Memory(
            id=str(uuid.uuid4()),
            content=text,
            source=f.source.strip().lower()[:32] or "manual",
            title=title_r.text,
            source_app=f.source_app[:200],
            source_url=f.source_url[:2000],
            tags=_clean_tags(f.tags),
            importance=0.5 if f.importance is None else f.importance,
            pinned=f.pinned,
            created_at=f.created_at if f.created_at is not None else now,
            updated_at=now,
            content_hash=content_hash(text),
            metadata=meta,
            redactions=sum(counts.values()),
        )
        return memory, counts

    def _recent_vectors(self) -> tuple[list[str], np.ndarray]:
        if self._recent is None:
            ids = self.store.recent(self.settings.near_duplicate_window)
            found = self._vectors_of(ids) if ids else {}
            keep = [i for i in ids if i in found]
            mat = np.stack([found[i] for i in keep]) if keep else np.zeros((0, 384), np.float32)
            self._recent = (keep, mat)
        return self._recent

    def _remember_recent(self, ids: list[str], vecs: np.ndarray) -> None:
        old_ids, old = self._recent_vectors()
        window = self.settings.near_duplicate_window
        self._recent = ((ids[::-1] + old_ids)[:window], np.concatenate([vecs[::-1], old])[:window])

    def _bump(self, existing: Memory, new: Memory) -> Memory:
        """An exact duplicate: the stored memory is seen again (tags and pin added, un-forgotten)."""
        tags = _clean_tags([*existing.tags, *new.tags])
        self.store.update(
            existing.id, updated_at=new.updated_at, access_count=existing.access_count + 1,
            tags=tags, forgotten=False, pinned=existing.pinned or new.pinned,
        )
        existing.updated_at, existing.access_count, existing.tags = new.updated_at, existing.access_count + 1, tags
        existing.forgotten, existing.pinned = False, existing.pinned or new.pinned
        return existing

    def _extension_of(self, new: Memory) -> Memory | None:
        """The previous capture from the same source and app if `new` strictly extends it within
        EXTEND_WINDOW_S (typing, a streamed answer growing): the one in-place update allowed."""
        prev = self.store.previous_capture(new.source, new.source_app, new.created_at)
        if (prev is None or prev.forgotten or len(new.content) <= len(prev.content)
                or not new.content.startswith(prev.content)):  # grown at its end, not quoted inside
            return None  # a forgotten capture stays forgotten: the longer text is a memory of its own
        last = max(prev.created_at, self.store.last_replaced(prev.id) or 0.0)
        return prev if 0 <= new.created_at - last <= EXTEND_WINDOW_S else None

    def _extend(self, existing: Memory, new: Memory) -> Memory:
        """Replace the previous capture's text with its extension; the earlier text becomes a version."""
        self.store.add_version(existing.id, Version(
            0, existing.content, existing.content_hash,
            max(existing.created_at, self.store.last_replaced(existing.id) or 0.0), new.created_at,
            existing.redactions))
        self._bump(existing, new)
        self.store.update(existing.id, content=new.content, content_hash=new.content_hash,
                          redactions=max(existing.redactions, new.redactions))
        self.store.session_reaches(existing.session_id, new.created_at)
        existing.content, existing.content_hash = new.content, new.content_hash
        return existing

    def _relate(self, existing: Memory, new: Memory) -> None:
        """A look-alike joins the family of the memory it resembles (both are kept)."""
        if existing.family_id is None:
            existing.family_id = existing.id
            self.store.update(existing.id, family_id=existing.id)
        new.family_id = existing.family_id

    def _store_batch(self, prepared: list[_Prepared]) -> list[AddResult]:
        """Dedupe, embed, relate look-alikes and commit one batch (`add`).

        The vectors stay queued for Chroma until PENDING_FLUSH wait (or the service closes): Chroma's
        upsert of one vector costs ~16 ms at 100k memories, of 32 little more. Searches meanwhile
        score queued memories from their vector copies, so a new memory is found by meaning at once.
        """
        results, fresh, later = self._dedupe(prepared, set())
        if fresh:
            self._embedding_ready()
        vecs = self.embedder.encode([p.memory.content for p in fresh]) if fresh else _no_vectors()
        results += self._commit(fresh, vecs, later, index=False, extend=True)
        if len(self.store.queued_upserts(PENDING_FLUSH)) >= PENDING_FLUSH:
            self._write_waiting_vectors()  # committed: a full disk now must not fail the add
        return results

    def _dedupe(self, prepared: list[_Prepared], in_flight: set[str]
                ) -> tuple[list[AddResult], list[_Prepared], list[_Prepared]]:
        """Bump exact duplicates of stored memories; returns (their results, texts to embed, texts
        whose hash is `in_flight` in a batch not committed yet or repeats one of `prepared`: `_commit`
        checks these again once the text they repeat is stored)."""
        results: list[AddResult] = []
        fresh: list[_Prepared] = []
        later: list[_Prepared] = []
        first: set[str] = set()
        with self.store.transaction():
            for p in prepared:
                h = p.memory.content_hash
                if h in first or h in in_flight:
                    later.append(p)
                elif (existing := self.store.by_hash(h)) is not None:
                    results.append(AddResult(self._bump(existing, p.memory), "duplicate", p.redactions))
                    self._keep_versions(existing.id, p.versions)
                else:
                    first.add(h)
                    fresh.append(p)
        return results, fresh, later

    def _keep_versions(self, memory_id: str, versions: Sequence[Version]) -> None:
        for v in versions:
            self.store.add_version(memory_id, v)

    def _commit(self, fresh: list[_Prepared], vecs: np.ndarray, later: Sequence[_Prepared] = (),
                *, index: bool = True, extend: bool = False) -> list[AddResult]:
        """Insert every distinct text (look-alikes related to the memory they resemble) with its vector
        copy, then the repeats in `later`, then index the vectors (or, without `index`, leave them
        queued for Chroma). With `extend` (captures), a text that strictly extends the previous capture
        from its source replaces it in place, the earlier text kept as a version."""
        results: list[AddResult] = []
        to_index: dict[str, np.ndarray] = {}
        if fresh:
            results += self._insert(fresh, vecs, to_index, extend)
        if later:  # repeats of texts stored just now (this batch or the one before)
            more, unseen, again = self._dedupe(list(later), set())
            results += more
            if unseen:  # a text the batch before it did not store after all: embedded now
                self._embedding_ready()
                vecs = self.embedder.encode([p.memory.content for p in unseen])
                results += self._insert(unseen, vecs, to_index, extend)
            if again:
                more, _, _ = self._dedupe(again, set())
                results += more
        if index and to_index:
            ids = list(to_index)
            self.vectors.upsert(ids, np.stack(list(to_index.values())))
            self.store.dequeue(ids)
        return results

    def _insert(self, fresh: list[_Prepared], vecs: np.ndarray, to_index: dict[str, np.ndarray],
                extend: bool) -> list[AddResult]:
        """One transaction: each text extends, joins a family of look-alikes, or starts its own."""
        results: list[AddResult] = []
        recent_ids, recent = self._recent_vectors()
        threshold = self.settings.near_duplicate_cosine
        # all cosines at once: each text against the recent memories and against this batch
        to_recent = vecs @ recent.T if len(recent) else None
        to_batch = vecs @ vecs.T
        new_ids: list[str] = []
        new_rows: list[int] = []  # the row of `vecs` of each new memory
        mine: dict[str, np.ndarray] = {}
        with self.store.transaction():
            for row, (p, vec) in enumerate(zip(fresh, vecs, strict=True)):
                m = p.memory
                prev = self._extension_of(m) if extend else None
                if prev is not None:
                    results.append(AddResult(self._extend(prev, m), "extended", p.redactions))
                    mine[prev.id] = vec
                    continue
                target = _best_at_least(new_ids, to_batch[row, new_rows], threshold)
                if target is None and to_recent is not None:
                    target = _best_at_least(recent_ids, to_recent[row], threshold)
                existing = self._get_or_none(target) if target else None
                if existing is not None:
                    self._relate(existing, m)
                m.session_id = self.store.session_for(m.source, m.source_app, m.created_at,
                                                      m.title or first_line(m.content, 60))
                self.store.insert(m)
                self._keep_versions(m.id, p.versions)
                new_ids.append(m.id)
                new_rows.append(row)
                mine[m.id] = vec
                results.append(AddResult(m, "related" if existing is not None else "added", p.redactions))
            self.store.put_vectors(mine.items())
        to_index.update(mine)
        if len(mine) > len(new_ids):
            self._recent = None  # an extended memory's vector changed: read the window again
        elif new_ids:
            self._remember_recent(new_ids, vecs[new_rows])
        return results

    def _import_versions(self, raw: Any) -> list[Version]:
        """The "versions" of an exported record (earlier texts), normalised and redacted like content."""
        if raw in (None, []):
            return []
        shape = '"versions" must be a list of {"content", "created_at", "replaced_at"} objects'
        if not isinstance(raw, list) or not all(isinstance(v, dict) for v in raw):
            raise InvalidInput(shape)
        out: list[Version] = []
        for v in raw:
            if not isinstance(v.get("content"), str):
                raise InvalidInput(shape)
            red = redact(check_content(v["content"], self.settings.max_bytes))
            try:
                created, replaced = (from_iso(str(v[k])) if v.get(k) else time.time()
                                     for k in ("created_at", "replaced_at"))
            except (ValueError, OverflowError, OSError):
                raise InvalidInput(f'{shape}; the times in ISO 8601') from None
            out.append(Version(0, red.text, content_hash(red.text), created, replaced, red.total))
        return out

    def _get_or_none(self, memory_id: str) -> Memory | None:
        try:
            return self.store.get(memory_id)
        except DesktopMemoryError:
            return None

    @serves_the_person
    def add(self, content: str | bytes, *, source: str = "manual", **fields: Any) -> AddResult:
        """Remember one text (normalised, redacted, deduplicated); it is searchable on return."""
        memory, counts = self._prepare(content, source=source, **fields)
        return self._store_batch([_Prepared(0, memory, counts)])[0]

    @serves_the_person
    def capture(self, snapshot: Snapshot) -> CaptureResult:
        """A copy as plain data -> saved or skipped, with the reason (rules and redaction here: service/capture.py)."""
        return capture.capture(snapshot, self.settings, self._prepare,
                               lambda m, counts: self._store_batch([_Prepared(0, m, counts)])[0])

    @serves_the_person
    def import_records(
        self,
        lines: Iterable[str | bytes | records.Overlong],
        *,
        progress: Callable[[ImportReport], None] | None = None,
    ) -> ImportReport:
        """Import JSON Lines; bad lines are reported with their numbers and skipped.

        Each line is checked by engine/records.py; a line longer than the line limit (or an `Overlong`
        that `records.read_lines` skipped unread) is reported and skipped. Batches hold at most
        IMPORT_BATCH records and IMPORT_BATCH_BYTES characters of text, and are pipelined: while one
        batch is committed, the next is read, deduplicated and embedded on the embedding lane. Every
        batch is committed before `progress` acknowledges it. A full disk, a read-only folder or a
        damaged database stops the import with a StorageError that says how many records were stored
        and after which line nothing was.
        """
        report = ImportReport()
        limit = records.line_limit(self.settings.max_bytes)
        batch: list[_Prepared] = []
        size = 0  # characters of text in `batch`
        waiting: list[tuple[list[AddResult], list[_Prepared], list[_Prepared], Future[np.ndarray] | None,
                           list[_Prepared]]] = []
        through = 0  # the last line of the last batch acknowledged

        def finish() -> None:
            nonlocal through
            results, fresh, later, vectors, lines_of = waiting[-1]
            vecs = vectors.result() if vectors is not None else _no_vectors()
            for r in results + self._commit(fresh, vecs, later):
                if r.status == "added":
                    report.added += 1
                elif r.status == "related":
                    report.related += 1
                else:
                    report.duplicates += 1
                report.redacted += sum(r.redactions.values())
            waiting.pop()
            through = lines_of[-1].line
            if progress:
                progress(report)

        def flush() -> None:
            nonlocal size
            in_flight = {p.memory.content_hash for p in waiting[0][1]} if waiting else set()
            results, fresh, later = self._dedupe(batch, in_flight)
            vectors = None
            if fresh:
                self._embedding_ready()
                vectors = self._embed_lane.submit(self.embedder.encode, [p.memory.content for p in fresh])
            if waiting:
                finish()
            waiting.append((results, fresh, later, vectors, list(batch)))
            batch.clear()
            size = 0

        try:
            for number, raw in enumerate(lines, start=1):
                if isinstance(raw, records.Overlong) or len(raw) > limit:
                    too_long = raw if isinstance(raw, records.Overlong) else records.Overlong(len(raw), limit)
                    report.errors.append((number, too_long.reason()))
                    continue
                if isinstance(raw, bytes):
                    raw = decode(raw)
                if not raw.strip():
                    continue
                try:
                    p = _Prepared(number, *self._record(raw))
                except InvalidInput as exc:
                    report.errors.append((number, str(exc)))
                    continue
                batch.append(p)
                size += len(p.memory.content) + sum(len(v.content) for v in p.versions)
                if len(batch) >= IMPORT_BATCH or size >= IMPORT_BATCH_BYTES:
                    flush()
            if batch:
                flush()
            if waiting:
                finish()
        except Exception as exc:
            unacknowledged = [p for *_, lines_of in waiting for p in lines_of] + batch
            error = failures.storage_error(exc, detail=self._how_far(report, through, unacknowledged))
            if error is None:
                raise
            raise error from exc
        finally:  # after an error, let the batch being embedded finish before the engine is used again
            for *_, vectors, _lines in waiting:
                if vectors is not None:
                    wait([vectors])
        return report

    def _how_far(self, report: ImportReport, through: int, unacknowledged: list[_Prepared]) -> str:
        """How far an import that stopped got: what is stored (acknowledged or not) and where it ended."""
        stored = report.stored
        contiguous = last = through  # every good line up to `contiguous` is stored; none after `last`
        gap = False
        for p in sorted(unacknowledged, key=lambda p: p.line):
            try:
                kept = self.store.by_hash(p.memory.content_hash) is not None
            except Exception:  # noqa: BLE001 - the database may not even answer now
                kept = False
            if kept:
                stored += 1
                last = p.line
                contiguous = contiguous if gap else p.line
            gap = gap or not kept
        if not last:
            return "no record of this import was stored"
        if contiguous == last:
            return f"{stored:,} record(s) were stored, nothing after line {last:,} was imported"
        return (f"{stored:,} record(s) were stored (every one up to line {contiguous:,}, some up to line "
                f"{last:,}); nothing after line {last:,} was imported")

    def _record(self, raw: str) -> tuple[Memory, dict[str, int], list[Version]]:
        """One import line, validated (engine/records.py), then prepared like any text given to `add`."""
        rec = records.parse_line(raw)
        return *self._prepare(
            rec.content, source=rec.source or "import", title=rec.title, tags=rec.tags, pinned=rec.pinned,
            metadata=rec.metadata, created_at=rec.created_at, source_app=rec.source_app,
            source_url=rec.source_url, importance=rec.importance,
        ), self._import_versions([v.model_dump() for v in rec.versions])

    # -- searching ----------------------------------------------------------------------------
    @serves_the_person
    def search(
        self, query: str, *, limit: int = 10, filters: Filters | None = None, record_access: bool = True,
        expand: bool = False,
    ) -> list[Hit]:
        """Keyword and semantic search fused into one ranking (explain data on every hit).

        Look-alikes (a family, or texts sharing 90 % of their words) are one hit, the best-scoring
        one, with the others in `Hit.similar`; with `expand` each memory is its own hit.
        """
        limit = max(1, min(int(limit), 1000))
        parsed = parse(query or "")
        filters = (filters or Filters()).merged(parsed.filters)
        text = parsed.text
        hits = self._ranked(text, filters, limit, expand) if text.strip() else self._browse(filters, limit)
        if record_access and hits:
            self.store.touch([h.memory.id for h in hits])
        return hits

    def _browse(self, filters: Filters, limit: int) -> list[Hit]:
        """No words to match: the newest memories that pass the filters."""
        where, params = Store.filter_sql(filters)
        ids = [r[0] for r in self.store.rows(
            f"SELECT m.id FROM memories m WHERE {where} ORDER BY m.pinned DESC, m.created_at DESC LIMIT ?",
            [*params, limit])]
        rows = self.store.get_many(ids)
        return [Hit(rows[i], 0.0, {"browse": True}) for i in ids]

    def _ranked(self, text: str, filters: Filters, limit: int, expand: bool = False) -> list[Hit]:
        depth = max(CANDIDATES, limit * 2)
        toks = terms(text)
        # the semantic side runs on a helper thread while SQLite ranks the keywords (onnxruntime,
        # Chroma and SQLite all release the GIL); the store itself stays on this thread
        vectors = self.vectors  # opened (and reconciled with the store) here, not on the helper
        self._embedding_ready()

        def by_meaning() -> tuple[np.ndarray, dict[str, float] | None]:
            qvec = self.embedder.encode_query(text[:4000])
            return qvec, None if filters.active else dict(vectors.query(qvec, depth + 10))

        pending = self._embed_lane.submit(by_meaning)
        keyword = dict(self.store.keyword_search_terms(toks, filters, depth))
        qvec, semantic = pending.result()
        if semantic is None:
            semantic = self._semantic_filtered(qvec, filters, depth + 10)
        if queued := self.store.queued_upserts(PENDING_FLUSH):  # added, not in Chroma yet
            semantic.update(self._similarities(qvec, queued))
        missing = [i for i in keyword if i not in semantic]
        if missing:  # every keyword candidate gets its exact cosine too
            semantic.update(self._similarities(qvec, missing))
        candidates = set(keyword) | set(semantic)
        if filters.active:
            found = self.store.get_many(candidates)
            rows: dict[str, Any] = {i: m for i, m in found.items() if self._passes(m, filters)}
        else:  # rank on the few fields fusion reads; full rows only for the hits kept
            rows = self.store.rank_fields(candidates, include_forgotten=filters.include_forgotten)
        grouped = not expand and any(getattr(r, "family_id", None) for r in rows.values())
        hits = fuse(keyword, semantic, rows, now=time.time(), params=self.ranking,
                    limit=None if grouped else limit * 2)
        if grouped:  # a family of look-alikes takes one of the places
            hits = first_slots(hits, limit * 2)
        if not filters.active:
            full = self.store.get_many([h.memory.id for h in hits])
            hits = [replace(h, memory=full[h.memory.id]) for h in hits if h.memory.id in full]
        if self.ranking.neighbour_weight > 0 and hits:
            sources = [h.memory.id for h in hits[: self.ranking.neighbour_sources]]
            neighbours = self.store.session_neighbours(sources)
            wanted = {n for ns in neighbours.values() for n in ns} - set(rows)
            extra = {i: m for i, m in self.store.get_many(wanted).items() if self._passes(m, filters)}
            hits = spread_to_neighbours(hits, neighbours, extra, self.ranking.neighbour_weight)
        return hits[:limit] if expand else self._collapse(hits, filters, limit)

    def _collapse(self, hits: list[Hit], filters: Filters, limit: int) -> list[Hit]:
        """One hit per family (its other members attached, those that pass the filters), then look-alike
        wordings attached to the better hit (Jaccard); nothing is dropped, only grouped."""
        hits = first_slots(hits, limit * 2)
        families = [h.memory.family_id for h in hits if h.memory.family_id]
        members = {fid: [m for m in ms if self._passes(m, filters)]
                   for fid, ms in self.store.family_members(families, SIMILAR_CAP + 1).items()}
        hits = collapse_families(hits, members)
        return collapse_near_duplicates(hits, self.ranking.collapse_jaccard)[:limit]

    def _semantic_filtered(self, qvec: np.ndarray, filters: Filters, depth: int) -> dict[str, float]:
        """Nearest memories by meaning that pass the filters (exact when few pass, else HNSW + filter)."""
        allowed = self.store.filtered_ids(filters, EXACT_SEMANTIC_CAP)
        if allowed is not None:
            return self._similarities(qvec, allowed)
        share = self.store.count_filtered(filters) / max(1, self.store.count())
        deep = int(min(DEEP_SEMANTIC_CAP, depth / max(share, 1e-6)))
        found = dict(self.vectors.query(qvec, deep))
        keep = self.store.filter_ids(list(found), filters)
        return {i: found[i] for i in keep}

    @staticmethod
    def _passes(m: Memory, f: Filters) -> bool:
        if m.forgotten and not f.include_forgotten:
            return False
        if f.pinned_only and not m.pinned:
            return False
        if f.sources and m.source.lower() not in f.sources:
            return False
        if f.apps and not any(a in m.source_app.lower() for a in f.apps):
            return False
        if f.tags and not all(t in m.tags for t in f.tags):
            return False
        if f.after and m.created_at < f.after.timestamp():
            return False
        if f.entities and not all(entity_matches(m.entities, e) for e in f.entities):
            return False
        return not (f.before and m.created_at >= f.before.timestamp())

    # -- context ------------------------------------------------------------------------------
    @serves_the_person
    def context(
        self,
        query: str | None = None,
        *,
        ids: Sequence[str] = (),
        budget: int | None = None,
        fmt: str | None = None,
        limit: int = 20,
        filters: Filters | None = None,
    ) -> Context:
        """Pasteable context for a query (most relevant first) or for chosen memories (in order)."""
        if ids:
            memories = [self.store.get(i) for i in ids]
            self.store.touch([m.id for m in memories])
        elif query and query.strip():
            memories = [h.memory for h in self.search(query, limit=limit, filters=filters)]
        else:
            raise InvalidInput("give a query or memory ids to build context from")
        budget = self.settings.context_budget if budget is None else budget
        if budget < 50:
            raise InvalidInput("the token budget must be at least 50")
        return build_context(memories, query=query, budget=budget, fmt=fmt or self.settings.context_format)

    # -- lifecycle of memories ----------------------------------------------------------------
    def get(self, memory_id: str) -> Memory:
        return self.store.get(memory_id.strip())

    def versions(self, memory_id: str) -> list[Version]:
        """The earlier texts of a memory (replaced by a longer capture or a restore), oldest first."""
        return self.store.versions(self.get(memory_id).id)

    def restore_version(self, memory_id: str, seq: int) -> Memory:
        """Make an earlier text current again; the current text becomes a version (nothing is lost)."""
        m = self.get(memory_id)
        chosen = next((v for v in self.store.versions(m.id) if v.seq == int(seq)), None)
        if chosen is None:
            raise NotFound(f"memory {m.id[:8]} has no version {seq}")
        now, since = time.time(), self.store.last_replaced(m.id) or m.created_at
        with self.store.transaction():
            self.store.delete_version(m.id, chosen.seq)
            self.store.add_version(m.id, Version(0, m.content, m.content_hash, since, now, m.redactions))
            self.store.update(m.id, content=chosen.content, content_hash=chosen.content_hash, updated_at=now)
        self.sync_vectors()
        self._recent = None
        return self.get(m.id)

    def set_pinned(self, memory_id: str, pinned: bool) -> Memory:
        m = self.get(memory_id)
        with self.store.transaction():
            self.store.update(m.id, pinned=pinned, updated_at=time.time())
        return self.get(m.id)

    def set_forgotten(self, memory_id: str, forgotten: bool) -> Memory:
        m = self.get(memory_id)
        with self.store.transaction():
            self.store.update(m.id, forgotten=forgotten, updated_at=time.time())
        return self.get(m.id)

    def tag(self, memory_id: str, add: Iterable[str] = (), remove: Iterable[str] = ()) -> Memory:
        m = self.get(memory_id)
        drop = set(_clean_tags(remove))
        tags = [t for t in _clean_tags([*m.tags, *add]) if t not in drop]
        with self.store.transaction():
            self.store.update(m.id, tags=tags, updated_at=time.time())
        return self.get(m.id)

    def edit(self, memory_id: str, *, content: str | None = None, title: str | None = None) -> Memory:
        """Change a memory's text or title; new text is normalised, redacted and re-indexed."""
        m = self.get(memory_id)
        fields_: dict[str, Any] = {"updated_at": time.time()}
        if title is not None:
            fields_["title"] = redact(" ".join(title.split())[:200]).text
        if content is not None:
            red = redact(check_content(content, self.settings.max_bytes))
            fields_.update(content=red.text, content_hash=content_hash(red.text),
                           redactions=m.redactions + red.total)
        with self.store.transaction():
            self.store.update(m.id, **fields_)
        if content is not None:
            self.sync_vectors()
            self._recent = None
        return self.get(m.id)

    def purge(self, ids: Sequence[str]) -> int:
        """Delete for good from SQLite, the FTS index and Chroma."""
        full = [self.get(i).id for i in ids]
        with self.store.transaction():
            n = self.store.delete(full)
        self.sync_vectors()
        self.store.scrub()
        self._recent = None
        return n

    def erase_everything(self) -> int:
        """Purge every memory (the settings window's "Erase everything"); returns how many."""
        ids = sorted(self.store.all_ids())
        return self.purge(ids) if ids else 0

    def save_settings(self, new: Settings) -> Settings:
        """Write settings.json atomically and use the new values at once."""
        new.save(self.folder)
        self.settings = new
        return new

    def retention(self, *, older_than_days: float, below_importance: float = 1.0,
                  include_forgotten_only: bool = False, dry_run: bool = False) -> list[str]:
        """Purge memories older than N days and less important than a threshold; pinned are kept."""
        if older_than_days < 0:
            raise InvalidInput("the age must be zero or more days")
        cutoff = time.time() - older_than_days * 86400
        sql = ("SELECT id FROM memories WHERE pinned = 0 AND created_at < ? AND importance < ?"
               + (" AND forgotten = 1" if include_forgotten_only else ""))
        ids = [r[0] for r in self.store.rows(sql, (cutoff, below_importance))]
        if ids and not dry_run:
            self.purge(ids)
        return ids

    def stats(self) -> dict[str, Any]:
        s = self.store
        by_source = dict(s.rows("SELECT source, count(*) FROM memories WHERE forgotten = 0 GROUP BY source"))
        first, last = s.rows("SELECT min(created_at), max(created_at) FROM memories")[0]
        db_bytes = sum(p.stat().st_size for p in self.folder.glob(DB_NAME + "*"))
        vec_dir = self.folder / VECTORS_DIR
        vec_bytes = sum(p.stat().st_size for p in vec_dir.rglob("*") if p.is_file()) if vec_dir.exists() else 0
        from ..core.models import to_iso

        return {
            "data_dir": str(self.folder),
            "memories": s.count(),
            "forgotten": s.count(include_forgotten=True) - s.count(),
            "pinned": s.scalar("SELECT count(*) FROM memories WHERE pinned = 1 AND forgotten = 0"),
            "sessions": s.scalar("SELECT count(*) FROM sessions"),
            "by_source": by_source,
            "redacted_secrets": s.scalar("SELECT coalesce(sum(redactions), 0) FROM memories"),
            "oldest": to_iso(first),
            "newest": to_iso(last),
            "vector_queue": s.queue_length(),
            "database_bytes": db_bytes,
            "vector_bytes": vec_bytes,
            "schema_version": s.schema_version,
        }

    def doctor(self) -> dict[str, Any]:
        """Check every store and repair what can be repaired (the vector index)."""
        checks: dict[str, Any] = {"data_dir": str(self.folder), "schema_version": self.store.schema_version}
        checks["encryption"] = encryption.describe(self.folder, self.store.path)
        checks["sqlite_integrity"] = self.store.scalar("PRAGMA quick_check") == "ok"
        checks["fts_integrity"] = self.store.fts_integrity()
        checks["fts_rows_match"] = self.store.fts_count() == self.store.count(include_forgotten=True)
        try:
            self.embedder.encode(["doctor"])
            checks["embedding_model"] = "ok"
        except DesktopMemoryError as exc:
            checks["embedding_model"] = str(exc)
        repaired = self.reconcile(full=True)
        at_open, self._open_repairs = self._open_repairs or {}, None  # repaired when the index opened
        checks["vector_repairs"] = {k: n + at_open.get(k, 0) for k, n in repaired.items()}
        checks["vector_index"] = self.index_status()
        if checks["vector_index"]["state"] == "ok" and (last := self.store.get_meta(INDEX_REPAIR_KEY)):
            checks["vector_index"]["last_repair"] = json.loads(last)
        checks["vectors_match"] = self.vectors.count() == self.store.count(include_forgotten=True)
        checks["ok"] = all(v is True or v == "ok" for k, v in checks.items()
                           if k in ("sqlite_integrity", "fts_integrity", "fts_rows_match", "embedding_model",
                                    "vectors_match"))
        return checks

    # -- export -------------------------------------------------------------------------------
    def export_records(self, *, include_forgotten: bool = False) -> Iterator[dict[str, Any]]:
        """Records in the import format (plus the fields an import can carry back)."""
        with_versions = self.store.ids_with_versions()
        for m in self.store.iter_all(include_forgotten=include_forgotten):
            d = m.to_dict()
            record = {k: d[k] for k in ("content", "created_at", "source", "title", "tags", "pinned",
                                        "metadata", "source_app", "source_url", "importance")}
            if m.id in with_versions and (versions := self.store.versions(m.id)):
                record["versions"] = [{k: v for k, v in x.to_dict().items() if k != "seq"} for x in versions]
            yield record

    def export_markdown(self, *, include_forgotten: bool = False) -> Iterator[str]:
        yield "# desktop-memory export\n"
        for m in self.store.iter_all(include_forgotten=include_forgotten):
            d = m.to_dict()
            title = m.title or first_line(m.content, 70)
            meta = f"*{d['created_at']} · {m.source}" + (f" · {m.source_app}" if m.source_app else "")
            meta += (" · pinned" if m.pinned else "") + (f" · #{' #'.join(m.tags)}" if m.tags else "") + "*"
            yield f"\n## {title}\n\n{meta}\n\n{m.content}\n"


    # -- enrichment (the logic lives in engine/enrichment.py) ----------------------------------
    @property
    def enricher(self) -> Enricher:
        """The enrichment thread's controller (the thread starts on first use)."""
        if self._enricher is None:
            self._enricher = Enricher(self.store.path, self.settings, open_store=self._second_store,
                                      foreground=self.foreground)
        return self._enricher

    def _second_store(self) -> Store:
        """Another connection to the database, opened like the store's (same key), for the enrichment thread."""
        return Store(self.store.path, key=encryption.current_key(self.folder, self.store.path))

    def enrich(self, limit: int) -> EnrichReport:
        """Enrich up to `limit` queued memories now, in arrival order, and wait for it."""
        if limit < 1:
            raise InvalidInput("the limit must be at least 1")
        return self.enricher.enrich(limit)

    def enrichment_status(self) -> dict[str, Any]:
        return enrichment_status(self.store, self.settings, self._enricher)

    def start_enrichment(self) -> None:
        """Enrich new memories in the background, at low priority (for long-running hosts)."""
        self.enricher.start(background=True)

    def stop_enrichment(self) -> None:
        if self._enricher is not None:
            self._enricher.stop()

    def set_enrichment_model(self, path: str | None) -> dict[str, Any]:
        """Use another GGUF (None or "" for the bundled one); every memory is enriched again."""
        from ..engine.llm import check_model

        info = check_model(path or None)
        self.enricher.try_model(info)  # a truncated or unsupported file fails here, not later
        self.settings.llm_model_path = str(info.path) if path else ""
        self.settings.save(self.folder)
        if self._enricher is not None:
            self._enricher.reset_model()
        changed = self.store.enrichment_model_id() != info.model_id
        requeued = self.store.requeue_enrichment() if changed and self.store.enriched_count() else 0
        self.store.set_enrichment_model_id(info.model_id)
        return {"model": info.name, "path": str(info.path), "bytes": info.size, "requeued": requeued}

    def verify_enrichment_model(self) -> dict[str, Any]:
        """Load the configured model and enrich a sample sentence with it."""
        return self.enricher.verify_model()

    def requeue_enrichment(self) -> int:
        """Queue every memory for enrichment again; returns how many."""
        return self.store.requeue_enrichment()

    def retry_failed_enrichment(self) -> int:
        return self.store.retry_failed_enrichment()


def _best_at_least(ids: Sequence[str], sims: np.ndarray, threshold: float) -> str | None:
    """The id with the highest cosine if it reaches `threshold` (a near-duplicate), else None."""
    if not len(ids):
        return None
    best = int(np.argmax(sims))
    return ids[best] if sims[best] >= threshold else None


def open_service(folder: Path, **kwargs: Any) -> MemoryService:
    """Open the engine on a data folder (creating it), with a clear error if it is in use."""
    return MemoryService(Path(folder), **kwargs)
