"""The ONNX embedding path against sentence-transformers itself, with the real MiniLM weights."""

from __future__ import annotations

import numpy as np
import pytest

from desktop_memory.core.errors import ModelUnavailable
from desktop_memory.engine import onnx_export
from desktop_memory.engine.embed import Embedder, model_path

pytestmark = pytest.mark.integration

TEXTS = [
    "Decision: we ship the beta on March 3rd; Priya owns the release notes.",
    "a",
    "Ünïcödé, emoji 🙂 and 日本語 text mixed with code: def f(x): return x ** 2",
    " ".join(["a long text that goes past the 256-token window of the model"] * 60),
]


@pytest.fixture(scope="module")
def torch_vectors() -> np.ndarray:
    return Embedder(backend="torch").encode(TEXTS)


def test_onnx_vectors_match_sentence_transformers(real_embedder, torch_vectors):
    vecs = real_embedder.encode(TEXTS)
    assert real_embedder.backend == "onnx"
    assert vecs.shape == (len(TEXTS), 384)
    np.testing.assert_allclose(np.linalg.norm(vecs, axis=1), 1.0, atol=1e-4)
    assert (vecs * torch_vectors).sum(axis=1).min() > 0.999


def test_batches_of_mixed_lengths_give_the_same_vectors_as_one_by_one(real_embedder):
    together = real_embedder.encode(TEXTS, batch_size=3)
    alone = np.stack([real_embedder.encode([t])[0] for t in TEXTS])
    assert (together * alone).sum(axis=1).min() > 0.9999


def test_export_into_an_empty_cache_and_a_damaged_cache_file(tmp_path, monkeypatch, torch_vectors):
    monkeypatch.setenv("DESKTOP_MEMORY_CACHE", str(tmp_path / "cache"))
    target = onnx_export.onnx_path_for(model_path())
    assert not target.exists()
    fresh = Embedder()
    assert (fresh.encode(TEXTS[:1]) * torch_vectors[:1]).sum() > 0.999
    assert target.is_file() and fresh.backend == "onnx"

    target.write_bytes(b"not an onnx graph")  # e.g. a disk that filled up
    fallback = Embedder()
    assert (fallback.encode(TEXTS[:1]) * torch_vectors[:1]).sum() > 0.999
    assert fallback.backend == "torch"
    assert not target.exists()  # dropped, so the next start exports it again


def test_a_missing_model_folder_is_a_clear_error(tmp_path):
    with pytest.raises(ModelUnavailable, match="not found"):
        Embedder(tmp_path / "nowhere").encode(["x"])


def test_an_unknown_backend_is_a_clear_error():
    with pytest.raises(ModelUnavailable, match="unknown embedding backend"):
        Embedder(backend="gpu")
