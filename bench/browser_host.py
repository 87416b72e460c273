"""The browser companion's native host (issue 34): what a browser waits for.

Starts `desktop-memory native-host` as a browser does (a pipe, native messaging frames) on a throw-away data
folder with the real engine service and model, then measures:
- the first `hello` answer from a cold host process (the engine service started on demand, or warm),
- `capture` round trips (an exchange each, distinct texts; a regenerated answer every tenth) p50 / p95, the
  first apart (the service loads the embedding model then),
- `search` round trips p50 / p95 over what was captured,
- the host process's RSS after the run (the engine is the service's, not counted here).

    DESKTOP_MEMORY_ENCRYPTION=off .venv/bin/python bench/browser_host.py --captures 100
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import struct
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any


def frame(obj: Any) -> bytes:
    body = json.dumps(obj).encode()
    return struct.pack("=I", len(body)) + body


class Host:
    def __init__(self, folder: Path) -> None:
        env = {**os.environ, "DESKTOP_MEMORY_HOME": str(folder)}
        self.proc = subprocess.Popen([sys.executable, "-m", "desktop_memory", "native-host"], env=env,
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        self.n = 0

    def ask(self, obj: dict[str, Any]) -> tuple[dict[str, Any], float]:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.n += 1
        t0 = time.perf_counter()
        self.proc.stdin.write(frame({"id": self.n, **obj}))
        self.proc.stdin.flush()
        (size,) = struct.unpack("=I", self.proc.stdout.read(4))
        reply = json.loads(self.proc.stdout.read(size))
        return reply, (time.perf_counter() - t0) * 1000

    def rss_mb(self) -> float:
        for line in Path(f"/proc/{self.proc.pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
        return float("nan")

    def close(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        self.proc.wait(30)


def pct(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(p / 100 * (len(ordered) - 1))))]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--captures", type=int, default=100)
    ap.add_argument("--searches", type=int, default=30)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "data"
        host = Host(folder)
        hello, cold = host.ask({"type": "hello"})
        assert hello["ok"] and hello["engine"] == "ready", hello
        captures: list[float] = []
        for i in range(args.captures):
            turn = i - 1 if i % 10 == 9 else i  # every tenth: the previous turn's answer regenerated
            reply, ms = host.ask({"type": "capture", "capture": {
                "kind": "exchange", "site": "chatgpt.com", "app": "ChatGPT", "conversation": f"c{i // 20}",
                "turn": f"t{turn}", "url": f"https://chatgpt.com/c/c{i // 20}", "title": f"Bench {i // 20}",
                "prompt": f"Question {i}: how do I configure service number {i} for the {i % 7}th region?",
                "answer": f"Answer {i}: set region {i % 7} in config file {i}.yaml and restart worker {i}."}})
            assert reply["ok"] and reply["status"] in ("added", "related", "updated"), reply
            captures.append(ms)
        searches = [host.ask({"type": "search", "query": f"configure service {i} region", "limit": 8})[1]
                    for i in range(args.searches)]
        rss = host.rss_mb()
        host.close()
        second = Host(folder)
        _, warm = second.ask({"type": "hello"})
        second.close()
    print(f"first hello, cold host + engine service start: {cold:.0f} ms; a new host, service warm: {warm:.0f} ms")
    first, rest = captures[0], captures[1:]
    print(f"first capture (the service loads the embedding model): {first:.0f} ms")
    print(f"capture round trip (the next {len(rest)}): p50 {statistics.median(rest):.1f} ms, "
          f"p95 {pct(rest, 95):.1f} ms, max {max(rest):.1f} ms")
    print(f"search round trip ({args.searches}): p50 {statistics.median(searches):.1f} ms, "
          f"p95 {pct(searches, 95):.1f} ms")
    print(f"host process RSS after the run: {rss:.0f} MB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
