"""CLI commands for enrichment: `enrich`, `status`, `model show | set PATH | verify`."""

from __future__ import annotations

import argparse
from typing import Any

from ..core.errors import InvalidInput
from ..core.plural import count
from ..service.protocol import MemoryOperations
from ..service.reports import EnrichmentModel
from .commands import emit_json, handler, out


def add_parsers(sub: Any) -> None:
    """Register the enrichment subcommands on the main parser's subparsers."""
    p = sub.add_parser("enrich", help="enrich queued memories now (summary, title, importance, entities)")
    p.add_argument("--limit", "-n", type=int, default=50, help="at most this many memories (default 50)")
    p.add_argument("--all", action="store_true", help="everything in the queue")
    p.add_argument("--again", action="store_true", help="queue every memory again first")
    p.add_argument("--retry-failed", action="store_true", help="give failed jobs another chance first")
    p.add_argument("--json", action="store_true")

    p = sub.add_parser("status", help="enrichment queue length, rate and the model in use")
    p.add_argument("--json", action="store_true")

    p = sub.add_parser("model", help="the local language model used for enrichment")
    msub = p.add_subparsers(dest="model_command", metavar="ACTION", required=True)
    q = msub.add_parser("show", help="which model is configured")
    q.add_argument("--json", action="store_true")
    q = msub.add_parser("set", help="use another GGUF file ('default' for the bundled SmolLM2); re-enriches all")
    q.add_argument("path")
    q.add_argument("--json", action="store_true")
    q = msub.add_parser("verify", help="load the model and enrich a sample sentence")
    q.add_argument("--json", action="store_true")


@handler("enrich", alone_for=("enrich",))
def cmd_enrich(service: MemoryOperations, args: argparse.Namespace) -> int:
    if args.limit < 1:
        raise InvalidInput("--limit must be at least 1")
    if args.again:
        service.requeue_enrichment()
    if args.retry_failed:
        service.retry_failed_enrichment()
    report = service.enrich(10**9 if args.all else args.limit)
    if args.json:
        emit_json(report.to_dict())
        return 0
    rate = f", {report.processed / report.seconds * 60:.0f}/min" if report.seconds > 0 and report.processed else ""
    out(f"enriched {report.processed} in {report.seconds:.1f} s{rate} "
        f"({report.with_model} with {report.model or 'no model'}, {report.deterministic} patterns only, "
        f"{report.retried} to retry, {report.failed} failed); {report.remaining} still queued")
    if report.model_error:
        out(f"model: {_with_consequence(report.model_error)}")
    elif report.errors:  # e.g. the model worker crashed once: that job is tried again later
        out(f"problem: {report.errors[-1]} ({report.retried} to retry)")
    return 0


def _with_consequence(error: str) -> str:
    return error if error.endswith("without it") else f"{error} (patterns only)"


@handler("status")
def cmd_status(service: MemoryOperations, args: argparse.Namespace) -> int:
    s = service.enrichment_status()
    if args.json:
        emit_json(s.to_dict())
        return 0
    rate = f"{s.rate_per_minute}/min" if s.rate_per_minute is not None else "not measured yet"
    out(f"queued:      {s.queued}")
    out(f"failed:      {s.failed}")
    out(f"enriched:    {s.enriched} with the model, {s.enriched_without_model} with patterns only")
    out(f"rate:        {rate} (last hour)")
    _print_model(s.model)
    return 0


def _print_model(model: EnrichmentModel) -> None:
    out(f"model:       {model.name or model.configured}")
    if model.path:
        out(f"path:        {model.path} ({(model.bytes or 0) / 2**20:.0f} MB)")
    if not model.usable:
        out(f"problem:     {_with_consequence(str(model.error))}")
    elif crashes := model.crashes:
        out(f"last crash:  {crashes.last} ({crashes.in_a_row} in a row; the model is left off after 3)")


@handler("model")
def cmd_model(service: MemoryOperations, args: argparse.Namespace) -> int:
    if args.model_command == "set":
        path = None if args.path.strip().lower() in ("default", "") else args.path
        result = service.set_enrichment_model(path)
        if args.json:
            emit_json(result.to_dict())
        else:
            out(f"model set to {result.model} ({result.path}); "
                f"{count(result.requeued, 'memory')} queued for enrichment again")
        return 0
    if args.model_command == "verify":
        check = service.verify_enrichment_model()
        if args.json:
            emit_json(check.to_dict())
        else:
            sample = check.sample
            out(f"ok: {check.model} loaded in {check.load_seconds} s, sample enriched in {check.seconds} s")
            out(f"  title: {sample.title!r}  importance: {sample.importance}")
            out("  entities: " + ", ".join(f"{e['text']} ({e['type']})" for e in sample.entities))
        return 0
    s = service.enrichment_status()
    if args.json:
        emit_json(s.model.to_dict() | {"threads": s.threads, "context_tokens": s.context_tokens,
                                       "idle_unload_seconds": s.idle_unload_seconds})
    else:
        _print_model(s.model)
        out(f"threads:     {s.threads}, context {s.context_tokens} tokens, "
            f"unloaded after {s.idle_unload_seconds} s idle")
    return 0
