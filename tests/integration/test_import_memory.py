"""Memory stays bounded on big texts: the model reads 256 tokens, so only a prefix is tokenized.

Real MiniLM (the shipped ONNX runtime) and the real CLI in a subprocess.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import pytest

from desktop_memory.engine import embed

pytestmark = pytest.mark.integration
TIME = "/usr/bin/time"


def test_a_long_text_gets_the_same_vector_from_its_prefix(real_embedder):
    real_embedder.encode(["load"])
    runtime = real_embedder._runtime
    words = [f"release{i % 97} train {i} carriage" for i in range(6000)]
    long = " ".join(words)  # ~150k characters, far more than 256 tokens
    assert len(embed.read_part(long, runtime.tokenizer)) < len(long) // 4
    whole = runtime.encode([long], 12)  # tokenizes everything (slow path, for comparison)
    assert np.allclose(real_embedder.encode([long]), whole, atol=1e-6)


def test_a_prefix_of_long_words_grows_until_it_holds_256_tokens(real_embedder):
    real_embedder.encode(["load"])
    runtime = real_embedder._runtime
    blob = " ".join("x" * 150 for _ in range(200))  # each "word" one [UNK] token: 200 tokens in 30k characters
    text = blob + " " + " ".join(f"ordinary words number {i}" for i in range(400))
    part = embed.read_part(text, runtime.tokenizer)
    assert embed.PREFIX_CHARS < len(part) < len(text)  # 8k characters held too few tokens: it grew
    assert np.allclose(real_embedder.encode([text]), runtime.encode([text], 12), atol=1e-6)


def test_short_texts_are_untouched(real_embedder):
    real_embedder.encode(["load"])
    text = "a short note about the harbour meeting on Thursday"
    assert embed.read_part(text, real_embedder._runtime.tokenizer) is text


def _peak_rss_mb(args: list[str], data) -> tuple[int, float, str]:
    """Run the CLI under /usr/bin/time: its own peak RSS, not that of a fork of this (big) test process."""
    if not Path(TIME).is_file():
        pytest.skip(f"{TIME} is needed to measure the CLI's own peak RSS")
    with tempfile.NamedTemporaryFile("r") as figure:
        proc = subprocess.run([TIME, "-f", "%M", "-o", figure.name, sys.executable, "-m", "desktop_memory",
                               "--data-dir", str(data), *args], capture_output=True, timeout=600,
                              env={**os.environ, "DESKTOP_MEMORY_ENCRYPTION": "off"})
        peak_kb = int(figure.read().split()[-1])
    return proc.returncode, peak_kb / 1024, proc.stderr.decode()


def test_one_big_memory_does_not_cost_gigabytes(tmp_path):
    data = tmp_path / "data"
    data.mkdir()
    (data / "settings.json").write_text(json.dumps({"max_bytes": 5_000_000}))
    words = ["invoice", "harbour", "orchard", "glacier", "violin", "compiler", "lantern", "meadow", "turbine",
             "saffron", "quarry", "budget", "review", "release", "train"]
    text = " ".join(f"{words[i % len(words)]}{i % 1000}" for i in range(420_000))  # ~4 MB
    src = tmp_path / "big.jsonl"
    src.write_text(json.dumps({"content": text}) + "\n")
    code, peak, err = _peak_rss_mb(["import", str(src)], data)
    assert code == 0, err
    assert peak < 450, f"peak RSS {peak:.0f} MB"  # before: the tokenizer split all 4 MB (~+600 MB)


def test_a_huge_line_is_refused_without_being_held(tmp_path):
    src = tmp_path / "huge.jsonl"
    with open(src, "w") as fh:
        fh.write(json.dumps({"content": "before"}) + "\n")
        fh.write('{"content": "' + "huge line " * 6_000_000 + '"}\n')  # 60 MB: over the 16 MB line limit
        fh.write(json.dumps({"content": "after"}) + "\n")
    code, peak, err = _peak_rss_mb(["import", str(src)], tmp_path / "data")
    assert code == 0 and "line 2: skipped: the line is too long" in err, err
    assert peak < 400, f"peak RSS {peak:.0f} MB"  # before: the line was read, decoded and parsed whole
