"""`desktop-memory` command line: argument parsing and the one error barrier."""

from __future__ import annotations

import argparse
import logging
import os
import sys
from collections.abc import Sequence
from pathlib import Path

from .. import __version__, paths
from ..core.errors import DesktopMemoryError, InvalidInput, error_line
from ..core.text import one_line, utf8_safe
from ..engine import failures, session_env
from ..ipc.client import host_or_local
from ..ipc.service_start import open_service, service_wanted
from . import (
    browser_commands,
    commands,
    embedder_commands,
    enrich_commands,
    mcp_commands,
    privacy_commands,
    sync_commands,
)

PROG = "desktop-memory"
# arguments that name files: kept as the OS gave them (a Linux file name may hold bytes that are not UTF-8,
# which Python carries as lone surrogates); every other argument is text and made valid UTF-8 (`_as_text`)
PATH_ARGS = frozenset({"data_dir", "file", "output", "config", "path", "passphrase_file", "folder"})


def _filters(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("filters (also as query words: source:X app:X #tag after:DATE before:DATE is:pinned)")
    g.add_argument("--source", action="append", default=[], help="only this source (repeatable)")
    g.add_argument("--app", action="append", default=[], help="only from this app (substring, repeatable)")
    g.add_argument("--tag", action="append", default=[], dest="tags", help="only with this tag (repeatable)")
    g.add_argument("--after", help="created on or after this ISO date/time")
    g.add_argument("--before", help="created before this ISO date/time")
    g.add_argument("--pinned", action="store_true", help="only pinned memories")
    g.add_argument("--include-forgotten", action="store_true", help="also search forgotten memories")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=PROG,
        description="Private, offline memory for your desktop: remember what you copy, find it, "
        "and paste it as context into any AI chat.",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    parser.add_argument("--data-dir", help="data folder (default: $DESKTOP_MEMORY_HOME or the user data folder)")
    parser.add_argument("--debug", action="store_true", help="log details (never captured text) to stderr")
    parser.add_argument("--smoke-test", action="store_true",
                        help="check this installation in a throw-away folder (engine, models, Qt) and exit")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    p = sub.add_parser("add", help="remember a text (argument, or stdin when none or '-')")
    p.add_argument("text", nargs="*", help="the text; read from stdin when omitted or '-'")
    p.add_argument("--title", default="")
    p.add_argument("--tag", action="append", default=[], dest="tags")
    p.add_argument("--pin", action="store_true")
    p.add_argument("--importance", metavar="X", help="how important, from 0 to 1 (default: estimated)")
    p.add_argument("--source", default="cli")
    p.add_argument("--created-at", metavar="TIME", help="when it was written, ISO 8601 (default: now)")
    p.add_argument("--meta", action="append", default=[], metavar="KEY=VALUE", type=_key_value,
                   help="a metadata entry, its value text (repeatable)")
    p.add_argument("--metadata", metavar="JSON", help="metadata as a JSON object (--meta entries go over it)")
    p.add_argument("--json", action="store_true")

    p = sub.add_parser("capture", help="remember a text as a capture: the app's capture rules decide (argument, "
                       "or stdin when none or '-')")
    p.add_argument("text", nargs="*", help="the text; read from stdin when omitted or '-'")
    p.add_argument("--app", default="", help="the app it came from (for the rules and the memory)")
    p.add_argument("--window", default="", help="the window title it came from (for the rules)")
    p.add_argument("--json", action="store_true")

    p = sub.add_parser("import", help="import JSON Lines, or a ChatGPT, Claude or Gemini export, Markdown notes, "
                       "an Obsidian vault, text files")
    p.add_argument("file", help="a file or folder (what it is, is recognised), or '-' for JSON Lines on stdin")
    p.add_argument("--json", action="store_true")

    p = sub.add_parser("export", help="export memories as JSON Lines or Markdown")
    p.add_argument("--format", choices=("jsonl", "markdown"), default="jsonl")
    p.add_argument("--output", "-o", help="file to write (default: stdout)")
    p.add_argument("--include-forgotten", action="store_true")

    p = sub.add_parser("search", help="search by words and meaning ('-': one query per stdin line)")
    p.add_argument("query", nargs="+", help="the query, or '-' to read one query per line from stdin")
    p.add_argument("--limit", "-n", type=int, default=10)
    p.add_argument("--json", action="store_true", help="one JSON array of hits per query")
    p.add_argument("--explain", action="store_true", help="show per-channel scores")
    p.add_argument("--expand", action="store_true", help="list look-alike memories one by one instead of "
                   "grouping them under the best one ('+N similar')")
    _filters(p)

    p = sub.add_parser("context", help="pasteable context for an AI chat from a query or chosen ids")
    p.add_argument("query", nargs="*")
    p.add_argument("--id", action="append", default=[], dest="ids", help="a memory id (repeatable)")
    p.add_argument("--budget", type=int, help="token budget (default 1500, see README)")
    p.add_argument("--format", choices=("text", "markdown"))
    p.add_argument("--limit", type=int, default=20, help="memories considered for a query")
    p.add_argument("--json", action="store_true")
    _filters(p)

    p = sub.add_parser("show", help="show one memory")
    p.add_argument("id")
    p.add_argument("--json", action="store_true")

    p = sub.add_parser("edit", help="change a memory's text or title")
    p.add_argument("id")
    p.add_argument("--content", help="new text ('-' reads stdin)")
    p.add_argument("--title")

    for name, text in (("pin", "pin memories"), ("unpin", "unpin memories"),
                       ("forget", "forget memories (soft delete; undo with restore)"),
                       ("restore", "bring forgotten memories back")):
        p = sub.add_parser(name, help=text)
        p.add_argument("ids", nargs="+", metavar="ID")

    p = sub.add_parser("tag", help="add (or with --remove, remove) tags")
    p.add_argument("id")
    p.add_argument("tags", nargs="+", metavar="TAG")
    p.add_argument("--remove", action="store_true")

    p = sub.add_parser("purge", help="delete memories for good from every store")
    p.add_argument("ids", nargs="+", metavar="ID")
    p.add_argument("--yes", action="store_true", help="do not ask for confirmation")

    p = sub.add_parser("retention", help="purge old, unimportant memories (pinned ones are kept)")
    p.add_argument("--older-than", type=float, required=True, metavar="DAYS")
    p.add_argument("--below-importance", type=float, default=1.0, metavar="X")
    p.add_argument("--forgotten-only", action="store_true")
    p.add_argument("--dry-run", action="store_true")
    p.add_argument("--yes", action="store_true")

    p = sub.add_parser("stats", help="counts and sizes")
    p.add_argument("--json", action="store_true")

    p = sub.add_parser("doctor", help="check the data folder and repair the vector index")
    p.add_argument("--start-fresh", action="store_true", help="when the database is missing or empty although "
                   "the folder held memories: start with an empty memory (the old files are kept aside)")
    p.add_argument("--json", action="store_true")
    sub.add_parser("app", help="start the tray app and its search window (the default with no command)")
    sub.add_parser("toggle", help="show or hide the running app's search window (bind it to a hotkey)")
    sub.add_parser("capture-selection", help="the running app captures the selected text (bind it to a hotkey)")
    p = sub.add_parser("engine-host")  # hidden (no help): the engine process of the app or a service (ipc/host.py)
    p.add_argument("--no-enrichment", action="store_true")
    p.add_argument("--service", action="store_true")  # started by a front end: no parent, ends when idle
    p.add_argument("--idle-exit", type=float, default=300.0)
    p.add_argument("--lock-wait", type=float)
    mcp_commands.add_parsers(sub)
    enrich_commands.add_parsers(sub)
    embedder_commands.add_parsers(sub)
    privacy_commands.add_parsers(sub)
    browser_commands.add_parsers(sub)
    sync_commands.add_parsers(sub)
    return parser


def _key_value(text: str) -> tuple[str, str]:
    """--meta KEY=VALUE (a usage error without '=' or a key)."""
    key, eq, value = text.partition("=")
    if not eq or not key.strip():
        raise argparse.ArgumentTypeError(f"expected KEY=VALUE, not {one_line(text)!r}")
    return key.strip(), value


def _as_text(args: argparse.Namespace) -> argparse.Namespace:
    """Text arguments as valid UTF-8: undecodable bytes in argv (Linux) or a lone surrogate (Windows) become
    U+FFFD, as in an imported line, instead of failing deep inside (an id, a query, a tag, a title). A file name
    is kept as given, or refused in one line when this system cannot name a file so."""
    for name, value in vars(args).items():
        if name in PATH_ARGS:
            if isinstance(value, str) and value != "-":
                try:
                    os.fsencode(value)  # a lone surrogate no file system takes (a cut emoji in a Windows path)
                except UnicodeError:
                    raise InvalidInput(f"{one_line(value)} cannot be a file name here") from None
            continue
        if isinstance(value, str):
            setattr(args, name, utf8_safe(value))
        elif isinstance(value, list) and all(isinstance(v, str) for v in value):
            setattr(args, name, [utf8_safe(v) for v in value])
    return args


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(browser_commands.native_host_argv(sys.argv[1:] if argv is None else argv))
    logging.basicConfig(level=logging.DEBUG if args.debug else logging.WARNING,
                        format="%(name)s: %(levelname)s: %(message)s")
    session_env.apply_defaults()  # an AI app or `env -i` may start us without the login's D-Bus and run folder
    if not args.debug:
        os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
        os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    try:
        args = _as_text(args)
        if args.smoke_test:
            from .. import smoke

            return smoke.run()
        if args.command == "engine-host":
            from ..ipc import host

            wait = args.lock_wait if args.lock_wait is not None else 45.0 if args.service else 2.0
            return host.main(paths.data_dir(args.data_dir), enrich=not args.no_enrichment,
                             service_idle_s=args.idle_exit if args.service else None, lock_wait_s=wait)
        if args.command in (None, "app", "toggle", "capture-selection"):
            from ..qt import launch  # Qt is imported only for the desktop app

            return launch.main(args.command, paths.data_dir(args.data_dir))
        if args.command in mcp_commands.HANDLERS:
            return mcp_commands.HANDLERS[args.command](args)
        if args.command in browser_commands.HANDLERS:
            return browser_commands.HANDLERS[args.command](args)
        commands.warn_about_settings(paths.data_dir(args.data_dir))
        if args.command in commands.ALONE:
            return commands.run(args)  # the few that need the folder to themselves (backup, encryption, enrich)
        return _through_the_engine(paths.data_dir(args.data_dir), args)
    except DesktopMemoryError as exc:
        print(f"{PROG}: {one_line(str(exc))}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print(f"{PROG}: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141
    except Exception as exc:  # noqa: BLE001 - the last barrier: one line, never a traceback
        logging.getLogger(PROG).debug("unexpected error", exc_info=True)
        if (storage := failures.storage_error(exc)) is not None:  # a full disk, a read-only folder...
            print(f"{PROG}: {one_line(str(storage))}", file=sys.stderr)
            return 1
        print(f"{PROG}: {one_line(error_line(exc))} (run with --debug for details)", file=sys.stderr)
        return 70


def _through_the_engine(folder: Path, args: argparse.Namespace) -> int:
    """Through the folder's engine service (the app's, or one started now and shared by every front end); with
    DESKTOP_MEMORY_SERVICE=off, through a running one, else the engine in this process for this command alone."""
    handler = commands.HANDLERS[args.command]
    if service_wanted():
        with open_service(folder) as remote:
            return handler(remote, args)
    opened = host_or_local(Path(folder), lambda: commands.run(args))  # the exit code when it ran here
    if isinstance(opened, int):
        return opened
    with opened:
        return handler(opened, args)


if __name__ == "__main__":
    sys.exit(main())
