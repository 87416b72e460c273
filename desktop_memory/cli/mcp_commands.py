"""`mcp` and `setup-mcp`: serving AI agents over MCP, and configuring the agents' apps."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable

from .. import paths

Handler = Callable[[argparse.Namespace], int]
HANDLERS: dict[str, Handler] = {}


def add_parsers(sub: argparse._SubParsersAction) -> None:
    from ..mcp.setup import CLIENT_NAMES, CLIENTS

    sub.add_parser("mcp", help="run the MCP server on stdin/stdout (started by an AI app, see setup-mcp)")
    p = sub.add_parser("setup-mcp", help="show (or with --write, install) the MCP configuration for an AI app")
    p.add_argument("--client", required=True, choices=CLIENTS,
                   help="the AI app: " + ", ".join(f"{c} ({n})" for c, n in CLIENT_NAMES.items()))
    p.add_argument("--write", action="store_true",
                   help="merge it into the app's configuration file (the old file is kept as a .bak)")
    p.add_argument("--config", help="the configuration file to merge into (default: the app's usual one)")
    p.add_argument("--check", action="store_true",
                   help="start the server exactly as the app would (from its configuration), list its tools and "
                   "run one search; says whether it works")
    p.add_argument("--bundle", metavar="OUT.mcpb",
                   help="with --client claude-desktop: write a one-click extension bundle that starts this "
                   "installation (open it with Claude Desktop to install)")


def cmd_mcp(args: argparse.Namespace) -> int:
    from ..mcp.server import serve_stdio

    serve_stdio(paths.data_dir(args.data_dir))
    return 0


def cmd_setup_mcp(args: argparse.Namespace) -> int:
    from ..mcp import setup

    name = setup.CLIENT_NAMES[args.client]
    if args.bundle is not None:
        return _bundle(args)
    config = paths.expand(args.config) if args.config else None
    if args.check and not args.write:
        print(setup.check(args.client, config))
        return 0
    if not args.write:
        where = args.config or setup.config_path(args.client)
        how = "run this, or add the JSON below to" if args.client == "claude-code" else "add this to"
        print(f"# {name}: {how} {where}")
        print(setup.snippet(args.client, args.data_dir))
        print("# or run again with --write to merge it in (the old file is backed up)")
        return 0
    result = setup.merge(args.client, config, args.data_dir)
    if not result.changed:
        print(f"{result.path} already starts desktop-memory's MCP server; nothing changed")
    else:
        kept = f" (previous version kept as {result.backup})" if result.backup else ""
        print(f"Added desktop-memory to {result.path}{kept}. Restart {name} to load it.")
    if result.note:
        print(f"Note: {result.note}")
    if args.check:
        print(setup.check(args.client, config))
    return 0


def _bundle(args: argparse.Namespace) -> int:
    from ..mcp import bundle

    if args.client != "claude-desktop" or args.write or args.check or args.config:
        print("desktop-memory: setup-mcp: --bundle goes with --client claude-desktop alone (not with --write, "
              "--check or --config)", file=sys.stderr)
        return 2
    out = bundle.write_bundle(paths.expand(args.bundle), args.data_dir)
    print(f"Wrote {out}: open it with Claude Desktop (double-click it, or Settings > Extensions) to install "
          "desktop-memory. It starts this installation, so it works on this computer only.")
    return 0


HANDLERS.update({"mcp": cmd_mcp, "setup-mcp": cmd_setup_mcp})
