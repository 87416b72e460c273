"""What the browser companion sends (extension/, desktop_memory/browser/host.py): one capture as plain data.

A `WebCapture` is an exchange of an AI chat (a prompt and its final answer, in a conversation), a selection or a
page's readable text. The engine decides what becomes of it (service/web.py): private windows, capture rules,
pause and secrets. An exchange becomes one memory "You: <prompt>\\n\\n<app>: <answer>" in a session per
conversation, with an identity ("<site>:<conversation>:<turn>") in the same scheme as the imports of these sites'
exports (imports/chatgpt.py, claude.py, gemini.py), so a later export adds nothing twice and a regenerated answer
(the same turn, another text) replaces the earlier one, kept as a version.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Any

KINDS = ("exchange", "selection", "page")
UNTIL_RESUMED = 32503680000.0 - 1  # `pause_capture(UNTIL_RESUMED)`: paused until resumed (core/models.LATEST - 1)
# the host names whose conversations are also in these sites' exports: the same session and identity keys
SITE_KEYS = {"chatgpt.com": "chatgpt", "chat.openai.com": "chatgpt", "claude.ai": "claude",
             "gemini.google.com": "gemini"}
_SHORT = {"kind": 20, "site": 253, "app": 100, "conversation": 200, "turn": 200, "browser": 100}  # refused longer
_CUT = {"url": 2000, "title": 500}  # cut to this length
_TEXTS = ("prompt", "answer", "text")


@dataclass(frozen=True)
class WebCapture:
    """One capture from a browser (field meanings: /work/browser-spec.md, "WebCapture")."""

    kind: str
    site: str = ""
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
        """Checked like any input from outside: ValueError (one line) on a wrong type, kind or size. An `at`
        that is not a number is dropped (the engine's clock then), never refused."""
        if not isinstance(raw, Mapping):
            raise ValueError("a capture must be an object")
        kind = raw.get("kind")
        if kind not in KINDS:
            raise ValueError(f"a capture's kind must be one of {', '.join(KINDS)}")
        values: dict[str, Any] = {"kind": kind}
        for name in (*_SHORT, *_CUT, *_TEXTS):
            value = raw.get(name, "")
            if value is None:
                value = ""
            if not isinstance(value, str):
                raise ValueError(f"a capture's {name} must be a string")
            if name in _SHORT and len(value) > _SHORT[name]:
                raise ValueError(f"a capture's {name} is longer than {_SHORT[name]} characters")
            values[name] = value[: _CUT[name]] if name in _CUT else value
        private = raw.get("private", False)
        if not isinstance(private, bool):
            raise ValueError("a capture's private must be true or false")
        at = raw.get("at")
        values["at"] = float(at) if isinstance(at, int | float) and not isinstance(at, bool) else None
        capture = cls(**values, private=private)
        if kind == "exchange" and not (capture.conversation.strip() and capture.turn.strip()):
            raise ValueError("an exchange needs its conversation and turn")
        return capture

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @property
    def site_key(self) -> str:
        """"chatgpt", "claude", "gemini" for those sites (their exports' prefix), else the host name."""
        host = self.site.strip().lower()
        return SITE_KEYS.get(host, host or "web")

    @property
    def session(self) -> str:
        """An exchange's conversation as a session key ("" for a selection or page: sessions by time)."""
        return f"{self.site_key}:{self.conversation}" if self.kind == "exchange" else ""

    @property
    def external_id(self) -> str:
        """An exchange's identity in its site ("" for a selection or page)."""
        return f"{self.site_key}:{self.conversation}:{self.turn}" if self.kind == "exchange" else ""

    @property
    def source_app(self) -> str:
        """The assistant's name for an exchange; the site for a selection or page."""
        if self.kind == "exchange":
            return self.app.strip() or self.site.strip() or "AI chat"
        return self.site.strip()

    def content(self) -> str:
        """The memory's text: an exchange as the imports write one, else the text."""
        if self.kind != "exchange":
            return self.text
        prompt, answer = self.prompt.strip(), self.answer.strip()
        if prompt and answer:
            return f"You: {prompt}\n\n{self.source_app}: {answer}"
        return f"You: {prompt}" if prompt else f"{self.source_app}: {answer}" if answer else ""
