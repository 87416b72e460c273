"""Importing JSON Lines: pipelined batches of records, each line checked, every batch acknowledged once
committed; a failure says how far the import got.

`Importer` drives the ingest component (service/ingest.py): its dedupe and commit steps, its embedder
on the embedding lane.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable, Iterable
from concurrent.futures import Future, wait
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..core.errors import InvalidInput
from ..core.models import Version, from_iso
from ..core.text import check_content, content_hash, decode
from ..engine import failures, records
from ..engine.store import IMPORT_SESSIONS
from .ingest import Ingest, Prepared, redact
from .reports import IMPORT_BATCH, IMPORT_BATCH_BYTES, AddResult, ImportReport
from .vector_sync import no_vectors


@dataclass
class _Batch:
    """One import batch between its embedding (on the lane) and its commit."""

    results: list[AddResult]
    fresh: list[Prepared]
    later: list[Prepared]
    vectors: Future[np.ndarray] | None
    lines: list[Prepared]
    ids: frozenset[str]  # the external ids of its lines


class Importer:
    """JSON Lines into the store, through the ingest pipeline."""

    def __init__(self, ingest: Ingest) -> None:
        self.ingest = ingest
        self._changed = False  # an import updated a stored memory's text (its vector is queued again)

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

        A record with an `external_id` (its identity in another tool's export, imports/feed.py) that is stored
        already is not added again: the same text is a duplicate (nothing written), another text (an answer
        regenerated or edited in a newer export) replaces the stored one, which is kept as a version
        (`updated`). An `external_id` repeated within the import while its first record is not committed yet (a
        later line, a newer text of the same message) waits until it is, then is handled the same way; only the
        ids of the batches not committed are held. Records with a `session` key go into one session per key
        (`Store.keyed_session`) in the transaction that stores them, so the exchanges of one conversation are
        neighbours whatever their times.
        """
        ingest = self.ingest
        report = ImportReport()
        limit = records.line_limit(self.ingest.settings.max_bytes)
        batch: list[Prepared] = []
        batch_ids: set[str] = set()  # the external ids in `batch`
        size = 0  # characters of text in `batch`
        waiting: list[_Batch] = []
        deferred: list[Prepared] = []  # an external id repeated while its first record is not committed
        through = 0  # the last line of the last batch acknowledged

        def in_flight(external_id: str) -> bool:
            return external_id in batch_ids or any(external_id in b.ids for b in waiting)

        def take(p: Prepared) -> None:
            nonlocal size
            batch.append(p)
            if p.external_id:
                batch_ids.add(p.external_id)
            size += len(p.memory.content) + sum(len(v.content) for v in p.versions)

        def settle() -> None:
            """The deferred records whose first record is committed now: known (a duplicate or an update), or
            (the first was not stored under its id after all) taken into the batch."""
            still = []
            for p in deferred:
                if in_flight(p.external_id):
                    still.append(p)
                elif not self._known(p, report):
                    take(p)
            deferred[:] = still

        def finish() -> None:
            nonlocal through
            b = waiting[0]  # stays "unacknowledged" until its commit and what follows it have returned
            vecs = b.vectors.result() if b.vectors is not None else no_vectors()
            results = b.results + ingest.commit(b.fresh, vecs, b.later)
            for r in results:
                report.count(r)
            through = b.lines[-1].line
            waiting.pop(0)
            if progress:
                progress(report)

        def flush() -> None:
            nonlocal size
            in_flight = {p.memory.content_hash for p in waiting[0].fresh} if waiting else set()
            results, fresh, later = ingest.dedupe(batch, in_flight)
            vectors = None
            if fresh:
                ingest.vectors.embedding_ready()
                vectors = ingest.embed_lane.submit(ingest.embedder.encode, [p.memory.content for p in fresh])
            if waiting:
                finish()
            waiting.append(_Batch(results, fresh, later, vectors, list(batch), frozenset(batch_ids)))
            batch.clear()
            batch_ids.clear()
            size = 0

        try:
            for number, raw in enumerate(lines, start=1):
                if (p := self._line(number, raw, limit, report)) is None:
                    continue
                if p.external_id:
                    if in_flight(p.external_id):
                        deferred.append(p)
                        continue
                    if self._known(p, report):
                        continue
                take(p)
                if len(batch) >= IMPORT_BATCH or size >= IMPORT_BATCH_BYTES:
                    flush()
                    settle()
            while batch or waiting or deferred:
                if batch:
                    flush()
                elif waiting:
                    finish()
                settle()
            if self._changed:  # the new texts of updated memories: embedded and indexed now
                self._changed = False
                ingest.forget_recent()
                ingest.vectors.sync()
                ingest.on_stored()
        except Exception as exc:
            unacknowledged = [p for b in waiting for p in b.lines] + batch + deferred
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
              report: ImportReport) -> Prepared | None:
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
            return self._record(number, raw)
        except InvalidInput as exc:
            report.errors.append((number, str(exc)))
            return None

    def store_one(self, p: Prepared) -> AddResult:
        """One record with an identity in its source, at once (a browser's exchange, service/web.py): handled as
        an import line is (`_known`: a duplicate, or another text replacing the stored one, `updated`), else
        added into its session."""
        report = ImportReport()
        existing = self.ingest.store.by_external_id(p.external_id) if p.external_id else None
        if existing is None or not self._known(p, report):
            return self.ingest.store_record(p)
        if self._changed:  # the new text: embedded and indexed now, as at the end of an import
            self._changed = False
            self.ingest.forget_recent()
            self.ingest.vectors.sync()
            self.ingest.on_stored()
        return AddResult(self.ingest.store.get(existing.id), "updated" if report.updated else "duplicate",
                         p.redactions)

    def _known(self, p: Prepared, report: ImportReport) -> bool:
        """True when the record's identity in its source is stored already (then counted here): the same text is
        a duplicate, nothing written but what a newer export adds (a version, the session); another text
        replaces the stored one, kept as a version."""
        store = self.ingest.store
        session = p.session
        if not p.external_id or (existing := store.by_external_id(p.external_id)) is None:
            return False
        new = p.memory
        have = {v.content_hash for v in store.versions(existing.id)} | {existing.content_hash}
        versions = [v for v in p.versions if v.content_hash not in have]
        if new.content_hash != existing.content_hash:
            versions.append(Version(0, existing.content, existing.content_hash, existing.created_at,
                                    new.updated_at, existing.redactions))
        sid = str(uuid.uuid5(IMPORT_SESSIONS, session)) if session else existing.session_id
        if versions or new.content_hash != existing.content_hash or sid != existing.session_id:
            with store.transaction():
                for v in versions:
                    store.add_version(existing.id, v)
                if new.content_hash != existing.content_hash:
                    store.update(existing.id, content=new.content, content_hash=new.content_hash,
                                 redactions=max(existing.redactions, new.redactions), updated_at=new.updated_at)
                if session:
                    store.join_keyed_session(existing.id, session, source=new.source, source_app=new.source_app,
                                             title=new.title or existing.title, at=existing.created_at)
        if new.content_hash != existing.content_hash:
            report.updated += 1
            report.redacted += sum(p.redactions.values())
            self._changed = True
        else:
            report.count(AddResult(existing, "duplicate", {}))
        return True

    def _how_far(self, report: ImportReport, through: int, unacknowledged: list[Prepared]) -> str:
        """How far an import that stopped got: what is stored (acknowledged or not) and where it ended."""
        stored = report.stored
        contiguous = last = through  # every good line up to `contiguous` is stored; none after `last`
        gap = False
        for p in sorted(unacknowledged, key=lambda p: p.line):
            try:
                kept = self.ingest.store.by_hash(p.memory.content_hash) is not None
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

    def _record(self, number: int, raw: str) -> Prepared:
        """One import line, validated (engine/records.py), then prepared like any text given to `add`."""
        rec = records.parse_line(raw)
        metadata = {**rec.metadata, "external_id": rec.external_id} if rec.external_id else rec.metadata
        memory, counts = self.ingest.prepare(
            rec.content, source=rec.source or "import", title=rec.title, tags=rec.tags, pinned=rec.pinned,
            metadata=metadata, created_at=rec.created_at, source_app=rec.source_app,
            source_url=rec.source_url, importance=rec.importance,
        )
        return Prepared(number, memory, counts, self._import_versions([v.model_dump() for v in rec.versions]),
                        rec.session, rec.external_id)

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
            red = redact(check_content(v["content"], self.ingest.settings.max_bytes))
            try:
                created, replaced = (from_iso(str(v[k])) if v.get(k) else time.time()
                                     for k in ("created_at", "replaced_at"))
            except (ValueError, OverflowError, OSError):
                raise InvalidInput(f'{shape}; the times in ISO 8601') from None
            out.append(Version(0, red.text, content_hash(red.text), created, replaced, red.total))
        return out
