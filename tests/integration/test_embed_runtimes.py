"""The int8 ONNX embedding path against sentence-transformers itself, with the real MiniLM weights."""

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


# int8 weights move each vector a little: measured mean ~0.99 and min ~0.97 on 512 notes
INT8_MIN_COSINE = 0.95


def test_onnx_vectors_match_sentence_transformers(real_embedder, torch_vectors):
    vecs = real_embedder.encode(TEXTS)
    assert real_embedder.backend == "onnx"
    assert real_embedder.vectors_id != Embedder(backend="torch").vectors_id
    assert vecs.shape == (len(TEXTS), 384)
    np.testing.assert_allclose(np.linalg.norm(vecs, axis=1), 1.0, atol=1e-4)
    cosines = (vecs * torch_vectors).sum(axis=1)
    assert cosines.min() > INT8_MIN_COSINE and cosines.mean() > 0.97, cosines


def test_int8_vectors_rank_like_float32_ones(real_embedder, torch_vectors):
    """What retrieval needs: each text's nearest other text is the same under both runtimes."""
    texts = ["the beta ships on March 3rd", "release date of the beta: 3 March", "pasta with garlic and chili",
             "spaghetti recipe, 9 minutes", "rotate the staging database password", "db credentials rotation"]
    for vecs in (real_embedder.encode(texts), Embedder(backend="torch").encode(texts)):
        sims = vecs @ vecs.T
        np.fill_diagonal(sims, -1)
        assert list(sims.argmax(axis=1)) == [1, 0, 3, 2, 5, 4]


def test_batches_of_mixed_lengths_give_nearly_the_same_vectors_as_one_by_one(real_embedder):
    """int8 activations are scaled per batch, so a text's vector moves a little with its neighbours."""
    together = real_embedder.encode(TEXTS, batch_size=3)
    alone = np.stack([real_embedder.encode([t])[0] for t in TEXTS])
    assert (together * alone).sum(axis=1).min() > INT8_MIN_COSINE
    again = np.stack([real_embedder.encode([t])[0] for t in TEXTS])
    np.testing.assert_array_equal(alone, again)  # the same input gives the same vector


def test_export_into_an_empty_cache_and_a_damaged_cache_file(tmp_path, monkeypatch, torch_vectors):
    monkeypatch.setenv("DESKTOP_MEMORY_CACHE", str(tmp_path / "cache"))
    target = onnx_export.onnx_path_for(model_path())
    assert not target.exists()
    stale = target.parent / "minilm-0123456789abcdef.onnx"  # a graph of an older export version
    stale.parent.mkdir(parents=True)
    stale.write_bytes(b"old graph")
    fresh = Embedder()
    assert (fresh.encode(TEXTS[:1]) * torch_vectors[:1]).sum() > INT8_MIN_COSINE
    assert target.is_file() and fresh.backend == "onnx"
    assert not stale.exists()  # replaced, not left behind in the cache

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


def test_preparing_the_model_prints_only_the_apps_own_words(tmp_path):
    """onnxruntime's quantizer logs "Please consider to run pre-processing before quantization" on the root
    logger, which a fresh process prints to the terminal: the export keeps it to our debug log."""
    import subprocess
    import sys

    code = ("import sys; from pathlib import Path; from desktop_memory.engine import onnx_export, embed; "
            "onnx_export.export(embed.model_path(), Path(sys.argv[1]))")
    done = subprocess.run([sys.executable, "-c", code, str(tmp_path / "m.onnx")], capture_output=True, text=True,
                          timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    assert (tmp_path / "m.onnx").stat().st_size > 1_000_000
    printed = done.stdout + done.stderr
    assert "pre-processing" not in printed and "WARNING" not in printed, printed[-2000:]
