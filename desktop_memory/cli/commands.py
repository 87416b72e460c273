"""The CLI commands: each reads its arguments, calls the service, prints the result."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any

from .. import paths
from ..core import lines as json_lines
from ..core.capture import Snapshot
from ..core.errors import InvalidInput
from ..core.filter_input import filters_from_fields
from ..core.models import Hit, Memory, to_iso
from ..core.plural import count
from ..core.query import Filters
from ..core.text import decode, first_line, one_line
from ..engine.settings import FILENAME as SETTINGS_FILE
from ..engine.settings import Settings
from ..service.protocol import MemoryOperations, operations
from ..service.reports import ImportReport, IndexStatus, VectorRepairs

Handler = Callable[[MemoryOperations, argparse.Namespace], int]
HANDLERS: dict[str, Handler] = {}
# Commands built on an operation declared `alone` (service/protocol.py): they open the data folder in this
# process, any engine service stopped first (`run`); every other command goes through the engine service.
ALONE: set[str] = set()
LOCK_WAIT_S = 30.0  # how long a command waits for any one other process to finish with the data folder


def handler(name: str, *, alone_for: Sequence[str] = ()) -> Callable[[Handler], Handler]:
    """Register a command. `alone_for`: the operations declared `alone` it calls (a test reads the handler to
    check the list): the command then runs with the folder to itself."""
    ops = operations()
    if any(not ops[op].alone for op in alone_for):
        raise ValueError(f"{name}: not declared alone: {[op for op in alone_for if not ops[op].alone]}")

    def register(fn: Handler) -> Handler:
        HANDLERS[name] = fn
        if alone_for:
            ALONE.add(name)
        return fn
    return register


def run(args: argparse.Namespace) -> int:
    """A command that needs the folder to itself (a backup, an encryption change): a running engine service is
    asked to hand it over first (the next front end starts it again); the app's engine is waited for."""
    from ..ipc.service_start import stop_service
    from ..service import MemoryService

    folder = paths.data_dir(args.data_dir)
    stop_service(folder)
    with MemoryService(folder, start_fresh=getattr(args, "start_fresh", False), **lock_waiting(folder)) as service:
        code = HANDLERS[args.command](service, args)
    note = service.index_status().message  # after close: a rebuild started by this command is done
    if note and args.command != "doctor":
        print(f"desktop-memory: {note}", file=sys.stderr)
    return code


def lock_waiting(folder: Path) -> dict[str, Any]:
    """Wait for a folder another process is using, as a person would: saying so once on stderr."""

    def waiting(holder: str) -> None:
        print(f"desktop-memory: waiting for another desktop-memory process (pid {holder}) to finish with "
              "this data folder...", file=sys.stderr, flush=True)

    # up to 30 s for each other process using the folder: a queue of commands moves on in turn
    return {"lock_wait_s": LOCK_WAIT_S, "on_lock_wait": waiting, "lock_give_up": _host_appeared(folder)}


def _host_appeared(folder: Path) -> Callable[[], bool] | None:
    """True once a new engine socket shows up (the app started): stop waiting and go through it instead."""
    from ..ipc import address

    if address.family() != "AF_UNIX":
        return None
    sock = Path(address.socket_address(folder))

    def stamp() -> tuple[int, int] | None:
        try:
            info = sock.stat()
        except OSError:
            return None
        return info.st_ino, info.st_mtime_ns

    before = stamp()  # a socket a crashed host left behind does not count
    return lambda: (now := stamp()) is not None and now != before


# -- helpers ---------------------------------------------------------------------------------
def out(text: str = "") -> None:
    sys.stdout.write(text + "\n")


def emit_json(data: Any) -> None:
    sys.stdout.write(json.dumps(data, ensure_ascii=False) + "\n")
    sys.stdout.flush()


def read_stdin() -> str:
    return decode(sys.stdin.buffer.read())


def filters_from(args: argparse.Namespace) -> Filters:
    return filters_from_fields(sources=args.source, apps=args.app, tags=args.tags, after=args.after,
                               before=args.before, pinned_only=args.pinned,
                               include_forgotten=args.include_forgotten, name="--{}")


