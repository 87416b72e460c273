"""Background enrichment: the one thread that owns the language model, working through a durable queue.

Each memory gets a title, a summary (short texts are their own summary), an importance score and typed
entities. The rules that turn a text and the model's answer into those are pure (core/enrich.py); the
queue and every write of results go through the thread's own `Store` (engine/store_enrichment.py). Jobs
are queued by triggers (m003) in the same transaction as the memory, processed in arrival order,
retried a bounded number of times, then marked.
"""

from __future__ import annotations

import logging
import os
import sys
import threading
import time
from collections import deque
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import asdict
from pathlib import Path
from typing import Any, TypeVar

from .. import __version__
from ..core.enrich import DETERMINISTIC, Enrichment, answer_schema, combine, lead_summary
from ..core.errors import DesktopMemoryError, ModelUnavailable
from .enrich_report import EnrichReport
from .foreground import Foreground
from .llm import LocalModel, ModelInfo, check_model, default_threads, prompt
from .model_process import ModelCrashed, WorkerModel
from .settings import Settings
from .store import Store
from .store_enrichment import EnrichmentInput, EnrichmentJob

log = logging.getLogger(__name__)
T = TypeVar("T")
Model = LocalModel | WorkerModel  # the same surface: in this process (tests, the worker itself) or in a worker

__all__ = ["DETERMINISTIC", "EnrichReport", "Enricher", "Enrichment", "enrich_text", "lead_summary", "status"]

POLL_S = 2.0
TELL_S = 1.0  # between quick jobs the queue's counts are told at most this often (and always before idling)
PROMPT_RESERVE_TOKENS = 380  # prompt text around the note, plus the answer
# The grammar bounds every string (in characters), so these budgets let almost every answer finish;
# an answer cut short anyway is treated as no answer (the deterministic part is stored).
MAX_TOKENS_SHORT = 160
MAX_TOKENS_LONG = 260
CRASHES_TO_STOP = 3  # the model worker's crashes in a row after which the model is not started again


# -- the model's part ---------------------------------------------------------------------------
def _model_answer(model: Model, text: str, with_summary: bool, n_ctx: int) -> dict[str, Any]:
    text = model.truncate(text, max(64, n_ctx - PROMPT_RESERVE_TOKENS - (120 if with_summary else 0)))
    user = prompt("enrich_user_summary.txt" if with_summary else "enrich_user.txt").replace("{text}", text)
    return model.json_completion(prompt("enrich_system.txt"), user, answer_schema(with_summary),
                                 max_tokens=MAX_TOKENS_LONG if with_summary else MAX_TOKENS_SHORT)


def enrich_text(
    text: str,
    *,
    model: Model | None = None,
    pinned: bool = False,
    repeats: int = 0,
    summary_chars: int = 280,
    n_ctx: int = 2048,
) -> Enrichment:
    """Deterministic extraction, combined with the model's answer when a model is given (core/enrich.py)."""
    answer = _model_answer(model, text, len(text) > summary_chars, n_ctx) if model is not None else {}
    return combine(text, answer, model_id=model.info.model_id if model is not None else "", pinned=pinned,
                   repeats=repeats, summary_chars=summary_chars)


def stopped_line(health: dict[str, Any], model_id: str) -> str:
    """The breaker: after CRASHES_TO_STOP crashes in a row of this model file under this app version, the line
    that says so ("" while the model may be started). Another model file or app version starts afresh."""
    if (health.get("model_id") == model_id and health.get("version") == __version__
            and int(health.get("crashes", 0)) >= CRASHES_TO_STOP):
        return f"{health.get('reason') or 'the local model kept crashing'}; memories are enriched without it"
    return ""


