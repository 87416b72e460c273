"""The backlog of long memories whose passages are not embedded yet, worked off in the background.

An add or an import embeds a long memory's passages in the transaction that writes it, and an edit or a
restored version embeds that one memory's (bounded: one text). What is left is the backlog: the m006
upgrade queued every long memory, a new embedding model queues them all again (`passage_queue` is
durable). Embedding thousands of passages takes minutes on two cores, so no request waits for it: a
thread of its own drains the queue through a second connection, a small batch at a time after the
person's requests (the service's Foreground, as re-embedding does: service/reembed.py), stops at close
after its batch, and a kill loses nothing (the next start resumes the queue). Searches use the passage
vectors there are meanwhile; a memory not yet done is still found by its own vector and its words.

Vectors of two models must not meet: a batch is written only if the store's model is still the one that
embedded it (checked in the writing transaction, which takes the write lock: a switch commits before or
after, never in between).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

from ..engine.embed import Embedder
from ..engine.foreground import Foreground
from ..engine.store import Store

log = logging.getLogger(__name__)

BATCH = 8  # long memories embedded per step (a few hundred passages at most: about a second on two cores)


def embed_queued(store: Store, embedder: Embedder, ids: list[str], model_key: str) -> int:
    """Embed the passages of these queued memories and write them in one transaction, if the store's vectors
    are still `embedder`'s; returns how many memories were handled (0: the model changed, nothing written)."""
    from .vector_sync import passage_vectors  # vector_sync imports this module

    rows = store.get_many(ids)
    present = [i for i in ids if i in rows]
    made = passage_vectors(embedder, [rows[i].content for i in present])
    with store.transaction():
        if store.get_meta(model_key) != embedder.vectors_id:
            return 0
        now = store.get_many(present)  # an edit since the read queued the memory again: its turn comes later
        for mid, passages in zip(present, made, strict=True):
            if mid in now and now[mid].content == rows[mid].content:
                store.passages.put(mid, passages)
    return len(ids)


class PassageBacklog:
    """The background thread draining `passage_queue` (one at a time; started by `wake`)."""

    def __init__(self, foreground: Foreground, open_store: Callable[[], Store], embedder: Callable[[], Embedder],
                 model_key: str) -> None:
        """`open_store`: a second connection to the database; `embedder`: the one whose vectors the store
        holds now (the service's, switched by re-embedding); `model_key`: the meta key naming that model."""
        self.foreground = foreground
        self.open_store = open_store
        self.embedder = embedder
        self.model_key = model_key
        self.done = 0  # memories handled by this process (for tests and status)
        self.error: str | None = None
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def wake(self) -> None:
        """Start draining the queue unless a drain is under way (cheap: call it whenever the queue may have grown)."""
        with self._lock:
            if self.running or self._stop.is_set():
                return
            self.error = None
            self._thread = threading.Thread(target=self._run, name="dm-passages", daemon=True)
            self._thread.start()

    def stop(self) -> None:
        """Stop after the current batch (the rest stays queued for the next start) and wait for it."""
        with self._lock:
            self._stop.set()
            thread, self._thread = self._thread, None
        if thread is not None:
            thread.join()

    def resume(self) -> None:
        """Allow `wake` again after a `stop` (the database file was replaced and reopened)."""
        self._stop.clear()

    def wait(self, timeout: float | None = None) -> bool:
        """Wait for the drain under way to end (tests, benchmarks); True if none runs any more."""
        thread = self._thread
        if thread is not None:
            thread.join(timeout)
        return not self.running

    def _run(self) -> None:
        store: Store | None = None
        try:
            store = self.open_store()
            while not self._stop.is_set():
                self.foreground.wait_quiet(self._stop.is_set)  # the person's requests go first
                if self._stop.is_set() or not (ids := store.passages.queued(BATCH)):
                    return
                embedder = self.embedder()
                if not embed_queued(store, embedder, ids, self.model_key):
                    return  # the model changed or is not adopted yet: the next wake, after adoption, resumes
                self.done += len(ids)
        except Exception as exc:  # noqa: BLE001 - the queue stays; the next wake (or start) resumes
            self.error = f"{type(exc).__name__}: {str(exc)[:200]}"
            log.warning("embedding passages stopped: %s (it resumes later)", self.error)
        finally:
            if store is not None:
                store.close()
