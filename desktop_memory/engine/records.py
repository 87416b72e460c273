"""What a memory may carry, validated at the edge (pydantic v2): import lines, `add`, the CLI and MCP.

Rules (also in README.md, "The CLI contract"):
- `content` is a string and required; every other field is optional, and `null` means "not given".
- `pinned` is a JSON boolean (the strings "true" / "false" are accepted, in any case); "no", "yes",
  1, "0" and the like are refused, never guessed.
- `tags` is a list of strings, or one string split on commas and spaces; numbers, null or objects
  inside the list are refused.
- `source`, `title`, `source_app`, `source_url` are strings.
- Every string (those, tags, metadata keys and values at any depth, a version's text) is made valid UTF-8 the way
  `content` is: a lone surrogate (a cut emoji's escape "\ud83d", undecodable bytes in argv) becomes U+FFFD.
- `importance` is a finite number from 0 to 1 (true/false, NaN, infinity, 5, "0.5" are refused).
- `created_at` is an ISO 8601 time (a string) in an import line; `add` also takes epoch seconds. Every time
  is from 1970 to 2999 once in UTC (core/models.py `in_range`: what every reader can show); year 1,
  9999-12-31T23:59:59-14:00, negative epoch seconds, NaN are refused.
- `metadata` is a JSON object (keys strings, no NaN or infinity, nested at most METADATA_DEPTH levels);
  `versions` a list of objects with `content` (a string) and `created_at` / `replaced_at` (ISO 8601, in the
  same range), the earlier texts an export carries.
- `session` and `external_id` (import lines only) are strings of at most KEY_CHARS characters: the conversation
  a record belongs to (one session per key) and its identity in its source (not added again when stored).
- Unknown keys are ignored: exports of other tools carry fields of their own (ids, scores, ...),
  and a line is not refused for them.
A refused value gives one line for the person (`InvalidInput`), never pydantic's multi-line dump.
"""

from __future__ import annotations

import json
import math
from typing import Annotated, Any

from pydantic import BaseModel, BeforeValidator, ConfigDict, ValidationError
from pydantic_core import PydanticCustomError

from ..core.errors import InvalidInput
from ..core.lines import Overlong, line_limit, read_lines  # noqa: F401 - the engine's callers read lines here too
from ..core.models import from_iso, in_range
from ..core.text import utf8_safe

KEY_CHARS = 1000  # an import's `session` or `external_id` (a source's ids, a note's path) at most
METADATA_DEPTH = 32  # nested deeper, metadata would strain every recursive reader (redaction, JSON, the socket)


def _shown(value: Any) -> str:
    """A short description of a refused value: its JSON text when short, else its kind."""
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "an object"
    if isinstance(value, float) and not math.isfinite(value):
        return "NaN" if math.isnan(value) else "infinity"
    try:
        text = json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        text = type(value).__name__
    return utf8_safe(text if len(text) <= 40 else text[:37] + "...")


def _refuse(message: str) -> PydanticCustomError:
    return PydanticCustomError("desktop_memory", message)


def _string(name: str, *, required: bool = False) -> BeforeValidator:
    def check(value: Any) -> str:
        if value is None and not required:
            return ""
        if not isinstance(value, str):
            raise _refuse(f'"{name}" must be a string, not {_shown(value)}')
        return utf8_safe(value)

    return BeforeValidator(check)


def check_pinned(value: Any) -> bool:
    """True or false (JSON booleans, or the strings "true"/"false"); anything else is refused."""
    if value is None:
        return False
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() in ("true", "false"):
        return value.strip().lower() == "true"
    raise _refuse(f'"pinned" must be true or false, not {_shown(value)}')


def check_tags(value: Any) -> list[str]:
    """A list of strings, or one string split on commas and white space."""
    if value is None:
        return []
    if isinstance(value, str):
        return utf8_safe(value).replace(",", " ").split()
    if not isinstance(value, list | tuple | set | frozenset):
        raise _refuse(f'"tags" must be a list of strings or one string, not {_shown(value)}')
    for n, tag in enumerate(value, start=1):
        if not isinstance(tag, str):
            raise _refuse(f'"tags" must hold strings only; tag {n} is {_shown(tag)}')
    return [utf8_safe(tag) for tag in value]


