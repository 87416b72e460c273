"""The enrichment queue (m003) and enrichment results in the memories table.

`EnrichmentQueue` is the store's `enrichment` part (engine/store.py): every enrichment read and write goes
through it, on the connection of the thread that owns the store (the engine's store, or the enrichment
thread's own `Store`).
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Any

import apsw

from ..core.enrich import Enrichment
from .store_sql import scalar

RETRY_BASE_S = 5.0  # a failed job waits 5 s, 10 s, 20 s... before its next attempt
MODEL_KEY = "enrichment_model"  # meta: the model that enriched the memories
HEALTH_KEY = "model_health"  # meta: the model worker's crashes in a row (engine/enrichment.py's breaker)


@dataclass(frozen=True)
class EnrichmentJob:
    """One row of the queue."""

    seq: int
    memory_id: str
    attempts: int


@dataclass(frozen=True)
class EnrichmentInput:
    """What enriching a memory reads of it."""

    content: str
    pinned: bool
    repeats: int
    content_hash: str


class EnrichmentQueue:
    """The store's `enrichment` part: the queue and the enrichment columns.

    Each write is a transaction of its own (`transaction` is the store's, so one already open is joined).
    """

    def __init__(self, db: apsw.Connection, transaction: Callable[[], AbstractContextManager[None]]) -> None:
        self.db = db
        self.transaction = transaction

    # -- reading ------------------------------------------------------------------------------
    def next_job(self, now: float | None = None) -> EnrichmentJob | None:
        """The oldest queued job that may run now."""
        row = self.db.execute(
            "SELECT seq, memory_id, attempts FROM enrichment_queue WHERE state = 'queued' AND not_before <= ? "
            "ORDER BY seq LIMIT 1", (now if now is not None else time.time(),)).fetchone()
        return EnrichmentJob(*row) if row else None

    def counts(self) -> dict[str, int]:
        """Jobs waiting (`queued`) and given up on (`failed`)."""
        rows: dict[str, int] = dict(self.db.execute("SELECT state, count(*) FROM enrichment_queue GROUP BY state"))
        return {"queued": int(rows.get("queued", 0)), "failed": int(rows.get("failed", 0))}

    def states(self) -> dict[str, int]:
        """Memories per `enrichment_state` (pending, done, basic, failed)."""
        rows = self.db.execute("SELECT enrichment_state, count(*) FROM memories GROUP BY enrichment_state")
        return {str(state): int(n) for state, n in rows}

    def enriched_count(self) -> int:
        """Memories enriched at least once."""
        return int(scalar(self.db, "SELECT count(*) FROM memories WHERE enriched_at IS NOT NULL"))

    def rate_per_minute(self, window_s: float = 3600) -> float | None:
        """Memories enriched per minute over the last hour of enrichment work (None if too few)."""
        n, first, last = next(self.db.execute(
            "SELECT count(*), min(enriched_at), max(enriched_at) FROM memories WHERE enriched_at >= ?",
            (time.time() - window_s,)))
        if n < 2 or last <= first:
            return None
        return round((n - 1) / (last - first) * 60, 1)

    def job_input(self, memory_id: str) -> EnrichmentInput | None:
        """The text and signals of a queued memory (None when it was deleted meanwhile)."""
        row = self.db.execute("SELECT content, pinned, access_count, content_hash FROM memories WHERE id = ?",
                              (memory_id,)).fetchone()
        return None if row is None else EnrichmentInput(row[0], bool(row[1]), int(row[2]), row[3])

    def model_id(self) -> str | None:
        value = scalar(self.db, "SELECT value FROM meta WHERE key = ?", (MODEL_KEY,))
        return None if value is None else str(value)

    # -- writing ------------------------------------------------------------------------------
    def set_model_id(self, model_id: str) -> None:
        with self.transaction():
            self.db.execute("INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)", (MODEL_KEY, model_id))

    def model_health(self) -> dict[str, Any]:
        """The model worker's recent crashes ({} when it last worked): model_id, version, crashes, reason."""
        value = scalar(self.db, "SELECT value FROM meta WHERE key = ?", (HEALTH_KEY,))
        try:
            health = json.loads(value) if value else {}
        except ValueError:
            return {}
        return health if isinstance(health, dict) else {}

    def set_model_health(self, health: dict[str, Any]) -> None:
        with self.transaction():
            if health:
                self.db.execute("INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)", (HEALTH_KEY, _json(health)))
            else:
                self.db.execute("DELETE FROM meta WHERE key = ?", (HEALTH_KEY,))

    def requeue_all(self) -> int:
        """Queue every memory again (the model changed); failed jobs get a fresh start. Returns how many."""
        with self.transaction():
            self.db.execute("DELETE FROM enrichment_queue")
            self.db.execute("INSERT INTO enrichment_queue(memory_id) SELECT id FROM memories ORDER BY rowid")
            self.db.execute("UPDATE memories SET enrichment_state = 'pending'")
            return int(scalar(self.db, "SELECT count(*) FROM enrichment_queue"))

    def retry_failed(self) -> int:
        """Give every failed job another round of attempts, and those waiting for their next attempt a try now;
        returns how many."""
        with self.transaction():
            self.db.execute("UPDATE enrichment_queue SET state = 'queued', attempts = 0, not_before = 0 "
                            "WHERE state = 'failed' OR (state = 'queued' AND attempts > 0)")
            return self.db.changes()

    def drop_job(self, job: EnrichmentJob) -> None:
        with self.transaction():
            self.db.execute("DELETE FROM enrichment_queue WHERE seq = ?", (job.seq,))

    def finish(self, job: EnrichmentJob, result: Enrichment, content_hash: str, state: str) -> bool:
        """Store a result unless the memory changed meanwhile; the job leaves the queue either way.

        A title or importance the person set (differs from what enrichment wrote last) is kept.
        """
        with self.transaction():
            row = self.db.execute("SELECT title, enriched_title, importance, enriched_importance FROM memories "
                                  "WHERE id = ? AND content_hash = ?", (job.memory_id, content_hash)).fetchone()
            if row is not None:
                self._write_result(job.memory_id, result, state, *row)
            self.db.execute("DELETE FROM enrichment_queue WHERE seq = ?", (job.seq,))
        return row is not None

    def _write_result(self, memory_id: str, result: Enrichment, state: str, title: str | None,
                      old_title: str | None, importance: float, old_importance: float | None) -> None:
        if title and title != old_title:
            result.title = title  # the person's own title stays
            new_title = old_title
        else:
            new_title = result.title
        keep_importance = importance != 0.5 and importance != old_importance
        self.db.execute(
            "UPDATE memories SET summary = ?, title = ?, importance = ?, entities = ?, "
            "enrichment_state = ?, enriched_at = ?, enriched_by = ?, enriched_title = ?, "
            "enriched_importance = ? WHERE id = ?",
            (result.summary, result.title, importance if keep_importance else result.importance,
             _json(result.entities), state, time.time(), result.by, new_title,
             None if keep_importance else result.importance, memory_id))

    def fail(self, job: EnrichmentJob, error: str, max_attempts: int) -> bool:
        """Count a failed attempt; returns True when the job is now marked failed for good."""
        attempts = job.attempts + 1
        final = attempts >= max_attempts
        with self.transaction():
            self.db.execute(
                "UPDATE enrichment_queue SET attempts = ?, last_error = ?, state = ?, not_before = ? WHERE seq = ?",
                (attempts, error[:300], "failed" if final else "queued",
                 time.time() + RETRY_BASE_S * 2 ** (attempts - 1), job.seq))
            if final:
                self.db.execute("UPDATE memories SET enrichment_state = 'failed' WHERE id = ?", (job.memory_id,))
        return final

    def keep_entities(self, memory_id: str, content_hash: str, entities: list[dict[str, str]], by: str) -> None:
        """A job failed for good: keep the entities found deterministically (unless the text changed)."""
        with self.transaction():
            self.db.execute("UPDATE memories SET entities = ?, enriched_at = ?, enriched_by = ? "
                            "WHERE id = ? AND content_hash = ?",
                            (_json(entities), time.time(), by, memory_id, content_hash))


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)

