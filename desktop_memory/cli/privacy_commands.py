"""CLI commands for privacy: `backup create|verify|restore` and `encryption status|on|off`."""

from __future__ import annotations

import argparse
import getpass
import sys
from pathlib import Path
from typing import Any

from ..core.errors import InvalidInput
from ..core.plural import count
from ..service.protocol import MemoryOperations
from .commands import emit_json, handler, out


def add_parsers(sub: Any) -> None:
    """Register the privacy commands on the main parser's subcommands."""
    p = sub.add_parser("backup", help="single-file backups: create, verify, restore")
    actions = p.add_subparsers(dest="action", metavar="ACTION", required=True)
    a = actions.add_parser("create", help="write a backup file (encrypted with a passphrase you choose)")
    a.add_argument("file")
    _passphrase_args(a)
    a.add_argument("--no-passphrase", action="store_true",
                   help="write a PLAIN backup anyone with the file can read (explicit choice)")
    a.add_argument("--force", action="store_true", help="overwrite an existing file")
    a.add_argument("--json", action="store_true")
    a = actions.add_parser("verify", help="check a backup completely without restoring it")
    a.add_argument("file")
    _passphrase_args(a)
    a.add_argument("--json", action="store_true")
    a = actions.add_parser("restore", help="replace every memory with a backup's (checked first; the old "
                           "database is kept next to the new one)")
    a.add_argument("file")
    _passphrase_args(a)
    a.add_argument("--yes", action="store_true", help="do not ask for confirmation")
    a.add_argument("--start-fresh", action="store_true", help="restore into a folder whose database is missing "
                   "or empty (its old vector index is kept aside)")
    a.add_argument("--json", action="store_true")

    p = sub.add_parser("encryption", help="encryption at rest: status, on, off")
    actions = p.add_subparsers(dest="action", metavar="ACTION", required=True)
    actions.add_parser("status", help="is the database encrypted, and with which key")
    actions.add_parser("on", help="encrypt this data folder (key in the OS keyring; the default)")
    a = actions.add_parser("off", help="decrypt this data folder and keep it unencrypted (explicit choice)")
    a.add_argument("--yes", action="store_true", help="do not ask for confirmation")


def _passphrase_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--passphrase-file", metavar="FILE",
                   help="read the passphrase from the first line of FILE ('-': stdin); else you are asked")


def _passphrase(args: argparse.Namespace, *, confirm: bool) -> str | None:
    if getattr(args, "no_passphrase", False):
        if args.passphrase_file:
            raise InvalidInput("give either --passphrase-file or --no-passphrase, not both")
        return None
    if args.passphrase_file:
        try:
            raw = sys.stdin.readline() if args.passphrase_file == "-" else \
                Path(args.passphrase_file).read_text(encoding="utf-8").splitlines()[0]
        except (OSError, IndexError) as exc:
            raise InvalidInput(f"cannot read a passphrase from {args.passphrase_file}") from exc
        return raw.rstrip("\r\n")
    if not sys.stdin.isatty():
        if confirm:
            raise InvalidInput("give --passphrase-file FILE, or --no-passphrase for a plain backup")
        return None  # a plain backup needs none; an encrypted one is refused with a clear message
    first = getpass.getpass("Backup passphrase: ")
    if confirm and getpass.getpass("Same passphrase again: ") != first:
        raise InvalidInput("the two passphrases differ; nothing was written")
    return first


def _print(data: dict[str, Any], as_json: bool) -> None:
    if as_json:
        emit_json(data)
        return
    for key, value in data.items():
        out(f"{key + ':':<20}{value}")


def _confirm(question: str, yes: bool) -> bool:
    if yes:
        return True
    if not sys.stdin.isatty():
        raise InvalidInput("refusing without confirmation: add --yes")
    return input(f"{question} [y/N] ").strip().lower() in ("y", "yes")


@handler("backup", alone_for=("create_backup", "verify_backup", "restore_backup"))
def cmd_backup(service: MemoryOperations, args: argparse.Namespace) -> int:
    path = Path(args.file)
    if args.action == "create":
        info = service.create_backup(path, _passphrase(args, confirm=True), overwrite=args.force)
        if not args.json and not info.encrypted:
            print("note: this backup is NOT encrypted: anyone with the file can read your memories",
                  file=sys.stderr)
        _print(info.to_dict(), args.json)
        return 0
    if args.action == "verify":
        info = service.verify_backup(path, _passphrase(args, confirm=False))
        _print({**info.to_dict(), "ok": True}, args.json)
        return 0
    passphrase = _passphrase(args, confirm=False)
    info = service.verify_backup(path, passphrase)
    held = service.stats()
    if not _confirm(f"Replace the {count(held.memories + held.forgotten, 'memory')} in {service.folder} "
                    f"with the {count(info.memories, 'memory')} of this backup?", args.yes):
        out("Nothing restored.")
        return 1
    _print(service.restore_backup(path, passphrase).to_dict(), args.json)
    return 0


@handler("encryption", alone_for=("set_encryption",))
def cmd_encryption(service: MemoryOperations, args: argparse.Namespace) -> int:
    if args.action == "on":
        service.set_encryption(True)
    elif args.action == "off":
        if not _confirm("Decrypt the database and keep this data folder unencrypted?", args.yes):
            out("Nothing changed.")
            return 1
        service.set_encryption(False)
    out(f"encryption: {service.encryption_status()}")
    return 0
