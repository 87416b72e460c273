"""The service's surface, declared once: the operations people and front ends use.

`MemoryService` implements `MemoryOperations` (a test compares names and signatures, so the two cannot
drift apart). Everything else is generated from this class: the engine socket's dispatch
(`ipc/server.py`), the remote client (`ipc/client.RemoteService`) and the encoding of every argument and
result (`ipc/codec.py`, by these type hints). Front ends (tray app, CLI, MCP) are typed against it and get
either the service itself or a `RemoteService` that talks to the running app's engine.

To add an operation: declare it here and implement it on `MemoryService`. Nothing else.
Types must be plain data the codec knows: str, int, float, bool, bytes, None, Path, datetime, lists,
tuples, dicts, dataclasses of those, and `Any` for JSON-shaped values.
"""

from __future__ import annotations

import importlib
import inspect
import typing
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from functools import cache, cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Protocol, runtime_checkable

from ..core.capture import CaptureResult, Snapshot
from ..core.context import Context
from ..core.lines import Overlong
from ..core.models import Hit, Memory, Version
from ..core.query import Filters
from ..engine.enrich_report import EnrichReport
from . import AddResult, ImportReport

if TYPE_CHECKING:  # resolved when an operation's hints are first read (_LateNames): a CLI command never loads it
    from ..engine.settings import Settings

LOCAL_PATH = "a path on the caller's machine: made absolute where the call is made"
LocalPath = Annotated[str, LOCAL_PATH]


@runtime_checkable
class MemoryOperations(Protocol):
    """What a front end may ask of the engine (in this process or the app's engine host)."""

    folder: Path  # the data folder (known locally; not a call)

    def close(self) -> None:
        """Let go: the engine itself (in-process) or the connection to it (remote). Not a call."""
        ...

    # -- adding -------------------------------------------------------------------------------
    def add(self, content: str | bytes, *, source: str = "manual", **fields: Any) -> AddResult:
        """Remember one text (normalised, redacted, deduplicated); searchable on return."""
        ...

    def capture(self, snapshot: Snapshot) -> CaptureResult:
        """A copy as plain data -> saved or skipped, with the reason (markers, rules, limits, redaction)."""
        ...

    def import_records(
        self, lines: Iterable[str | bytes | Overlong], *, progress: Callable[[ImportReport], None] | None = None
    ) -> ImportReport:
        """Import JSON Lines; `progress` after each committed batch. Streamed over the socket (not one call)."""
        ...

    # -- finding ------------------------------------------------------------------------------
    def search(self, query: str, *, limit: int = 10, filters: Filters | None = None, record_access: bool = True,
               expand: bool = False) -> list[Hit]:
        """Keyword and semantic search fused into one ranking; look-alikes grouped unless `expand`."""
        ...

    def context(self, query: str | None = None, *, ids: Sequence[str] = (), budget: int | None = None,
                fmt: str | None = None, limit: int = 20, filters: Filters | None = None) -> Context:
        """Pasteable context for an AI chat from a query or chosen ids, within a token budget."""
        ...

    def get(self, memory_id: str) -> Memory:
        """One memory by id or unique id prefix."""
        ...

    def versions(self, memory_id: str) -> list[Version]:
        """The earlier texts of a memory, oldest first."""
        ...

    def family(self, memory_id: str) -> list[Memory]:
        """A memory's look-alikes (the family it was stored in, issue 15), newest first; [] when it has none."""
        ...

    # -- changing memories ----------------------------------------------------------------------
    def restore_version(self, memory_id: str, seq: int) -> Memory:
        """Bring an earlier text back (the current one becomes a version)."""
        ...

    def set_pinned(self, memory_id: str, pinned: bool) -> Memory:
        """Pin or unpin."""
        ...

    def set_forgotten(self, memory_id: str, forgotten: bool) -> Memory:
        """Forget (soft delete) or bring back."""
        ...

    def tag(self, memory_id: str, add: Iterable[str] = (), remove: Iterable[str] = ()) -> Memory:
        """Add and remove tags."""
        ...

    def edit(self, memory_id: str, *, content: str | None = None, title: str | None = None) -> Memory:
        """Change a memory's text or title."""
        ...

    def purge(self, ids: Sequence[str]) -> int:
        """Delete memories for good from every store; how many."""
        ...

    def retention(self, *, older_than_days: float, below_importance: float = 1.0,
                  include_forgotten_only: bool = False, dry_run: bool = False) -> list[str]:
        """Purge old, unimportant memories (pinned ones kept); the ids purged (or that would be)."""
        ...

    def erase_everything(self) -> int:
        """Delete every memory; how many."""
        ...

    # -- the data folder ------------------------------------------------------------------------
    @property
    def settings(self) -> Settings:
        """The current settings (remote: each read asks the engine)."""
        ...

    def save_settings(self, new: Settings) -> Settings:
        """Check, write and apply new settings."""
        ...

    def stats(self) -> dict[str, Any]:
        """Counts and sizes."""
        ...

    def doctor(self) -> dict[str, Any]:
        """Check the data folder and repair the vector index."""
        ...

    def index_status(self) -> dict[str, Any]:
        """What happened to the vector index (ok, rebuilding, rebuilt) and a sentence for a person."""
        ...

    def export_records(self, *, include_forgotten: bool = False) -> Iterator[dict[str, Any]]:
        """Every memory as an import-compatible record."""
        ...

    def export_markdown(self, *, include_forgotten: bool = False) -> Iterator[str]:
        """Every memory as Markdown, in pieces."""
        ...

    def export_to_file(self, target: Annotated[Path, LOCAL_PATH], *, fmt: str = "jsonl",
                       include_forgotten: bool = False) -> int:
        """Write every memory to a file ("jsonl" or "markdown"), readable by this user only; how many."""
        ...

    # -- backup and encryption ------------------------------------------------------------------
    def create_backup(self, target: Annotated[Path, LOCAL_PATH], passphrase: str | None, *,
                      overwrite: bool = False) -> dict[str, Any]:
        """Write a backup file (encrypted with the passphrase unless it is None); what it holds."""
        ...

    def verify_backup(self, source: Annotated[Path, LOCAL_PATH], passphrase: str | None) -> dict[str, Any]:
        """Check a backup file completely without restoring it; what it holds."""
        ...

    def restore_backup(self, source: Annotated[Path, LOCAL_PATH], passphrase: str | None) -> dict[str, Any]:
        """Replace every memory with a backup's (checked first; the old database is kept beside)."""
        ...

    def set_encryption(self, encrypted: bool) -> str:
        """Encrypt or decrypt the database in place; the new state in a sentence."""
        ...

    def encryption_status(self) -> str:
        """Whether the database is encrypted, and with which key, in a sentence."""
        ...

    # -- the embedding model --------------------------------------------------------------------
    def set_embedding_model(self, name: str) -> dict[str, Any]:
        """Choose the embedding model by name (an unknown or uninstalled one is refused); switching
        re-embeds in the background while search uses the old vectors. The state, as below."""
        ...

    def embedding_model_status(self) -> dict[str, Any]:
        """{"model" in use, "chosen", "state" (idle, re-embedding, failed), "done", "total", "message",
        "models" (name, summary, installed, default)}."""
        ...

    # -- enrichment -----------------------------------------------------------------------------
    def enrich(self, limit: int) -> EnrichReport:
        """Enrich up to `limit` queued memories now (waits for them)."""
        ...

    def enrichment_status(self) -> dict[str, Any]:
        """Queue counts, the model and why it is not used."""
        ...

    def enrichment_changes(self, since: int = -1, wait_s: float = 25.0) -> dict[str, Any]:
        """{"version", "queued", "failed"} once the version differs from `since` (-1: at once), or after
        `wait_s` (at most 60) unchanged. A long poll, answered off the engine lane (OFF_LANE)."""
        ...

    def start_enrichment(self) -> None:
        """Enrich queued memories in the background."""
        ...

    def stop_enrichment(self) -> None:
        """Stop background enrichment."""
        ...

    def set_enrichment_model(self, path: Annotated[str | None, LOCAL_PATH]) -> dict[str, Any]:
        """Use this GGUF model (None: the bundled one); checked and loaded once."""
        ...

    def verify_enrichment_model(self) -> dict[str, Any]:
        """Load the model once and say whether it works."""
        ...

    def requeue_enrichment(self) -> int:
        """Queue every memory for enrichment again; how many."""
        ...

    def retry_failed_enrichment(self) -> int:
        """Queue the failed ones again; how many."""
        ...


