"""Background enrichment: a durable SQLite job queue and the one thread that owns the language model.

Each memory gets a title, a summary (short texts are their own summary), an importance score and typed
entities. Deterministic extractors always run; the model (when it loads) adds names, types, a title, a
summary for long texts and a nudge to importance. Jobs are queued by triggers (m003) in the same
transaction as the memory, processed in arrival order, retried a bounded number of times, then marked.
"""

from __future__ import annotations

import logging
import os
import re
import sys
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator
from concurrent.futures import Future
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import apsw

from ..core import extract as ex
from ..core.errors import DesktopMemoryError, ModelUnavailable
from ..core.importance import blend, signals
from .foreground import Foreground
from .llm import LocalModel, ModelInfo, check_model, default_threads, prompt
from .settings import Settings

log = logging.getLogger(__name__)
T = TypeVar("T")

DETERMINISTIC = "patterns"
POLL_S = 2.0
RETRY_BASE_S = 5.0
PROMPT_RESERVE_TOKENS = 380  # prompt text around the note, plus the answer
# The grammar bounds every string (in characters), so these budgets let almost every answer finish;
# an answer cut short anyway is treated as no answer (the deterministic part is stored).
MAX_TOKENS_SHORT = 160
MAX_TOKENS_LONG = 260
MODEL_ENTITY_TYPES = ["person", "organisation", "product", "place"]
_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9\"“(])")
_WORDS = re.compile(r"\w+", re.UNICODE)


def _schema(with_summary: bool) -> dict[str, Any]:
    props: dict[str, Any] = {
        "title": {"type": "string", "minLength": 3, "maxLength": 50},
        "entities": {
            "type": "array", "maxItems": 4,
            "items": {"type": "object",
                      "properties": {"text": {"type": "string", "minLength": 2, "maxLength": 30},
                                     "type": {"type": "string", "enum": MODEL_ENTITY_TYPES}},
                      "required": ["text", "type"]},
        },
        "importance": {"type": "integer", "enum": [1, 2, 3, 4, 5]},
    }
    if with_summary:
        props["summary"] = {"type": "string", "minLength": 10, "maxLength": 240}
    return {"type": "object", "properties": props, "required": list(props)}


# -- turning one text into an enrichment ------------------------------------------------------
@dataclass
class Enrichment:
    """What enrichment found for one text."""

    title: str
    summary: str
    importance: float
    entities: list[dict[str, str]]
    by: str  # the model id, or "patterns" when only the deterministic part ran


def _mostly_from(candidate: str, text: str, share: float) -> bool:
    """True when at least `share` of the candidate's words occur in the text (no invented content)."""
    words = [w.lower() for w in _WORDS.findall(candidate)]
    if not words:
        return False
    known = {w.lower() for w in _WORDS.findall(text)}
    return sum(w in known for w in words) / len(words) >= share


def _good_title(title: str, text: str) -> bool:
    """2-10 words, mostly from the text, and not just a long stretch of it copied."""
    words = title.split()
    if not (2 <= len(words) <= 10 and len(title) <= 80 and _mostly_from(title, text, 0.75)):
        return False
    return not (len(words) > 5 and " ".join(title.lower().split()) in " ".join(text.lower().split()))


def lead_summary(text: str, limit: int = 240) -> str:
    """The first one or two sentences of a text, cut at a word boundary."""
    flat = " ".join(text.split())
    sentences = _SENTENCE.split(flat[: limit * 3])
    out = sentences[0]
    if len(sentences) > 1 and len(out) + len(sentences[1]) < limit:
        out += " " + sentences[1]
    if len(out) > limit:
        out = out[:limit].rsplit(" ", 1)[0].rstrip(",;:") + "…"
    return out


def _model_fields(model: LocalModel, text: str, with_summary: bool, n_ctx: int) -> dict[str, Any]:
    text = model.truncate(text, max(64, n_ctx - PROMPT_RESERVE_TOKENS - (120 if with_summary else 0)))
    user = prompt("enrich_user_summary.txt" if with_summary else "enrich_user.txt").replace("{text}", text)
    return model.json_completion(prompt("enrich_system.txt"), user, _schema(with_summary),
                                 max_tokens=MAX_TOKENS_LONG if with_summary else MAX_TOKENS_SHORT)


