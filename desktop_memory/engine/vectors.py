"""Chroma as the vector index: ids and embeddings only, never the text."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from ..core.errors import StorageError

COLLECTION = "memories"


class VectorIndex:
    """A persistent Chroma collection in cosine space, fed with our own embeddings."""

    def __init__(self, path: Path) -> None:
        os.environ["ANONYMIZED_TELEMETRY"] = "False"
        try:
            import chromadb
            from chromadb.config import Settings

            self._client = chromadb.PersistentClient(
                path=str(path), settings=Settings(anonymized_telemetry=False, allow_reset=False)
            )
            self._col = self._client.get_or_create_collection(
                COLLECTION, embedding_function=None, configuration={"hnsw": {"space": "cosine"}}
            )
        except Exception as exc:  # noqa: BLE001 - Chroma raises many types; all mean "cannot open"
            raise StorageError(f"cannot open the vector index at {path}: {exc}") from exc

    def count(self) -> int:
        return int(self._col.count())

    def upsert(self, ids: Sequence[str], vectors: np.ndarray) -> None:
        if len(ids):
            for start in range(0, len(ids), 4096):
                self._col.upsert(ids=list(ids[start : start + 4096]), embeddings=vectors[start : start + 4096])

    def delete(self, ids: Sequence[str]) -> None:
        if len(ids):
            self._col.delete(ids=list(ids))

    def all_ids(self) -> set[str]:
        out: set[str] = set()
        offset, page = 0, 10000
        while True:
            got = self._col.get(include=[], limit=page, offset=offset)["ids"]
            out.update(got)
            if len(got) < page:
                return out
            offset += page

    def vectors(self, ids: Sequence[str]) -> dict[str, np.ndarray]:
        if not ids:
            return {}
        got = self._col.get(ids=list(ids), include=["embeddings"])
        return {i: np.asarray(v, dtype=np.float32) for i, v in zip(got["ids"], got["embeddings"], strict=True)}

    def query(self, vector: np.ndarray, limit: int) -> list[tuple[str, float]]:
        """(id, cosine similarity) of the nearest `limit` vectors (approximate, HNSW)."""
        if limit <= 0:
            return []
        try:
            res = self._col.query(query_embeddings=[vector], n_results=limit, include=["distances"])
        except Exception as exc:  # noqa: BLE001 - an empty collection is not an error for us
            if self.count() == 0:
                return []
            raise StorageError(f"semantic search failed: {exc}") from exc
        return [(i, 1.0 - float(d)) for i, d in zip(res["ids"][0], res["distances"][0], strict=True)]
