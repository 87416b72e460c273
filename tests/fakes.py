"""Fakes for unit tests only: registered through the real interfaces."""

from __future__ import annotations

import hashlib
import re

import numpy as np

DIM = 384


class FakeEmbedder:
    """Bag-of-words hashing embedder: same words -> same direction; no model, instant."""

    loaded = True

    def encode(self, texts: list[str], batch_size: int = 64) -> np.ndarray:
        out = np.zeros((len(texts), DIM), dtype=np.float32)
        for row, text in enumerate(texts):
            for word in re.findall(r"\w+", text.lower()):
                h = int.from_bytes(hashlib.blake2b(word.encode(), digest_size=4).digest(), "little")
                out[row, h % DIM] += 1.0
            norm = np.linalg.norm(out[row])
            out[row] = out[row] / norm if norm else 1.0 / np.sqrt(DIM)
        return out

    def encode_query(self, text: str) -> np.ndarray:
        return self.encode([text])[0]
