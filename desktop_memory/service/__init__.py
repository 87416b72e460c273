"""The one memory service: every front end (CLI, tray app, MCP) calls `MemoryService` and gets plain data.

The package holds the facade (`facade.MemoryService`) and the components it delegates to; this module
re-exports the names front ends and tests import from `desktop_memory.service`. The facade (and with it numpy,
Chroma, the embedder and SQLite) loads on first use of `MemoryService` or `DB_NAME` (PEP 562), so a process that
only talks to the engine over its socket (the tray app's GUI, service.protocol) never pays for it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .reports import IMPORT_BATCH, IMPORT_BATCH_BYTES, AddResult, ImportReport

if TYPE_CHECKING:
    from .facade import DB_NAME, MemoryService

__all__ = [
    "DB_NAME",
    "IMPORT_BATCH",
    "IMPORT_BATCH_BYTES",
    "AddResult",
    "ImportReport",
    "MemoryService",
]
_LAZY = ("DB_NAME", "MemoryService")


def __getattr__(name: str) -> Any:
    """The facade's names, imported when first asked for."""
    if name in _LAZY:
        from . import facade

        return getattr(facade, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
