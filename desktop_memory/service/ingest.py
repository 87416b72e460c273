"""Adding memories: one text at a time (`add`, a capture) or in batches (service/importing.py).

`Ingest` receives its collaborators (store, settings, embedder, vector sync, the embedding lane);
what it decides per text (duplicate, extension, look-alike) is in `dedupe`, `_insert` and
`_extension_of`. Only a capture may extend the previous one (`store_prepared`); a deliberate add
(`add`: `desktop-memory add`, MCP's add_memory) and an import always make a memory of their own.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from ..core.capture import CaptureResult, Snapshot
from ..core.errors import DesktopMemoryError
from ..core.models import Memory, Version
from ..core.passages import LONG_CHARS
from ..core.text import check_content, clean_tags, content_hash, first_line
from ..engine import records
from ..engine.embed import Embedder
from ..engine.settings import Settings
from ..engine.store import Store
from . import capture, vector_sync
from .reports import AddResult
from .vector_sync import VectorSync, no_vectors, passage_vectors

if TYPE_CHECKING:
    from ..core.redact import Redaction


def redact(text: str) -> Redaction:
    """core/redact.redact, imported on first use: its ~50 rules compile then, not when a search opens the folder."""
    from ..core.redact import redact as run

    return run(text)

EXTEND_WINDOW_S = 5 * 60  # a capture extending the previous one from its source within this replaces it


@dataclass
class Prepared:
    line: int
    memory: Memory
    redactions: dict[str, int]
    versions: list[Version] = field(default_factory=list)  # earlier texts an import carries back
    session: str = ""  # an import's session key: its memory goes into that key's session (Store.keyed_session)
    external_id: str = ""  # an import's identity in its source (metadata.external_id; service/importing.py)


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


def best_at_least(ids: Sequence[str], sims: np.ndarray, threshold: float) -> str | None:
    """The id with the highest cosine if it reaches `threshold` (a near-duplicate), else None."""
    if not len(ids):
        return None
    best = int(np.argmax(sims))
    return ids[best] if sims[best] >= threshold else None


class Ingest:
    """The ingest pipeline: prepare, deduplicate, embed, relate look-alikes, commit."""

    def __init__(self, store: Store, settings: Settings, embedder: Embedder, vectors: VectorSync,
                 embed_lane: ThreadPoolExecutor) -> None:
        self.store = store
        self.settings = settings
        self.embedder = embedder
        self.vectors = vectors
        self.embed_lane = embed_lane
        self._recent: tuple[list[str], np.ndarray] | None = None
        self.on_stored: Callable[[], None] = lambda: None  # memories committed (the facade wakes the enricher)

    def forget_recent(self) -> None:
        """Texts changed or vectors were dropped: read the look-alike window again when next needed."""
        self._recent = None

    # -- one text -----------------------------------------------------------------------------
    def prepare(self, content: str | bytes, *, source: str, title: str = "", tags: Iterable[Any] = (),
                pinned: bool = False, metadata: dict[str, Any] | None = None, created_at: float | None = None,
                source_app: str = "", source_url: str = "", importance: float | None = None,
                ) -> tuple[Memory, dict[str, int]]:
        """Check every field (engine/records.py), normalise and redact: a memory ready to store."""
        f = records.check_fields(source=source, title=title, tags=tags, pinned=pinned, metadata=metadata,
                                 created_at=created_at, source_app=source_app, source_url=source_url,
                                 importance=importance)
        text = check_content(content if isinstance(content, str) else content.decode("utf-8", "replace"),
                             self.settings.max_bytes)
        red = redact(text)
        counts = dict(red.counts)
        title_r = redact(" ".join(f.title.split())[:200])
        for kind, n in title_r.counts.items():
            counts[kind] = counts.get(kind, 0) + n
        meta = _redact_json(f.metadata, counts)
        now = time.time()
        memory = Memory(
            id=str(uuid.uuid4()), content=red.text, source=f.source.strip().lower()[:32] or "manual",
            title=title_r.text, source_app=f.source_app[:200], source_url=f.source_url[:2000],
            tags=clean_tags(f.tags), importance=0.5 if f.importance is None else f.importance,
            pinned=f.pinned, created_at=f.created_at if f.created_at is not None else now, updated_at=now,
            content_hash=content_hash(red.text), metadata=meta, redactions=sum(counts.values()),
        )
        return memory, counts

    def add(self, content: str | bytes, *, source: str = "manual", **fields: Any) -> AddResult:
        """Remember one text; it is searchable on return (its vector may wait in the queue).

        A deliberate add is never merged into the memory before it, however it continues that text: the
        person (or an agent) asked for two memories. An exact repeat still bumps the stored one.
        """
        memory, counts = self.prepare(content, source=source, **fields)
        return self._store_batch([Prepared(0, memory, counts)], extend=False)[0]

    def capture(self, snapshot: Snapshot) -> CaptureResult:
        """A copy as plain data -> saved or skipped, with the reason (the rules and redaction: service/capture.py)."""
        return capture.capture(snapshot, self.settings, self.prepare, self.store_prepared)

    def store_prepared(self, memory: Memory, counts: dict[str, int]) -> AddResult:
        """Store a capture `prepare` made (it passed its rules), like `add`, except that a capture strictly
        extending the previous one from its source and app replaces it (a selection growing, an answer
        streaming): the one in-place update, the earlier text kept as a version."""
        return self._store_batch([Prepared(0, memory, counts)], extend=True)[0]

    def store_record(self, p: Prepared) -> AddResult:
        """A prepared record (a browser's exchange: its session and identity kept) stored as `add` stores a text."""
        return self._store_batch([p], extend=False)[0]

    def _store_batch(self, prepared: list[Prepared], *, extend: bool) -> list[AddResult]:
        """Dedupe, embed, relate look-alikes and commit one batch (`add`).

        The vectors stay queued for Chroma until PENDING_FLUSH wait (or the service closes): Chroma's
        upsert of one vector costs ~16 ms at 100k memories, of 32 little more. Searches meanwhile
        score queued memories from their vector copies, so a new memory is found by meaning at once.
        """
        results, fresh, later = self.dedupe(prepared, set())
        if fresh:
            self.vectors.embedding_ready()
        vecs = self.embedder.encode([p.memory.content for p in fresh]) if fresh else no_vectors()
        results += self.commit(fresh, vecs, later, index=False, extend=extend)
        flush = vector_sync.PENDING_FLUSH
        if len(self.store.vectors.queued_upserts(flush)) >= flush:
            self.vectors.write_waiting()  # committed: a full disk now must not fail the add
        return results

    # -- the look-alike window ----------------------------------------------------------------
    def _recent_vectors(self) -> tuple[list[str], np.ndarray]:
        if self._recent is None:
            ids = self.store.recent(self.settings.near_duplicate_window)
            found = self.vectors.vectors_of(ids) if ids else {}
            keep = [i for i in ids if i in found]
            mat = np.stack([found[i] for i in keep]) if keep else no_vectors()
            self._recent = (keep, mat)
        return self._recent

    def _remember_recent(self, ids: list[str], vecs: np.ndarray) -> None:
        old_ids, old = self._recent_vectors()
        window = self.settings.near_duplicate_window
        self._recent = ((ids[::-1] + old_ids)[:window], np.concatenate([vecs[::-1], old])[:window])

    # -- decisions per text -------------------------------------------------------------------
    def _bump(self, existing: Memory, new: Memory) -> Memory:
        """An exact duplicate: the stored memory is seen again (tags and pin added, un-forgotten)."""
        tags = clean_tags([*existing.tags, *new.tags])
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

    def dedupe(self, prepared: list[Prepared], in_flight: set[str]
                ) -> tuple[list[AddResult], list[Prepared], list[Prepared]]:
        """Bump exact duplicates of stored memories; returns (their results, texts to embed, texts
        whose hash is `in_flight` in a batch not committed yet or repeats one of `prepared`: `commit`
        checks these again once the text they repeat is stored)."""
        results: list[AddResult] = []
        fresh: list[Prepared] = []
        later: list[Prepared] = []
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

    def commit(self, fresh: list[Prepared], vecs: np.ndarray, later: Sequence[Prepared] = (),
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
            more, unseen, again = self.dedupe(list(later), set())
            results += more
            if unseen:  # a text the batch before it did not store after all: embedded now
                self.vectors.embedding_ready()
                vecs = self.embedder.encode([p.memory.content for p in unseen])
                results += self._insert(unseen, vecs, to_index, extend)
            if again:
                more, _, _ = self.dedupe(again, set())
                results += more
        if index:
            self.vectors.index_and_dequeue(to_index)
        if any(r.status != "duplicate" for r in results):
            self.on_stored()  # committed: new or changed texts wait for enrichment
        return results

    def _insert(self, fresh: list[Prepared], vecs: np.ndarray, to_index: dict[str, np.ndarray],
                extend: bool) -> list[AddResult]:
        """One transaction: each text extends, joins a family of look-alikes, or starts its own."""
        results: list[AddResult] = []
        recent_ids, recent = self._recent_vectors()
        threshold = self.settings.near_duplicate_cosine
        # all cosines at once: each text against the recent memories and against this batch
        to_recent = vecs @ recent.T if len(recent) else None
        to_batch = vecs @ vecs.T
        # the passages of long texts, embedded before the transaction and written in it with their memory
        passages = passage_vectors(self.embedder, [p.memory.content for p in fresh])
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
                    if len(m.content) > LONG_CHARS:
                        self.store.passages.put(prev.id, passages[row])
                    continue
                target = best_at_least(new_ids, to_batch[row, new_rows], threshold)
                if target is None and to_recent is not None:
                    target = best_at_least(recent_ids, to_recent[row], threshold)
                existing = self._get_or_none(target) if target else None
                if existing is not None:
                    self._relate(existing, m)
                title = m.title or first_line(m.content, 60)
                m.session_id = (self.store.keyed_session(p.session, m.source, m.source_app, title, m.created_at)
                                if p.session else self.store.session_for(m.source, m.source_app, m.created_at, title))
                self.store.insert(m)
                if len(m.content) > LONG_CHARS:  # short texts are never queued
                    self.store.passages.put(m.id, passages[row])
                self._keep_versions(m.id, p.versions)
                new_ids.append(m.id)
                new_rows.append(row)
                mine[m.id] = vec
                results.append(AddResult(m, "related" if existing is not None else "added", p.redactions))
            self.store.vectors.put(mine.items())
        to_index.update(mine)
        if len(mine) > len(new_ids):
            self._recent = None  # an extended memory's vector changed: read the window again
        elif new_ids:
            self._remember_recent(new_ids, vecs[new_rows])
        return results

    def _get_or_none(self, memory_id: str) -> Memory | None:
        try:
            return self.store.get(memory_id)
        except DesktopMemoryError:
            return None
