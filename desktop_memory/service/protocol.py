"""The service's surface, declared once: every operation people and front ends use, with its rules.

Each operation is one declaration below: its signature, what it does (the docstring) and its rules
(`operation(...)`): which component of `MemoryService` does it (`via`), how long a caller waits for it
(`patience`), whether a person waits for it (`foreground`: background work pauses), whether a call cut off
by a lost engine may be sent again (`retry_safe`), whether it waits off the engine lane (`off_lane`) and
whether a CLI command built on it needs the data folder to itself (`alone`). Everything else reads these:
`MemoryService` performs each operation through its component, the engine socket's dispatch
(`ipc/server.py`) and the remote client (`ipc/client.RemoteService`) are generated from them, arguments
and results are encoded by the type hints (`ipc/codec.py`), and the CLI routes its commands by them.

To add an operation: declare it here and write the component method `via` names. Nothing else.
Types must be plain data the codec knows: str, int, float, bool, bytes, None, Path, datetime, lists,
tuples, dicts, dataclasses of those, and `Any` for JSON-shaped values.
"""

# mypy: disable-error-code="empty-body"
# (the declarations have no bodies: `MemoryService` and `RemoteService` perform them)

from __future__ import annotations

import functools
import importlib
import inspect
import typing
from collections.abc import Callable, Iterable, Iterator, Sequence
from functools import cache, cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Concatenate, Generic, ParamSpec, TypeVar, overload

from ..core.capture import CaptureResult, Snapshot
from ..core.context import Context
from ..core.lines import Overlong
from ..core.models import Hit, Memory, Version
from ..core.query import Filters
from ..core.web import WebCapture
from ..engine.enrich_report import EnrichReport
from ..sync.status import SyncStatus
from . import AddResult, ImportReport
from .reports import (
    BackupInfo,
    DoctorReport,
    EmbeddingModelStatus,
    EnrichmentModelChange,
    EnrichmentStatus,
    IndexStatus,
    ModelCheck,
    QueueState,
    RestoreReport,
    StoreStats,
)

if TYPE_CHECKING:  # resolved when an operation's hints are first read (_LateNames): a CLI command never loads it
    from ..engine.settings import Settings

LOCAL_PATH = "a path on the caller's machine: made absolute where the call is made"
LocalPath = Annotated[str, LOCAL_PATH]

P = ParamSpec("P")
R = TypeVar("R")

# How long a caller waits for an answer, (soft, hard) seconds: past `soft` only while the engine still answers
# a ping on a second connection (busy with someone's long request, not hung), never past `hard`.
Patience = tuple[float, float]
QUICK: Patience = (5.0, 120.0)
SEARCHING: Patience = (5.0, 60.0)
IMPORTING: Patience = (30.0, 900.0)  # one streamed chunk of an import
MODEL_LOAD: Patience = (30.0, 600.0)  # loading a GGUF model and enriching a sample with it
LONG: Patience = (30.0, 3600.0)  # the whole folder: exports, purges, backups, encryption, enriching now
LONG_POLL: Patience = (70.0, 70.0)  # the engine answers within 60 s (service/events.py)


