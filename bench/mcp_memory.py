"""A long MCP session: resident memory and call time of `desktop-memory mcp` over many tool calls.

Drives the real server over stdio with the official SDK client, in both modes: the server opening the
engine itself ("local") and the server going through a running host over the engine socket ("host").

    .venv/bin/python bench/mcp_memory.py --calls 3000 --out /tmp/mcp-memory.json
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import anyio
from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

HOST = """
import sys
from pathlib import Path
from desktop_memory.service import MemoryService
from desktop_memory.ipc.server import IpcServer
folder = Path(sys.argv[1])
with MemoryService(folder) as service, IpcServer(service, folder):
    print("ready", flush=True)
    sys.stdin.read()
"""


def rss_kb(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise RuntimeError("no VmRSS")


def server_pid(folder: Path) -> int:
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            ppid = int(stat.read_text().rsplit(")", 1)[1].split()[1])
            cmd = (stat.parent / "cmdline").read_bytes().split(b"\0")
        except (OSError, IndexError, ValueError):
            continue
        if ppid == os.getpid() and b"mcp" in cmd and str(folder).encode() in cmd:
            return int(stat.parent.name)
    raise RuntimeError("MCP server process not found")


async def one_call(s: ClientSession, n: int, ids: list[str], read_only: bool) -> None:
    kind = n % 5
    if read_only and kind == 2:
        kind = 0
    if kind == 0:
        res = await s.call_tool("search_memories", {"query": f"project {n % 7} meeting {n}", "limit": 5})
    elif kind == 1:
        res = await s.call_tool("get_context", {"query": f"topic {n % 20} notes {n}", "budget": 300})
    elif kind == 2:
        res = await s.call_tool("add_memory", {"content": f"Call {n}: a new note about topic {n % 50} and item {n}"})
    elif kind == 3:
        res = await s.call_tool("pin_memory", {"id": ids[n % len(ids)], "pinned": n % 2 == 0})
    else:
        res = await s.call_tool("forget_memory", {"id": f"missing-{n}"})
        assert res.is_error
        return
    assert not res.is_error, res.content[0].text


def run(mode: str, calls: int, every: int, read_only: bool = False) -> dict[str, Any]:
    folder = Path(tempfile.mkdtemp(prefix="dm-mcp-bench-")) / "data"
    host = None
    if mode == "host":
        host = subprocess.Popen([sys.executable, "-c", HOST, str(folder)], stdin=subprocess.PIPE,
                                stdout=subprocess.PIPE)
        assert host.stdout.readline().strip() == b"ready"
    samples: list[tuple[int, int]] = []
    host_samples: list[tuple[int, int]] = []
    durations: list[float] = []

    async def main() -> None:
        params = StdioServerParameters(command=sys.executable,
                                       args=["-m", "desktop_memory", "--data-dir", str(folder), "mcp"],
                                       env=dict(os.environ))
        async with stdio_client(params) as (r, w), ClientSession(r, w) as s:
            await s.initialize()
            pid = server_pid(folder)
            ids = []
            for i in range(20):
                res = await s.call_tool("add_memory", {"content": f"Seed note {i}: project {i % 7} topic {i}"})
                ids.append(res.structured_content["id"])
            samples.append((0, rss_kb(pid)))
            if host is not None:
                host_samples.append((0, rss_kb(host.pid)))
            for n in range(1, calls + 1):
                t = time.perf_counter()
                await one_call(s, n, ids, read_only)
                durations.append(time.perf_counter() - t)
                if n % every == 0:
                    samples.append((n, rss_kb(pid)))
                    if host is not None:
                        host_samples.append((n, rss_kb(host.pid)))

    load_before = os.getloadavg()[0]
    started = time.perf_counter()
    anyio.run(main)
    total = time.perf_counter() - started
    if host is not None:
        host.communicate(timeout=60)
    warm = next(kb for n, kb in samples if n >= min(200, calls))
    return {
        "mode": mode, "read_only": read_only, "calls": calls, "seconds": round(total, 1),
        "call_ms_median": round(statistics.median(durations) * 1000, 2),
        "call_ms_p95": round(statistics.quantiles(durations, n=20)[-1] * 1000, 2),
        "rss_kib": samples, "rss_growth_after_200_mib": round((samples[-1][1] - warm) / 1024, 1),
        "host_rss_kib": host_samples,
        "load_before": round(load_before, 2), "load_after": round(os.getloadavg()[0], 2),
    }


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--calls", type=int, default=3000)
    p.add_argument("--every", type=int, default=250, help="sample RSS every N calls")
    p.add_argument("--modes", default="local,host")
    p.add_argument("--read-only", action="store_true", help="searches instead of add_memory (no data growth)")
    p.add_argument("--out", help="write the JSON here too")
    args = p.parse_args()
    results = {"date": time.strftime("%Y-%m-%d"), "platform": platform.platform(), "cpus": os.cpu_count(),
               "python": platform.python_version(), "runs": [run(m, args.calls, args.every, args.read_only)
                                                             for m in args.modes.split(",")]}
    text = json.dumps(results, indent=2)
    print(text)
    if args.out:
        Path(args.out).write_text(text + "\n")


if __name__ == "__main__":
    main()
