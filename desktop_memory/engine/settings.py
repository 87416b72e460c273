"""Engine settings: a small JSON file in the data folder, written atomically, that fails closed.

A settings.json that cannot be read, is not JSON, or holds a value of the wrong type, an unknown key or a
broken capture rule is never silently replaced by defaults: `Settings.load` keeps what it can (every valid
value), turns capture off, names the problem in `Settings.problem` and copies the file aside as
`settings.json.damaged-<time>` (the original stays, so the state lasts across restarts). While `problem`
is set nothing is captured (core/capture.py `decide(blocked=...)`); saving settings writes a valid file
and clears it.
"""

from __future__ import annotations

import json
import os
import re
import tempfile
import time
from dataclasses import asdict, dataclass, field, fields
from functools import cache
from pathlib import Path
from typing import Annotated, Any

from annotated_types import Ge, Interval

from ..core.capture import CaptureRule
from ..core.context import DEFAULT_BUDGET
from ..core.text import DEFAULT_MAX_BYTES

FILENAME = "settings.json"
DAMAGED = ".damaged-"
# constraints as annotated-types (pydantic reads them): pydantic itself (~70 ms) loads only when a file is checked
_Count = Annotated[int, Ge(0)]
_Positive = Annotated[int, Ge(1)]


@dataclass
class Settings:
    """What the person can tune. `problem` (never written to the file) says why the file was not usable."""

    __pydantic_config__ = {"strict": True, "extra": "forbid"}  # pydantic's ConfigDict is this dict

    max_bytes: _Positive = DEFAULT_MAX_BYTES
    context_budget: _Positive = DEFAULT_BUDGET
    context_format: str = "text"
    near_duplicate_cosine: Annotated[float, Interval(ge=0.0, le=1.0)] = 0.95
    near_duplicate_window: _Count = 512
    # enrichment (engine/enrichment.py): "" means the bundled SmolLM2-135M GGUF
    llm_model_path: str = ""
    llm_context: _Positive = 2048
    llm_threads: _Count = 0  # 0: half the cores
    llm_idle_unload_s: _Count = 120
    enrich_summary_chars: _Count = 280  # shorter texts are their own summary
    enrich_max_attempts: _Positive = 3
    # the embedding model by name (engine/embed.py MODELS); a change re-embeds in the background (service/reembed.py)
    embedding_model: str = "all-MiniLM-L6-v2"
    # the tray app (desktop_memory/qt): capture rules are regular expressions / app names to ignore
    capture_enabled: bool = True
    capture_ignore_patterns: list[str] = field(default_factory=list)
    capture_ignore_apps: list[str] = field(default_factory=list)
    # rules as data (core/capture.py CaptureRule.to_dict): ignore / redact / tag on text, app and window
    capture_rules: list[dict] = field(default_factory=list)
    capture_disabled_defaults: list[str] = field(default_factory=list)  # names of built-in rules switched off
    hotkey_search: str = "Ctrl+Alt+M"
    hotkey_capture: str = "Ctrl+Alt+C"
    hotkey_selection: str = "Ctrl+Alt+Shift+C"  # capture the selected text (X11: the PRIMARY selection)
    start_at_login: bool = False
    notify_every_capture: bool = False  # the tray app: a balloon per capture (else only what needs attention)
    welcome_shown: bool = False  # the tray app showed its first-start welcome
    # Enter in the search window also pastes into the window it was opened over (capture/paste.py; not on Wayland)
    paste_into_previous_window: bool = True
    restore_clipboard_after_paste: bool = False  # then put the clipboard's earlier content back
    problem: str | None = field(default=None, compare=False)  # set by `load` only; capture is off while set

    @classmethod
    def load(cls, folder: Path, *, keep_copy: bool = True) -> Settings:
        """The folder's settings; a damaged file gives its valid values, capture off and `problem` set."""
        path = folder / FILENAME
        try:
            data = path.read_bytes()
        except FileNotFoundError:
            return cls()
        except OSError as exc:
            return cls._damaged(path, None, f"it cannot be read: {exc.strerror}", keep_copy)
        try:
            raw = json.loads(data.decode("utf-8-sig"))  # a byte-order mark from a Windows editor is fine
        except UnicodeDecodeError:
            return cls._damaged(path, data, "it is not UTF-8 text", keep_copy)
        except json.JSONDecodeError as exc:
            return cls._damaged(path, data, f"not valid JSON: {exc.msg} at line {exc.lineno}, column {exc.colno}",
                                keep_copy)
        settings, errors = cls.checked(raw)
        return cls._damaged(path, data, "; ".join(errors), keep_copy, settings) if errors else settings

    @classmethod
    def checked(cls, raw: Any) -> tuple[Settings, list[str]]:
        """Strictly checked settings from plain data, and what was wrong (bad values are left out)."""
        if not isinstance(raw, dict):
            return cls(), [f"it holds a JSON {type(raw).__name__}, not an object"]
        raw = dict(raw)
        problems = [f"{k}: not a setting" for k in raw if k == "problem"]
        raw.pop("problem", None)
        from pydantic import ValidationError

        try:
            settings = _validate(raw)
        except ValidationError as exc:
            problems += [f"{'.'.join(map(str, e['loc']))}: "
                         f"{'not a setting' if e['type'] == 'unexpected_keyword_argument' else e['msg'].lower()}"
                         for e in exc.errors()]
            _leave_out(raw, [e["loc"] for e in exc.errors()])
            try:
                settings = _validate(raw)
            except ValidationError:  # what is left still does not check out
                settings = cls()
        problems += _rule_problems(settings)
        return settings, problems

    @classmethod
    def _damaged(cls, path: Path, data: bytes | None, detail: str, keep_copy: bool,
                 settings: Settings | None = None) -> Settings:
        copy = _keep_copy(path, data) if keep_copy and data is not None else None
        kept = f"; a copy is kept as {copy.name}" if copy else ""
        settings = settings or cls()
        settings.capture_enabled = False  # never a default that captures more
        settings.problem = (f"{path} is damaged ({detail[:300]}): capture is off until you fix the file or save "
                            f"Settings again{kept}")
        return settings

    @classmethod
    def from_dict(cls, raw: object) -> Settings:
        """Settings from the engine socket: unknown keys ignored, bad values reset, `problem` carried."""
        defaults = cls()
        values: dict[str, Any] = {}
        for f in fields(cls):
            value = raw.get(f.name, getattr(defaults, f.name)) if isinstance(raw, dict) else None
            default = getattr(defaults, f.name)
            if f.name == "problem":
                values[f.name] = value if isinstance(value, str) else None
            else:
                values[f.name] = value if isinstance(value, type(default)) else default
        return cls(**values)

    def to_file(self) -> dict[str, Any]:
        """What settings.json holds (everything but `problem`)."""
        data = asdict(self)
        data.pop("problem")
        return data

    def save(self, folder: Path) -> None:
        """Write settings.json atomically (0600); a damaged file is thereby replaced and `problem` cleared."""
        folder.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=folder, prefix=".settings-", suffix=".tmp")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                json.dump(self.to_file(), fh, indent=2)
                fh.flush()
                os.fsync(fh.fileno())
            os.replace(tmp, folder / FILENAME)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
        self.problem = None


