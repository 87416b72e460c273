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
from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import Annotated, Any, Union

from ..core import errors

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


Encoder = Callable[[Any], Any]
Decoder = Callable[[Any, str], Any]


def to_json(value: Any, hint: Any) -> Any:
    """`value` as JSON data, by its declared type."""
    try:
        encode = _encoder(hint)
    except TypeError:  # an unhashable hint (Annotated with unhashable marks): built each time
        encode = _build_encoder(hint)
    return encode(value)


def from_json(data: Any, hint: Any, *, strict: bool = True, where: str = "value") -> Any:
    """The value of type `hint` that `data` encodes; WrongShape (an InvalidInput) when it does not fit."""
    try:
        decode = _decoder(hint, strict)
    except TypeError:  # an unhashable hint: built each time
        decode = _build_decoder(hint, strict)
    return decode(data, where)


# -- encoders: one function per hint, built once (a search page is ~70 values of a dozen hints) ----------
def _build_encoder(hint: Any) -> Encoder:
    hint, union, origin, args = _parts(hint)
    if hint is Any or hint is object:
        return _plain
    if union:
        return _union_encoder([a for a in args if a is not type(None)])
    if origin in (str, int, float, bool):
        return _same
    if origin is bytes:
        return _nullable(lambda v: {"b64": base64.b64encode(v).decode("ascii")})
    if origin is Path:
        return _nullable(str)
    if origin is dt.datetime:
        return _nullable(dt.datetime.isoformat)
    if dataclasses.is_dataclass(origin):
        if hasattr(origin, "from_dict") and hasattr(origin, "to_dict"):
            return _nullable(lambda v: v.to_dict())
        return _dataclass_encoder(typing.cast(type, origin))
    if origin in (dict, abc.Mapping, abc.MutableMapping):
        each = _encoder_of(args[1] if args else Any)
        return _nullable(lambda v: {str(k): each(x) for k, x in v.items()})
    if origin is tuple and args and args[-1] is not Ellipsis:
        encs = [_encoder_of(a) for a in args]
        return _nullable(lambda v: [e(x) for x, e in zip(v, encs, strict=True)])
    if origin is tuple or origin in _SEQUENCES:
        item = _encoder_of(args[0] if args else Any)
        return _nullable(lambda v: [item(x) for x in v])
    return _plain


def _encoder_of(hint: Any) -> Encoder:
    try:
        return _encoder(hint)
    except TypeError:
        return _build_encoder(hint)


_encoder = cache(_build_encoder)


def _same(value: Any) -> Any:
    return value


def _nullable(encode: Encoder) -> Encoder:
    return lambda v: None if v is None else encode(v)


def _union_encoder(arms: list[Any]) -> Encoder:
    """The first arm whose class the value is (bool is not an int here), else the first arm."""
    checks = [(_arm_class(a), a) for a in arms]

    def encode(value: Any) -> Any:
        if value is None:
            return None
        arm = next((a for kind, a in checks if kind is None or _is_a(value, kind)), arms[0])
        return _encoder_of(arm)(value)
    return encode


def _arm_class(hint: Any) -> type | None:
    """The class a union arm checks values against (None: accepts anything)."""
    origin = typing.get_origin(_strip(hint)) or _strip(hint)
    return origin if isinstance(origin, type) else None


def _is_a(value: Any, kind: type) -> bool:
    return isinstance(value, kind) and not (kind is int and isinstance(value, bool))


def _dataclass_encoder(cls: type) -> Encoder:
    fields: list[tuple[str, Encoder]] = []  # filled on first use (a class may refer to itself)

    def encode(value: Any) -> Any:
        if value is None:
            return None
        if not fields:
            hints = _field_hints(cls)
            fields.extend((f.name, _encoder_of(hints[f.name])) for f in dataclasses.fields(cls))
        return {name: enc(getattr(value, name)) for name, enc in fields}
    return encode


# -- decoders: likewise, each checks its value's type and says where it is wrong in one line ---------------
def _build_decoder(hint: Any, strict: bool) -> Decoder:
    hint, union, origin, args = _parts(hint)
    if hint is Any or hint is object:
        return _given
    if union:
        return _union_decoder([_decoder_of(a, strict) for a in args if a is not type(None)], type(None) in args)
    if hint is type(None):
        return _none_only
    decode = _SCALARS.get(origin) or _composite_decoder(origin, args, strict)
    return _not_null(decode)


def _decoder_of(hint: Any, strict: bool) -> Decoder:
    try:
        return _decoder(hint, strict)
    except TypeError:
        return _build_decoder(hint, strict)


_decoder = cache(_build_decoder)


def _given(data: Any, where: str) -> Any:
    return data


def _none_only(data: Any, where: str) -> None:
    if data is not None:
        raise WrongShape(f"{where} must be null")


def _not_null(decode: Decoder) -> Decoder:
    def checked(data: Any, where: str) -> Any:
        if data is None:
            raise WrongShape(f"{where} must not be null")
        return decode(data, where)
    return checked


def _union_decoder(arms: list[Decoder], none_ok: bool) -> Decoder:
    def decode(data: Any, where: str) -> Any:
        if data is None:
            if none_ok:
                return None
            raise WrongShape(f"{where} must not be null")
        if len(arms) == 1:
            return arms[0](data, where)
        for arm in arms:
            try:
                return arm(data, where)
            except WrongShape:
                pass
        raise WrongShape(f"{where} has the wrong type")
    return decode


