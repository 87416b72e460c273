"""The official MCP SDK's stdio client starting `desktop-memory mcp` as an AI app would (shared by the tests)."""

from __future__ import annotations

import os
import sys
import tempfile
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio
from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client


def mcp_session(folder: Path, body: Callable[[ClientSession], Awaitable[Any]],
                params: StdioServerParameters | None = None) -> tuple[Any, str]:
    """Start `desktop-memory mcp` on `folder` (or what `params` say), run `body` in an initialised session; its
    result and the server's stderr."""
    params = params or StdioServerParameters(command=sys.executable,
                                             args=["-m", "desktop_memory", "--data-dir", str(folder), "mcp"],
                                             env=dict(os.environ))

    async def main() -> Any:
        async with stdio_client(params, errlog=errlog) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            return await body(session)

    with tempfile.TemporaryFile("w+", encoding="utf-8") as errlog:
        result = anyio.run(main)
        errlog.seek(0)
        return result, errlog.read()
