"""`setup-browser` and the hidden `native-host`: the browser companion's native side (issue 34)."""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from .. import paths

if TYPE_CHECKING:
    from ..browser.manifests import System

Handler = Callable[[argparse.Namespace], int]
HANDLERS: dict[str, Handler] = {}
BROWSER_CHOICES = ("chrome", "chromium", "edge", "brave", "firefox", "all")  # manifests.NAMES + "all"
FIREFOX_ID = "companion@desktop-memory.org"  # manifests.FIREFOX_ID (not imported: every command starts here)
_EXTENSION_ID = re.compile(r"[a-p]{32}")


def native_host_argv(argv: Sequence[str]) -> list[str]:
    """A browser starting us as its native host gives its own arguments (Chromium: the caller's origin, then on
    Windows --parent-window=N; Firefox: the manifest's path and the add-on's id): those become `native-host`."""
    argv = list(argv)
    if argv and argv[0].startswith("chrome-extension://"):
        return ["native-host"]
    if len(argv) >= 2 and argv[0].lower().endswith(".json") and argv[1] == FIREFOX_ID:
        return ["native-host"]
    return argv


def add_parsers(sub: argparse._SubParsersAction) -> None:
    sub.add_parser("native-host")  # hidden (no help): the browser extension's host on stdin/stdout
    p = sub.add_parser("setup-browser", help="let the browser extension reach desktop-memory: write the native "
                       "messaging host's manifest for each browser (or --check, --remove)")
    p.add_argument("--browser", action="append", choices=BROWSER_CHOICES, default=[],
                   help="chrome, chromium, edge, brave, firefox or all (repeatable; default: every one used on "
                   "this computer, else all)")
    p.add_argument("--extension-id", action="append", default=[], metavar="ID",
                   help="also allow this Chromium extension id (an unpacked copy of your own; repeatable)")
    p.add_argument("--remove", action="store_true", help="remove what setup-browser wrote")
    p.add_argument("--check", action="store_true",
                   help="start the host as each set-up browser would and say whether it answers")


def cmd_native_host(args: argparse.Namespace) -> int:
    from ..browser import framing, host

    stdin, stdout = framing.binary_stdio()
    return host.run(paths.data_dir(args.data_dir), stdin, stdout)


def _usage(message: str) -> int:
    print(f"desktop-memory: setup-browser: {message}", file=sys.stderr)
    return 2


def cmd_setup_browser(args: argparse.Namespace) -> int:
    from ..browser import manifests

    if args.remove and args.check:
        return _usage("--remove and --check go alone")
    if bad := [i for i in args.extension_id if not _EXTENSION_ID.fullmatch(i)]:
        return _usage(f"{bad[0]!r} is not a Chromium extension id (32 letters a to p)")
    if args.extension_id and (args.remove or args.check):
        return _usage("--extension-id goes with writing the manifests (not with --remove or --check)")
    system = manifests.System.here()
    if "all" in args.browser:
        keys = list(manifests.NAMES)
    elif args.browser:
        keys = list(dict.fromkeys(args.browser))
    else:
        keys = manifests.installed(system) or list(manifests.NAMES)
    if args.check:
        return _check(keys if args.browser else list(manifests.NAMES), system, explicit=bool(args.browser))
    if args.remove:
        for line in manifests.remove(keys, system):
            print(line)
        return 0
    for line in manifests.install(keys, system, manifests.executable(), tuple(args.extension_id)):
        print(line)
    print("Next: install the desktop-memory extension in the browser (see the README), or run "
          "`desktop-memory setup-browser --check`.")
    return 0


def _check(keys: list[str], system: System, *, explicit: bool) -> int:
    """Every browser named (or, none named, every one set up) started as it would be; 0 when all answer."""
    from ..browser import manifests

    chosen = [k for k in keys if explicit or manifests.registered(manifests.BROWSERS[k], system) is not None]
    if not chosen:
        print("No browser is set up yet: run `desktop-memory setup-browser`.")
        return 1
    ok = True
    for key in chosen:
        browser = manifests.BROWSERS[key]
        try:
            print(f"{browser.name}: {manifests.check(browser, system)}")
        except manifests.CheckFailed as exc:
            print(f"{browser.name}: {exc}")
            ok = False
    return 0 if ok else 1


HANDLERS.update({"native-host": cmd_native_host, "setup-browser": cmd_setup_browser})
