"""What adding and importing answer (plain data, light to import: the GUI process decodes them from the socket)."""

from __future__ import annotations

from dataclasses import dataclass, field
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

    @property
    def stored(self) -> int:
        """Records acknowledged: new memories (related or not) and duplicates."""
        return self.added + self.related + self.duplicates

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
                "redacted": self.redacted, "errors": [{"line": n, "error": e} for n, e in self.errors]}


@dataclass
class AddResult:
    """What happened to one piece of text given to `add`."""

    memory: Memory
    status: str  # "added", "related" (added, grouped with a look-alike), "duplicate" (exact, bumped)
    #              or "extended" (a capture extending the previous one; the earlier text kept as a version)
    redactions: dict[str, int] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {"status": self.status, "id": self.memory.id, "redactions": self.redactions}