def check_importance(value: Any) -> float | None:
    """A finite number from 0 to 1, or None (not given)."""
    if value is None:
        return None
    # compared, never converted first: an int too large for a float is refused, not an OverflowError; NaN fails
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0.0 <= value <= 1.0:
        raise _refuse(f'"importance" must be a number from 0 to 1, not {_shown(value)}')
    return float(value)


def _iso_time(value: Any, name: str = "created_at") -> float | None:
    """An ISO 8601 time from 1970 to 2999 (`in_range`) as epoch seconds; None for null or ""."""
    if value is None or value == "":
        return None
    if not isinstance(value, str):
        raise _refuse(f'"{name}" must be an ISO 8601 time (a string), not {_shown(value)}')
    try:
        ts = from_iso(value)
    except (ValueError, OverflowError, OSError):  # not ISO 8601, or a time Python cannot place (year 1 local)
        ts = None
    if ts is None or not in_range(ts):
        raise _refuse(f'"{name}" must be an ISO 8601 time from 1970 to 2999, not {value[:40]!r}')
    return ts


def check_created_at(value: Any) -> float | None:
    """An ISO 8601 string, or epoch seconds as the engine's own callers pass; from 1970 to 2999 (`in_range`)."""
    if isinstance(value, int | float) and not isinstance(value, bool):
        if not in_range(value):  # compared, never converted first: 10**400 is refused, not an OverflowError
            raise _refuse(f'"created_at" must be a time from 1970 to 2999, not {_shown(value)}')
        return float(value)
    return _iso_time(value)


def _json_value(value: Any, depth: int) -> Any:
    """A metadata value with every string (keys too) valid UTF-8; refused if JSON cannot hold it or too deep."""
    if isinstance(value, str):
        return utf8_safe(value)
    if isinstance(value, float) and not math.isfinite(value):  # not JSON: the store's json_valid CHECK refuses it
        raise _refuse(f'"metadata" must hold finite numbers only, not {_shown(value)}')
    if value is None or isinstance(value, bool | int | float):
        return value
    if depth >= METADATA_DEPTH and isinstance(value, dict | list | tuple):
        raise _refuse(f'"metadata" is nested too deeply (more than {METADATA_DEPTH} levels)')
    if isinstance(value, dict):
        if not all(isinstance(k, str) for k in value):
            raise _refuse('"metadata" keys must be strings')
        return {utf8_safe(k): _json_value(v, depth + 1) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_json_value(v, depth + 1) for v in value]
    raise _refuse(f'"metadata" must hold JSON values only, not {type(value).__name__}')