def describe(m: Memory, width: int = 70) -> str:
    marks = ("📌 " if m.pinned else "") + ("(forgotten) " if m.forgotten else "")
    when = (to_iso(m.created_at) or "")[:16].replace("T", " ")
    return f"{m.id[:8]}  {when}  {m.source:<9} {marks}{m.title or first_line(m.content, width)}"


def warn_about_settings(folder: Path) -> None:
    """One line on stderr when settings.json is damaged (capture stays off; the command still runs)."""
    problem = Settings.load(folder).problem if (folder / SETTINGS_FILE).exists() else None
    if problem:
        print(f"desktop-memory: warning: {one_line(problem)}", file=sys.stderr)


# -- commands --------------------------------------------------------------------------------
@handler("add")
def cmd_add(service: MemoryOperations, args: argparse.Namespace) -> int:
    text = read_stdin() if not args.text or args.text == ["-"] else " ".join(args.text)
    extra: dict[str, Any] = {}
    if args.created_at is not None:
        extra["created_at"] = args.created_at  # checked by the engine (engine/records.py): ISO 8601, 1970-2999
    if metadata := _metadata(args.metadata, args.meta):
        extra["metadata"] = metadata
    result = service.add(text, source=args.source, title=args.title, tags=args.tags, pinned=args.pin,
                         importance=_importance(args.importance), **extra)
    if args.json:
        emit_json(result.to_dict())
    else:
        verb = {"added": "Remembered", "related": "Remembered", "duplicate": "Already remembered",
                "extended": "Updated"}[result.status]
        note = {"related": f" (grouped with a similar memory, {result.memory.family_id})",
                "extended": " (it extends the previous capture; the earlier text is kept as a version)",
                }.get(result.status, "")
        if result.redactions:
            note += f" ({count(sum(result.redactions.values()), 'secret')} redacted)"
        out(f"{verb} {result.memory.id}{note}")
    return 0


def _metadata(given: str | None, pairs: Sequence[tuple[str, str]]) -> dict[str, Any]:
    """--metadata (a JSON object) with the --meta KEY=VALUE entries over it; bad JSON is the person's error."""
    metadata: dict[str, Any] = {}
    if given is not None:
        try:
            value = json.loads(given)
        except (ValueError, RecursionError):
            raise InvalidInput("--metadata must be a JSON object, e.g. '{\"project\": \"alpha\"}'") from None
        if not isinstance(value, dict):
            raise InvalidInput("--metadata must be a JSON object, e.g. '{\"project\": \"alpha\"}'")
        metadata.update(value)
    metadata.update(dict(pairs))
    return metadata


def _importance(text: str | None) -> float | None:
    """`--importance`, checked as an import line's (engine/records.py: imported only when given, as it builds
    pydantic's validators, ~100 ms of a command's start)."""
    if text is None:
        return None
    from ..engine import records

    return records.importance_arg(text)


@handler("capture")
def cmd_capture(service: MemoryOperations, args: argparse.Namespace) -> int:
    """Like a copy taken by the app: secret markers aside, the capture rules, size limits and redaction apply
    (service/capture.py). Saved or skipped, the command succeeds; the message says which and why."""
    text = read_stdin() if not args.text or args.text == ["-"] else " ".join(args.text)
    result = service.capture(Snapshot(text, app=args.app, window=args.window, source="cli"))
    if args.json:
        emit_json(result.to_dict())
    else:
        out(f"{result.message} {result.memory_id}" if result.stored else result.message)
    return 0


@handler("import")
def cmd_import(service: MemoryOperations, args: argparse.Namespace) -> int:
    """JSON Lines from stdin ('-') or a file, or another tool's export recognised (imports/feed.py): each of its
    items becomes an import record, streamed through the same `import_records` (batches, acknowledgements)."""
    limit = json_lines.line_limit(service.settings.max_bytes)  # longer lines are skipped unread
    if args.file == "-":
        return _import_lines(service, args, json_lines.read_lines(sys.stdin.buffer, limit), None)
    from ..imports import feed as import_feed

    path = Path(args.file)
    if not path.exists():
        raise InvalidInput(f"no such file: {args.file}")
    found = import_feed.recognise(path)
    if found is None:
        print(f"desktop-memory: {one_line(args.file)} is not a format desktop-memory imports; it imports: "
              f"{import_feed.KNOWN}", file=sys.stderr)
        return 1
    if found.jsonl:
        with _input(args.file) as fh:
            return _import_lines(service, args, json_lines.read_lines(fh, limit), None)
    print(f"Reading {found.description}", file=sys.stderr, flush=True)
    return _import_lines(service, args, None, import_feed.Feed(found, limit))


