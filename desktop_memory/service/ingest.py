"""Adding memories: one text (`add`) or JSON Lines (`import_records`), normalised, redacted, deduplicated.

`Ingest` receives its collaborators (store, settings, embedder, vector sync, the embedding lane);
what it decides per text (duplicate, extension, look-alike) is in `_dedupe`, `_insert` and
`_extension_of`.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..core.errors import DesktopMemoryError, InvalidInput
from ..core.models import Memory, Version, from_iso
from ..core.redact import redact
from ..core.text import check_content, clean_tags, content_hash, decode, first_line
from ..engine import failures, records
from ..engine.embed import Embedder
from ..engine.settings import Settings
from ..engine.store import Store
from . import vector_sync
from .vector_sync import VectorSync, no_vectors

IMPORT_BATCH = 256
IMPORT_BATCH_BYTES = 8 * 1024 * 1024  # and at most this much text per batch (two are in flight): bounded memory
EXTEND_WINDOW_S = 5 * 60  # a capture extending the previous one from its source within this replaces it


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

    def count(self, result: AddResult) -> None:
        """Count one stored record."""
        if result.status == "added":
            self.added += 1
        elif result.status == "related":
            self.related += 1
        else:
            self.duplicates += 1
        self.redacted += sum(result.redactions.values())

    def to_dict(self) -> dict[str, Any]:
        return {"added": self.added, "duplicates": self.duplicates, "related": self.related,
                "redacted": self.redacted, "errors": [{"line": n, "error": e} for n, e in self.errors]}


@dataclass
class _Prepared:
    line: int
    memory: Memory
    redactions: dict[str, int]
    versions: list[Version] = field(default_factory=list)  # earlier texts an import carries back


@dataclass
class _Batch:
    """One import batch between its embedding (on the lane) and its commit."""

    results: list[AddResult]
    fresh: list[_Prepared]
    later: list[_Prepared]
    vectors: Future[np.ndarray] | None
    lines: list[_Prepared]


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
        """Remember one text; it is searchable on return (its vector may wait in the queue)."""
        memory, counts = self.prepare(content, source=source, **fields)
        return self._store_batch([_Prepared(0, memory, counts)])[0]

    def store_prepared(self, memory: Memory, counts: dict[str, int]) -> AddResult:
        """Store a memory `prepare` made (a capture that passed its rules), like `add`."""
        return self._store_batch([_Prepared(0, memory, counts)])[0]

    def _store_batch(self, prepared: list[_Prepared]) -> list[AddResult]:
        """Dedupe, embed, relate look-alikes and commit one batch (`add`).

        The vectors stay queued for Chroma until PENDING_FLUSH wait (or the service closes): Chroma's
        upsert of one vector costs ~16 ms at 100k memories, of 32 little more. Searches meanwhile
        score queued memories from their vector copies, so a new memory is found by meaning at once.
        """
        results, fresh, later = self._dedupe(prepared, set())
        if fresh:
            self.vectors.embedding_ready()
        vecs = self.embedder.encode([p.memory.content for p in fresh]) if fresh else no_vectors()
        results += self._commit(fresh, vecs, later, index=False, extend=True)
        flush = vector_sync.PENDING_FLUSH
        if len(self.store.queued_upserts(flush)) >= flush:
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
                self.vectors.embedding_ready()
                vecs = self.embedder.encode([p.memory.content for p in unseen])
                results += self._insert(unseen, vecs, to_index, extend)
            if again:
                more, _, _ = self._dedupe(again, set())
                results += more
        if index:
            self.vectors.index_and_dequeue(to_index)
        if any(r.status != "duplicate" for r in results):
            self.on_stored()  # committed: new or changed texts wait for enrichment
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
                target = best_at_least(new_ids, to_batch[row, new_rows], threshold)
                if target is None and to_recent is not None:
                    target = best_at_least(recent_ids, to_recent[row], threshold)
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

    def _get_or_none(self, memory_id: str) -> Memory | None:
        try:
            return self.store.get(memory_id)
        except DesktopMemoryError:
            return None

    # -- JSON Lines ---------------------------------------------------------------------------
    def import_records(self, lines: Iterable[str | bytes | records.Overlong], *,
                       progress: Callable[[ImportReport], None] | None = None) -> ImportReport:
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
        waiting: list[_Batch] = []
        through = 0  # the last line of the last batch acknowledged

        def finish() -> None:
            nonlocal through
            b = waiting.pop()
            vecs = b.vectors.result() if b.vectors is not None else no_vectors()
            for r in b.results + self._commit(b.fresh, vecs, b.later):
                report.count(r)
            through = b.lines[-1].line
            if progress:
                progress(report)

        def flush() -> None:
            nonlocal size
            in_flight = {p.memory.content_hash for p in waiting[0].fresh} if waiting else set()
            results, fresh, later = self._dedupe(batch, in_flight)
            vectors = None
            if fresh:
                self.vectors.embedding_ready()
                vectors = self.embed_lane.submit(self.embedder.encode, [p.memory.content for p in fresh])
            if waiting:
                finish()
            waiting.append(_Batch(results, fresh, later, vectors, list(batch)))
            batch.clear()
            size = 0

        try:
            for number, raw in enumerate(lines, start=1):
                if (p := self._line(number, raw, limit, report)) is None:
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
            unacknowledged = [p for b in waiting for p in b.lines] + batch
            error = failures.storage_error(exc, detail=self._how_far(report, through, unacknowledged))
            if error is None:
                raise
            raise error from exc
        finally:  # after an error, let the batch being embedded finish before the engine is used again
            for b in waiting:
                if b.vectors is not None:
                    wait([b.vectors])
        return report

    def _line(self, number: int, raw: str | bytes | records.Overlong, limit: int,
              report: ImportReport) -> _Prepared | None:
        """One line prepared, or None (blank, or bad: its error added to the report)."""
        if isinstance(raw, records.Overlong) or len(raw) > limit:
            too_long = raw if isinstance(raw, records.Overlong) else records.Overlong(len(raw), limit)
            report.errors.append((number, too_long.reason()))
            return None
        if isinstance(raw, bytes):
            raw = decode(raw)
        if not raw.strip():
            return None
        try:
            return _Prepared(number, *self._record(raw))
        except InvalidInput as exc:
            report.errors.append((number, str(exc)))
            return None

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
        return *self.prepare(
            rec.content, source=rec.source or "import", title=rec.title, tags=rec.tags, pinned=rec.pinned,
            metadata=rec.metadata, created_at=rec.created_at, source_app=rec.source_app,
            source_url=rec.source_url, importance=rec.importance,
        ), self._import_versions([v.model_dump() for v in rec.versions])

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
