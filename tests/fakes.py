"""Fakes for unit tests only: registered through the real interfaces."""

from __future__ import annotations

import hashlib
import re

import keyring.backend
import keyring.errors
import numpy as np
from jaraco.classes import properties

DIM = 384


class FakeEmbedder:
    """Bag-of-words hashing embedder: same words -> same direction; no model, instant."""

    loaded = True
    vectors_id = "fake-bag-of-words"

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


class MemoryKeyring(keyring.backend.KeyringBackend):
    """An in-process keyring for unit tests only: installed with set_keyring, never chosen by keyring itself."""

    @properties.classproperty
    def priority(cls) -> float:  # keyring registers every subclass; raising here keeps this one out of detection
        raise RuntimeError("a unit-test keyring")

    def __init__(self) -> None:
        super().__init__()
        self.items: dict[tuple[str, str], str] = {}

    def get_password(self, service: str, username: str) -> str | None:
        return self.items.get((service, username))

    def set_password(self, service: str, username: str, password: str) -> None:
        self.items[(service, username)] = password

    def delete_password(self, service: str, username: str) -> None:
        if self.items.pop((service, username), None) is None:
            raise keyring.errors.PasswordDeleteError(username)


class MemorySecrets:
    """The sync set's keys in a dict instead of the OS keyring (service/sync.Secrets' interface)."""

    def __init__(self) -> None:
        self.data: dict[str, str] = {}

    def get(self, name: str) -> str | None:
        return self.data.get(name)

    def set(self, name: str, value: str) -> None:
        self.data[name] = value

    def delete(self, name: str) -> bool:
        return self.data.pop(name, None) is not None
