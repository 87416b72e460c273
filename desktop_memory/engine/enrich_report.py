"""What one enrichment run did (plain data, light to import: front ends decode it from the socket)."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any


@dataclass
class EnrichReport:
    """What one `enrich` run did."""

    processed: int = 0
    with_model: int = 0
    deterministic: int = 0
    failed: int = 0
    retried: int = 0
    seconds: float = 0.0
    model: str = ""
    model_error: str = ""
    remaining: int = 0
    errors: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)
