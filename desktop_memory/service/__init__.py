"""The one memory service: every front end (CLI, tray app, MCP) calls `MemoryService` and gets plain data.

The package holds the facade (`facade.MemoryService`) and the components it delegates to; this module
re-exports the names front ends and tests import from `desktop_memory.service`.
"""

from __future__ import annotations

from .facade import (
    DB_NAME,
    IMPORT_BATCH,
    IMPORT_BATCH_BYTES,
    AddResult,
    ImportReport,
    MemoryService,
)

__all__ = [
    "DB_NAME",
    "IMPORT_BATCH",
    "IMPORT_BATCH_BYTES",
    "AddResult",
    "ImportReport",
    "MemoryService",
]
