"""CLI commands for sync between the person's machines (issue 35): `sync setup|now|status|phrase|leave|remove`."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from ..core.errors import InvalidInput
from ..core.text import one_line
from ..service.protocol import MemoryOperations
from ..sync.status import SyncStatus, ago
from .commands import emit_json, handler, out, read_stdin


def add_parsers(sub: Any) -> None:
    """Register `sync` and its actions on the main parser's subcommands."""
    p = sub.add_parser("sync", help="sync your memories between your machines through a folder you already sync "
                       "(Syncthing, Dropbox, iCloud Drive...); alone: the status")
    actions = p.add_subparsers(dest="sync_action", metavar="ACTION")
    a = actions.add_parser("setup", help="sync through FOLDER: a new set, or join one with its recovery phrase")
    a.add_argument("folder", metavar="FOLDER", help="a folder your sync app keeps the same on every machine")
    a.add_argument("--phrase", metavar="PHRASE",
                   help="join the set in FOLDER with its recovery phrase ('-': read it from stdin, so it stays out "
                   "of your shell history)")
    a.add_argument("--name", help="how the other machines see this one (default: the host name)")
    actions.add_parser("now", help="exchange changes with the folder now")
    a = actions.add_parser("status", help="the machines of the set, what each has seen, and any problem")
    a.add_argument("--json", action="store_true")
    actions.add_parser("phrase", help="show the recovery phrase (another machine joins with it)")
    actions.add_parser("leave", help="stop syncing on this machine (its memories stay)")
    a = actions.add_parser("remove", help="remove another machine from the set (it gets no later changes)")
    a.add_argument("machine", metavar="MACHINE", help="its name or the start of its id (see `sync status`)")


@handler("sync")
def cmd_sync(service: MemoryOperations, args: argparse.Namespace) -> int:
    action = args.sync_action or "status"
    if action == "setup":
        return _setup(service, args)
    if action == "phrase":
        out(service.sync_phrase())
        return 0
    if action == "now":
        status = _until_caught_up(service, service.sync_now())
    elif action == "leave":
        status = service.sync_leave()
    elif action == "remove":
        status = service.sync_remove(args.machine)
    else:
        status = service.sync_status()
        if getattr(args, "json", False):
            emit_json(status.to_dict())
            return 1 if status.problem else 0
        print_status(status)
        return 1 if status.problem else 0
    out(status.line())
    return 1 if status.problem else 0


def _setup(service: MemoryOperations, args: argparse.Namespace) -> int:
    phrase = args.phrase
    if phrase == "-":
        phrase = read_stdin()
        if not phrase.strip():
            raise InvalidInput("--phrase -: no recovery phrase on stdin")
    folder = Path(args.folder).expanduser()
    if not folder.is_dir():  # said here too: the engine may run elsewhere than this command's working folder
        raise InvalidInput(f"{one_line(str(folder))} is not a folder: make it (or let your sync app make it) first")
    status = _until_caught_up(service, service.sync_setup(folder.absolute(), phrase, args.name))
    out(status.line())
    if phrase is None and _alone(status):
        out("")
        out("This is a new sync set. Its recovery phrase (keep it private: it opens your memories):")
        out("")
        out("    " + service.sync_phrase())
        out("")
        out("On your other machine run: desktop-memory sync setup <FOLDER there> --phrase -")
        out("and type or paste the phrase. `desktop-memory sync phrase` shows it again.")
    return 1 if status.problem else 0


def _until_caught_up(service: MemoryOperations, status: SyncStatus) -> SyncStatus:
    """Step on while the engine says more is waiting (each step is a call of its own: the app's searches and the
    other front ends' calls go in between)."""
    said = False
    while status.catching_up and not status.problem:
        if not said:
            print("catching up with the other machines' memories...", file=sys.stderr, flush=True)
            said = True
        status = service.sync_now()
    return status


def _alone(status: SyncStatus) -> bool:
    """No other machine in the set yet: it was just created here."""
    return not any(not m.me for m in status.machines)


def print_status(status: SyncStatus) -> None:
    out(status.line())
    if not status.configured:
        return
    out(f"folder:   {status.folder}")
    out(f"machine:  {status.machine_name} ({status.machine_id[:8]})")
    if status.pending:
        out(f"pending:  {status.pending} change{'s' if status.pending != 1 else ''} not yet written to the folder")
    out("")
    rows = [("MACHINE", "ID", "SEEN/LAST", "LAST CHANGE", "")]
    for m in status.machines:
        name = f"{m.name} (this machine)" if m.me else m.name
        when = ago(m.last_change) if m.last_change is not None else "-"
        rows.append((name, m.id[:8], f"{m.seen_seq}/{m.last_seq}", when, "removed" if m.removed else ""))
    widths = [max(len(r[i]) for r in rows) for i in range(4)]
    for r in rows:
        out(("  ".join(cell.ljust(widths[i]) for i, cell in enumerate(r[:4])) + "  " + r[4]).rstrip())