class Operation(Generic[P, R]):
    """One declared operation: its signature and rules. As an attribute of an implementation it is a method
    that hands the call to the implementation's `_perform`."""

    def __init__(self, function: Callable[..., R], *, via: str | None, patience: Patience = QUICK,
                 foreground: bool = False, retry_safe: bool = False, off_lane: bool = False,
                 alone: bool = False) -> None:
        self.function, self.name, self.doc = function, function.__name__, function.__doc__ or ""
        self.via = via  # "component" or "component.method" of MemoryService; None: the service itself
        self.patience = patience
        self.foreground = foreground  # a person waits for it: background enrichment pauses meanwhile
        self.retry_safe = retry_safe  # asking twice does what asking once does: sent again if the engine went away
        self.off_lane = off_lane  # it waits for something and touches no engine state: answered off the engine lane
        self.alone = alone  # it runs long or replaces the database: a CLI command using it takes the folder alone

    is_property = False

    @cached_property
    def signature(self) -> inspect.Signature:
        """The parameters but `self`, annotations as written (strings); worked out on first use."""
        sig = inspect.signature(self.function)
        return sig.replace(parameters=list(sig.parameters.values())[1:])

    @property
    def component(self) -> tuple[str, str] | None:
        """(attribute of MemoryService, method name of that component), or None."""
        if self.via is None:
            return None
        part, _, method = self.via.partition(".")
        return part, method or self.name

    @cached_property
    def hints(self) -> dict[str, Any]:
        """Parameter name -> type (Annotated kept), and "return": resolved on first use."""
        return typing.get_type_hints(self.function, localns=_LATE_NAMES, include_extras=True)

    @property
    def returns(self) -> Any:
        return self.hints.get("return", Any)

    @overload
    def __get__(self, obj: None, owner: type) -> Operation[P, R]: ...
    @overload
    def __get__(self, obj: MemoryOperations, owner: type) -> Callable[P, R]: ...
    def __get__(self, obj: MemoryOperations | None, owner: type) -> Any:
        if obj is None:
            return self
        return functools.partial(obj._perform, self)

    def __call__(self, obj: MemoryOperations, /, *args: Any, **kwargs: Any) -> Any:
        """Called on the class, as a method is: `MemoryOperations.search(service, "query")`."""
        return obj._perform(self, *args, **kwargs)

    def __repr__(self) -> str:
        return f"<operation {self.name}>"


class Reading(Operation[[], R]):
    """A declared value read from the engine (an attribute, not a call)."""

    is_property = True

    def __get__(self, obj: MemoryOperations | None, owner: type) -> Any:
        return self if obj is None else obj._perform(self)


def operation(*, via: str | None, patience: Patience = QUICK, foreground: bool = False, retry_safe: bool = False,
              off_lane: bool = False, alone: bool = False
              ) -> Callable[[Callable[Concatenate[Any, P], R]], Operation[P, R]]:
    """Declare an operation with its rules (see the module's docstring)."""

    def declare(function: Callable[Concatenate[Any, P], R]) -> Operation[P, R]:
        return Operation(function, via=via, patience=patience, foreground=foreground, retry_safe=retry_safe,
                         off_lane=off_lane, alone=alone)

    return declare


def reading(*, via: str | None, retry_safe: bool = False) -> Callable[[Callable[[Any], R]], R]:
    """Declare a value read from the engine; typed as the value it reads."""

    def declare(function: Callable[[Any], R]) -> R:
        return typing.cast(R, Reading(function, via=via, retry_safe=retry_safe))

    return declare


