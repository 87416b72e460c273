"""A capture from the browser companion (issue 34): what the extension sends inside a `capture` request.

PLACEHOLDER of the native-host branch: the integrator replaces this file with the engine's own (same names:
`WebCapture`, `from_dict`, `to_dict`). Fields and kinds as in the contract (docs of the companion)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Any

KINDS = ("exchange", "selection", "page")
MAX_TEXT = 1_000_000  # characters of one text field (a frame is at most 1 MB anyway)
MAX_SHORT = 4096  # url, title, site, app, conversation, turn, browser
_TEXT = ("prompt", "answer", "text")
_SHORT = ("site", "app", "url", "title", "conversation", "turn", "browser")


@dataclass(frozen=True)
class WebCapture:
    kind: str
    site: str
    app: str = ""
    url: str = ""
    title: str = ""
    conversation: str = ""
    turn: str = ""
    prompt: str = ""
    answer: str = ""
    text: str = ""
    at: float | None = None
    private: bool = False
    browser: str = ""

    @classmethod
    def from_dict(cls, raw: Any) -> WebCapture:
        """Checked: a ValueError (one line) names the first wrong field."""
        if not isinstance(raw, Mapping):
            raise ValueError("the capture is not a JSON object")
        kind = raw.get("kind")
        if kind not in KINDS:
            raise ValueError(f"capture kind must be one of {', '.join(KINDS)}")
        values: dict[str, Any] = {"kind": kind}
        for name in (*_SHORT, *_TEXT):
            value = raw.get(name, "")
            value = "" if value is None else value
            if not isinstance(value, str):
                raise ValueError(f"capture field {name!r} must be a string")
            if len(value) > (MAX_TEXT if name in _TEXT else MAX_SHORT):
                raise ValueError(f"capture field {name!r} is too long")
            values[name] = value
        if not values["site"]:
            raise ValueError("capture field 'site' is missing")
        at = raw.get("at")
        if at is not None and (isinstance(at, bool) or not isinstance(at, int | float) or not 0 <= at < 1e11):
            raise ValueError("capture field 'at' must be epoch seconds or null")
        values["at"] = None if at is None else float(at)
        private = raw.get("private", False)
        if not isinstance(private, bool):
            raise ValueError("capture field 'private' must be true or false")
        values["private"] = private
        return cls(**values)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)