# Members of the protocol that are not calls to the engine.
NOT_CALLS = frozenset({"close", "folder"})
# Calls the socket answers on the connection's own thread, not the engine lane: they wait for something
# (a long poll) and touch no engine state, so they never hold up the person's requests.
OFF_LANE = frozenset({"enrichment_changes"})
# Calls a front end may send again when the engine went away during one (it crashed, or was replaced): asking
# twice does what asking once does (an exact repeat of an add is the same memory; reads; setting a flag).
IDEMPOTENT = frozenset({"add", "capture", "search", "context", "get", "versions", "family", "set_pinned",
                        "set_forgotten", "tag", "stats", "doctor", "index_status", "settings", "export_records",
                        "export_markdown", "export_to_file", "encryption_status", "embedding_model_status",
                        "enrichment_status", "enrichment_changes"})


class _LateNames(dict):
    """Names the hints use that are imported only for type checking: imported when a hint names them."""

    LATE = {"Settings": "desktop_memory.engine.settings"}  # pydantic: ~80 ms a CLI command need not pay

    def __missing__(self, key: str) -> Any:
        if key not in self.LATE:
            raise KeyError(key)
        self[key] = value = getattr(importlib.import_module(self.LATE[key]), key)
        return value


_LATE_NAMES = _LateNames()


@dataclass(frozen=True)
class Operation:
    """One operation of the protocol, as the socket's dispatch and the remote client see it."""

    name: str
    signature: inspect.Signature  # without `self`; its annotations as written (strings)
    function: Callable[..., Any]  # the declaration (a property's getter)
    is_property: bool = False
    doc: str = ""

    @cached_property
    def hints(self) -> dict[str, Any]:
        """Parameter name -> type (Annotated kept), and "return": resolved on first use."""
        return typing.get_type_hints(self.function, localns=_LATE_NAMES, include_extras=True)

    @property
    def returns(self) -> Any:
        return self.hints.get("return", Any)


@cache
def operations() -> dict[str, Operation]:
    """Every operation of `MemoryOperations`, in declaration order."""
    ops: dict[str, Operation] = {}
    for name, member in vars(MemoryOperations).items():
        if name.startswith("_") or name in NOT_CALLS:
            continue
        if isinstance(member, property):
            ops[name] = Operation(name, inspect.signature(member.fget).replace(parameters=[]), member.fget, True,
                                  member.__doc__ or "")
        elif inspect.isfunction(member):
            sig = inspect.signature(member)
            params = list(sig.parameters.values())[1:]
            ops[name] = Operation(name, sig.replace(parameters=params), member, doc=member.__doc__ or "")
    return ops
