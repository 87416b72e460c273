"""Finding memories: keyword and semantic channels fused into one ranking, look-alikes grouped, context.

`Retrieval` receives its collaborators (store, embedder, vector sync, ranking parameters, settings,
the embedding lane). Which memories pass the filters is decided in one place, the store's SQL
(engine/store_search.py: `filter_sql`, `store.search.filter_ids`), for every channel: keyword, semantic,
queued vectors, session neighbours and family members. The ranking itself is pure (core/pipeline.rank, the steps in
core/ranking.py): it reads the store and the index through `_StoreReads`, as the tuning bench reads its
cached candidates. Before look-alikes are grouped an optional `rerank(query, hits)` step may reorder the
candidates (a cross-encoder, say).
"""

from __future__ import annotations

import math
import time
from collections.abc import Collection, Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np

from ..core.context import Context, build_context
from ..core.errors import InvalidInput
from ..core.models import Hit, Memory, Passage
from ..core.pipeline import Reranker, rank
from ..core.query import Filters, parse, settle_prefix, terms
from ..core.ranking import RankingParams
from ..engine.embed import Embedder
from ..engine.settings import Settings
from ..engine.store import Store
from ..engine.store_vectors import vector_matrix
from . import vector_sync
from .vector_sync import VectorSync

EXACT_SEMANTIC_CAP = 300  # filters this selective: exact cosine over all that pass
DEEP_SEMANTIC_CAP = 3_000  # otherwise an HNSW search this deep at most, filtered afterwards

__all__ = ["Reranker", "Retrieval"]  # Reranker: the facade's rerank step (core/pipeline.py)


