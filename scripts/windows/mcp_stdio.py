"""The frozen Windows `desktop-memory.exe mcp`, started under Wine by the official MCP SDK's stdio client (run by
scripts/windows/check.sh with the Linux venv's Python): it lists its tools, stores a note and finds it.

    python scripts/windows/mcp_stdio.py APP.exe DATA_DIR (a Windows path, Z:\\...)

Prints one line per step; exits 1 when a step fails or the session takes longer than 180 s.
"""

from __future__ import annotations

import os
import sys

import anyio
from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

WINE = ("WINEPREFIX", "WINEARCH", "WINEDEBUG", "WINEDLLOVERRIDES", "DISPLAY")


async def session(app: str, data: str) -> list[str]:
    """The failures of one agent's session (empty when all went well)."""
    env = {k: os.environ[k] for k in WINE if k in os.environ}
    env["DESKTOP_MEMORY_ENCRYPTION"] = "off"
    params = StdioServerParameters(command="wine", args=[app, "--data-dir", data, "mcp"], env=env)
    with anyio.fail_after(180), open(os.devnull, "w", encoding="utf-8") as errlog:
        async with stdio_client(params, errlog=errlog) as (read, write), ClientSession(read, write) as s:
            await s.initialize()
            tools = {t.name for t in (await s.list_tools()).tools}
            print(f"   tools: {', '.join(sorted(tools))}")
            added = await s.call_tool("add_memory", {"content": "The team offsite is in Lisbon in May."})
            found = await s.call_tool("search_memories", {"query": "where is the offsite?", "limit": 3})
    failures = []
    if not {"search_memories", "get_context", "add_memory", "pin_memory", "forget_memory"} <= tools:
        failures.append("a tool is missing")
    if added.is_error:
        failures.append("add_memory failed")
    if found.is_error or "Lisbon" not in found.content[0].text:  # type: ignore[union-attr]
        failures.append("search_memories did not find the note")
    return failures


def main() -> int:
    app, data = sys.argv[1], sys.argv[2]
    try:
        failures = anyio.run(session, app, data)
    except TimeoutError:
        failures = ["the session took longer than 180 s"]
    except Exception as exc:  # noqa: BLE001 - a test driver: one line for the tier's log
        failures = [f"the session failed: {type(exc).__name__}: {exc}"]
    for failure in failures:
        print(f"   {failure}")
    if not failures:
        print("   the SDK's client stored a note and found it again")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
