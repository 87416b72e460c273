"""Engine settings: a small JSON file in the data folder, written atomically."""

from __future__ import annotations

import json
import os
import tempfile
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path

from ..core.context import DEFAULT_BUDGET
from ..core.text import DEFAULT_MAX_BYTES

FILENAME = "settings.json"


@dataclass
class Settings:
    """What the person can tune; unknown keys in the file are ignored, bad values reset."""

    max_bytes: int = DEFAULT_MAX_BYTES
    context_budget: int = DEFAULT_BUDGET
    context_format: str = "text"
    near_duplicate_cosine: float = 0.95
    near_duplicate_window: int = 512
    # enrichment (engine/enrichment.py): "" means the bundled SmolLM2-135M GGUF
    llm_model_path: str = ""
    llm_context: int = 2048
    llm_threads: int = 0  # 0: half the cores
    llm_idle_unload_s: int = 120
    enrich_summary_chars: int = 280  # shorter texts are their own summary
    enrich_max_attempts: int = 3
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

    @classmethod
    def load(cls, folder: Path) -> Settings:
        path = folder / FILENAME
        try:
            raw = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return cls()
        return cls.from_dict(raw)

    @classmethod
    def from_dict(cls, raw: object) -> Settings:
        """Settings from plain data (the file, or the engine socket): unknown keys ignored, bad values reset."""
        defaults = cls()
        values = {}
        for f in fields(cls):
            value = raw.get(f.name, getattr(defaults, f.name)) if isinstance(raw, dict) else None
            default = getattr(defaults, f.name)
            values[f.name] = value if isinstance(value, type(default)) else default
        return cls(**values)

    def save(self, folder: Path) -> None:
        folder.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=folder, prefix=".settings-", suffix=".tmp")
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            json.dump(asdict(self), fh, indent=2)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, folder / FILENAME)