class Retrieval:
    """Search orchestration over the store (keywords, filters) and the vector index (meaning)."""

    def __init__(self, store: Store, settings: Settings, embedder: Embedder, vectors: VectorSync,
                 ranking: RankingParams, embed_lane: ThreadPoolExecutor, rerank: Reranker | None = None) -> None:
        self.store = store
        self.settings = settings
        self.embedder = embedder
        self.vectors = vectors
        self.ranking = ranking
        self.embed_lane = embed_lane
        self.rerank = rerank  # after fusion and neighbours, before look-alikes are grouped

    def passing(self, memories: Iterable[Memory], filters: Filters) -> list[Memory]:
        """The memories that pass the filters, in their order (the store's SQL decides)."""
        memories = list(memories)
        keep = self.store.search.filter_ids([m.id for m in memories], filters) if memories else set()
        return [m for m in memories if m.id in keep]

    def search(self, query: str, *, limit: int = 10, filters: Filters | None = None, record_access: bool = True,
               expand: bool = False) -> list[Hit]:
        """Keyword and semantic search fused into one ranking (see the facade)."""
        limit = max(1, min(int(limit), 1000))
        parsed = parse(query or "")
        filters = (filters or Filters()).merged(parsed.filters)
        text = parsed.text
        hits = self._ranked(text, filters, limit, expand) if text.strip() else self._browse(filters, limit)
        if record_access and hits:
            self.store.touch([h.memory.id for h in hits])
        return hits

    def _browse(self, filters: Filters, limit: int) -> list[Hit]:
        """No words to match: the newest memories that pass the filters."""
        ids = self.store.search.newest_ids(filters, limit)
        rows = self.store.get_many(ids)
        return [Hit(rows[i], 0.0, {"browse": True}) for i in ids]

    def _channels(self, text: str, filters: Filters,
                  depth: int) -> tuple[dict[str, float], dict[str, float], np.ndarray, dict[str, Any]]:
        """(keyword scores, semantic cosines, query vector, the keyword candidates' ranking rows), every
        candidate passing the filters.

        While the query embeds on the helper thread, this thread ranks the keywords; the keyword statement
        also reads the candidates' ranking rows and vector copies (unfiltered searches).
        """
        # the last word may be half typed: also a prefix, unless the store holds it as a whole word
        toks = settle_prefix(terms(text, prefix_last=True), lambda t: self.store.search.document_frequency(t) > 0)
        # the semantic side runs on a helper thread while SQLite ranks the keywords (onnxruntime,
        # Chroma and SQLite all release the GIL); the store itself stays on this thread
        index = self.vectors.index  # opened (and reconciled with the store) here, not on the helper
        self.vectors.embedding_ready()

        def by_meaning() -> tuple[np.ndarray, dict[str, float] | None]:
            qvec = self.embedder.encode_query(text[:4000])
            return qvec, None if filters.active else dict(index.query(qvec, depth + 10))

        pending = self.embed_lane.submit(by_meaning)
        if filters.active:  # full rows, filtered by the store's SQL
            keyword = dict(self.store.search.keyword(toks, filters, depth))
            rows: dict[str, Any] = self.store.get_many(keyword)
        else:  # the keyword statement reads the candidates' ranking rows and vector copies too
            found, rows = self.store.search.keyword_candidates(toks, filters, depth,
                                                               previous=self.ranking.context_weight > 0)
            keyword = dict(found)
            rows.update(self._rows([i for i in keyword if i not in rows], filters))
        qvec, semantic = pending.result()
        if semantic is None:
            semantic = self._semantic_filtered(qvec, filters, depth + 10)
        extra = self.store.vectors.queued_upserts(vector_sync.PENDING_FLUSH)  # added, not in Chroma yet
        extra += [i for i in keyword if i not in semantic]  # every keyword candidate gets its exact cosine
        if extra and filters.active:
            extra = sorted(self.store.search.filter_ids(extra, filters))
        if extra:
            semantic.update(self.vectors.similarities(qvec, extra, known=_copies(rows, extra)))
        self._by_passage(qvec, filters, depth, keyword, semantic)
        return keyword, semantic, qvec, rows

    def _by_passage(self, qvec: np.ndarray, filters: Filters, depth: int, keyword: Mapping[str, float],
                    semantic: dict[str, float]) -> None:
        """A long memory is as close to the query as its best passage: an exact scan of every passage vector
        (none in a store of short memories), the `depth` best memories and the candidates already found
        scored max(own cosine, best passage cosine), those that pass the filters."""
        best = self.store.passages.matrix().best(qvec)
        if not best:
            return
        ids = list(best)
        sims = np.fromiter(best.values(), dtype=np.float32, count=len(ids))
        top = np.argsort(-sims)[:depth]
        wanted = {ids[k] for k in top.tolist()} | ({*keyword, *semantic} & best.keys())
        for mid in self.store.search.filter_ids(sorted(wanted), filters):
            semantic[mid] = max(semantic.get(mid, -1.0), best[mid])

    def passage_scores(self, text: str, memories: Sequence[Memory]) -> dict[str, list[tuple[Passage, float]]]:
        """The passages of each long memory among these, in the text's order, with their cosine to the query."""
        found = self.store.passages.spans([m.id for m in memories])
        if not found:
            return {}
        qvec = np.asarray(self.embedder.encode_query(text[:4000]), dtype=np.float32)
        return {mid: [(p, float(v @ qvec)) for p, v in spans] for mid, spans in found.items()}

    def term_weights(self, text: str) -> dict[str, float]:
        """How much each of the query's words counts when lines are chosen for context: its rarity among the
        memories (BM25's inverse document frequency, at least a small positive weight)."""
        total = max(1, self.store.count(include_forgotten=True))
        out: dict[str, float] = {}
        for t in terms(text, prefix_last=False):
            df = self.store.search.document_frequency(t)
            out[t] = math.log(1.0 + (total - df + 0.5) / (df + 0.5))
        return out

    def _rows(self, ids: Iterable[str], filters: Filters) -> dict[str, Any]:
        """What fusion reads of these memories: full rows under filters, else the few ranking fields (and
        the previous turns' vectors when the cosine is read in context); full rows for the hits kept."""
        if filters.active:
            return self.store.get_many(ids)
        return self.store.search.rank_fields(ids, include_forgotten=filters.include_forgotten,
                                             previous=self.ranking.context_weight > 0)

    def _ranked(self, text: str, filters: Filters, limit: int, expand: bool = False) -> list[Hit]:
        """The ranking pipeline (core/pipeline.rank) over this store and index."""
        return rank(text, _StoreReads(self, text, filters), params=self.ranking, now=time.time(), limit=limit,
                    expand=expand, rerank=self.rerank)

    def _semantic_filtered(self, qvec: np.ndarray, filters: Filters, depth: int) -> dict[str, float]:
        """Nearest memories by meaning that pass the filters (exact when few pass, else HNSW + filter)."""
        allowed = self.store.search.filtered_ids(filters, EXACT_SEMANTIC_CAP)
        if allowed is not None:
            return self.vectors.similarities(qvec, allowed)
        share = self.store.search.count_filtered(filters) / max(1, self.store.count())
        deep = int(min(DEEP_SEMANTIC_CAP, depth / max(share, 1e-6)))
        found = dict(self.vectors.index.query(qvec, deep))
        keep = self.store.search.filter_ids(list(found), filters)
        return {i: found[i] for i in keep}

    def context(self, query: str | None = None, *, ids: Sequence[str] = (), budget: int | None = None,
                fmt: str | None = None, limit: int = 20, filters: Filters | None = None) -> Context:
        """Pasteable context for a query (most relevant first) or for chosen memories (in order)."""
        text = parse(query or "").text
        if ids:  # chosen memories, in the order given: a long one by its lines matching the query, if any
            memories = [self.store.get(i) for i in ids]
            self.store.touch([m.id for m in memories])
        elif query and query.strip():
            memories = [h.memory for h in self.search(query or "", limit=limit, filters=filters)]
        else:
            raise InvalidInput("give a query or memory ids to build context from")
        budget = self.settings.context_budget if budget is None else budget
        if budget < 50:
            raise InvalidInput("the token budget must be at least 50")
        passages = self.passage_scores(text, memories) if text.strip() else {}
        weights = self.term_weights(text) if passages else {}
        return build_context(memories, query=query, budget=budget, fmt=fmt or self.settings.context_format,
                             passages=passages, weights=weights, boost=self.ranking.coverage_boost)


