"""The model worker: a child process that owns llama.cpp, so that a crash inside it takes nothing else down.

Started by `engine/model_process.py` (the engine host's or the CLI's enrichment thread) as
`python -m desktop_memory.engine.model_worker` (the frozen app: `desktop-memory model-worker`), it reads one
JSON request per line on stdin and writes one JSON answer per line on the stdout it was given (which is then
pointed at stderr, so nothing llama.cpp prints can mix with the answers):

    {"op": "load", "path": ..., "n_ctx": ..., "n_threads": ...}   -> {"ok": {"load_seconds": ...}}
    {"op": "truncate", "text": ..., "max_tokens": ...}            -> {"ok": "the text, cut"}
    {"op": "complete", "system": ..., "user": ..., "schema": ..., "max_tokens": ..., "ticks": true}
        -> {"tick": n} after each generated token, answered with {"go": 1} by the parent; then {"ok": {...}}

A request that fails answers {"error": "one line", "kind": "unavailable" | "failed"}. The worker ends at EOF
on stdin (the parent closed it or died). Which llama.cpp library it loads is the parent's choice
(LLAMA_CPP_LIB_PATH, read when llama_cpp is imported). Loading runs one token through the model: the probe
that an instruction this CPU lacks fails here, in the worker, and not in the middle of a job.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import IO, Any

from ..core.errors import ModelUnavailable
from .llm import LocalModel, check_model


class _Worker:
    def __init__(self, out: IO[str], inp: IO[str]) -> None:
        self.out = out
        self.inp = inp
        self.model: LocalModel | None = None

    def send(self, message: dict[str, Any]) -> None:
        self.out.write(json.dumps(message, ensure_ascii=True) + "\n")
        self.out.flush()

    def _tick(self) -> None:
        """After each token: tell the parent, and go on when it says so (it may hold us while it is busy)."""
        self.ticks += 1
        self.send({"tick": self.ticks})
        line = self.inp.readline()
        if not line:
            raise SystemExit(0)

    def handle(self, request: dict[str, Any]) -> Any:
        op = request.get("op")
        if op == "load":
            info = check_model(request.get("path") or None)
            if self.model is not None:
                self.model.unload()
            self.model = LocalModel(info, n_ctx=int(request["n_ctx"]), n_threads=int(request["n_threads"]))
            llama = self.model.load()
            llama.eval(llama.tokenize(b"ok", add_bos=True))  # the probe: one real matrix product on this CPU
            llama.reset()
            return {"load_seconds": round(self.model.load_seconds, 3)}
        if self.model is None:
            raise ModelUnavailable("no model is loaded in the worker")
        if op == "truncate":
            return self.model.truncate(str(request["text"]), int(request["max_tokens"]))
        if op == "complete":
            self.ticks = 0
            self.model.between_tokens = self._tick if request.get("ticks") else None
            return self.model.json_completion(str(request["system"]), str(request["user"]), request["schema"],
                                              max_tokens=int(request["max_tokens"]))
        raise ValueError(f"unknown request {op!r}")

    def run(self) -> int:
        for line in self.inp:
            try:
                request = json.loads(line)
                self.send({"ok": self.handle(request)})
            except ModelUnavailable as exc:
                self.send({"error": str(exc), "kind": "unavailable"})
            except Exception as exc:  # noqa: BLE001 - one job's failure is the parent's to count, not a crash
                self.send({"error": f"{type(exc).__name__}: {str(exc)[:200]}", "kind": "failed"})
        return 0


# ggml's libraries in the order they need each other (Linux names, as their SONAMEs)
GGML_LIBS = ("libggml-base.so.0", "libggml-cpu.so.0", "libggml.so.0")


def _preload_variant() -> None:
    """Load the chosen build's ggml libraries by path before llama_cpp loads its libllama.

    libllama finds its libggml through RUNPATH $ORIGIN, but LD_LIBRARY_PATH comes first, and the frozen app's
    launcher points it at the bundle's top folder, where the default build's libggml lies: the build for CPUs
    without AVX would run the default build's AVX2 code. A library already loaded under the same SONAME is
    the one the dynamic linker uses, so these are.
    """
    lib = os.environ.get("LLAMA_CPP_LIB_PATH")
    if not lib or not sys.platform.startswith("linux"):
        return
    import ctypes

    for name in GGML_LIBS:
        if (Path(lib) / name).exists():
            ctypes.CDLL(str(Path(lib) / name), mode=ctypes.RTLD_GLOBAL)


def main() -> int:
    _preload_variant()
    out = os.fdopen(os.dup(sys.stdout.fileno()), "w", encoding="utf-8")
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())  # llama.cpp's own prints never reach the answers
    sys.stdin.reconfigure(encoding="utf-8")  # type: ignore[union-attr]
    with out:
        return _Worker(out, sys.stdin).run()


def command() -> list[str]:
    """How to start a worker: the frozen app runs itself with `model-worker`, a source tree this module."""
    if getattr(sys, "frozen", False):
        return [sys.executable, "model-worker"]
    return [sys.executable, "-m", "desktop_memory.engine.model_worker"]


def source_root() -> str:
    return str(Path(__file__).resolve().parents[2])


if __name__ == "__main__":
    sys.exit(main())
