"""The model worker process seen from the engine: answers, CPU variants, deaths and hangs (a fake worker here;
tests/integration/test_model_worker_real.py runs the real llama.cpp, tests/qemu other CPU models)."""

from __future__ import annotations

import os
import signal
import sys
import time
from pathlib import Path

import pytest

from desktop_memory.core.errors import ModelUnavailable
from desktop_memory.engine import model_process
from desktop_memory.engine.llm import ModelInfo
from desktop_memory.engine.model_process import ModelCrashed, WorkerModel, describe_exit

FAKE = [sys.executable, str(Path(__file__).resolve().parents[1] / "fake_model_worker.py")]
# the fake worker dies by POSIX signals; on Windows a crash is an exit code (test_exit_codes_in_words)
posix_only = pytest.mark.skipif(os.name != "posix", reason="the fake worker dies by POSIX signals")


@pytest.fixture
def info(tmp_path: Path) -> ModelInfo:
    path = tmp_path / "model.gguf"
    path.write_bytes(b"GGUF" + b"\0" * 2000)
    return ModelInfo(path, 2004, False)


@pytest.fixture
def variants(monkeypatch, tmp_path: Path) -> list:
    """Two builds, the default and one for CPUs without AVX; the choice starts afresh for each test."""
    found = [("default", None), ("sse42", tmp_path / "sse42")]
    monkeypatch.setattr(model_process, "lib_variants", lambda: found)
    monkeypatch.setitem(model_process._variant, "index", 0)
    return found


def worker(info: ModelInfo, monkeypatch, mode: str = "ok", **kw) -> WorkerModel:
    monkeypatch.setenv("FAKE_WORKER_MODE", mode)
    return WorkerModel(info, command=FAKE, **kw)


def gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return Path(f"/proc/{pid}/status").read_text().count("zombie") > 0


@posix_only
def test_answers_come_from_the_worker_and_every_token_passes_the_pause_point(info, monkeypatch, variants):
    model = worker(info, monkeypatch)
    ticks: list[int] = []
    model.between_tokens = lambda: ticks.append(1)
    assert model.json_completion("system", "user", {"type": "object"}, max_tokens=10) == {
        "title": "From the worker", "importance": 4}
    assert len(ticks) == 3 and model.loaded and model.variant == "default"
    assert model.truncate("x" * 100, 5) == "x" * 20
    pid = model.pid
    model.unload()
    assert not model.loaded and pid is not None and gone(pid)  # idle unload gives the memory back


@posix_only
def test_an_illegal_instruction_while_loading_moves_to_the_next_build(info, monkeypatch, variants):
    model = worker(info, monkeypatch, "sigill-without-lib")
    model.load()
    assert model.variant == "sse42" and model.loaded
    assert model.json_completion("s", "u", {}, max_tokens=5)["importance"] == 4
    model.unload()
    again = worker(info, monkeypatch, "sigill-without-lib")  # the choice holds for this process
    again.load()
    assert again.variant == "sse42"
    again.unload()


@posix_only
def test_when_no_build_runs_the_cpu_is_named(info, monkeypatch, variants):
    model = worker(info, monkeypatch, "sigill-load")
    with pytest.raises(ModelCrashed) as caught:
        model.load()
    assert caught.value.cpu and "CPU cannot run" in caught.value.reason and not model.loaded


@posix_only
@pytest.mark.parametrize(("mode", "words"), [("sigill-complete", "CPU cannot run"), ("segv-complete", "SIGSEGV")])
def test_a_death_during_a_job_is_one_line_and_the_next_call_starts_afresh(info, monkeypatch, variants, mode, words):
    model = worker(info, monkeypatch, mode)
    model.load()
    first = model.pid
    with pytest.raises(ModelCrashed) as caught:
        model.json_completion("s", "u", {}, max_tokens=5)
    assert words in str(caught.value) and "\n" not in str(caught.value)
    assert not model.loaded and first is not None and gone(first)
    monkeypatch.setenv("FAKE_WORKER_MODE", "ok")
    assert model.json_completion("s", "u", {}, max_tokens=5)["importance"] == 4
    assert model.pid != first
    model.unload()


@posix_only
def test_a_kill_from_outside_says_so(info, monkeypatch, variants):
    model = worker(info, monkeypatch)
    model.load()
    os.kill(model.pid, signal.SIGKILL)
    time.sleep(0.2)
    with pytest.raises(ModelCrashed, match="the system stopped it"):
        model._answer({"op": "truncate", "text": "x", "max_tokens": 1}, 5)


@posix_only
def test_a_silent_worker_is_ended_after_the_deadline(info, monkeypatch, variants):
    model = worker(info, monkeypatch, "hang-complete", silence_s=1.0)
    model.load()
    pid = model.pid
    started = time.monotonic()
    with pytest.raises(ModelCrashed, match="stopped answering"):
        model.json_completion("s", "u", {}, max_tokens=5)
    assert time.monotonic() - started < 10 and pid is not None and gone(pid)


@posix_only
def test_a_file_the_worker_cannot_use_is_unavailable_not_a_crash(info, monkeypatch, variants, tmp_path):
    model = WorkerModel(ModelInfo(tmp_path / "missing.gguf", 10, False), command=FAKE)
    with pytest.raises(ModelUnavailable, match="not found") as caught:
        model.load()
    assert not isinstance(caught.value, ModelCrashed) and not model.loaded


def test_exit_codes_in_words():
    assert describe_exit(-signal.SIGILL).cpu
    assert describe_exit(0xC000001D).cpu  # Windows: STATUS_ILLEGAL_INSTRUCTION
    assert describe_exit(-0x3FFFFFE3).cpu  # the same code read as a signed 32-bit number
    assert "out of memory" in describe_exit(-int(getattr(signal, "SIGKILL", 9))).reason
    assert "SIGABRT" in describe_exit(-signal.SIGABRT).reason
    assert "exit code 3" in describe_exit(3).reason
    assert not describe_exit(-signal.SIGSEGV).cpu
