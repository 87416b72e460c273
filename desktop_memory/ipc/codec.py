"""Plain JSON for what crosses the socket: requests, results, domain errors.

`to_json(value, hint)` / `from_json(data, hint)` encode and decode any value by its type hint (the
service protocol's, desktop_memory/service/protocol.py): str, int, float, bool, None, bytes (base64),
Path, datetime, lists, tuples, dicts, unions and dataclasses of those (field by field; a class with a
`from_dict` is decoded by it, and encoded by its `to_dict` when it has both). `Any` is JSON as it is.
Decoding what a client sent is strict (`InvalidInput` on a wrong type or an unknown field); decoding a
result ignores fields a newer host may add.
"""

from __future__ import annotations

import base64
import collections.abc as abc
import dataclasses
import datetime as dt
import json
import types
import typing
from functools import cache
from pathlib import Path
from typing import Annotated, Any, Union

from ..core import errors
from ..engine.settings import Settings

MAX_MESSAGE = 256 * 1024 * 1024
_SEQUENCES = (list, abc.Sequence, abc.Iterable, abc.Iterator, abc.Collection, set, frozenset, abc.Set)


def dumps(data: Any) -> bytes:
    return json.dumps(data, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


def loads(raw: bytes) -> Any:
    return json.loads(raw.decode("utf-8"))


class WrongShape(errors.InvalidInput):  # turned into InvalidInput before it crosses the socket
    """A value that does not have the type the protocol declares."""


def _strip(hint: Any) -> Any:
    """The type under `Annotated[...]` (the marks are for the client, see `local_paths`)."""
    return typing.get_args(hint)[0] if typing.get_origin(hint) is Annotated else hint


def _is_union(hint: Any) -> bool:
    return typing.get_origin(hint) in (Union, types.UnionType)


@cache
def _field_hints(cls: type) -> dict[str, Any]:
    return typing.get_type_hints(cls)


def _plain(value: Any) -> Any:
    """A value typed `Any`: JSON as it is (tuples become lists, dataclasses objects, paths strings)."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return to_json(value, type(value))
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple | set | frozenset):
        return [_plain(v) for v in value]
    if isinstance(value, Path):
        return str(value)
    return value


def _parts(hint: Any) -> tuple[Any, bool, Any, tuple[Any, ...]]:
    """(the hint without Annotated, whether it is a union, its origin, its arguments): worked out once per hint
    (a search's hits are ~70 values of a dozen hints each)."""
    try:
        return _parts_cached(hint)
    except TypeError:  # an unhashable hint (Annotated with unhashable marks)
        return _parts_of(hint)


def _parts_of(hint: Any) -> tuple[Any, bool, Any, tuple[Any, ...]]:
    hint = _strip(hint)
    return hint, _is_union(hint), typing.get_origin(hint) or hint, typing.get_args(hint)


_parts_cached = cache(_parts_of)


def to_json(value: Any, hint: Any) -> Any:
    """`value` as JSON data, by its declared type."""
    hint, union, origin, args = _parts(hint)
    if value is None or hint is Any or hint is object:
        return _plain(value)
    if union:
        arms = [a for a in args if a is not type(None)]
        arm = next((a for a in arms if _accepts(a, value)), arms[0])
        return to_json(value, arm)
    if origin is bytes:
        return {"b64": base64.b64encode(value).decode("ascii")}
    if origin in (Path, dt.datetime):
        return str(value) if origin is Path else value.isoformat()
    if origin in (str, int, float, bool):
        return value
    if dataclasses.is_dataclass(origin):
        if hasattr(origin, "from_dict") and hasattr(origin, "to_dict"):
            return value.to_dict()
        hints = _field_hints(origin)
        return {f.name: to_json(getattr(value, f.name), hints[f.name]) for f in dataclasses.fields(origin)}
    if origin in (dict, abc.Mapping, abc.MutableMapping):
        vh = args[1] if args else Any
        return {str(k): to_json(v, vh) for k, v in value.items()}
    if origin is tuple and args and args[-1] is not Ellipsis:
        return [to_json(v, h) for v, h in zip(value, args, strict=True)]
    if origin is tuple or origin in _SEQUENCES:
        return [to_json(v, args[0] if args else Any) for v in value]
    return _plain(value)


def _accepts(hint: Any, value: Any) -> bool:
    origin = typing.get_origin(_strip(hint)) or _strip(hint)
    if origin is Any:
        return True
    if isinstance(origin, type):
        return isinstance(value, origin) and not (origin is int and isinstance(value, bool))
    return True


def from_json(data: Any, hint: Any, *, strict: bool = True, where: str = "value") -> Any:
    """The value of type `hint` that `data` encodes; WrongShape (an InvalidInput) when it does not fit."""
    hint, union, origin, args = _parts(hint)
    if hint is Any or hint is object:
        return data
    if data is None:
        if hint is type(None) or (union and type(None) in args):
            return None
        raise WrongShape(f"{where} must not be null")
    if union:
        arms = [a for a in args if a is not type(None)]
        for arm in arms:
            try:
                return from_json(data, arm, strict=strict, where=where)
            except WrongShape:
                if len(arms) == 1:
                    raise
        raise WrongShape(f"{where} has the wrong type")
    if origin is bytes:
        if not isinstance(data, dict) or not isinstance(data.get("b64"), str):
            raise WrongShape(f"{where} must be bytes")
        return base64.b64decode(data["b64"])
    if origin in (str, int, float, bool):
        if origin is float and isinstance(data, int) and not isinstance(data, bool):
            return float(data)
        if not isinstance(data, origin) or (origin is int and isinstance(data, bool)):
            raise WrongShape(f"{where} must be {'a number' if origin in (int, float) else origin.__name__}")
        return data
    if origin is Path:
        return Path(_expect(data, str, where))
    if origin is dt.datetime:
        try:
            return dt.datetime.fromisoformat(_expect(data, str, where))
        except ValueError as exc:
            raise WrongShape(f"{where} must be an ISO 8601 date and time") from exc
    if dataclasses.is_dataclass(origin):
        return _dataclass_from(data, origin, strict=strict, where=where)
    if origin in (dict, abc.Mapping, abc.MutableMapping):
        vh = args[1] if args else Any
        return {str(k): from_json(v, vh, strict=strict, where=f"{where}.{k}")
                for k, v in _expect(data, dict, where).items()}
    items = _expect(data, list, where)
    if origin is tuple and args and args[-1] is not Ellipsis:
        if len(items) != len(args):
            raise WrongShape(f"{where} must have {len(args)} items")
        return tuple(from_json(v, h, strict=strict, where=where) for v, h in zip(items, args, strict=True))
    out = [from_json(v, args[0] if args else Any, strict=strict, where=where) for v in items]
    if origin is tuple:
        return tuple(out)
    if origin is abc.Iterator:
        return iter(out)
    return set(out) if origin in (set, frozenset, abc.Set) else out


def _expect(data: Any, kind: type, where: str) -> Any:
    if not isinstance(data, kind):
        raise WrongShape(f"{where} must be {'an object' if kind is dict else 'a list' if kind is list else 'text'}")
    return data


def _dataclass_from(data: Any, cls: type, *, strict: bool, where: str) -> Any:
    if hasattr(cls, "from_dict"):
        if not isinstance(data, dict):
            raise WrongShape(f"{where} must be an object")
        try:
            return cls.from_dict(data)
        except (ValueError, TypeError, KeyError) as exc:
            raise WrongShape(f"{where}: {exc}") from exc
    hints = _field_hints(cls)
    known = {f.name: f for f in dataclasses.fields(cls)}
    values: dict[str, Any] = {}
    for key, value in _expect(data, dict, where).items():
        if key not in known:
            if strict:
                raise WrongShape(f"unknown field {key!r} in {where}")
            continue  # a newer host may send more
        values[key] = from_json(value, hints[key], strict=strict, where=key)
    try:
        return cls(**values)
    except TypeError as exc:
        raise WrongShape(f"{where} lacks a field ({exc})") from exc


# -- settings (the test suite and the app use these names) --------------------------------------
def settings_to(s: Settings) -> dict[str, Any]:
    return dataclasses.asdict(s)


def settings_from(d: Any) -> Settings:
    """Checked like settings.json: unknown keys ignored, values of the wrong type reset."""
    if not isinstance(d, dict):
        raise errors.InvalidInput("settings must be an object")
    return Settings.from_dict(d)


# -- errors -------------------------------------------------------------------------------------
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