class MemoryOperations:
    """What a front end may ask of the engine (in this process or through the engine's socket).

    Implemented by `MemoryService` (each operation performed by the component its declaration names) and by
    `ipc.client.RemoteService` (each one a call over the socket): both say how in `_perform`."""

    folder: Path  # the data folder (known locally; not a call)

    def close(self) -> None:
        """Let go: the engine itself (in-process) or the connection to it (remote). Not a call."""
        raise NotImplementedError

    def _perform(self, op: Operation[..., Any], /, *args: Any, **kwargs: Any) -> Any:
        """Do one operation with these arguments: how is what an implementation says."""
        raise NotImplementedError

    # -- adding -------------------------------------------------------------------------------
    @operation(via="ingest", foreground=True, retry_safe=True)
    def add(self, content: str | bytes, *, source: str = "manual", **fields: Any) -> AddResult:
        """Remember one text (normalised, redacted, deduplicated); searchable on return."""
        ...

    @operation(via="ingest", foreground=True, retry_safe=True)
    def capture(self, snapshot: Snapshot) -> CaptureResult:
        """A copy as plain data -> saved or skipped, with the reason (markers, rules, limits, redaction)."""
        ...

    @operation(via="web", foreground=True, retry_safe=True)
    def capture_web(self, item: WebCapture) -> CaptureResult:
        """A capture from the browser (an AI chat's exchange, a selection, a page) -> saved or skipped, with the
        reason (private windows, rules, pause, redaction); the same exchange with a new answer: a version."""
        ...

    @operation(via="web", retry_safe=True)
    def pause_capture(self, until: float | None) -> None:
        """Pause automatic capture (the app's pause, which the browser's capture honours too) until an epoch
        time (core/web.UNTIL_RESUMED: until resumed); None resumes."""
        ...

    @operation(via="web", retry_safe=True)
    def capture_paused_until(self) -> float | None:
        """When automatic capture resumes (None: not paused)."""
        ...

    @operation(via="web", patience=LONG)
    def open_spool(self, create: bool = False) -> int:
        """What the browser host kept in its spool while no engine ran, decided now; how many. With `create` (the
        host asks once it reaches the engine) the spool is made ready first: its key pair made once, the public
        half in the folder, the private half in the OS keyring. No spool and no `create`: nothing is done."""
        ...

    @operation(via="importer", foreground=True, patience=IMPORTING)
    def import_records(
        self, lines: Iterable[str | bytes | Overlong], *, progress: Callable[[ImportReport], None] | None = None
    ) -> ImportReport:
        """Import JSON Lines; `progress` after each committed batch. Streamed over the socket (not one call)."""
        ...

    # -- finding ------------------------------------------------------------------------------
    @operation(via="retrieval", foreground=True, retry_safe=True, patience=SEARCHING)
    def search(self, query: str, *, limit: int = 10, filters: Filters | None = None, record_access: bool = True,
               expand: bool = False) -> list[Hit]:
        """Keyword and semantic search fused into one ranking; look-alikes grouped unless `expand`."""
        ...

    @operation(via="retrieval", foreground=True, retry_safe=True, patience=SEARCHING)
    def context(self, query: str | None = None, *, ids: Sequence[str] = (), budget: int | None = None,
                fmt: str | None = None, limit: int = 20, filters: Filters | None = None) -> Context:
        """Pasteable context for an AI chat from a query or chosen ids, within a token budget."""
        ...

    @operation(via="lifecycle", retry_safe=True)
    def get(self, memory_id: str) -> Memory:
        """One memory by id or unique id prefix."""
        ...

    @operation(via="lifecycle", retry_safe=True)
    def versions(self, memory_id: str) -> list[Version]:
        """The earlier texts of a memory, oldest first."""
        ...

    @operation(via="lifecycle", retry_safe=True)
    def family(self, memory_id: str) -> list[Memory]:
        """A memory's look-alikes (the family it was stored in, issue 15), newest first; [] when it has none."""
        ...

    # -- changing memories ----------------------------------------------------------------------
    @operation(via="lifecycle")
    def restore_version(self, memory_id: str, seq: int) -> Memory:
        """Bring an earlier text back (the current one becomes a version)."""
        ...

    @operation(via="lifecycle", retry_safe=True)
    def set_pinned(self, memory_id: str, pinned: bool) -> Memory:
        """Pin or unpin."""
        ...

    @operation(via="lifecycle", retry_safe=True)
    def set_forgotten(self, memory_id: str, forgotten: bool) -> Memory:
        """Forget (soft delete) or bring back."""
        ...

    @operation(via="lifecycle", retry_safe=True)
    def tag(self, memory_id: str, add: Iterable[str] = (), remove: Iterable[str] = ()) -> Memory:
        """Add and remove tags."""
        ...

    @operation(via="lifecycle")
    def edit(self, memory_id: str, *, content: str | None = None, title: str | None = None) -> Memory:
        """Change a memory's text or title."""
        ...

    @operation(via="lifecycle", patience=LONG)
    def purge(self, ids: Sequence[str]) -> int:
        """Delete memories for good from every store; how many."""
        ...

    @operation(via="lifecycle", patience=LONG)
    def retention(self, *, older_than_days: float, below_importance: float = 1.0,
                  include_forgotten_only: bool = False, dry_run: bool = False) -> list[str]:
        """Purge old, unimportant memories (pinned ones kept); the ids purged (or that would be)."""
        ...

    @operation(via="lifecycle", patience=LONG)
    def erase_everything(self) -> int:
        """Delete every memory; how many."""
        ...

    # -- the data folder ------------------------------------------------------------------------
    @reading(via=None, retry_safe=True)  # MemoryService: its own attribute
    def settings(self) -> Settings:
        """The current settings (remote: each read asks the engine)."""
        ...

    @operation(via=None)
    def save_settings(self, new: Settings) -> Settings:
        """Check, write and apply new settings."""
        ...

    @operation(via="lifecycle", retry_safe=True, patience=LONG)
    def stats(self) -> StoreStats:
        """Counts and sizes."""
        ...

    @operation(via="maintenance", retry_safe=True, patience=LONG)
    def doctor(self) -> DoctorReport:
        """Check the data folder and repair the vector index."""
        ...

    @operation(via="vector_sync.status", retry_safe=True)
    def index_status(self) -> IndexStatus:
        """What happened to the vector index (ok, rebuilding, rebuilt) and a sentence for a person."""
        ...

    @operation(via="lifecycle", retry_safe=True, patience=LONG)
    def export_records(self, *, include_forgotten: bool = False) -> Iterator[dict[str, Any]]:
        """Every memory as an import-compatible record."""
        ...

    @operation(via="lifecycle", retry_safe=True, patience=LONG)
    def export_markdown(self, *, include_forgotten: bool = False) -> Iterator[str]:
        """Every memory as Markdown, in pieces."""
        ...

    @operation(via="lifecycle", retry_safe=True, patience=LONG)
    def export_to_file(self, target: Annotated[Path, LOCAL_PATH], *, fmt: str = "jsonl",
                       include_forgotten: bool = False) -> int:
        """Write every memory to a file ("jsonl" or "markdown"), readable by this user only; how many."""
        ...

    # -- sync between the person's machines (issue 35) -------------------------------------------
    @operation(via="sync", patience=LONG)
    def sync_setup(self, folder: Annotated[Path, LOCAL_PATH], phrase: str | None = None,
                   name: str | None = None) -> SyncStatus:
        """Join this machine to a sync set through a folder the person already syncs (Syncthing, Dropbox, iCloud
        Drive...): a new set when the folder has none and no `phrase` is given, else the set the recovery
        phrase opens. `name`: how other machines see this one (default: the host name). Then syncs once."""
        ...

    @operation(via="sync", patience=LONG)
    def sync_now(self) -> SyncStatus:
        """Write this machine's changes into the folder, apply the other machines' changes; the status after."""
        ...

    @operation(via="sync", retry_safe=True)
    def sync_status(self) -> SyncStatus:
        """Whether this machine syncs, the machines of the set, what each has seen, the last exchange, a problem."""
        ...

    @operation(via="sync", retry_safe=True)
    def sync_phrase(self) -> str:
        """The set's recovery phrase (another machine joins with it)."""
        ...

    @operation(via="sync")
    def sync_leave(self) -> SyncStatus:
        """Stop syncing on this machine (its memories stay; its key leaves the keyring)."""
        ...

    @operation(via="sync", patience=LONG)
    def sync_remove(self, machine: str) -> SyncStatus:
        """Remove another machine from the set (its name or id prefix): its later changes are ignored and the set
        moves to a new key it does not have."""
        ...

    # -- backup and encryption ------------------------------------------------------------------
    @operation(via="maintenance", patience=LONG, alone=True)
    def create_backup(self, target: Annotated[Path, LOCAL_PATH], passphrase: str | None, *,
                      overwrite: bool = False) -> BackupInfo:
        """Write a backup file (encrypted with the passphrase unless it is None); what it holds."""
        ...

    @operation(via="maintenance", patience=LONG, alone=True)
    def verify_backup(self, source: Annotated[Path, LOCAL_PATH], passphrase: str | None) -> BackupInfo:
        """Check a backup file completely without restoring it; what it holds."""
        ...

    @operation(via="maintenance", patience=LONG, alone=True)
    def restore_backup(self, source: Annotated[Path, LOCAL_PATH], passphrase: str | None) -> RestoreReport:
        """Replace every memory with a backup's (checked first; the old database is kept beside)."""
        ...

    @operation(via="maintenance", patience=LONG, alone=True)
    def set_encryption(self, encrypted: bool) -> str:
        """Encrypt or decrypt the database in place; the new state in a sentence."""
        ...

    @operation(via="maintenance", retry_safe=True)
    def encryption_status(self) -> str:
        """Whether the database is encrypted, and with which key, in a sentence."""
        ...

    # -- the embedding model --------------------------------------------------------------------
    @operation(via="reembed")
    def set_embedding_model(self, name: str) -> EmbeddingModelStatus:
        """Choose the embedding model by name (an unknown or uninstalled one is refused); switching
        re-embeds in the background while search uses the old vectors. The state, as below."""
        ...

    @operation(via="reembed", retry_safe=True)
    def embedding_model_status(self) -> EmbeddingModelStatus:
        """The model in use, the one chosen, the state (idle, re-embedding, failed) with the progress and a
        sentence, and the models known (name, package, summary, default, installed)."""
        ...

    # -- enrichment -----------------------------------------------------------------------------
    @operation(via="enrichment.enrich", patience=LONG, alone=True)
    def enrich(self, limit: int) -> EnrichReport:
        """Enrich up to `limit` queued memories now (waits for them)."""
        ...

    @operation(via="enrichment.status", retry_safe=True)
    def enrichment_status(self) -> EnrichmentStatus:
        """Queue counts, the model and why it is not used."""
        ...

    @operation(via="enrichment.changes", retry_safe=True, off_lane=True, patience=LONG_POLL)
    def enrichment_changes(self, since: int = -1, wait_s: float = 25.0) -> QueueState:
        """The queue's counts and the model's problem at a version, once the version differs from `since`
        (-1: at once), or after `wait_s` (at most 60) unchanged. A long poll, answered off the engine lane."""
        ...

    @operation(via="enrichment.start")
    def start_enrichment(self) -> None:
        """Enrich queued memories in the background."""
        ...

    @operation(via="enrichment.stop")
    def stop_enrichment(self) -> None:
        """Stop background enrichment."""
        ...

    @operation(via="enrichment.set_model", patience=MODEL_LOAD)
    def set_enrichment_model(self, path: Annotated[str | None, LOCAL_PATH]) -> EnrichmentModelChange:
        """Use this GGUF model (None: the bundled one); checked and loaded once."""
        ...

    @operation(via="enrichment.verify_model", patience=MODEL_LOAD)
    def verify_enrichment_model(self) -> ModelCheck:
        """Load the model once and say whether it works."""
        ...

    @operation(via="enrichment.requeue", patience=LONG)
    def requeue_enrichment(self) -> int:
        """Queue every memory for enrichment again; how many."""
        ...

    @operation(via="enrichment.retry_failed", patience=LONG)
    def retry_failed_enrichment(self) -> int:
        """Queue the failed ones again; how many."""
        ...


class _LateNames(dict):
    """Names the hints use that are imported only for type checking: imported when a hint names them."""

    LATE = {"Settings": "desktop_memory.engine.settings"}  # pydantic: ~80 ms a CLI command need not pay

    def __missing__(self, key: str) -> Any:
        if key not in self.LATE:
            raise KeyError(key)
        self[key] = value = getattr(importlib.import_module(self.LATE[key]), key)
        return value


_LATE_NAMES = _LateNames()


@cache
def operations() -> dict[str, Operation[..., Any]]:
    """Every operation of `MemoryOperations`, in declaration order."""
    return {name: member for name, member in vars(MemoryOperations).items() if isinstance(member, Operation)}
