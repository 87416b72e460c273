"""`desktop-memory --smoke-test`: prove an installation works, in a throw-away data folder.

Opens a new database, embeds, enriches one memory with the bundled GGUF, searches by words and by
meaning, builds context, imports a ChatGPT export (a zip: the readers and ijson's backend are bundled),
finds a long text by its passage, and (with a display) starts Qt and shows the tray icon for a moment.
Prints one line per step and exits 0, or names the step that failed and exits 1. Used by the installers'
checks on the frozen app, and works the same from source.
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any


def _step(name: str, fn: Callable[[], Any]) -> Any:
    started = time.perf_counter()
    value = fn()
    print(f"ok  {name} ({(time.perf_counter() - started) * 1000:.0f} ms)", flush=True)
    return value


def _import_export(service: Any, home: Path) -> Any:
    """A ChatGPT export as the service delivers it (conversations.json in a zip), recognised and imported."""
    import json
    import zipfile

    from .imports.feed import Feed, recognise

    def node(nid: str, parent: str | None, role: str | None, text: str) -> dict[str, Any]:
        message = None if role is None else {
            "id": nid, "author": {"role": role}, "create_time": 1_700_000_000.0,
            "content": {"content_type": "text", "parts": [text]}, "metadata": {}, "recipient": "all"}
        return {"id": nid, "message": message, "parent": parent, "children": []}

    mapping = {"root": node("root", None, None, ""), "u1": node("u1", "root", "user", "What is the smoke test for?"),
               "a1": node("a1", "u1", "assistant", "It proves an installation reads exports: ijson and the readers.")}
    mapping["root"]["children"], mapping["u1"]["children"] = ["u1"], ["a1"]
    conversation = {"id": "smoke-1", "title": "Smoke", "create_time": 1_700_000_000.0, "mapping": mapping,
                    "current_node": "a1"}
    export = home / "chatgpt-export.zip"
    with zipfile.ZipFile(export, "w") as zf:
        zf.writestr("conversations.json", json.dumps([conversation]))
    found = recognise(export)
    if found is None or found.name != "ChatGPT export":
        raise RuntimeError(f"the export was not recognised ({found})")
    return service.import_records(Feed(found, 1 << 24).lines())


def _long_text(service: Any) -> Any:
    """A long text whose answer is deep inside: found, and its passage is the part that answers."""
    filler = "".join(f"Paragraph {i} of the planning notes lists owners and open questions for the launch.\n\n"
                     for i in range(60))
    service.add(filler + "The staging password rotates every second Tuesday at nine.\n\n" + filler, source="cli")
    return service.search("when does the staging password rotate", limit=3)


def _tray() -> str:
    from .qt.smoke import show_tray  # only desktop_memory/qt imports PySide6

    return show_tray()


def run() -> int:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ["DESKTOP_MEMORY_ENCRYPTION"] = "off"  # a throw-away folder: no keyring needed for the check
    from .service import MemoryService

    step = "opening the engine"
    try:
        with tempfile.TemporaryDirectory(prefix="desktop-memory-smoke-") as home, \
                _step(step, lambda: MemoryService(Path(home) / "data")) as service:
            step = "embedding and storing"
            _step(step, lambda: [service.add(t, source="cli") for t in (
                "Decision: the beta ships on March 3rd; Priya owns the release notes.",
                "Pasta recipe: boil spaghetti 9 minutes, then garlic, olive oil and chili.")])
            step = "enriching with the bundled model"
            report = _step(step, lambda: service.enrich(1))
            if report.with_model != 1:
                raise RuntimeError(report.model_error or "the model did not run")
            step = "searching by words"
            hits = _step(step, lambda: service.search("beta release notes", limit=3))
            assert hits and "beta" in hits[0].memory.content, "the keyword search missed"
            step = "searching by meaning"
            hits = _step(step, lambda: service.search("italian dinner cooking", limit=1))
            assert hits and "Pasta" in hits[0].memory.content, "the semantic search missed"
            step = "building context"
            ctx = _step(step, lambda: service.context("when does the beta ship?", budget=200))
            assert "March 3rd" in ctx.text, "the context missed the memory"
            step = "importing a ChatGPT export"
            report = _step(step, lambda: _import_export(service, Path(home)))
            assert report.added == 1, f"the export's exchange was not imported ({report.to_dict()})"
            step = "finding a long text by its passage"
            hits = _step(step, lambda: _long_text(service))
            assert hits and hits[0].passage is not None and "Tuesday" in hits[0].passage.of(hits[0].memory), \
                "the passage that answers was not found"
        if os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY") or os.environ.get("QT_QPA_PLATFORM") \
                or not sys.platform.startswith("linux"):
            step = "starting Qt"
            print(f"ok  {_step(step, _tray)}")
    except Exception as exc:  # noqa: BLE001 - the barrier of the check: one line, exit 1
        print(f"desktop-memory: smoke test failed while {step}: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 1
    print("smoke test passed")
    return 0