@cache
def _adapter() -> Any:
    from pydantic import TypeAdapter

    return TypeAdapter(Settings)


def _validate(raw: dict[str, Any]) -> Settings:
    """Strict types in JSON terms (a whole number is a float, `true` is not a number, "5" is not 5)."""
    return _adapter().validate_json(json.dumps(raw))


def _leave_out(raw: dict[str, Any], locations: list[tuple[Any, ...]]) -> None:
    """Leave out what validation errors point at: single elements of a list, else whole keys."""
    items: dict[str, set[int]] = {}
    for loc in locations:
        if len(loc) > 1 and isinstance(raw.get(loc[0]), list) and isinstance(loc[1], int):
            items.setdefault(loc[0], set()).add(loc[1])
        elif loc:
            raw.pop(loc[0], None)
    for key, bad in items.items():
        if isinstance(raw.get(key), list):
            raw[key] = [v for i, v in enumerate(raw[key]) if i not in bad]


def _rule_problems(settings: Settings) -> list[str]:
    """Capture rules and ignore patterns that would not work; they are left out of `settings`."""
    problems: list[str] = []
    rules = []
    for rule in settings.capture_rules:
        try:
            CaptureRule.from_dict(rule)
            rules.append(rule)
        except (TypeError, ValueError) as exc:
            problems.append(f"capture_rules: {exc}")
    patterns = []
    for pattern in settings.capture_ignore_patterns:
        try:
            re.compile(pattern)
            patterns.append(pattern)
        except re.error as exc:
            problems.append(f"capture_ignore_patterns: {pattern[:60]!r} is not a valid regular expression ({exc})")
    settings.capture_rules, settings.capture_ignore_patterns = rules, patterns
    from .embed import DEFAULT_MODEL, MODELS  # here: the settings stay importable without numpy loaded first

    if settings.embedding_model not in MODELS:
        problems.append(f"embedding_model: unknown model {settings.embedding_model[:60]!r} "
                        f"(choose one of: {', '.join(MODELS)})")
        settings.embedding_model = DEFAULT_MODEL
    return problems


def _keep_copy(path: Path, data: bytes) -> Path | None:
    """Copy the damaged file aside once (0600); an identical earlier copy is reused."""
    for old in sorted(path.parent.glob(path.name + DAMAGED + "*")):
        try:
            if old.read_bytes() == data:
                return old
        except OSError:
            continue
    copy = path.with_name(f"{path.name}{DAMAGED}{time.strftime('%Y%m%dT%H%M%S')}")
    n = 1
    while copy.exists():
        n += 1
        copy = copy.with_name(f"{path.name}{DAMAGED}{time.strftime('%Y%m%dT%H%M%S')}-{n}")
    try:
        fd = os.open(copy, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
    except OSError:
        return None
    return copy
