"""Plain JSON for what crosses the socket: requests, results, domain errors."""

from __future__ import annotations

import dataclasses
import datetime as dt
import json
import typing
from typing import Any

from ..core import errors
from ..core.context import Context
from ..core.models import Hit, Memory
from ..core.query import Filters
from ..engine.settings import Settings

MAX_MESSAGE = 256 * 1024 * 1024


def dumps(data: Any) -> bytes:
    return json.dumps(data, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


def loads(raw: bytes) -> Any:
    return json.loads(raw.decode("utf-8"))


def memory_to(m: Memory) -> dict[str, Any]:
    return dataclasses.asdict(m)


_MEMORY_FIELDS = frozenset(f.name for f in dataclasses.fields(Memory))


def memory_from(d: dict[str, Any]) -> Memory:
    return Memory(**{k: v for k, v in d.items() if k in _MEMORY_FIELDS})  # a newer host may send more


def hit_to(h: Hit) -> dict[str, Any]:
    return {"memory": memory_to(h.memory), "score": h.score, "explain": h.explain,
            "similar": [memory_to(m) for m in h.similar]}


def hit_from(d: dict[str, Any]) -> Hit:
    return Hit(memory_from(d["memory"]), float(d["score"]), d.get("explain") or {},
               [memory_from(m) for m in d.get("similar") or ()])


def context_to(c: Context) -> dict[str, Any]:
    return dataclasses.asdict(c)


def context_from(d: dict[str, Any]) -> Context:
    return Context(**d)


def filters_to(f: Filters | None) -> dict[str, Any] | None:
    if f is None:
        return None
    d = dataclasses.asdict(f)
    for key in ("after", "before"):
        d[key] = d[key].isoformat() if d[key] else None
    return d


def filters_from(d: dict[str, Any] | None) -> Filters | None:
    """Rebuild Filters field by field from its type hints (tuples, datetimes, nested dataclasses)."""
    if d is None:
        return None
    if not isinstance(d, dict):
        raise errors.InvalidInput("filters must be an object")
    hints = typing.get_type_hints(Filters)
    known = {f.name for f in dataclasses.fields(Filters)}
    values: dict[str, Any] = {}
    for key, value in d.items():
        if key not in known:
            raise errors.InvalidInput(f"unknown filter {key!r}")
        hint = hints[key]
        if value is None:
            values[key] = None
        elif typing.get_origin(hint) is tuple:
            item = typing.get_args(hint)[0]
            values[key] = tuple(item(**v) if dataclasses.is_dataclass(item) else item(v) for v in value)
        elif dt.datetime in typing.get_args(hint):
            values[key] = dt.datetime.fromisoformat(value)
        else:
            values[key] = hint(value) if isinstance(hint, type) else value
    return Filters(**values)


def settings_to(s: Settings) -> dict[str, Any]:
    return dataclasses.asdict(s)


def settings_from(d: Any) -> Settings:
    """Checked like settings.json: unknown keys ignored, values of the wrong type reset."""
    if not isinstance(d, dict):
        raise errors.InvalidInput("settings must be an object")
    return Settings.from_dict(d)


def error_to(exc: BaseException) -> dict[str, str]:
    """A domain error keeps its class name; anything else is reported as a bug in the host, except a
    storage failure (a full disk, a read-only folder...), which is told as such (engine/failures.py)."""
    from ..engine.failures import storage_error

    if not isinstance(exc, errors.DesktopMemoryError) and (storage := storage_error(exc)) is not None:
        exc = storage
    if isinstance(exc, errors.DesktopMemoryError):
        return {"kind": type(exc).__name__, "message": str(exc)}
    return {"kind": "bug", "message": f"{type(exc).__name__}: {str(exc)[:300]}"}


class RemoteBug(RuntimeError):
    """The host failed with something other than a domain error (a bug, shown as such)."""


def error_from(d: dict[str, str]) -> Exception:
    cls = getattr(errors, str(d.get("kind")), None)
    message = str(d.get("message", ""))
    if isinstance(cls, type) and issubclass(cls, errors.DesktopMemoryError):
        return cls(message)
    return RemoteBug(f"in the desktop-memory app: {message}")
