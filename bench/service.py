"""The engine service (issue 30): CLI commands and an MCP client's first call with the service warm, its RSS.

    .venv/bin/python bench/service.py [--runs 15] [--memories 200]

Makes a throw-away data folder (unencrypted), starts the folder's service through `open_service`, then times
`desktop-memory search` and `add` as a person runs them (new processes, wall clock), and an MCP client (the
official SDK's stdio client) from start to its first tool call's answer. Prints JSON.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import anyio

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from desktop_memory.ipc.service_start import open_service, stop_service  # noqa: E402

DM = str(Path(sys.executable).with_name("desktop-memory"))


def rss_kb(pid: int) -> int:
    status = Path(f"/proc/{pid}/status").read_text()
    return int(next(line.split()[1] for line in status.splitlines() if line.startswith("VmRSS:")))


def timed(argv: list[str]) -> float:
    started = time.perf_counter()
    done = subprocess.run(argv, capture_output=True, timeout=300, env=os.environ)
    wall = time.perf_counter() - started
    assert done.returncode == 0, done.stderr.decode()
    return wall


def mcp_first_call(folder: Path) -> float:
    from mcp import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    async def main() -> float:
        started = time.perf_counter()
        params = StdioServerParameters(command=DM, args=["--data-dir", str(folder), "mcp"], env=dict(os.environ))
        async with stdio_client(params) as (read, write), ClientSession(read, write) as s:
            await s.initialize()
            res = await s.call_tool("search_memories", {"query": "which shelf holds box 7"})
            assert not res.is_error, res.content[0].text
            return time.perf_counter() - started

    return anyio.run(main)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=15)
    ap.add_argument("--memories", type=int, default=200)
    args = ap.parse_args()
    os.environ["DESKTOP_MEMORY_ENCRYPTION"] = "off"
    folder = Path(tempfile.mkdtemp(prefix="dm-service-")) / "data"
    lines = "".join(json.dumps({"content": f"Note {n}: shelf {n % 37} holds box {n}; call Priya about item {n}"})
                    + "\n" for n in range(args.memories))
    subprocess.run([DM, "--data-dir", str(folder), "import", "-"], input=lines.encode(), check=True,
                   capture_output=True)
    stop_service(folder)  # the import went through a service (the CLI starts one): measure a fresh start
    started = time.perf_counter()
    with open_service(folder) as remote:
        start_s = time.perf_counter() - started
        remote.search("warm up the model")
        pid = remote.ping()["pid"]
    idle_rss = rss_kb(pid)
    search = [timed([DM, "--data-dir", str(folder), "search", f"which shelf holds box {n}"]) for n in range(args.runs)]
    add = [timed([DM, "--data-dir", str(folder), "add", f"bench note {n} {time.time_ns()}"]) for n in range(args.runs)]
    first = [mcp_first_call(folder) for _ in range(3)]
    busy_rss = rss_kb(pid)
    stop_service(folder)
    out = {
        "memories": args.memories, "service_start_s": round(start_s, 3),
        "cli_search_p50_ms": round(statistics.median(search) * 1000), "cli_search_max_ms": round(max(search) * 1000),
        "cli_add_p50_ms": round(statistics.median(add) * 1000), "cli_add_max_ms": round(max(add) * 1000),
        "mcp_first_call_s": [round(x, 2) for x in first],
        "service_rss_idle_mb": round(idle_rss / 1024), "service_rss_after_mb": round(busy_rss / 1024),
    }
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