def check_metadata(value: Any) -> dict[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise _refuse(f'"metadata" must be a JSON object, not {_shown(value)}')
    return _json_value(value, 0)


Pinned = Annotated[bool, BeforeValidator(check_pinned)]
Tags = Annotated[list[str], BeforeValidator(check_tags)]
Importance = Annotated[float | None, BeforeValidator(check_importance)]


def _iso_text(name: str) -> BeforeValidator:
    def check(value: Any) -> str | None:
        _iso_time(value, name)
        return value or None

    return BeforeValidator(check)


class Version(BaseModel):
    """An earlier text of a memory, as an export carries it (times stay ISO 8601 text, checked)."""

    model_config = ConfigDict(extra="ignore")

    content: Annotated[str, _string("content", required=True)]
    created_at: Annotated[str | None, _iso_text("created_at")] = None
    replaced_at: Annotated[str | None, _iso_text("replaced_at")] = None


def _check_versions(value: Any) -> list[Any]:
    if value is None:
        return []
    if not isinstance(value, list) or not all(isinstance(v, dict) for v in value):
        raise _refuse('"versions" must be a list of objects with "content", "created_at" and "replaced_at"')
    return value


class MemoryFields(BaseModel):
    """Everything but the text that `add` and an import line may give."""

    model_config = ConfigDict(extra="ignore")

    source: Annotated[str, _string("source")] = ""
    title: Annotated[str, _string("title")] = ""
    tags: Tags = []
    pinned: Pinned = False
    importance: Importance = None
    created_at: Annotated[float | None, BeforeValidator(check_created_at)] = None
    source_app: Annotated[str, _string("source_app")] = ""
    source_url: Annotated[str, _string("source_url")] = ""
    metadata: Annotated[dict[str, Any], BeforeValidator(check_metadata)] = {}


def _key(name: str) -> BeforeValidator:
    """An import key (`session`, `external_id`): a string of at most KEY_CHARS characters, "" when not given."""
    def check(value: Any) -> str:
        if value is None:
            return ""
        if not isinstance(value, str):
            raise _refuse(f'"{name}" must be a string, not {_shown(value)}')
        if len(value) > KEY_CHARS:
            raise _refuse(f'"{name}" must be at most {KEY_CHARS} characters, not {len(value):,}')
        return utf8_safe(value)

    return BeforeValidator(check)


class ImportRecord(MemoryFields):
    """One line of a JSON Lines import (the format `export` writes, and what imports/feed.py makes of another
    tool's export): `session` groups the records of one conversation into one session, `external_id` is the
    record's identity in its source (a record whose id is stored already is not added again)."""

    content: Annotated[str, _string("content", required=True)]
    created_at: Annotated[float | None, BeforeValidator(lambda v: _iso_time(v))] = None
    versions: Annotated[list[Version], BeforeValidator(_check_versions)] = []
    session: Annotated[str, _key("session")] = ""
    external_id: Annotated[str, _key("external_id")] = ""


def _reason(exc: ValidationError) -> str:
    """The first problem as one line for the person (and how many more there are)."""
    errors = exc.errors(include_url=False)
    first = errors[0]
    loc = [str(p) for p in first["loc"]]
    if first["type"] == "desktop_memory":
        text = first["msg"]
        if loc and loc[0] == "versions" and len(loc) > 1:
            text = f"version {int(loc[1]) + 1}: {text}"
    elif first["type"] == "missing":
        name = loc[-1] if loc else "?"
        text = f'missing "{name}" (a string)' if name == "content" else f'missing "{name}"'
        if loc and loc[0] == "versions" and len(loc) > 1:
            text = f"version {int(loc[1]) + 1}: {text}"
    else:  # not expected (every field checks itself); still one line
        text = f'"{".".join(loc)}": {first["msg"]}'
    if len(errors) > 1:
        text += f" (and {len(errors) - 1} more problem{'s' if len(errors) > 2 else ''})"
    return text


def parse_line(raw: str) -> ImportRecord:
    """One JSON Lines record, validated; InvalidInput with a one-line reason otherwise."""
    try:
        data = json.loads(raw)
    except ValueError as exc:
        raise InvalidInput(f"not valid JSON ({getattr(exc, 'msg', str(exc))})") from None
    except RecursionError:
        raise InvalidInput("not valid JSON (nested too deeply)") from None
    if not isinstance(data, dict):
        raise InvalidInput("each line must be a JSON object")
    try:
        return ImportRecord.model_validate(data)
    except ValidationError as exc:
        raise InvalidInput(_reason(exc)) from None


def check_fields(**given: Any) -> MemoryFields:
    """The optional fields of `add` (from the CLI, MCP, the app or the engine socket), validated."""
    try:
        return MemoryFields.model_validate(given)
    except ValidationError as exc:
        raise InvalidInput(_reason(exc)) from None


def importance_arg(text: str | None) -> float | None:
    """A command-line importance ("0.8"), checked like an imported one."""
    if text is None:
        return None
    try:
        value: Any = float(text)
    except ValueError:
        value = text
    try:
        return check_importance(value)
    except PydanticCustomError:
        raise InvalidInput(f"--importance must be a number from 0 to 1, not {text!r}") from None
