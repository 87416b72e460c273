"""What the service answers: plain data, light to import (the GUI process decodes them from the socket)."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from ..core.models import Memory

IMPORT_BATCH = 256
IMPORT_BATCH_BYTES = 8 * 1024 * 1024  # and at most this much text per batch (two are in flight): bounded memory


@dataclass
class ImportReport:
    """Counts of an import, and each bad line with its number and reason."""

    added: int = 0  # new memories with no look-alike
    duplicates: int = 0  # exact repeats of a stored text (bumped)
    related: int = 0  # new memories grouped with a look-alike (kept, not merged)
    redacted: int = 0
    errors: list[tuple[int, str]] = field(default_factory=list)
    updated: int = 0  # a record whose identity in its source (external_id) was stored with another text: the
    #                   stored memory took the new text, the old one kept as a version

    @property
    def stored(self) -> int:
        """Records acknowledged: new memories (related or not), updated ones and duplicates."""
        return self.added + self.related + self.duplicates + self.updated

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
                "redacted": self.redacted, "updated": self.updated,
                "errors": [{"line": n, "error": e} for n, e in self.errors]}


@dataclass
class AddResult:
    """What happened to one piece of text given to `add`."""

    memory: Memory
    status: str  # "added", "related" (added, grouped with a look-alike), "duplicate" (exact, bumped)
    #              or "extended" (a capture extending the previous one; the earlier text kept as a version)
    redactions: dict[str, int] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {"status": self.status, "id": self.memory.id, "redactions": self.redactions}


# -- what the folder, backup, embedding-model and enrichment operations answer ----------------------------------
# Each is plain data the codec sends field by field; `to_dict()` is the JSON the CLI prints (`--json`): the keys
# of these fields, in this order, an optional one left out when it is None (as the engine always answered).
def _present(pairs: dict[str, Any]) -> dict[str, Any]:
    """`pairs` without the optional ones that are None."""
    return {k: v for k, v in pairs.items() if v is not None}


@dataclass(frozen=True)
class StoreStats:
    """Counts and sizes of a data folder (`stats`)."""

    data_dir: str
    memories: int
    forgotten: int
    pinned: int
    sessions: int
    by_source: dict[str, int]
    redacted_secrets: int
    oldest: str | None  # ISO 8601; None when there are no memories
    newest: str | None
    vector_queue: int
    database_bytes: int
    vector_bytes: int
    schema_version: int

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class IndexStatus:
    """What this process did to the vector index (`index_status`): state "ok", "rebuilding", "rebuilt" or
    "interrupted", and a sentence for a person ("" when there is nothing to say). The repair's fields are set
    when the index was found damaged, missing or half rebuilt (or was switched to another model); `last_repair`
    (doctor, state "ok") is the last rebuild's record as stored."""

    state: str
    message: str
    cause: str | None = None  # "was damaged", "was missing", "was left half rebuilt", "was switched"
    reason: str | None = None
    vectors: int | None = None  # vectors to put back
    embedded: int | None = None  # of which embedded again (no copy)
    at: float | None = None  # when the rebuild began (epoch seconds)
    moved_to: str | None = None  # the damaged index's folder name, moved aside ("" if none)
    done: int | None = None  # vectors put back so far
    last_repair: dict[str, Any] | None = None

    def to_dict(self) -> dict[str, Any]:
        if self.cause is None:
            return _present({"state": self.state, "message": self.message, "last_repair": self.last_repair})
        return {"cause": self.cause, "reason": self.reason, "vectors": self.vectors, "embedded": self.embedded,
                "state": self.state, "at": self.at, "moved_to": self.moved_to, "done": self.done,
                "message": self.message}


@dataclass(frozen=True)
class VectorRepairs:
    """What bringing the vector index in line with the database repaired (queued changes written, missing
    vectors put back, stale ones removed, vectors copied into the database)."""

    queued: int = 0
    missing: int = 0
    orphans: int = 0
    copied: int = 0

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class DoctorReport:
    """The checks of a data folder and what was repaired (`doctor`); `ok` when every check passed."""

    data_dir: str
    schema_version: int
    encryption: str
    sqlite_integrity: bool
    fts_integrity: bool
    fts_rows_match: bool
    embedding_model: str  # "ok" or why the embedding model does not run
    vector_repairs: VectorRepairs
    vector_index: IndexStatus
    vectors_match: bool
    ok: bool
    local_model: str | None = None  # "ok" or why the enrichment model does not run (None: not checked)

    def to_dict(self) -> dict[str, Any]:
        return _present({**asdict(self), "vector_repairs": self.vector_repairs.to_dict(),
                         "vector_index": self.vector_index.to_dict(), "local_model": self.local_model})