def enrich_text(
    text: str,
    *,
    model: LocalModel | None = None,
    pinned: bool = False,
    repeats: int = 0,
    summary_chars: int = 280,
    n_ctx: int = 2048,
) -> Enrichment:
    """Deterministic extraction, combined with the model's answer when a model is given."""
    found = ex.extract(text)
    long_text = len(text) > summary_chars
    data: dict[str, Any] = {}
    if model is not None:
        data = _model_fields(model, text, long_text, n_ctx)
    model_entities = []
    for item in data.get("entities") or []:
        if isinstance(item, dict) and (kind := ex.normalise_type(item.get("type"))):
            model_entities.append(ex.Entity(str(item.get("text") or ""), kind))
    entities = ex.merge(found, model_entities, text) if model_entities else found
    title = " ".join(str(data.get("title") or "").split()).strip(" \"'.:-")
    if not _good_title(title, text):
        title = ""
    summary = text.strip() if not long_text else ""
    if long_text:
        candidate = " ".join(str(data.get("summary") or "").split())
        ok = 20 <= len(candidate) <= 320 and _mostly_from(candidate, text, 0.8)
        summary = candidate if ok else lead_summary(text)
    raw = data.get("importance")
    model_score = (raw - 1) / 4 if isinstance(raw, int) and 1 <= raw <= 5 else None
    det = signals(text, entities, pinned=pinned, repeats=repeats)
    return Enrichment(title=title, summary=summary, importance=blend(det, model_score, pinned=pinned),
                      entities=[e.to_dict() for e in entities],
                      by=model.info.model_id if model is not None and data else DETERMINISTIC)


# -- the queue --------------------------------------------------------------------------------
@contextmanager
def write_transaction(db: apsw.Connection) -> Iterator[None]:
    """BEGIN IMMEDIATE: the write lock first, so that reading then writing never fails with
    SQLITE_BUSY_SNAPSHOT when the other connection (engine or enrichment thread) commits in between."""
    if db.in_transaction:
        with db:
            yield
        return
    db.execute("BEGIN IMMEDIATE")
    try:
        yield
    except BaseException:
        db.execute("ROLLBACK")
        raise
    db.execute("COMMIT")


@dataclass(frozen=True)
class Job:
    seq: int
    memory_id: str
    attempts: int


class EnrichmentQueue:
    """The `enrichment_queue` table (m003) over one APSW connection."""

    def __init__(self, db: apsw.Connection) -> None:
        self.db = db

    def next(self, now: float | None = None) -> Job | None:
        row = self.db.execute(
            "SELECT seq, memory_id, attempts FROM enrichment_queue WHERE state = 'queued' AND not_before <= ? "
            "ORDER BY seq LIMIT 1", (now if now is not None else time.time(),)).fetchone()
        return Job(*row) if row else None

    def counts(self) -> dict[str, int]:
        rows = dict(self.db.execute("SELECT state, count(*) FROM enrichment_queue GROUP BY state").fetchall())
        return {"queued": int(rows.get("queued", 0)), "failed": int(rows.get("failed", 0))}

    def requeue_all(self) -> int:
        """Queue every memory again (the model changed); failed jobs get a fresh start."""
        with write_transaction(self.db):
            self.db.execute("DELETE FROM enrichment_queue")
            self.db.execute("INSERT INTO enrichment_queue(memory_id) SELECT id FROM memories ORDER BY rowid")
            self.db.execute("UPDATE memories SET enrichment_state = 'pending'")
            return int(self.db.execute("SELECT count(*) FROM enrichment_queue").fetchone()[0])

    def retry_failed(self) -> int:
        with write_transaction(self.db):
            self.db.execute("UPDATE enrichment_queue SET state = 'queued', attempts = 0, not_before = 0 "
                            "WHERE state = 'failed'")
            return self.db.changes()

    def model_id(self) -> str | None:
        row = self.db.execute("SELECT value FROM meta WHERE key = 'enrichment_model'").fetchone()
        return row[0] if row else None

    def set_model_id(self, model_id: str) -> None:
        with write_transaction(self.db):
            self.db.execute("INSERT OR REPLACE INTO meta(key, value) VALUES ('enrichment_model', ?)", (model_id,))

    def rate_per_minute(self, window_s: float = 3600) -> float | None:
        """Memories enriched per minute over the last hour of enrichment work (None if too few)."""
        n, first, last = self.db.execute(
            "SELECT count(*), min(enriched_at), max(enriched_at) FROM memories WHERE enriched_at >= ?",
            (time.time() - window_s,)).fetchone()
        if n < 2 or last <= first:
            return None
        return round((n - 1) / (last - first) * 60, 1)

    def finish(self, job: Job, result: Enrichment, content_hash: str, state: str) -> bool:
        """Store a result unless the memory changed meanwhile; the job leaves the queue either way."""
        with write_transaction(self.db):
            row = self.db.execute("SELECT title, enriched_title, importance, enriched_importance FROM memories "
                                  "WHERE id = ? AND content_hash = ?", (job.memory_id, content_hash)).fetchone()
            if row is not None:
                title, old_title, importance, old_importance = row
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
                     None if keep_importance else result.importance, job.memory_id))
            self.db.execute("DELETE FROM enrichment_queue WHERE seq = ?", (job.seq,))
        return row is not None

    def fail(self, job: Job, error: str, max_attempts: int) -> bool:
        """Count a failed attempt; returns True when the job is now marked failed for good."""
        attempts = job.attempts + 1
        final = attempts >= max_attempts
        with write_transaction(self.db):
            self.db.execute(
                "UPDATE enrichment_queue SET attempts = ?, last_error = ?, state = ?, not_before = ? WHERE seq = ?",
                (attempts, error[:300], "failed" if final else "queued",
                 time.time() + RETRY_BASE_S * 2 ** (attempts - 1), job.seq))
            if final:
                self.db.execute("UPDATE memories SET enrichment_state = 'failed' WHERE id = ?", (job.memory_id,))
        return final