class _StoreReads:
    """What the ranking pipeline (core/pipeline.rank) reads for one query: the store's SQL and the vector
    index, every memory passing `filters`."""

    def __init__(self, retrieval: Retrieval, text: str, filters: Filters) -> None:
        self.retrieval = retrieval
        self.store = retrieval.store
        self.text = text
        self.filters = filters
        self.qvec: np.ndarray | None = None  # the query's vector, once the candidates are read

    def candidates(self, depth: int) -> tuple[dict[str, float], dict[str, float], dict[str, Any]]:
        keyword, semantic, self.qvec, rows = self.retrieval._channels(self.text, self.filters, depth)
        return keyword, semantic, rows

    def rows(self, ids: Sequence[str]) -> dict[str, Any]:
        return self.retrieval._rows(ids, self.filters)

    def previous(self, ids: Sequence[str], rows: Mapping[str, Any]) -> dict[str, float]:
        """Unfiltered, the rows from `rank_fields(previous=True)` carry the previous memories' vectors;
        filtered (full rows) they are read here."""
        if self.qvec is None:
            return {}
        if not self.filters.active:
            keys = [i for i, r in rows.items() if r.previous is not None]
            blobs: list[bytes] = [rows[k].previous or b"" for k in keys]
            before = vector_matrix(blobs)
        else:
            found = self.store.vectors.previous(ids)
            keys = list(found)
            before = np.stack([found[k] for k in keys]) if keys else np.zeros((0, 0), dtype=np.float32)
        if not keys:
            return {}
        sims = before @ np.asarray(self.qvec, dtype=np.float32)
        return dict(zip(keys, sims.tolist(), strict=True))

    def full(self, ids: Sequence[str]) -> dict[str, Memory]:
        return self.store.get_many(ids)

    def passing(self, ids: Collection[str]) -> dict[str, Memory]:
        return self.store.get_many(ids, self.filters)

    def neighbourhood(self, ids: Sequence[str]) -> tuple[dict[str, list[str]], dict[str, list[str]]]:
        return self.store.search.session_neighbourhood(ids)  # and the neighbours' own: one statement

    def family_members(self, family_ids: Sequence[str], limit: int) -> dict[str, list[Memory]]:
        found = self.store.family_members(family_ids, limit)
        keep = {m.id for m in self.retrieval.passing([m for ms in found.values() for m in ms], self.filters)}
        return {fid: [m for m in ms if m.id in keep] for fid, ms in found.items()}

    def frequencies(self, words: Sequence[str]) -> tuple[dict[str, int], int]:
        search = self.store.search
        return {w: search.document_frequency(w) for w in words if not w.endswith("*")}, search.row_count()

    def passages(self, ids: Sequence[str]) -> dict[str, list[tuple[Passage, float]]]:
        if self.qvec is None:
            return {}
        qvec = np.asarray(self.qvec, dtype=np.float32)
        return {mid: [(p, float(v @ qvec)) for p, v in spans]
                for mid, spans in self.store.passages.spans(ids).items()}


def _copies(rows: dict[str, Any], ids: Sequence[str]) -> dict[str, np.ndarray]:
    """The vector copies the keyword statement read for these ids (float32, one conversion)."""
    keys = [i for i in ids if getattr(rows.get(i), "vector", None) is not None]
    blobs = [rows[k].vector for k in keys]
    if len({len(b) for b in blobs}) != 1:  # none, or copies of different sizes (never kept together)
        return {}
    return dict(zip(keys, vector_matrix(blobs), strict=True))