PROGRESS_EVERY_S = (0.5, 10.0)  # between two progress lines: on a terminal, else (a log)
QUIET_S = 2.0  # no progress line before this: a short import says only its result


def _import_lines(service: MemoryOperations, args: argparse.Namespace, lines: Any, feed: Any) -> int:
    """Import `lines` (JSON Lines: "committed N" after each batch, as always) or the lines of `feed` (an
    export: a progress line now and then); the problems, bad records and the summary after."""
    import time

    start = last = time.monotonic()
    every = PROGRESS_EVERY_S[0] if sys.stderr.isatty() else PROGRESS_EVERY_S[1]

    def progress(report: ImportReport) -> None:
        nonlocal last
        if feed is None:
            print(f"committed {report.stored}", file=sys.stderr, flush=True)
            return
        now = time.monotonic()
        if now - start >= QUIET_S and now - last >= every:
            last = now
            print(f"read {feed.items:,} item(s) of {feed.conversations:,} conversation(s) or note(s), "
                  f"{report.stored:,} committed", file=sys.stderr, flush=True)

    report = service.import_records(lines if feed is None else feed.lines(), progress=progress)
    unit = "line" if feed is None else feed.unit
    if feed is not None:
        for problem in feed.problems:
            print(f"skipped: {problem}", file=sys.stderr)
        if feed.more_problems:
            print(f"... and {feed.more_problems} more problems", file=sys.stderr)
    for line, error in report.errors[:50]:
        print(f"{unit} {line}: skipped: {one_line(error)}", file=sys.stderr)
    if len(report.errors) > 50:
        print(f"... and {len(report.errors) - 50} more bad {unit}s", file=sys.stderr)
    if args.json:
        emit_json(report.to_dict() | ({"read": feed.items, "problems": len(feed.problems) + feed.more_problems}
                                      if feed is not None else {}))
    else:
        updated = f"{report.updated} updated, " if report.updated else ""
        out(f"Imported {report.added + report.related} new ({report.related} grouped with similar ones), "
            f"{updated}{count(report.duplicates, 'duplicate')}, "
            f"{count(len(report.errors), 'bad ' + unit)} skipped, {count(report.redacted, 'secret')} redacted")
    if report.errors and report.stored == 0:
        print(f"desktop-memory: nothing was imported: {'the line was' if len(report.errors) == 1 else 'every line was'}"
              " bad (above)", file=sys.stderr)
        return 1
    if feed is not None and feed.items == 0 and feed.problems:
        print("desktop-memory: nothing was imported: nothing in it could be read (above)", file=sys.stderr)
        return 1
    return 0


@contextmanager
def _input(path: str) -> Iterator[IO[bytes]]:
    """The file to import (or stdin for '-'); a file that cannot be opened is the person's error."""
    if path == "-":
        yield sys.stdin.buffer
        return
    try:
        fh = open(path, "rb")  # noqa: SIM115 - closed below
    except FileNotFoundError:
        raise InvalidInput(f"no such file: {path}") from None
    except IsADirectoryError:
        raise InvalidInput(f"{path} is a folder, not a JSON Lines file") from None
    except PermissionError:
        raise InvalidInput(f"cannot read {path}: permission denied") from None
    with fh:
        yield fh


@handler("export")
def cmd_export(service: MemoryOperations, args: argparse.Namespace) -> int:
    if args.output and args.output != "-":  # the engine writes the file: readable by this user only (0600)
        service.export_to_file(Path(args.output), fmt=args.format, include_forgotten=args.include_forgotten)
    elif args.format == "jsonl":
        for record in service.export_records(include_forgotten=args.include_forgotten):
            out(json.dumps(record, ensure_ascii=False))
    else:
        for chunk in service.export_markdown(include_forgotten=args.include_forgotten):
            sys.stdout.write(chunk)
    return 0