def _json(value: Any) -> str:
    import json

    return json.dumps(value, ensure_ascii=False)


# -- the worker -------------------------------------------------------------------------------
@dataclass
class EnrichReport:
    """What one `enrich` run did."""

    processed: int = 0
    with_model: int = 0
    deterministic: int = 0
    failed: int = 0
    retried: int = 0
    seconds: float = 0.0
    model: str = ""
    model_error: str = ""
    remaining: int = 0
    errors: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def connect(path: Path) -> apsw.Connection:
    db = apsw.Connection(str(path))
    db.set_busy_timeout(10_000)
    db.execute("PRAGMA foreign_keys=ON")
    db.execute("PRAGMA secure_delete=ON")
    return db


def lower_thread_priority(niceness: int = 19) -> bool:
    """Make the calling thread (and the threads it starts, such as llama.cpp's) yield the CPU."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), niceness)
    except OSError:
        return False
    return True


class Enricher:
    """The enrichment thread: owns its own SQLite connection and the one model instance.

    Work reaches it as calls (`enrich`, `verify_model`) or, in background mode, from the queue.
    Every model call happens on this thread.
    """

    def __init__(self, db_path: Path, settings: Settings,
                 model_factory: Callable[[ModelInfo, Settings], LocalModel] | None = None,
                 open_db: Callable[[], apsw.Connection] | None = None,
                 foreground: Foreground | None = None) -> None:
        self.db_path = db_path
        self.foreground = foreground or Foreground()
        self._in_background_job = False
        self._open_db = open_db or (lambda: connect(db_path))
        self.settings = settings
        self._factory = model_factory or (lambda info, s: LocalModel(
            info, n_ctx=s.llm_context, n_threads=s.llm_threads or default_threads()))
        self._cond = threading.Condition()
        self._calls: deque[tuple[Callable[[], Any], Future]] = deque()
        self._background = False
        self._stopping = False
        self._thread: threading.Thread | None = None
        self.model: LocalModel | None = None
        self.model_error = ""
        self.crashed = ""
        self.low_priority = False
        self.native_id: int | None = None

    # -- control, from any thread ---------------------------------------------------------------
    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    @property
    def background(self) -> bool:
        return self._background and self.running

    def start(self, *, background: bool) -> None:
        with self._cond:
            self._background = self._background or background
            self._stopping = False
            self._cond.notify_all()
        if not self.running:
            self._thread = threading.Thread(target=self._main, name="desktop-memory-enrichment", daemon=True)
            self._thread.start()

    def stop(self, timeout: float = 30.0) -> None:
        """Finish the job in hand, unload the model and end the thread."""
        with self._cond:
            self._stopping = True
            self._background = False
            self._cond.notify_all()
        if self._thread is not None:
            self._thread.join(timeout)
            self._thread = None

    def wake(self) -> None:
        with self._cond:
            self._cond.notify_all()

    def call(self, fn: Callable[[], T]) -> T:
        """Run fn on the enrichment thread and wait for its result (or its exception)."""
        if threading.current_thread() is self._thread:
            return fn()
        future: Future = Future()
        with self._cond:
            self._calls.append((fn, future))
            self._cond.notify_all()
        if not self.running:
            self.start(background=False)
        return future.result()

    def enrich(self, limit: int) -> EnrichReport:
        return self.call(lambda: self._drain(limit))

    def verify_model(self) -> dict[str, Any]:
        return self.call(self._verify)

    def reset_model(self) -> None:
        """Forget the loaded model and any load error (the settings changed)."""
        self.call(self._drop_model)

    def try_model(self, info: ModelInfo) -> float:
        """Load and unload a model file on the enrichment thread; its load time, or ModelUnavailable."""
        def attempt() -> float:
            model = self._factory(info, self.settings)
            try:
                model.load()
                return model.load_seconds
            finally:
                model.unload()
        return self.call(attempt)

    # -- the thread ------------------------------------------------------------------------------
    def _main(self) -> None:
        self.native_id = threading.get_native_id()
        self.db = self._open_db()
        self.db.set_busy_timeout(10_000)
        self.queue = EnrichmentQueue(self.db)
        try:
            while True:
                with self._cond:
                    if self._stopping and not self._calls:
                        break
                    call = self._calls.popleft() if self._calls else None
                    background = self._background
                if call is not None:
                    self._run_call(*call)
                    continue
                if background and not self.low_priority:
                    self.low_priority = lower_thread_priority()
                job = self.queue.next() if background else None
                if job is not None:
                    self.foreground.wait_quiet(self._should_stop)  # the person's requests first
                    if self._should_stop():
                        continue  # a call (or stop) came first; the job stays queued
                    job = self.queue.next()  # after a long wait, the queue's head may have changed
                    if job is None:
                        continue
                    self._in_background_job = True
                    try:
                        self._process(job, EnrichReport())
                    finally:
                        self._in_background_job = False
                    continue
                self._idle()
        except Exception as exc:  # noqa: BLE001 - the worker barrier: record it, never kill the host
            self.crashed = f"{type(exc).__name__}: {str(exc)[:200]}"
            log.error("enrichment stopped: %s", self.crashed)
            log.debug("enrichment crash", exc_info=True)
        finally:
            with self._cond:
                pending = list(self._calls)
                self._calls.clear()
            for _, future in pending:
                future.set_exception(ModelUnavailable("the enrichment worker stopped"))
            self._drop_model()
            self.db.close()

    def _should_stop(self) -> bool:
        return self._stopping or bool(self._calls)

    def _between_tokens(self) -> None:
        """Called by the model after each token: a background job pauses while a request is served."""
        if self._in_background_job:
            self.foreground.wait_quiet(self._should_stop)

    def _run_call(self, fn: Callable[[], Any], future: Future) -> None:
        try:
            future.set_result(fn())
        except BaseException as exc:  # noqa: BLE001 - handed to the caller's thread
            future.set_exception(exc)

    def _idle(self) -> None:
        wait = POLL_S
        if self.model is not None and self.model.loaded:
            idle_for = time.monotonic() - self.model.last_used
            if idle_for >= self.settings.llm_idle_unload_s:
                self.model.unload()
            else:
                wait = min(wait, self.settings.llm_idle_unload_s - idle_for)
        with self._cond:
            if not self._calls and not self._stopping:
                self._cond.wait(max(0.05, wait))

    # -- model ------------------------------------------------------------------------------------
    def _drop_model(self) -> None:
        if self.model is not None:
            self.model.unload()
        self.model = None
        self.model_error = ""

    def _get_model(self) -> LocalModel | None:
        """The model, loaded; None (with model_error set) when it cannot be used."""
        if self.model is None and not self.model_error:
            try:
                info = check_model(self.settings.llm_model_path or None)
                self._follow_model(info.model_id)
                self.model = self._factory(info, self.settings)
                self.model.between_tokens = self._between_tokens
            except ModelUnavailable as exc:
                self.model_error = str(exc)
                log.warning("enrichment without a model: %s", exc)
        if self.model is not None and not self.model.loaded:
            try:
                self.model.load()
                self.model.last_used = time.monotonic()
            except ModelUnavailable as exc:
                self.model_error = str(exc)
                self.model = None
                log.warning("enrichment without a model: %s", exc)
        return self.model

    def _follow_model(self, model_id: str) -> None:
        """A different model than last time: queue everything again."""
        previous = self.queue.model_id()
        if previous != model_id:
            if previous is not None:
                log.info("model changed; re-enriching all memories (%d)", self.queue.requeue_all())
            self.queue.set_model_id(model_id)

    def _verify(self) -> dict[str, Any]:
        self._drop_model()
        started = time.perf_counter()
        model = self._get_model()
        if model is None:
            raise ModelUnavailable(self.model_error)
        result = enrich_text("Decision: Priya ships the beta release of Atlas in Berlin on March 3rd.",
                             model=model, n_ctx=self.settings.llm_context)
        return {"model": model.info.name, "path": str(model.info.path), "bytes": model.info.size,
                "load_seconds": round(model.load_seconds, 3), "seconds": round(time.perf_counter() - started, 3),
                "sample": asdict(result)}

    # -- jobs -------------------------------------------------------------------------------------
    def _drain(self, limit: int) -> EnrichReport:
        report = EnrichReport()
        started = time.perf_counter()
        while report.processed < limit:
            with self._cond:
                if self._stopping:
                    break
            job = self.queue.next()
            if job is None:
                break
            self._process(job, report)
        report.seconds = round(time.perf_counter() - started, 3)
        report.model = self.model.info.name if self.model is not None else ""
        report.model_error = self.model_error
        report.remaining = self.queue.counts()["queued"]
        return report

    def _process(self, job: Job, report: EnrichReport) -> None:
        row = self.db.execute("SELECT content, pinned, access_count, content_hash FROM memories WHERE id = ?",
                              (job.memory_id,)).fetchone()
        if row is None:
            with write_transaction(self.db):
                self.db.execute("DELETE FROM enrichment_queue WHERE seq = ?", (job.seq,))
            return
        content, pinned, repeats, chash = row
        report.processed += 1
        try:
            model = self._get_model()
            result = enrich_text(content, model=model, pinned=bool(pinned), repeats=repeats,
                                 summary_chars=self.settings.enrich_summary_chars, n_ctx=self.settings.llm_context)
            self.queue.finish(job, result, chash, "done" if result.by != DETERMINISTIC else "basic")
            if result.by == DETERMINISTIC:
                report.deterministic += 1
            else:
                report.with_model += 1
        except Exception as exc:  # noqa: BLE001 - the job barrier: retried, then marked, never a crash
            message = str(exc) if isinstance(exc, DesktopMemoryError) else f"{type(exc).__name__}: {exc}"
            log.debug("enrichment job %s failed", job.memory_id, exc_info=True)
            report.errors.append(message[:200])
            if self.queue.fail(job, message, self.settings.enrich_max_attempts):
                report.failed += 1
                self._fallback(job, content, bool(pinned), repeats, chash)
            else:
                report.retried += 1

    def _fallback(self, job: Job, content: str, pinned: bool, repeats: int, chash: str) -> None:
        """A job failed for good: keep at least the deterministic part."""
        try:
            result = enrich_text(content, pinned=pinned, repeats=repeats,
                                 summary_chars=self.settings.enrich_summary_chars)
            with write_transaction(self.db):
                self.db.execute("UPDATE memories SET entities = ?, enriched_at = ?, enriched_by = ? "
                                "WHERE id = ? AND content_hash = ?",
                                (_json(result.entities), time.time(), DETERMINISTIC, job.memory_id, chash))
        except Exception:  # noqa: BLE001 - already marked failed; nothing more to do
            log.debug("fallback enrichment failed too", exc_info=True)


def status(db: apsw.Connection, settings: Settings, enricher: Enricher | None) -> dict[str, Any]:
    """Queue length, rate and the model in use (read on the caller's connection; nothing is loaded)."""
    queue = EnrichmentQueue(db)
    counts = queue.counts()
    states = dict(db.execute("SELECT enrichment_state, count(*) FROM memories GROUP BY enrichment_state").fetchall())
    model: dict[str, Any] = {"configured": settings.llm_model_path or "(default) SmolLM2-135M-Instruct"}
    try:
        info = check_model(settings.llm_model_path or None)
        model.update(name=info.name, path=str(info.path), bytes=info.size, usable=True)
    except ModelUnavailable as exc:
        model.update(usable=False, error=str(exc))
    if enricher is not None:
        model["loaded"] = enricher.model is not None and enricher.model.loaded
        if enricher.model_error:
            model.update(usable=False, error=enricher.model_error)
    return {
        "queued": counts["queued"],
        "failed": counts["failed"],
        "enriched": int(states.get("done", 0)),
        "enriched_without_model": int(states.get("basic", 0)),
        "rate_per_minute": queue.rate_per_minute(),
        "running": enricher.background if enricher is not None else False,
        "worker_error": enricher.crashed if enricher is not None else "",
        "threads": settings.llm_threads or default_threads(),
        "context_tokens": settings.llm_context,
        "idle_unload_seconds": settings.llm_idle_unload_s,
        "model": model,
    }
