"""Control of background enrichment (the work itself is in engine/enrichment.py).

`EnrichmentControl` receives its collaborators (the folder, store, settings, foreground gate);
the enrichment thread gets a second connection to the database, opened like the store's.
"""

from __future__ import annotations

from pathlib import Path

from ..core.errors import InvalidInput
from ..engine import encryption
from ..engine.enrichment import Enricher, EnrichReport
from ..engine.enrichment import status as enrichment_status
from ..engine.foreground import Foreground
from ..engine.settings import Settings
from ..engine.store import Store
from .events import QueueEvents
from .reports import (
    EnrichmentModel,
    EnrichmentModelChange,
    EnrichmentSample,
    EnrichmentStatus,
    ModelCheck,
    ModelCrashes,
    QueueState,
)


class EnrichmentControl:
    """Starts, stops and configures the enricher of one data folder."""

    def __init__(self, folder: Path, store: Store, settings: Settings, foreground: Foreground) -> None:
        self.folder = folder
        self.store = store
        self.settings = settings
        self.foreground = foreground
        self._enricher: Enricher | None = None
        self.events = QueueEvents()  # the queue's counts, told by the enrichment thread, waited for by front ends

    @property
    def enricher(self) -> Enricher:
        """The enrichment thread's controller (the thread starts on first use)."""
        if self._enricher is None:
            self.use(Enricher(self.store.path, self.settings, open_store=self._second_store,
                              foreground=self.foreground))
        assert self._enricher is not None
        return self._enricher

    def use(self, enricher: Enricher) -> None:
        """Use this enricher (tests give one with a fake model)."""
        enricher.on_counts = self.events.publish
        self._enricher = enricher

    def wake(self) -> None:
        """Memories were stored or queued again: a background enricher looks at its queue (and tells the counts)."""
        if self._enricher is not None:
            self._enricher.wake()

    def changes(self, since: int = -1, wait_s: float = 25.0) -> QueueState:
        """The queue's counts once they differ from version `since` (a long poll; holds only the caller)."""
        return QueueState(**self.events.wait(since, wait_s))

    def _second_store(self) -> Store:
        """Another connection to the database, opened like the store's (same key), for the enrichment thread."""
        return Store(self.store.path, key=encryption.current_key(self.folder, self.store.path))

    def enrich(self, limit: int) -> EnrichReport:
        """Enrich up to `limit` queued memories now, in arrival order, and wait for it."""
        if limit < 1:
            raise InvalidInput("the limit must be at least 1")
        return self.enricher.enrich(limit)

    def status(self) -> EnrichmentStatus:
        found = enrichment_status(self.store, self.settings, self._enricher)
        model = dict(found["model"])
        if crashes := model.get("crashes"):
            model["crashes"] = ModelCrashes(**crashes)
        return EnrichmentStatus(**{**found, "model": EnrichmentModel(**model)})

    def start(self) -> None:
        """Enrich new memories in the background, at low priority (for long-running hosts)."""
        self.enricher.start(background=True)

    def stop(self) -> None:
        if self._enricher is not None:
            self._enricher.stop()

    def set_model(self, path: str | None) -> EnrichmentModelChange:
        """Use another GGUF (None or "" for the bundled one); every memory is enriched again."""
        from ..engine.llm import check_model

        info = check_model(path or None)
        self.enricher.try_model(info)  # a truncated or unsupported file fails here, not later
        self.settings.llm_model_path = str(info.path) if path else ""
        self.settings.save(self.folder)
        if self._enricher is not None:
            self._enricher.reset_model()
        changed = self.store.enrichment.model_id() != info.model_id
        requeued = self.store.enrichment.requeue_all() if changed and self.store.enrichment.enriched_count() else 0
        self.store.enrichment.set_model_id(info.model_id)
        return EnrichmentModelChange(model=info.name, path=str(info.path), bytes=info.size, requeued=requeued)

    def verify_model(self) -> ModelCheck:
        """Load the configured model and enrich a sample sentence with it."""
        found = self.enricher.verify_model()
        return ModelCheck(**{**found, "sample": EnrichmentSample(**found["sample"])})

    def requeue(self) -> int:
        """Queue every memory for enrichment again; returns how many."""
        n = self.store.enrichment.requeue_all()
        self.wake()
        return n

    def retry_failed(self) -> int:
        """Give failed jobs another chance, and the local model too if it was stopped after crashing."""
        n = self.store.enrichment.retry_failed()
        self.store.enrichment.set_model_health({})
        if self._enricher is not None:
            self._enricher.reset_model()
        self.wake()
        return n
