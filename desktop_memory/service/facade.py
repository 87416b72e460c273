"""`MemoryService`: the one memory service every front end (CLI, tray app, MCP) calls and gets plain data from.

The facade owns the data folder (service/ownership.py) and wires the components that do the operations,
each receiving only its collaborators: ingest.py (add, capture), importing.py (import), web.py (the browser's
captures), sync.py (the other machines' changes through a synced folder), retrieval.py (search, context),
lifecycle.py (stored memories, stats, export), vector_sync.py (the Chroma index), enrichment.py (the enricher),
reembed.py (the embedding model) and maintenance.py (doctor, backup, restore, encryption on/off). Which component
does an operation is declared with it (service/protocol.py).
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from ..core.ranking import RankingParams
from ..engine.embed import Embedder
from ..engine.enrichment import Enricher
from ..engine.foreground import Foreground
from ..engine.settings import Settings
from ..engine.store import Store
from ..engine.vectors import VectorIndex
from .enrichment import EnrichmentControl
from .importing import IMPORT_BATCH, IMPORT_BATCH_BYTES, Importer, ImportReport
from .ingest import AddResult, Ingest
from .lifecycle import Lifecycle
from .maintenance import Maintenance
from .ownership import DB_NAME, Ownership
from .passage_backlog import PassageBacklog
from .protocol import MemoryOperations, Operation
from .reembed import EmbedderFor, ReEmbed
from .retrieval import Reranker, Retrieval
from .sync import Sync
from .vector_sync import EMBEDDING_MODEL_KEY, VectorSync, release_process_cache
from .web import WebCaptures

__all__ = ["DB_NAME", "IMPORT_BATCH", "IMPORT_BATCH_BYTES", "AddResult", "ImportReport", "MemoryService"]


class MemoryService(MemoryOperations):
    """Owns one data folder (its lock, the SQLite store, the Chroma index, the embedder) and wires the
    components that do the operations (service/protocol.py names each one's component: `via`)."""

    def __init__(self, folder: Path, *, embedder: Embedder | None = None, settings: Settings | None = None,
                 ranking: RankingParams | None = None, lock_wait_s: float = 2.0, start_fresh: bool = False,
                 on_lock_wait: Callable[[str], None] | None = None, lock_give_up: Callable[[], bool] | None = None,
                 rerank: Reranker | None = None, embedder_for: EmbedderFor | None = None) -> None:
        """`start_fresh`: a missing or empty database next to old data starts empty (the rest set aside).
        `rerank`: an optional step reordering the ranked candidates of a search (query, hits) -> hits."""
        self.folder = folder
        self._own = Ownership.take(folder, settings=settings, lock_wait_s=lock_wait_s, start_fresh=start_fresh,
                                   on_lock_wait=on_lock_wait, lock_give_up=lock_give_up)
        store, settings = self._own.store, self._own.settings
        self.foreground = Foreground()  # requests it serves go before background enrichment and re-embedding
        self.reembed = ReEmbed(folder, store, self.foreground, embedder_for)
        self.embedder = self.reembed.first_embedder(embedder)
        self.ranking = ranking or RankingParams()
        self._embed_lane = ThreadPoolExecutor(1, thread_name_prefix="dm-embed-lane")  # queries; imports ahead
        self.vector_sync = VectorSync(folder, store, self.embedder, self.foreground)
        self.ingest = Ingest(store, settings, self.embedder, self.vector_sync, self._embed_lane)
        self.importer = Importer(self.ingest)
        self.web = WebCaptures(folder, self.importer)
        self.vector_sync.on_reembed = self.ingest.forget_recent
        self.retrieval = Retrieval(store, settings, self.embedder, self.vector_sync, self.ranking,
                                   self._embed_lane, rerank)
        self.lifecycle = Lifecycle(folder, store, settings, self.embedder, self.vector_sync,
                                   self.ingest.forget_recent)
        self.enrichment = EnrichmentControl(folder, store, settings, self.foreground)
        self.ingest.on_stored = self.enrichment.wake  # new memories wake the enricher
        self.vector_sync.backlog = PassageBacklog(  # passages left to embed: in the background, own connection
            self.foreground, self.enrichment._second_store, lambda: self.vector_sync.embedder, EMBEDDING_MODEL_KEY)
        self.maintenance = Maintenance(folder, lambda: self._own.store, self.vector_sync, self.enrichment,
                                       self.lifecycle, reopen_store=self.reopen_store, use_settings=self._use)
        self.sync = Sync(folder, store, settings, self.ingest, self.vector_sync)
        self._parts = (self.ingest, self.retrieval, self.lifecycle, self.enrichment, self.sync)
        self.reembed.attach(self)  # resumes (or starts) a switch of the embedding model

    # -- what the service owns ----------------------------------------------------------------
    @property
    def store(self) -> Store:
        """The SQLite store (engine/store.py); replaced when the database file is (`reopen_store`)."""
        return self._own.store

    @property
    def settings(self) -> Settings:
        return self._own.settings

    @settings.setter
    def settings(self, new: Settings) -> None:
        self._use(new)

    def _use(self, new: Settings) -> None:
        self._own.settings = new
        for part in self._parts:
            part.settings = new

    @property
    def vectors(self) -> VectorIndex:
        """The Chroma index, opened (checked, healed, reconciled with SQLite) on first use."""
        return self.vector_sync.index

    def reopen_store(self) -> None:
        """Open the database again after its file was replaced (restore, encryption on/off)."""
        if self.vector_sync.backlog is not None:
            self.vector_sync.backlog.stop()  # its connection must not hold the replaced file
        store = self._own.reopen_store()
        if self.vector_sync.backlog is not None:
            self.vector_sync.backlog.resume()  # woken by the next sync
        for part in self._parts:
            part.store = store
        self.vector_sync.store_replaced(store)
        self.reembed.store_replaced(store)
        self.ingest.forget_recent()

    def close(self, *, release_vector_cache: bool = False) -> None:
        """Stop enrichment, close the index (its waiting vectors written), the store and the folder's lock.
        `release_vector_cache`: also drop Chroma's per-process cache (the MCP server, no other service open)."""
        self.enrichment.stop()
        self.reembed.stop()
        if self.vector_sync.backlog is not None:
            self.vector_sync.backlog.stop()  # after its batch; the rest stays queued for the next start
        self._embed_lane.shutdown(wait=True)
        try:
            self.vector_sync.close()
        finally:
            self._own.release()
        if release_vector_cache:
            release_process_cache()

    def __enter__(self) -> MemoryService:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- the vector index ---------------------------------------------------------------------
    def sync_vectors(self) -> int:
        """Drain the durable queue into Chroma; returns how many entries were handled."""
        return self.vector_sync.sync()

    def reconcile(self, *, full: bool = False) -> dict[str, int]:
        """Bring Chroma in line with SQLite (see VectorSync.reconcile)."""
        return self.vector_sync.reconcile(full=full)

    # -- what the service itself does: its settings ------------------------------------------
    def save_settings(self, new: Settings) -> Settings:
        """Write settings.json atomically and use the new values at once (another embedding model: a switch)."""
        new.embedding_model = self.reembed.choose(new.embedding_model).chosen  # an unknown name: refused
        new.save(self.folder)
        self.settings = new
        return new

    # -- every other operation: performed by the component its declaration names -------------
    def _perform(self, op: Operation[..., Any], /, *args: Any, **kwargs: Any) -> Any:
        if op.component is None:  # declared `via=None`: the service's own, defined above, never performed
            raise TypeError(f"{op.name} is MemoryService's own attribute, not a component's")
        part, method = op.component
        do = getattr(getattr(self, part), method)
        if op.foreground:  # a person waits for it: background enrichment and re-embedding pause
            with self.foreground.busy():
                return do(*args, **kwargs)
        return do(*args, **kwargs)

    @property
    def enricher(self) -> Enricher:
        """The enrichment thread's controller (the thread starts on first use)."""
        return self.enrichment.enricher
