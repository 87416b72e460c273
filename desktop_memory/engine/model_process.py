"""The local model in a worker process of its own (engine/model_worker.py), seen from the enrichment thread.

`WorkerModel` has `LocalModel`'s surface (load, unload, truncate, json_completion, between_tokens), so the
enricher does not know where llama.cpp runs. When the worker dies (SIGILL on a CPU that lacks an instruction,
SIGSEGV on a bad GGUF, the OOM killer's SIGKILL) or stays silent past a deadline, the call raises
`ModelCrashed` with one plain line, and the engine or the command that started it carries on.

CPU variants: llama.cpp is built for the Haswell level (AVX2/FMA/F16C) and, beside it, for CPUs without AVX
(llama_cpp/lib/sse42, scripts/dev.sh). Which one runs is decided by running it: a worker that dies of an
illegal instruction while loading (loading runs one token: the probe) is started again with the next
variant; the choice holds for the rest of this process. CPUID and XCR0 are never trusted for it (a CPU may
advertise AMX that the thread cannot use).
"""

from __future__ import annotations

import json
import logging
import os
import queue
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any

from ..assets import package_folder
from ..core.errors import DesktopMemoryError, ModelUnavailable
from ..core.exits import how_it_ended, illegal_instruction
from . import model_worker
from .llm import ModelInfo
from .pipes import read_lines

log = logging.getLogger(__name__)

LOAD_DEADLINE_S = 180.0  # a large GGUF chosen with `model set`, read from a slow disk
SILENCE_DEADLINE_S = 120.0  # the longest a worker may go without a word (a prompt of 2k tokens on a big model)


class ModelCrashed(DesktopMemoryError):
    """The model worker died or hung; `reason` is the one line a person reads, `cpu` tells an illegal
    instruction (the CPU cannot run this build) from other deaths."""

    def __init__(self, reason: str, *, cpu: bool = False) -> None:
        super().__init__(reason)
        self.reason = reason
        self.cpu = cpu


def lib_variants() -> list[tuple[str, Path | None]]:
    """The llama.cpp builds to try, best first: (name, folder for LLAMA_CPP_LIB_PATH, None for the package's)."""
    found: list[tuple[str, Path | None]] = [("default", None)]
    folder = package_folder("llama_cpp")
    if folder is not None and (folder / "lib" / "sse42").is_dir():
        found.append(("sse42", folder / "lib" / "sse42"))
    return found


def describe_exit(code: int | None) -> ModelCrashed:
    """A worker's exit code as the line a person reads."""
    if illegal_instruction(code):
        return ModelCrashed("the local model stopped: this computer's CPU cannot run this build of it", cpu=True)
    return ModelCrashed(f"the local model stopped: {how_it_ended(code)}")


_variant: dict[str, int] = {"index": 0}  # the first variant not yet seen to fail on this CPU (per process)