def _print_hits(hits: list[Hit], explain: bool) -> None:
    if not hits:
        out("No memories match. Try fewer words or remove a filter.")
    weak_before = False
    for h in hits:
        if h.weak and not weak_before:  # the weak matches come last, under a line of their own
            out("  -- weaker matches --")
        weak_before = h.weak
        more = f"  +{len(h.similar)} similar" if h.similar else ""
        out(f"{h.score:6.3f}  {describe(h.memory)}{more}")
        if h.passage is not None:  # a long memory: the part that matched
            out("        … " + first_line(" ".join(h.passage.of(h.memory).split()), 100))
        if explain:
            out("        " + "  ".join(f"{k}={v}" for k, v in h.explain.items()))


@handler("search")
def cmd_search(service: MemoryOperations, args: argparse.Namespace) -> int:
    if args.limit < 1:
        raise InvalidInput("--limit must be at least 1")
    filters = filters_from(args)
    if args.query == ["-"]:
        for raw in sys.stdin.buffer:
            query = decode(raw).strip()
            hits = service.search(query, limit=args.limit, filters=filters, expand=args.expand) if query else []
            if args.json:
                emit_json([h.to_dict(explain=args.explain) for h in hits])
            else:
                out(f"# {query}")
                _print_hits(hits, args.explain)
        return 0
    hits = service.search(" ".join(args.query), limit=args.limit, filters=filters, expand=args.expand)
    if args.json:
        emit_json([h.to_dict(explain=args.explain) for h in hits])
    else:
        _print_hits(hits, args.explain)
    return 0


@handler("context")
def cmd_context(service: MemoryOperations, args: argparse.Namespace) -> int:
    query = " ".join(args.query).strip()
    if query == "-":
        query = read_stdin().strip()
    ctx = service.context(query or None, ids=args.ids, budget=args.budget, fmt=args.format,
                          limit=args.limit, filters=filters_from(args))
    if args.json:
        emit_json(ctx.to_dict())
    elif not ctx.text:
        print("desktop-memory: no memories to build context from", file=sys.stderr)
        return 1
    else:
        out(ctx.text.rstrip("\n"))
    return 0


@handler("show")
def cmd_show(service: MemoryOperations, args: argparse.Namespace) -> int:
    m = service.get(args.id)
    if args.json:
        emit_json(m.to_dict())
        return 0
    d = m.to_dict()
    for key in ("id", "title", "source", "source_app", "source_url", "created_at", "updated_at",
                "accessed_at", "access_count", "pinned", "forgotten", "importance", "tags", "redactions",
                "family_id"):
        if d[key] not in ("", None, [], {}):
            out(f"{key + ':':<14}{d[key]}")
    for v in service.versions(m.id):
        out(f"{'version ' + str(v.seq) + ':':<14}{to_iso(v.created_at)}  {first_line(v.content, 60)}")
    if m.metadata:
        out(f"{'metadata:':<14}{json.dumps(m.metadata, ensure_ascii=False)}")
    if m.summary:
        out(f"{'summary:':<14}{m.summary}")
    out()
    out(m.content)
    return 0


@handler("edit")
def cmd_edit(service: MemoryOperations, args: argparse.Namespace) -> int:
    if args.content is None and args.title is None:
        raise InvalidInput("give --content and/or --title")
    content = read_stdin() if args.content == "-" else args.content
    m = service.edit(args.id, content=content, title=args.title)
    out(f"Edited {m.id}")
    return 0


def _each(service: MemoryOperations, ids: list[str], action: Callable[[str], Memory], verb: str) -> int:
    for i in ids:
        m = action(i)
        out(f"{verb} {m.id}")
    return 0


@handler("pin")
def cmd_pin(service: MemoryOperations, args: argparse.Namespace) -> int:
    return _each(service, args.ids, lambda i: service.set_pinned(i, True), "Pinned")


