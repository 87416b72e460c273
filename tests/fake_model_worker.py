"""A stand-in for engine/model_worker.py in unit tests: the same protocol, no llama.cpp, and deaths on demand.

FAKE_WORKER_MODE: "ok" (default); "sigill-without-lib" (dies of SIGILL while loading unless LLAMA_CPP_LIB_PATH is
set, like a build this CPU cannot run); "sigill-load"; "segv-load" (a GGUF that breaks llama.cpp);
"sigill-complete", "segv-complete", "hang-complete" (after the first token).
FAKE_WORKER_PIDS: a file each started worker appends its pid to.
"""

import json
import os
import signal
import sys
import time


def die(sig: int) -> None:
    signal.signal(sig, signal.SIG_DFL)
    os.kill(os.getpid(), sig)
    time.sleep(5)


def main() -> None:
    mode = os.environ.get("FAKE_WORKER_MODE", "ok")
    if path := os.environ.get("FAKE_WORKER_PIDS"):
        with open(path, "a") as fh:
            fh.write(f"{os.getpid()}\n")
    out = sys.stdout
    for line in sys.stdin:
        request = json.loads(line)
        op = request["op"]
        if op == "load":
            if mode == "sigill-load" or (mode == "sigill-without-lib" and not os.environ.get("LLAMA_CPP_LIB_PATH")):
                die(signal.SIGILL)
            if mode == "segv-load":
                die(signal.SIGSEGV)
            if not os.path.exists(request["path"]):
                out.write(json.dumps({"error": "model file not found", "kind": "unavailable"}) + "\n")
            else:
                out.write(json.dumps({"ok": {"load_seconds": 0.01}}) + "\n")
        elif op == "truncate":
            out.write(json.dumps({"ok": request["text"][: request["max_tokens"] * 4]}) + "\n")
        elif op == "complete":
            for n in range(3):
                if request.get("ticks"):
                    out.write(json.dumps({"tick": n + 1}) + "\n")
                    out.flush()
                    if not sys.stdin.readline():
                        return
                if n == 0 and mode.endswith("-complete"):
                    if mode.startswith("sigill"):
                        die(signal.SIGILL)
                    if mode.startswith("segv"):
                        die(signal.SIGSEGV)
                    time.sleep(3600)
            out.write(json.dumps({"ok": {"title": "From the worker", "importance": 4}}) + "\n")
        out.flush()


if __name__ == "__main__":
    main()