# -- the worker -------------------------------------------------------------------------------
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
    """The enrichment thread: owns its own `Store` (a second connection) and the one model instance.

    Work reaches it as calls (`enrich`, `verify_model`) or, in background mode, from the queue.
    Every model call happens on this thread.
    """

    def __init__(self, db_path: Path, settings: Settings,
                 model_factory: Callable[[ModelInfo, Settings], Model] | None = None,
                 open_store: Callable[[], Store] | None = None,
                 foreground: Foreground | None = None) -> None:
        self.db_path = db_path
        self.foreground = foreground or Foreground()
        self._in_background_job = False
        self._open_store = open_store or (lambda: Store(db_path))
        self.settings = settings
        # llama.cpp runs in a worker process (engine/model_process.py): its crash is a failed job, not ours
        self._factory = model_factory or (lambda info, s: WorkerModel(
            info, n_ctx=s.llm_context, n_threads=s.llm_threads or default_threads()))
        self._cond = threading.Condition()
        self._calls: deque[tuple[Callable[[], Any], Future]] = deque()
        self._background = False
        self._stopping = False
        self._woken = False  # wake() came while the thread was busy: the next idle wait is skipped
        self.on_counts: Callable[[dict[str, Any]], None] | None = None  # told the queue's counts when they may change
        self._told_at = 0.0
        self._untold = False  # a job finished since the counts were last told
        self._thread: threading.Thread | None = None
        self.model: Model | None = None
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
        """New memories are queued: a background thread waiting for work looks at the queue now.

        Cheap and safe from any thread, running or not (the service calls it after each add or import).
        """
        with self._cond:
            self._woken = True
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
        """Forget the loaded model, any load error and its crashes (the settings changed, or the person said
        Retry)."""
        def reset() -> None:
            self._drop_model()
            self.store.enrichment.set_model_health({})
        self.call(reset)

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
        self.store = self._open_store()
        self.store.db.set_busy_timeout(10_000)
        try:
            self._tell_counts()
            while True:
                with self._cond:
                    if self._stopping and not self._calls:
                        break
                    call = self._calls.popleft() if self._calls else None
                    background = self._background
                if call is not None:
                    self._run_call(*call)
                    self._tell_counts()
                    continue
                if background and not self.low_priority:
                    self.low_priority = lower_thread_priority()
                job = self.store.enrichment.next_job() if background else None
                if job is not None:
                    self.foreground.wait_quiet(self._should_stop)  # the person's requests first
                    if self._should_stop():
                        continue  # a call (or stop) came first; the job stays queued
                    job = self.store.enrichment.next_job()  # after a long wait, the queue's head may have changed
                    if job is None:
                        continue
                    if self._take_wake():  # memories arrived: say so before a job that may take seconds
                        self._tell_counts()
                    self._in_background_job = True
                    try:
                        self._process(job, EnrichReport())
                    finally:
                        self._in_background_job = False
                    self._tell_counts(soon=True)
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
            self.store.close()

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
        if self._untold:  # the last jobs' counts, before waiting
            self._tell_counts()
        with self._cond:
            if not self._calls and not self._stopping and not self._woken:
                self._cond.wait(max(0.05, wait))
        if self._take_wake():  # memories arrived (or were queued again): the counts changed
            self._tell_counts()

    def _take_wake(self) -> bool:
        with self._cond:
            woken, self._woken = self._woken, False
        return woken

    def _tell_counts(self, *, soon: bool = False) -> None:
        """Give `on_counts` the queue's counts (one GROUP BY on this thread's own connection); with `soon`,
        only when TELL_S passed since the last time (quick jobs without a model would count all day)."""
        if self.on_counts is None:
            return
        if soon and time.monotonic() - self._told_at < TELL_S:
            self._untold = True
            return
        self._untold, self._told_at = False, time.monotonic()
        try:
            self.on_counts(self.store.enrichment.counts() | {"model_problem": self.model_error})
        except Exception:  # noqa: BLE001 - telling the tray must never stop enrichment
            log.debug("enrichment counts not told", exc_info=True)

    # -- model ------------------------------------------------------------------------------------
    def _drop_model(self) -> None:
        if self.model is not None:
            self.model.unload()
        self.model = None
        self.model_error = ""

    def _get_model(self) -> Model | None:
        """The model, loaded; None (with model_error set) when it cannot be used."""
        if self.model is None and not self.model_error:
            try:
                info = check_model(self.settings.llm_model_path or None)
                self._follow_model(info.model_id)
                if stopped := self._stopped_line(info):
                    self.model_error = stopped
                    return None
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

    def _stopped_line(self, info: ModelInfo) -> str:
        return stopped_line(self.store.enrichment.model_health(), info.model_id)

    def _crashed(self, exc: ModelCrashed) -> None:
        """The worker died or hung: count it (persisted: a restart of the app does not reset it) and start
        afresh with the next job, or not at all once the breaker is open."""
        model, self.model = self.model, None
        if model is not None:
            model.unload()
        info_id = model.info.model_id if model is not None else ""
        health = self.store.enrichment.model_health()
        same = health.get("model_id") == info_id and health.get("version") == __version__
        crashes = int(health.get("crashes", 0)) + 1 if same else 1
        self.store.enrichment.set_model_health({"model_id": info_id, "version": __version__, "crashes": crashes,
                                                "reason": exc.reason, "at": time.time()})
        log.info("%s (%d in a row)", exc.reason, crashes)  # the command or the tray says it, once
        if crashes >= CRASHES_TO_STOP:
            self.model_error = f"{exc.reason}; memories are enriched without it"

    def _worked(self) -> None:
        """A job done with the model: its crashes are no longer "in a row"."""
        if self.store.enrichment.model_health():
            self.store.enrichment.set_model_health({})

    def _follow_model(self, model_id: str) -> None:
        """A different model than last time: queue everything again."""
        previous = self.store.enrichment.model_id()
        if previous != model_id:
            if previous is not None:
                log.info("model changed; re-enriching all memories (%d)", self.store.enrichment.requeue_all())
            self.store.enrichment.set_model_id(model_id)

    def _verify(self) -> dict[str, Any]:
        self._drop_model()
        self.store.enrichment.set_model_health({})  # the person asks to try it: the breaker closes
        started = time.perf_counter()
        try:
            model = self._get_model()
            if model is None:
                raise ModelUnavailable(self.model_error)
            result = enrich_text("Decision: Priya ships the beta release of Atlas in Berlin on March 3rd.",
                                 model=model, n_ctx=self.settings.llm_context)
        except ModelCrashed as exc:
            self._crashed(exc)
            raise
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
            job = self.store.enrichment.next_job()
            if job is None:
                break
            self._process(job, report)
        report.seconds = round(time.perf_counter() - started, 3)
        report.model = self.model.info.name if self.model is not None else ""
        report.model_error = self.model_error
        report.remaining = self.store.enrichment.counts()["queued"]
        return report

    def _process(self, job: EnrichmentJob, report: EnrichReport) -> None:
        memory = self.store.enrichment.job_input(job.memory_id)
        if memory is None:  # deleted meanwhile
            self.store.enrichment.drop_job(job)
            return
        report.processed += 1
        try:
            model = self._get_model()
            result = enrich_text(memory.content, model=model, pinned=memory.pinned, repeats=memory.repeats,
                                 summary_chars=self.settings.enrich_summary_chars, n_ctx=self.settings.llm_context)
            state = "done" if result.by != DETERMINISTIC else "basic"
            self.store.enrichment.finish(job, result, memory.content_hash, state)
            if result.by == DETERMINISTIC:
                report.deterministic += 1
            else:
                report.with_model += 1
                self._worked()
        except Exception as exc:  # noqa: BLE001 - the job barrier: retried, then marked, never a crash
            if isinstance(exc, ModelCrashed):
                self._crashed(exc)
            message = str(exc) if isinstance(exc, DesktopMemoryError) else f"{type(exc).__name__}: {exc}"
            log.debug("enrichment job %s failed", job.memory_id, exc_info=True)
            report.errors.append(message[:200])
            if self.store.enrichment.fail(job, message, self.settings.enrich_max_attempts):
                report.failed += 1
                self._fallback(job, memory)
            else:
                report.retried += 1

    def _fallback(self, job: EnrichmentJob, memory: EnrichmentInput) -> None:
        """A job failed for good: keep at least the deterministic part."""
        try:
            result = enrich_text(memory.content, pinned=memory.pinned, repeats=memory.repeats,
                                 summary_chars=self.settings.enrich_summary_chars)
            self.store.enrichment.keep_entities(job.memory_id, memory.content_hash, result.entities, DETERMINISTIC)
        except Exception:  # noqa: BLE001 - already marked failed; nothing more to do
            log.debug("fallback enrichment failed too", exc_info=True)