@dataclass(frozen=True, kw_only=True)
class BackupInfo:
    """What a backup file holds (`create_backup`, `verify_backup`): its own record (a backup made by an older
    version may lack a part: None), the file, whether it is encrypted, and the size of a file just written."""

    format: int | None = None
    app_version: str | None = None
    schema_version: int | None = None
    created_at: str | None = None
    memories: int  # these two a backup always has: checking it compares them
    embedding_model: str | None = None
    memory_digest: str
    file: str
    encrypted: bool
    bytes: int | None = None

    def to_dict(self) -> dict[str, Any]:
        return _present(asdict(self))


@dataclass(frozen=True, kw_only=True)
class RestoreReport:
    """What a restore brought back (`restore_backup`): the backup's description (as BackupInfo's), how many
    memories, their vectors reused from the backup or embedded again, and where the replaced database was kept
    (None: nowhere)."""

    format: int | None = None
    app_version: str | None = None
    schema_version: int | None = None
    created_at: str | None = None
    memories: int
    embedding_model: str | None = None
    memory_digest: str
    file: str
    encrypted: bool
    restored: int
    vectors_reused: int
    vectors_embedded: int
    previous_database: str | None

    def to_dict(self) -> dict[str, Any]:
        return {**_present(asdict(self)), "previous_database": self.previous_database}


@dataclass(frozen=True)
class EmbeddingModelInfo:
    """One known embedding model: its pip package, a summary, whether it is the default and installed."""

    name: str
    package: str
    summary: str
    default: bool
    installed: bool


@dataclass(frozen=True)
class EmbeddingModelStatus:
    """The embedding model in use, the one chosen, the re-embedding's progress (state "idle", "re-embedding" or
    "failed") with a sentence for a person, and the models known (`embedding_model_status`)."""

    model: str
    chosen: str
    state: str
    done: int
    total: int
    message: str
    models: list[EmbeddingModelInfo]

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class ModelCrashes:
    """The local model's crashes in a row, and the last one's reason."""

    in_a_row: int
    last: str


@dataclass(frozen=True)
class EnrichmentModel:
    """The local language model: the one configured, the file found (name, path, size), whether it is used and
    why not (`error`), its crashes, and whether it is loaded (None: no enrichment thread yet)."""

    configured: str
    name: str | None = None
    path: str | None = None
    bytes: int | None = None
    usable: bool = False
    error: str | None = None
    crashes: ModelCrashes | None = None
    loaded: bool | None = None

    def to_dict(self) -> dict[str, Any]:
        return _present(asdict(self))


@dataclass(frozen=True)
class EnrichmentStatus:
    """The enrichment queue's counts and rate, the thread's state and settings, and the model
    (`enrichment_status`)."""

    queued: int
    failed: int
    enriched: int
    enriched_without_model: int
    rate_per_minute: float | None  # over the last hour; None until measured
    running: bool
    worker_error: str
    threads: int
    context_tokens: int
    idle_unload_seconds: int
    model: EnrichmentModel

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "model": self.model.to_dict()}


@dataclass(frozen=True)
class QueueState:
    """The enrichment queue's counts and the local model's problem ("" when none), at `version`
    (`enrichment_changes`)."""

    version: int
    queued: int
    failed: int
    model_problem: str = ""

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class EnrichmentModelChange:
    """The model now used for enrichment (`set_enrichment_model`) and how many memories were queued again."""

    model: str
    path: str
    bytes: int
    requeued: int

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class EnrichmentSample:
    """What the model made of a sample sentence (core/enrich.Enrichment, as plain data)."""

    title: str
    summary: str
    importance: float
    entities: list[dict[str, str]]
    by: str


@dataclass(frozen=True)
class ModelCheck:
    """The model loaded and tried once (`verify_enrichment_model`): its file, how long loading and enriching
    took, and the sample's enrichment."""

    model: str
    path: str
    bytes: int
    load_seconds: float
    seconds: float
    sample: EnrichmentSample

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)
