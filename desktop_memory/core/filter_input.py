"""Search filters from what a person typed in a front end's fields (CLI options, MCP tool arguments)."""

from __future__ import annotations

from collections.abc import Iterable

from .errors import InvalidInput
from .query import Filters, parse_date
from .text import normalise_tag


def filters_from_fields(*, sources: Iterable[str] = (), apps: Iterable[str] = (), tags: Iterable[str] = (),
                        after: str | None = None, before: str | None = None, pinned_only: bool = False,
                        include_forgotten: bool = False, name: str = "{}") -> Filters:
    """Filters from text fields: sources and apps in lower case, tags normalised like stored tags,
    dates in ISO 8601. `name` formats a field's name for an error ("--{}" for CLI options)."""
    after_dt = before_dt = None
    if after and not (after_dt := parse_date(after)):
        raise InvalidInput(f"{name.format('after')}: not an ISO date: {after!r}")
    if before and not (before_dt := parse_date(before)):
        raise InvalidInput(f"{name.format('before')}: not an ISO date: {before!r}")
    return Filters(
        sources=tuple(s.lower() for s in sources if s), apps=tuple(a.lower() for a in apps if a),
        tags=tuple(t for t in (normalise_tag(x) for x in tags if x) if t), after=after_dt, before=before_dt,
        pinned_only=pinned_only, include_forgotten=include_forgotten,
    )