class WorkerModel:
    """One llama.cpp model in a worker process: started by `load()`, ended by `unload()` (its memory goes
    back to the system), used by one thread at a time."""

    def __init__(self, info: ModelInfo, *, n_ctx: int = 2048, n_threads: int = 1,
                 command: list[str] | None = None, silence_s: float = SILENCE_DEADLINE_S,
                 load_s: float = LOAD_DEADLINE_S) -> None:
        self.info = info
        self.n_ctx = n_ctx
        self.n_threads = max(1, n_threads)
        self.command = command or model_worker.command()
        self.silence_s = silence_s
        self.load_s = load_s
        self.last_used = 0.0
        self.load_seconds = 0.0
        self.between_tokens: Callable[[], None] | None = None
        self.variant = ""
        self._proc: subprocess.Popen[bytes] | None = None
        self._lines: queue.Queue[str | None] = queue.Queue()
        self._lock = threading.Lock()

    @property
    def loaded(self) -> bool:
        return self._proc is not None and self._proc.poll() is None

    @property
    def pid(self) -> int | None:
        return self._proc.pid if self._proc is not None else None

    # -- the process ----------------------------------------------------------------------------
    def _env(self, lib: Path | None) -> dict[str, str]:
        env = dict(os.environ)
        env.pop("LLAMA_CPP_LIB_PATH", None)
        if lib is not None:
            env["LLAMA_CPP_LIB_PATH"] = str(lib)
        if not getattr(sys, "frozen", False):
            root = model_worker.source_root()
            env["PYTHONPATH"] = os.pathsep.join(p for p in (root, env.get("PYTHONPATH", "")) if p)
        env["PYTHONIOENCODING"] = "utf-8"
        return env

    def _spawn(self, lib: Path | None) -> None:
        flags: dict[str, Any] = {"start_new_session": True} if os.name == "posix" else {
            "creationflags": getattr(subprocess, "CREATE_NO_WINDOW", 0)}
        self._proc = subprocess.Popen(self.command, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                      stderr=None if log.isEnabledFor(logging.DEBUG) else subprocess.DEVNULL,
                                      env=self._env(lib), **flags)
        self._lines = queue.Queue()
        threading.Thread(target=_read_answers, args=(self._proc.stdout, self._lines), daemon=True,
                         name="model-worker-reader").start()

    def _end(self) -> None:
        proc, self._proc = self._proc, None
        if proc is None:
            return
        _close(proc.stdin)  # EOF: the worker ends by itself
        try:
            proc.wait(2.0)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(5.0)

    def _died(self, waited_for: str) -> ModelCrashed:
        """The worker is gone or silent: end it and say why, in one line."""
        proc = self._proc
        code = None
        if proc is not None:
            _close(proc.stdin)
            try:
                code = proc.wait(1.0)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(5.0)
                self._proc = None
                return ModelCrashed(f"the local model stopped answering ({waited_for})")
        self._proc = None
        return describe_exit(code)

    def _send(self, message: dict[str, Any]) -> None:
        assert self._proc is not None and self._proc.stdin is not None
        try:
            self._proc.stdin.write(json.dumps(message, ensure_ascii=True).encode("ascii") + b"\n")
            self._proc.stdin.flush()
        except (OSError, ValueError) as exc:  # the worker is gone: its exit says why
            raise self._died("a request") from exc

    def _answer(self, message: dict[str, Any], deadline_s: float) -> Any:
        """Send one request and wait for its answer, serving the worker's ticks meanwhile."""
        self._send(message)
        while True:
            try:
                line = self._lines.get(timeout=deadline_s)
            except queue.Empty:
                raise self._died(f"no answer for {deadline_s:.0f} s") from None
            if line is None:
                raise self._died("its answer")
            reply = json.loads(line)
            if "tick" in reply:
                if self.between_tokens is not None:
                    self.between_tokens()  # may block while the person's request is served
                self._send({"go": 1})
                deadline_s = self.silence_s
                continue
            if "ok" in reply:
                return reply["ok"]
            if reply.get("kind") == "unavailable":
                raise ModelUnavailable(reply.get("error", "the model cannot be used"))
            raise RuntimeError(reply.get("error", "the model failed"))

    # -- LocalModel's surface -----------------------------------------------------------------
    def load(self) -> WorkerModel:
        """Start a worker and load the model in it, trying the next CPU variant after an illegal instruction."""
        with self._lock:
            if self.loaded:
                return self
            if self._proc is not None:  # it died between two calls: a death all the same
                raise self._died("")
            variants = lib_variants()
            while True:
                index = min(_variant["index"], len(variants) - 1)
                name, lib = variants[index]
                started = time.perf_counter()
                try:
                    self._spawn(lib)
                except OSError as exc:
                    raise ModelUnavailable(f"cannot start the model worker: {exc.strerror or exc}") from exc
                try:
                    self._answer({"op": "load", "path": str(self.info.path), "n_ctx": self.n_ctx,
                                  "n_threads": self.n_threads}, self.load_s)
                except ModelCrashed as exc:
                    if exc.cpu and index + 1 < len(variants):
                        log.info("llama.cpp build %r cannot run on this CPU; trying %r", name, variants[index + 1][0])
                        _variant["index"] = index + 1
                        continue
                    raise
                except ModelUnavailable:
                    self._end()
                    raise
                self.variant = name
                self.load_seconds = time.perf_counter() - started
                self.last_used = time.monotonic()
                log.debug("model worker %d (%s) loaded %s in %.2f s", self.pid, name, self.info.name,
                          self.load_seconds)
                return self

    def unload(self) -> None:
        with self._lock:
            self._end()

    def _call(self, message: dict[str, Any]) -> Any:
        self.load()
        with self._lock:
            result = self._answer(message, self.silence_s)
            self.last_used = time.monotonic()
            return result

    def truncate(self, text: str, max_tokens: int) -> str:
        return str(self._call({"op": "truncate", "text": text, "max_tokens": max_tokens}))

    def json_completion(self, system: str, user: str, schema: dict[str, Any], *, max_tokens: int) -> dict[str, Any]:
        result = self._call({"op": "complete", "system": system, "user": user, "schema": schema,
                             "max_tokens": max_tokens, "ticks": True})
        return result if isinstance(result, dict) else {}


def _close(stream: IO[bytes] | None) -> None:
    try:
        if stream is not None:
            stream.close()
    except OSError:  # a broken pipe while flushing: the worker is gone already
        pass


def _read_answers(stream: IO[bytes] | None, into: queue.Queue[str | None]) -> None:
    """The worker's answers, a line at a time, then None when it closed its end (exit or crash). Read below the
    C runtime (engine/pipes.py): on Windows its read would hold a lock that DLLs loading meanwhile wait for."""
    if stream is not None:
        try:
            for line in read_lines(stream.fileno()):
                into.put(line.decode("utf-8", errors="replace"))
        except (OSError, ValueError):
            pass
        finally:
            stream.close()
    into.put(None)