def status(store: Store, settings: Settings, enricher: Enricher | None) -> dict[str, Any]:
    """Queue length, rate and the model in use (read through the caller's store; nothing is loaded)."""
    counts = store.enrichment.counts()
    states = store.enrichment.states()
    model: dict[str, Any] = {"configured": settings.llm_model_path or "(default) SmolLM2-135M-Instruct"}
    health = store.enrichment.model_health()
    try:
        info = check_model(settings.llm_model_path or None)
        model.update(name=info.name, path=str(info.path), bytes=info.size, usable=True)
        if stopped := stopped_line(health, info.model_id):
            model.update(usable=False, error=stopped)
    except ModelUnavailable as exc:
        model.update(usable=False, error=str(exc))
    if health.get("crashes"):
        model["crashes"] = {"in_a_row": int(health["crashes"]), "last": str(health.get("reason", ""))}
    if enricher is not None:
        model["loaded"] = enricher.model is not None and enricher.model.loaded
        if enricher.model_error:
            model.update(usable=False, error=enricher.model_error)
    return {
        "queued": counts["queued"],
        "failed": counts["failed"],
        "enriched": int(states.get("done", 0)),
        "enriched_without_model": int(states.get("basic", 0)),
        "rate_per_minute": store.enrichment.rate_per_minute(),
        "running": enricher.background if enricher is not None else False,
        "worker_error": enricher.crashed if enricher is not None else "",
        "threads": settings.llm_threads or default_threads(),
        "context_tokens": settings.llm_context,
        "idle_unload_seconds": settings.llm_idle_unload_s,
        "model": model,
    }
