"""Sync with the frozen Windows `desktop-memory.exe`, under Wine (run by scripts/windows/check.sh with the Linux
venv's Python): two data folders, one shared folder, the set's key in the Windows keyring (Wine's Credential
Manager). The first machine sets sync up, the second joins with the recovery phrase on stdin, a memory added on
one is found on the other after `sync now` on both, and the shared folder holds none of the text.

    python scripts/windows/sync_check.py APP.exe WORK_DIR (a Linux folder; Wine sees it as Z:\\...)

Prints one line per step; exits 1 when a step fails.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

WINE = ("WINEPREFIX", "WINEARCH", "WINEDEBUG", "WINEDLLOVERRIDES", "DISPLAY")
TEXT = "The Windows machine's note: the router admin page is at 192.168.7.1, port 8181"


def winpath(path: Path) -> str:
    return "Z:" + str(path).replace("/", "\\")


def main() -> int:
    app, work = sys.argv[1], Path(sys.argv[2])
    shutil.rmtree(work, ignore_errors=True)
    shared = work / "Sync"
    shared.mkdir(parents=True)
    env = {k: os.environ[k] for k in WINE if k in os.environ}
    # each command opens its folder itself (no engine service left running between commands: a service started
    # by the CLI under Wine keeps the command's output pipes open until it idles out)
    env.update(PATH=os.environ.get("PATH", "/usr/bin:/bin"), HOME=os.environ.get("HOME", "/tmp"),
               DESKTOP_MEMORY_ENCRYPTION="off", DESKTOP_MEMORY_SERVICE="off")
    failures: list[str] = []

    def run(machine: str, *args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
        cmd = ["wine", app, "--data-dir", winpath(work / machine), *args]
        return subprocess.run(cmd, input=stdin, capture_output=True, text=True, env=env, timeout=240)

    try:
        made = run("one", "sync", "setup", winpath(shared), "--name", "one")
        phrase = next((line for line in made.stdout.splitlines() if len(line.split()) == 24), "")
        print(f"   setup: exit {made.returncode}, phrase {'shown' if phrase else 'missing'}")
        if made.returncode != 0 or not phrase:
            failures.append(f"setup failed: {made.stdout[-300:]} {made.stderr[-300:]}")
            raise RuntimeError("no set")
        joined = run("two", "sync", "setup", winpath(shared), "--phrase", "-", "--name", "two", stdin=phrase + "\n")
        print(f"   join with the phrase on stdin: exit {joined.returncode}")
        if joined.returncode != 0:
            failures.append(f"join failed: {joined.stdout[-300:]} {joined.stderr[-300:]}")
        added = run("one", "add", TEXT)
        if added.returncode != 0:
            failures.append(f"add failed: {added.stderr[-300:]}")
        for machine in ("one", "two"):
            now = run(machine, "sync", "now")
            if now.returncode != 0:
                failures.append(f"sync now on {machine}: exit {now.returncode}: {now.stderr[-200:]}")
        found = run("two", "search", "router admin page port", "--json")
        hit = found.returncode == 0 and "8181" in found.stdout
        print(f"   the memory on the other machine: {'found' if hit else 'NOT found'}")
        if not hit:
            failures.append(f"search on two: {found.stdout[-300:]} {found.stderr[-300:]}")
        status = run("two", "sync", "status", "--json")
        try:
            names = sorted(m["name"] for m in json.loads(status.stdout)["machines"])
        except (ValueError, KeyError, TypeError):
            names = []
        print(f"   status on two: machines {names}")
        if names != ["one", "two"]:
            failures.append(f"status: {status.stdout[-300:]}")
        leaks = [p.name for p in shared.rglob("*") if p.is_file() and b"router" in p.read_bytes()]
        if leaks:
            failures.append(f"readable text in {leaks}")
        for machine in ("one", "two"):
            run(machine, "sync", "leave")  # the key out of the prefix's Credential Manager
    except Exception as exc:  # noqa: BLE001 - one line for the tier
        if not failures:
            failures.append(f"{type(exc).__name__}: {exc}")
    for f in failures:
        print(f"   FAILED: {f}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
