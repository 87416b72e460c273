"""What the embedding model keeps resident (issue 28 item 5): the weights mapped from a file, the arena given back
after a batch of long texts, and a first export that leaves torch out of the engine's process."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from desktop_memory.engine import embed, onnx_export
from desktop_memory.engine.embed import Embedder

pytestmark = pytest.mark.integration

ROOT = str(Path(__file__).resolve().parents[2])
TEXTS = ["Decision: we ship the beta on March 3rd; Priya owns the release notes.", "a",
         "Ünïcödé, emoji 🙂 and 日本語 text mixed with code: def f(x): return x ** 2",
         " ".join(["a long text that goes past the 256-token window of the model"] * 60)]


def run_python(code: str, *args: str, env: dict[str, str] | None = None) -> str:
    done = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, timeout=900,
                          env=env, cwd=ROOT)
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout.strip()


def test_the_mapped_copy_gives_the_same_vectors_bit_for_bit(tmp_path, monkeypatch, real_embedder):
    real_embedder.encode(["load the model"])  # the graph exists in the real cache (exported once)
    graph = onnx_export.onnx_path_for(embed.model_path())
    monkeypatch.setenv("DESKTOP_MEMORY_CACHE", str(tmp_path / "cache"))  # the copy is made here
    monkeypatch.setattr(onnx_export, "onnx_path_for", lambda model_dir: graph)

    mapped = Embedder()
    queries = [mapped.encode([t], query=True)[0] for t in TEXTS]
    batch = mapped.encode(TEXTS)
    copy = onnx_export.mapped_copy(graph)
    assert copy is not None and copy.parent.parent == tmp_path / "cache" / "models"
    assert (copy.parent / "graph.onnx.data").stat().st_size > 40_000_000  # the weights, outside the graph

    monkeypatch.setattr(onnx_export, "mapped_copy", lambda graph: None)  # the graph loaded itself, as before
    whole = Embedder()
    np.testing.assert_array_equal(batch, whole.encode(TEXTS))
    np.testing.assert_array_equal(np.stack(queries), np.stack([whole.encode([t], query=True)[0] for t in TEXTS]))


def test_a_damaged_mapped_copy_is_dropped_and_the_graph_loads(tmp_path, monkeypatch, real_embedder):
    real_embedder.encode(["load the model"])
    graph = onnx_export.onnx_path_for(embed.model_path())
    monkeypatch.setenv("DESKTOP_MEMORY_CACHE", str(tmp_path / "cache"))
    monkeypatch.setattr(onnx_export, "onnx_path_for", lambda model_dir: graph)
    copy = onnx_export.mapped_copy(graph)
    assert copy is not None
    with open(copy.parent / "graph.onnx.data", "r+b") as fh:  # cut short, as a full disk or a bad copy would
        fh.truncate(1_000_000)

    again = Embedder()
    np.testing.assert_array_equal(again.encode(TEXTS), real_embedder.encode(TEXTS))
    assert not copy.parent.exists()  # dropped: the next start makes it again
    assert onnx_export.mapped_copy(graph) == copy and copy.is_file()


def test_a_cache_folder_that_cannot_be_written_loads_the_graph_itself(tmp_path, monkeypatch, real_embedder):
    real_embedder.encode(["load the model"])
    graph = onnx_export.onnx_path_for(embed.model_path())
    blocked = tmp_path / "not-a-folder"
    blocked.write_text("a file where the cache folder should be")
    monkeypatch.setenv("DESKTOP_MEMORY_CACHE", str(blocked))
    monkeypatch.setattr(onnx_export, "onnx_path_for", lambda model_dir: graph)
    assert onnx_export.mapped_copy(graph) is None
    np.testing.assert_array_equal(Embedder().encode(TEXTS[:2]), real_embedder.encode(TEXTS[:2]))


def test_a_batch_of_long_texts_gives_its_memory_back_and_a_query_does_not_trim(monkeypatch):
    """onnxruntime's arena kept +176-182 MB after this batch for the process's life; given back now."""
    code = ("from desktop_memory.engine.embed import Embedder\n"
            "def rss():\n"
            "    return [int(x.split()[1]) for x in open('/proc/self/status') if x.startswith('VmRSS')][0] / 1024\n"
            "e = Embedder(); e.encode(['warm up']); before = rss()\n"
            "e.encode(['the staging database password rotation runbook moved to the wiki ' * 30 + str(i) "
            "for i in range(48)])\n"
            "print(rss() - before)\n")
    if sys.platform.startswith("linux"):
        assert float(run_python(code)) < 80

    calls: list[int] = []
    monkeypatch.setattr(embed, "trim_heap", lambda: calls.append(1))
    e = Embedder()
    e.encode(["a query, then one note for add"], query=True)
    e.encode(["one note of ordinary length for add " * 40])  # one run of <= 256 tokens
    assert calls == []
    e.encode(["one of a batch of notes being imported " * 40] * 6)
    assert calls == [1]


def test_a_first_export_leaves_torch_out_of_the_process(tmp_path):
    code = ("import os, sys; from pathlib import Path\n"
            "from desktop_memory.engine.embed import Embedder\n"
            "v = Embedder().encode(['the beta ships on March 3rd'])\n"
            "print('torch' in sys.modules, 'transformers' in sys.modules, round(float(v[0] @ v[0]), 3))\n")
    cache = tmp_path / "cache"
    out = run_python(code, env={**os.environ, "DESKTOP_MEMORY_CACHE": str(cache)})
    assert out.splitlines()[-1] == "False False 1.0"
    assert [p.name for p in (cache / "models").glob("minilm-int8-*.onnx")]  # exported, by a child process


def test_a_failed_export_in_the_child_is_one_clear_line(tmp_path):
    from desktop_memory.core.errors import ModelUnavailable

    with pytest.raises(ModelUnavailable, match="cannot"):
        onnx_export.export_in_child(tmp_path / "no-model-here", tmp_path / "out" / "m.onnx")
