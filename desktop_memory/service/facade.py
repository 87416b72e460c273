"""`MemoryService`: the one memory service every front end (CLI, tray app, MCP) calls and gets plain data from.

The facade owns the data folder (service/ownership.py) and delegates each operation to a component
that receives only its collaborators: ingest.py (add, capture, import), retrieval.py (search, context),
lifecycle.py (stored memories, stats, doctor, export), vector_sync.py (the Chroma index),
enrichment.py (the enricher) and maintenance.py (backup, restore, encryption on/off).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from ..core.capture import CaptureResult, Snapshot
from ..core.context import Context
from ..core.models import Hit, Memory, Version
from ..core.query import Filters
from ..core.ranking import SIMILAR_CAP, RankingParams
from ..engine import records
from ..engine.embed import Embedder
from ..engine.enrichment import Enricher, EnrichReport
from ..engine.foreground import Foreground
from ..engine.settings import Settings
from ..engine.store import Store
from ..engine.vectors import VectorIndex
from . import capture, maintenance
from .enrichment import EnrichmentControl
from .importing import IMPORT_BATCH, IMPORT_BATCH_BYTES, Importer, ImportReport
from .ingest import AddResult, Ingest
from .lifecycle import Lifecycle
from .ownership import DB_NAME, Ownership, serves_the_person
from .reembed import EmbedderFor, EmbeddingModelOps, ReEmbed
from .retrieval import Reranker, Retrieval
from .vector_sync import VectorSync, release_process_cache

__all__ = ["DB_NAME", "IMPORT_BATCH", "IMPORT_BATCH_BYTES", "AddResult", "ImportReport", "MemoryService"]


class MemoryService(EmbeddingModelOps):
    """Owns one data folder: its lock, the SQLite store, the Chroma index and the embedder."""

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
        self.vector_sync.on_reembed = self.ingest.forget_recent
        self.retrieval = Retrieval(store, settings, self.embedder, self.vector_sync, self.ranking,
                                   self._embed_lane, rerank)
        self.lifecycle = Lifecycle(folder, store, settings, self.embedder, self.vector_sync,
                                   self.ingest.forget_recent)
        self.enrichment = EnrichmentControl(folder, store, settings, self.foreground)
        self.ingest.on_stored = self.enrichment.wake  # new memories wake the enricher
        self._parts = (self.ingest, self.retrieval, self.lifecycle, self.enrichment)
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
        self._own.settings = new
        for part in self._parts:
            part.settings = new

    @property
    def vectors(self) -> VectorIndex:
        """The Chroma index, opened (checked, healed, reconciled with SQLite) on first use."""
        return self.vector_sync.index

    def reopen_store(self) -> None:
        """Open the database again after its file was replaced (restore, encryption on/off)."""
        store = self._own.reopen_store()
        for part in self._parts:
            part.store = store
        self.vector_sync.store_replaced(store)
        self.reembed.store_replaced(store)
        self.ingest.forget_recent()

    def close(self, *, release_vector_cache: bool = False) -> None:
        """Stop enrichment, close the index (its waiting vectors written), the store and the folder's lock.
        `release_vector_cache`: also drop Chroma's per-process cache (the MCP server, no other service open)."""
        self.stop_enrichment()
        self.reembed.stop()
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
    def index_status(self) -> dict[str, Any]:
        """What this process did to the vector index: a state and a sentence for a person (VectorSync.status)."""
        return self.vector_sync.status()

    def sync_vectors(self) -> int:
        """Drain the durable queue into Chroma; returns how many entries were handled."""
        return self.vector_sync.sync()

    def reconcile(self, *, full: bool = False) -> dict[str, int]:
        """Bring Chroma in line with SQLite (see VectorSync.reconcile)."""
        return self.vector_sync.reconcile(full=full)

    # -- adding -------------------------------------------------------------------------------
    @serves_the_person
    def add(self, content: str | bytes, *, source: str = "manual", **fields: Any) -> AddResult:
        """Remember one text (normalised, redacted, deduplicated); it is searchable on return."""
        return self.ingest.add(content, source=source, **fields)

    @serves_the_person
    def capture(self, snapshot: Snapshot) -> CaptureResult:
        """A copy as plain data -> saved or skipped, with the reason (rules and redaction here: service/capture.py)."""
        return capture.capture(snapshot, self.settings, self.ingest.prepare, self.ingest.store_prepared)

    @serves_the_person
    def import_records(self, lines: Iterable[str | bytes | records.Overlong], *,
                       progress: Callable[[ImportReport], None] | None = None) -> ImportReport:
        """Import JSON Lines; bad lines are reported with their numbers and skipped (see Importer.import_records)."""
        return self.importer.import_records(lines, progress=progress)

    # -- searching ----------------------------------------------------------------------------
    @serves_the_person
    def search(self, query: str, *, limit: int = 10, filters: Filters | None = None, record_access: bool = True,
               expand: bool = False) -> list[Hit]:
        """Keyword and semantic search fused into one ranking (explain data on every hit).

        Look-alikes (a family, or texts sharing 90 % of their words) are one hit, the best-scoring
        one, with the others in `Hit.similar`; with `expand` each memory is its own hit.
        """
        return self.retrieval.search(query, limit=limit, filters=filters, record_access=record_access,
                                     expand=expand)

    @serves_the_person
    def context(self, query: str | None = None, *, ids: Sequence[str] = (), budget: int | None = None,
                fmt: str | None = None, limit: int = 20, filters: Filters | None = None) -> Context:
        """Pasteable context for a query (most relevant first) or for chosen memories (in order)."""
        return self.retrieval.context(query, ids=ids, budget=budget, fmt=fmt, limit=limit, filters=filters)

    # -- lifecycle of memories ----------------------------------------------------------------
    def get(self, memory_id: str) -> Memory:
        return self.lifecycle.get(memory_id)

    def versions(self, memory_id: str) -> list[Version]:
        """The earlier texts of a memory (replaced by a longer capture or a restore), oldest first."""
        return self.lifecycle.versions(memory_id)

    def family(self, memory_id: str) -> list[Memory]:
        """A memory's look-alikes (the family it was stored in), newest first; [] when it has none."""
        memory = self.lifecycle.get(memory_id)
        if memory.family_id is None:
            return []
        members = self.store.family_members([memory.family_id], SIMILAR_CAP + 1).get(memory.family_id, [])
        return [m for m in members if m.id != memory.id][:SIMILAR_CAP]

    def restore_version(self, memory_id: str, seq: int) -> Memory:
        """Make an earlier text current again; the current text becomes a version (nothing is lost)."""
        return self.lifecycle.restore_version(memory_id, seq)

    def set_pinned(self, memory_id: str, pinned: bool) -> Memory:
        return self.lifecycle.set_pinned(memory_id, pinned)

    def set_forgotten(self, memory_id: str, forgotten: bool) -> Memory:
        return self.lifecycle.set_forgotten(memory_id, forgotten)

    def tag(self, memory_id: str, add: Iterable[str] = (), remove: Iterable[str] = ()) -> Memory:
        return self.lifecycle.tag(memory_id, add, remove)

    def edit(self, memory_id: str, *, content: str | None = None, title: str | None = None) -> Memory:
        """Change a memory's text or title; new text is normalised, redacted and re-indexed."""
        return self.lifecycle.edit(memory_id, content=content, title=title)

    def purge(self, ids: Sequence[str]) -> int:
        """Delete for good from SQLite, the FTS index and Chroma."""
        return self.lifecycle.purge(ids)

    def erase_everything(self) -> int:
        """Purge every memory (the settings window's "Erase everything"); returns how many."""
        return self.lifecycle.erase_everything()

    def retention(self, *, older_than_days: float, below_importance: float = 1.0,
                  include_forgotten_only: bool = False, dry_run: bool = False) -> list[str]:
        """Purge memories older than N days and less important than a threshold; pinned are kept."""
        return self.lifecycle.retention(older_than_days=older_than_days, below_importance=below_importance,
                                        include_forgotten_only=include_forgotten_only, dry_run=dry_run)

    def save_settings(self, new: Settings) -> Settings:
        """Write settings.json atomically and use the new values at once (another embedding model: a switch)."""
        new.embedding_model = self.reembed.choose(new.embedding_model)["chosen"]  # an unknown name: refused
        new.save(self.folder)
        self.settings = new
        return new

    def stats(self) -> dict[str, Any]:
        return self.lifecycle.stats()

    def doctor(self) -> dict[str, Any]:
        """Check and repair the stores; whether the local model runs (its stop is no damage: ok is unchanged)."""
        checks, model = self.lifecycle.doctor(), self.enrichment.status()["model"]
        return checks | {"local_model": "ok" if model.get("usable") else str(model.get("error")), "ok": checks["ok"]}

    def export_records(self, *, include_forgotten: bool = False) -> Iterator[dict[str, Any]]:
        """Records in the import format (plus the fields an import can carry back)."""
        return self.lifecycle.export_records(include_forgotten=include_forgotten)

    def export_markdown(self, *, include_forgotten: bool = False) -> Iterator[str]:
        return self.lifecycle.export_markdown(include_forgotten=include_forgotten)

    def export_to_file(self, target: Path, *, fmt: str = "jsonl", include_forgotten: bool = False) -> int:
        return self.lifecycle.export_to_file(target, fmt=fmt, include_forgotten=include_forgotten)

    # -- backup and encryption (service/maintenance.py) ---------------------------------------
    def create_backup(self, target: Path, passphrase: str | None, *, overwrite: bool = False) -> dict[str, Any]:
        """Write a backup file of this data folder (encrypted with the passphrase unless it is None)."""
        return maintenance.create_backup(self, target, passphrase, overwrite=overwrite)

    def verify_backup(self, source: Path, passphrase: str | None) -> dict[str, Any]:
        """Check a backup file completely without restoring it; returns what it holds."""
        return maintenance.verify_backup(source, passphrase)

    def restore_backup(self, source: Path, passphrase: str | None) -> dict[str, Any]:
        """Replace every memory with a backup's (checked first; the old database is kept beside)."""
        return maintenance.restore_backup(self, source, passphrase)

    def set_encryption(self, encrypted: bool) -> str:
        """Encrypt or decrypt the database in place; returns the new state in a sentence."""
        return maintenance.set_encryption(self, encrypted=encrypted)

    def encryption_status(self) -> str:
        return maintenance.encryption_status(self)

    # -- enrichment (service/enrichment.py; the work in engine/enrichment.py) ------------------
    @property
    def enricher(self) -> Enricher:
        """The enrichment thread's controller (the thread starts on first use)."""
        return self.enrichment.enricher

    def enrich(self, limit: int) -> EnrichReport:
        """Enrich up to `limit` queued memories now, in arrival order, and wait for it."""
        return self.enrichment.enrich(limit)

    def enrichment_status(self) -> dict[str, Any]:
        return self.enrichment.status()

    def enrichment_changes(self, since: int = -1, wait_s: float = 25.0) -> dict[str, Any]:
        """The queue's counts once changed from version `since` (a long poll: never the person's request)."""
        return self.enrichment.changes(since, wait_s)

    def start_enrichment(self) -> None:
        """Enrich new memories in the background, at low priority (for long-running hosts)."""
        self.enrichment.start()

    def stop_enrichment(self) -> None:
        self.enrichment.stop()

    def set_enrichment_model(self, path: str | None) -> dict[str, Any]:
        """Use another GGUF (None or "" for the bundled one); every memory is enriched again."""
        return self.enrichment.set_model(path)

    def verify_enrichment_model(self) -> dict[str, Any]:
        """Load the configured model and enrich a sample sentence with it."""
        return self.enrichment.verify_model()

    def requeue_enrichment(self) -> int:
        """Queue every memory for enrichment again; returns how many."""
        return self.enrichment.requeue()

    def retry_failed_enrichment(self) -> int:
        return self.enrichment.retry_failed()