@handler("unpin")
def cmd_unpin(service: MemoryOperations, args: argparse.Namespace) -> int:
    return _each(service, args.ids, lambda i: service.set_pinned(i, False), "Unpinned")


@handler("forget")
def cmd_forget(service: MemoryOperations, args: argparse.Namespace) -> int:
    return _each(service, args.ids, lambda i: service.set_forgotten(i, True), "Forgot")


@handler("restore")
def cmd_restore(service: MemoryOperations, args: argparse.Namespace) -> int:
    return _each(service, args.ids, lambda i: service.set_forgotten(i, False), "Restored")


@handler("tag")
def cmd_tag(service: MemoryOperations, args: argparse.Namespace) -> int:
    m = service.tag(args.id, remove=args.tags) if args.remove else service.tag(args.id, add=args.tags)
    out(f"{m.id} tags: {', '.join(m.tags) or '(none)'}")
    return 0


def _confirm(question: str, yes: bool) -> bool:
    if yes:
        return True
    if not sys.stdin.isatty():
        raise InvalidInput("refusing to delete without confirmation: add --yes")
    return input(f"{question} [y/N] ").strip().lower() in ("y", "yes")


@handler("purge")
def cmd_purge(service: MemoryOperations, args: argparse.Namespace) -> int:
    memories = [service.get(i) for i in args.ids]
    if not _confirm(f"Delete {count(len(memories), 'memory')} for good?", args.yes):
        out("Nothing deleted.")
        return 1
    n = service.purge([m.id for m in memories])
    out(f"Purged {count(n, 'memory')} from every store")
    return 0


@handler("retention")
def cmd_retention(service: MemoryOperations, args: argparse.Namespace) -> int:
    ids = service.retention(older_than_days=args.older_than, below_importance=args.below_importance,
                            include_forgotten_only=args.forgotten_only, dry_run=True)
    if args.dry_run or not ids:
        out(f"{count(len(ids), 'memory')} would be purged" if args.dry_run else "Nothing to purge")
        return 0
    if not _confirm(f"Purge {count(len(ids), 'memory')} for good?", args.yes):
        out("Nothing deleted.")
        return 1
    service.purge(ids)
    out(f"Purged {count(len(ids), 'memory')}")
    return 0


@handler("stats")
def cmd_stats(service: MemoryOperations, args: argparse.Namespace) -> int:
    data = service.stats().to_dict()
    if args.json:
        emit_json(data)
    else:
        for key, value in data.items():
            out(f"{key + ':':<18}{value}")
    return 0


@handler("doctor")
def cmd_doctor(service: MemoryOperations, args: argparse.Namespace) -> int:
    report = service.doctor()
    data = report.to_dict()
    if args.json:
        emit_json(data)
    else:
        for key, value in data.items():
            if key == "vector_repairs":
                out(f"{'vector repairs:':<18}{_repairs_in_words(report.vector_repairs)}")
            elif key == "vector_index":
                out(f"{'vector index:':<18}{_index_in_words(report.vector_index)}")
            else:
                out(f"{key + ':':<18}{value}")
    return 0 if report.ok else 1


def _repairs_in_words(r: VectorRepairs) -> str:
    """doctor's vector repairs (at open and just now) as a sentence."""
    parts = [f"{r.missing:,} missing vector(s) put back" if r.missing else "",
             f"{r.orphans:,} stale vector(s) removed" if r.orphans else "",
             f"{r.queued:,} queued change(s) written" if r.queued else "",
             f"{r.copied:,} vector(s) copied into the database" if r.copied else ""]
    return ", ".join(p for p in parts if p) or "none needed"


def _index_in_words(status: IndexStatus) -> str:
    """The state of the vector index: rebuilt by this run, or the last rebuild, in words."""
    if status.message:
        why = f" Cause: {status.reason}." if status.reason else ""
        return status.message + why
    last = status.last_repair
    if not last:
        return "ok"
    when = (to_iso(last.get("at")) or "")[:16].replace("T", " ")
    return (f"ok; last rebuilt from the database on {when} UTC ({last.get('vectors', 0):,} vectors), "
            f"because it {last.get('cause', 'was damaged')}")
