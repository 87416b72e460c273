"""The frozen Windows `desktop-memory.exe` as Chrome starts a native messaging host, under Wine (run by
scripts/windows/check.sh with the Linux venv's Python): started with Chromium's own arguments (the extension's
origin and --parent-window), spoken to in length-prefixed frames over its stdin/stdout. A frame whose length and
body hold the byte 0x0A (a newline) shows the pipes are binary on Windows (a text-mode stdout turns it into
CR LF and breaks every frame after it).

    python scripts/windows/native_host.py APP.exe DATA_DIR (a Windows path, Z:\\...)

Prints one line per step; exits 1 when a step fails or the session takes longer than 180 s.
"""

from __future__ import annotations

import json
import os
import struct
import subprocess
import sys
import threading
from typing import Any

WINE = ("WINEPREFIX", "WINEARCH", "WINEDEBUG", "WINEDLLOVERRIDES", "DISPLAY")
ORIGIN = "chrome-extension://meedcakikngijbgdgojfglooajkdbhbi/"


def frame(obj: Any) -> bytes:
    body = json.dumps(obj).encode()
    return struct.pack("<I", len(body)) + body


def main() -> int:
    app, data = sys.argv[1], sys.argv[2]
    env = {k: os.environ[k] for k in WINE if k in os.environ}
    env.update(PATH=os.environ.get("PATH", "/usr/bin:/bin"), HOME=os.environ.get("HOME", "/tmp"),
               DESKTOP_MEMORY_ENCRYPTION="off", DESKTOP_MEMORY_HOME=data)
    proc = subprocess.Popen(["wine", app, ORIGIN, "--parent-window=0"], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env)
    timer = threading.Timer(180, proc.kill)
    timer.start()
    failures: list[str] = []

    def ask(obj: dict[str, Any]) -> dict[str, Any]:
        assert proc.stdin is not None and proc.stdout is not None
        proc.stdin.write(frame(obj))
        proc.stdin.flush()
        head = proc.stdout.read(4)
        if len(head) != 4:
            raise RuntimeError("the host closed its output")
        (size,) = struct.unpack("<I", head)
        return json.loads(proc.stdout.read(size))

    try:
        hello = ask({"id": 1, "type": "hello"})
        print(f"   hello: engine {hello.get('engine')}, version {hello.get('version')}")
        if not hello.get("ok"):
            failures.append("hello failed")
        prompt = "Which port does the staging proxy use?\n" + "\n".join(f"line {i}" for i in range(300))
        capture = {"kind": "exchange", "site": "chatgpt.com", "app": "ChatGPT", "conversation": "win1",
                   "turn": "t1", "url": "https://chatgpt.com/c/win1", "title": "Staging", "prompt": prompt,
                   "answer": "Port 8443, behind the VPN.\n"}
        request = {"id": 2, "type": "capture", "capture": capture}
        pad = 0x0A0A - len(json.dumps(request).encode())  # a body of 2,570 bytes: its length holds 0x0A twice
        request["capture"]["title"] += " " * max(0, pad)
        saved = ask(request)
        print(f"   capture: {saved.get('status')}")
        if saved.get("status") != "added":
            failures.append(f"the capture was not added: {saved}")
        found = ask({"id": 3, "type": "search", "query": "staging proxy port", "limit": 3})
        if not found.get("ok") or not any(h.get("id") == saved.get("memory_id") for h in found.get("hits", [])):
            failures.append(f"search did not find the capture: {found}")
        else:
            print("   search: found")
        assert proc.stdin is not None
        proc.stdin.close()
        code = proc.wait(60)
        print(f"   exit code at the end of input: {code}")
        if code != 0:
            failures.append(f"exit code {code}")
    except Exception as exc:  # noqa: BLE001 - one line for the tier
        failures.append(f"{type(exc).__name__}: {exc}")
    finally:
        timer.cancel()
        if proc.poll() is None:
            proc.kill()
    for f in failures:
        print(f"   FAILED: {f}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