def _str_from(data: Any, where: str) -> str:
    if type(data) is str or isinstance(data, str):
        return data
    raise WrongShape(f"{where} must be str")


def _int_from(data: Any, where: str) -> int:
    if type(data) is int or (isinstance(data, int) and not isinstance(data, bool)):
        return data
    raise WrongShape(f"{where} must be a number")


def _float_from(data: Any, where: str) -> float:
    if type(data) is float:
        return data
    if isinstance(data, int) and not isinstance(data, bool):
        return float(data)
    if isinstance(data, float):
        return data
    raise WrongShape(f"{where} must be a number")


def _bool_from(data: Any, where: str) -> bool:
    if isinstance(data, bool):
        return data
    raise WrongShape(f"{where} must be bool")


def _bytes_from(data: Any, where: str) -> bytes:
    if not isinstance(data, dict) or not isinstance(data.get("b64"), str):
        raise WrongShape(f"{where} must be bytes")
    return base64.b64decode(data["b64"])


def _path_from(data: Any, where: str) -> Path:
    return Path(_expect(data, str, where))


def _datetime_from(data: Any, where: str) -> dt.datetime:
    try:
        return dt.datetime.fromisoformat(_expect(data, str, where))
    except ValueError as exc:
        raise WrongShape(f"{where} must be an ISO 8601 date and time") from exc


_SCALARS: dict[Any, Decoder] = {str: _str_from, int: _int_from, float: _float_from, bool: _bool_from,
                                bytes: _bytes_from, Path: _path_from, dt.datetime: _datetime_from}


def _composite_decoder(origin: Any, args: tuple[Any, ...], strict: bool) -> Decoder:
    if dataclasses.is_dataclass(origin):
        if hasattr(origin, "from_dict"):
            return _from_dict_decoder(origin)
        return _dataclass_decoder(origin, strict)
    if origin in (dict, abc.Mapping, abc.MutableMapping):
        return _dict_decoder(_decoder_of(args[1] if args else Any, strict))
    if origin is tuple and args and args[-1] is not Ellipsis:
        return _fixed_tuple_decoder([_decoder_of(a, strict) for a in args])
    return _sequence_decoder(origin, _decoder_of(args[0] if args else Any, strict))


def _dict_decoder(each: Decoder) -> Decoder:
    def decode(data: Any, where: str) -> dict[str, Any]:
        items = _expect(data, dict, where).items()
        if each is _given:
            return {str(k): v for k, v in items}
        return {str(k): each(v, f"{where}.{k}") for k, v in items}
    return decode


def _fixed_tuple_decoder(decs: list[Decoder]) -> Decoder:
    def decode(data: Any, where: str) -> tuple[Any, ...]:
        items = _expect(data, list, where)
        if len(items) != len(decs):
            raise WrongShape(f"{where} must have {len(decs)} items")
        return tuple(d(v, where) for v, d in zip(items, decs, strict=True))
    return decode


def _sequence_decoder(origin: Any, item: Decoder) -> Decoder:
    def decode(data: Any, where: str) -> Any:
        items = _expect(data, list, where)
        out = list(items) if item is _given else [item(v, where) for v in items]
        if origin is tuple:
            return tuple(out)
        if origin is abc.Iterator:
            return iter(out)
        return set(out) if origin in (set, frozenset, abc.Set) else out
    return decode


def _expect(data: Any, kind: type, where: str) -> Any:
    if not isinstance(data, kind):
        raise WrongShape(f"{where} must be {'an object' if kind is dict else 'a list' if kind is list else 'text'}")
    return data


def _plain_type(hint: Any) -> type | None:
    """str, int, float or bool when the hint is that type (or it or None): a JSON value of exactly that
    type decodes to itself."""
    hint, union, _, args = _parts(hint)
    if union:
        arms = [a for a in args if a is not type(None)]
        hint = _parts(arms[0])[0] if len(arms) == 1 else None
    return hint if hint in (str, int, float, bool) else None


def _from_dict_decoder(cls: Any) -> Decoder:
    def decode(data: Any, where: str) -> Any:
        if not isinstance(data, dict):
            raise WrongShape(f"{where} must be an object")
        try:
            return cls.from_dict(data)
        except (ValueError, TypeError, KeyError) as exc:
            raise WrongShape(f"{where}: {exc}") from exc
    return decode


def _dataclass_decoder(cls: Any, strict: bool) -> Decoder:
    """Field by field, each by its own decoder (worked out on first use: a class may refer to itself); an
    unknown field is refused when `strict`, else skipped (a newer host may send more)."""
    fields: dict[str, tuple[type | None, Decoder]] = {}

    def decode(data: Any, where: str) -> Any:
        if not fields:
            hints = _field_hints(cls)
            fields.update((f.name, (_plain_type(hints[f.name]), _decoder_of(hints[f.name], strict)))
                          for f in dataclasses.fields(cls))
        values: dict[str, Any] = {}
        for key, value in _expect(data, dict, where).items():
            field = fields.get(key)
            if field is None:
                if strict:
                    raise WrongShape(f"unknown field {key!r} in {where}")
                continue
            # a value of exactly the field's plain type is itself; anything else goes through the check
            values[key] = value if type(value) is field[0] else field[1](value, key)
        try:
            return cls(**values)
        except TypeError as exc:
            raise WrongShape(f"{where} lacks a field ({exc})") from exc
    return decode


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
