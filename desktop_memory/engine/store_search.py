"""Search reads over the memories table: FTS5 keyword ranking, row selection by rare terms, the fields ranking
reads, session neighbours and filter SQL.

`SearchReads` is the store's `search` part (engine/store.py): it reads through the store's one connection.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any, NamedTuple, cast

import apsw

from ..core.errors import StorageError
from ..core.query import Filters, fts_or
from .store_sql import in_list, scalar

DF_CACHE = 50_000  # document frequencies kept (a few MB at most)
SELECT_BUDGET = 8000  # query terms select rows, rarest first, until their document counts reach this


class RankFields(NamedTuple):
    """The fields of a memory that `ranking.fuse` reads (and the vector copies a search reads with them)."""

    id: str
    created_at: float
    importance: float
    pinned: bool
    family_id: str | None = None
    previous: bytes | None = None  # with previous=True: the vector copy of the memory before it in its session
    vector: bytes | None = None  # from `keyword_candidates`: the memory's own vector copy (float16), if it has one


# the float16 vector copy of the memory just before m in its session (forgotten ones skipped), or NULL
_PREVIOUS_VECTOR = ("(SELECT v.vec FROM memory_vectors v WHERE v.rowid = (SELECT p.rowid FROM memories p "
                    "WHERE p.session_id = m.session_id AND p.rowid < m.rowid AND p.forgotten = 0 "
                    "ORDER BY p.rowid DESC LIMIT 1))")
# RankFields' columns of `memories m` but the last, without (False) or with (True) the previous vector
_RANK_COLUMNS = {
    flag: f"m.id, m.created_at, m.importance, m.pinned, m.family_id, {_PREVIOUS_VECTOR if flag else 'NULL'}"
    for flag in (False, True)}
_OWN_VECTOR = "(SELECT v.vec FROM memory_vectors v WHERE v.rowid = m.rowid)"


def _rank_fields_of(row: Sequence[Any]) -> RankFields:
    """RankFields from a row of _RANK_COLUMNS and the own-vector column."""
    return RankFields(row[0], row[1], row[2], bool(row[3]), row[4], row[5], row[6])


def _moved(top: int, since: int | None, *, floor: int, share: int) -> bool:
    """Whether the highest rowid moved by more than 1/`share` (at least `floor` rows) since `since`."""
    return since is None or abs(top - since) > max(floor, since // share)


def _lower(*value: apsw.SQLiteValue) -> str | None:
    """SQLite's lower() knows ASCII only; this is Python's (Unicode) lower case of a value as text
    (registered with one argument: `value` is a 1-tuple)."""
    return None if value[0] is None else str(value[0]).lower()


def register_functions(db: apsw.Connection) -> None:
    """The SQL functions `filter_sql` uses, on one connection."""
    db.create_scalar_function("dm_lower", _lower, 1, deterministic=True)


def filter_sql(filters: Filters, alias: str = "m") -> tuple[str, list[Any]]:
    """A WHERE fragment (always valid SQL) and its parameters for the given filters.

    The one rule of which memories pass, for every search channel (service/retrieval.py). Text is
    compared in any case with Python's Unicode lower case (`dm_lower`, registered on each connection
    by `register_functions`), so "Ørsted" matches `entity:ørsted` and "Éditeur" matches `app:éditeur`.
    """
    clauses: list[str] = []
    params: list[Any] = []
    if not filters.include_forgotten:
        clauses.append(f"{alias}.forgotten = 0")
    if filters.pinned_only:
        clauses.append(f"{alias}.pinned = 1")
    if filters.sources:
        clauses.append(f"lower({alias}.source) IN ({','.join('?' * len(filters.sources))})")
        params += [s.lower() for s in filters.sources]
    if filters.apps:
        clauses.append("(" + " OR ".join(f"instr(dm_lower({alias}.source_app), ?) > 0" for _ in filters.apps) + ")")
        params += [a.lower() for a in filters.apps]
    for tag in filters.tags:
        clauses.append(f"EXISTS (SELECT 1 FROM json_each({alias}.tags) WHERE lower(value) = ?)")
        params.append(tag.lower())
    if filters.after:
        clauses.append(f"{alias}.created_at >= ?")
        params.append(filters.after.timestamp())
    if filters.before:
        clauses.append(f"{alias}.created_at < ?")
        params.append(filters.before.timestamp())
    for ent in filters.entities:  # enrichment entities (issue 3): text contains, optionally of a type
        clauses.append(f"EXISTS (SELECT 1 FROM json_each({alias}.entities) WHERE "
                       "instr(dm_lower(json_extract(value, '$.text')), ?) > 0"
                       + (" AND json_extract(value, '$.type') = ?)" if ent.type else ")"))
        params += [ent.text.lower(), ent.type] if ent.type else [ent.text.lower()]
    return (" AND ".join(clauses) or "1"), params


class SearchReads:
    """The store's `search` part: keyword ranking, what ranking reads, session neighbours, filtered ids.

    Keeps the document frequencies and row count keyword selection uses, per connection.
    """

    def __init__(self, db: apsw.Connection) -> None:
        self.db = db
        self._porter: Any = None
        self._df_top: int | None = None
        self._rows_top: int | None = None
        self._df: dict[str, int] = {}
        self._fts_rows = 0

    # -- keyword ------------------------------------------------------------------------------
    def keyword(self, toks: Sequence[str], filters: Filters, limit: int) -> list[tuple[str, float]]:
        """(id, bm25 score, higher is better) over OR-ed terms, ranking a bounded number of rows whatever
        the store's size.

        FTS5 ranks every row that matches any term (~1.5 us a row: ~60 ms for a word in half of 100k
        memories). So the rarest terms select rows until their document counts add up to
        SELECT_BUDGET; the commoner ones are kept for scoring but no longer select rows on their own:
        the query becomes `(selecting terms) AND (all terms)`. A row that holds only common words
        scores at most 2.2 x their small IDFs and rarely reaches the top; bm25 then counts the
        selecting terms twice, which only shifts weight toward them. When fewer than `limit` rows
        match, the whole query runs. (Measured on 100k synthetic notes: docs/benchmarks.md.)
        """
        return self.keyword_candidates(toks, filters, limit, previous=None)[0]

    def keyword_candidates(self, toks: Sequence[str], filters: Filters, limit: int, *,
                           previous: bool | None = False) -> tuple[list[tuple[str, float]], dict[str, RankFields]]:
        """`keyword` and the RankFields (own vector copy included; the previous one with `previous`) of the
        candidates the keyword statement found unfiltered; None reads no fields."""
        if not toks:
            return [], {}
        common = self._common_terms(toks)
        if common:
            selecting = [t for t in toks if t not in common]
            found = self._match(f"({fts_or(selecting)}) AND ({fts_or(toks)})", filters, limit, previous)
            if len(found[0]) >= limit:
                return found
        return self._match(fts_or(toks), filters, limit, previous)

    def _match(self, match: str, filters: Filters, limit: int,
               previous: bool | None) -> tuple[list[tuple[str, float]], dict[str, RankFields]]:
        """(id, bm25 score) for an FTS5 expression, and with `previous` not None the candidates' RankFields
        with their vector copies.

        Without filters the FTS index is ranked on its own and only the top rows are joined (2-4x faster at
        100k memories than joining every match before sorting); that join, by rowid, also reads what ranking
        needs (~3x cheaper than looking the ids up again). Rows found by the filtered join come without.
        """
        score = "-bm25(memories_fts, 1.0, 0.5, 1.0, 1.0, 0.5)"
        where, params = filter_sql(filters)
        try:
            if not filters.active:
                fetch = limit + limit // 2 + 10
                top = cast("list[tuple[int, float]]", self.db.execute(
                    f"SELECT rowid, {score} AS s FROM memories_fts WHERE memories_fts MATCH ? ORDER BY s DESC LIMIT ?",
                    (match, fetch),
                ).fetchall())
                rowids = [r[0] for r in top]
                fields: dict[int, RankFields]
                if previous is None:
                    fields, ids = {}, self._ids_for_rowids(rowids, where, params)
                else:  # the first `limit` rows, then the rest only if some of those did not pass
                    fields = self._fields_for_rowids(rowids[:limit], where, params, previous)
                    if len(fields) < limit:
                        fields.update(self._fields_for_rowids(rowids[limit:], where, params, previous))
                    ids = {r: f.id for r, f in fields.items()}
                found = [(ids[r], float(s)) for r, s in top if r in ids][:limit]
                if len(found) == limit or len(top) < fetch:
                    kept = {i for i, _ in found}
                    return found, {f.id: f for f in fields.values() if f.id in kept}
            sql = (
                f"SELECT m.id, {score} AS s FROM memories_fts "
                "JOIN memories m ON m.rowid = memories_fts.rowid "
                f"WHERE memories_fts MATCH ? AND {where} ORDER BY s DESC LIMIT ?"
            )
            return [(r[0], float(r[1])) for r in self.db.execute(sql, [match, *params, limit])], {}
        except apsw.SQLError as exc:  # a sanitiser bug must not become a traceback
            raise StorageError(f"keyword search failed: {exc}") from exc

    def row_count(self) -> int:
        """The rows the keyword index holds (BM25's N), counted again once 1 % more rows were added."""
        top = int(scalar(self.db, "SELECT coalesce(max(rowid), 0) FROM memories"))
        if _moved(top, self._rows_top, floor=100, share=100):  # the row count: after 1 % more rows
            self._rows_top, self._fts_rows = top, int(scalar(self.db, "SELECT count(*) FROM memories"))
        return self._fts_rows

    def _common_terms(self, toks: Sequence[str]) -> set[str]:
        """The terms left out of row selection (never the rarest; none when the budget covers all)."""
        self.row_count()
        top = int(scalar(self.db, "SELECT coalesce(max(rowid), 0) FROM memories"))
        # a term's count walks its whole doclist (~2 ms a query at 100k when none is cached); counts
        # only decide which terms select rows, so they are kept until the store grows by 10 %
        if _moved(top, self._df_top, floor=1000, share=10) or len(self._df) > DF_CACHE:
            self._df_top, self._df = top, {}
        if self._fts_rows <= SELECT_BUDGET or len(toks) < 2:
            return set()  # no query can rank more rows than the budget
        counts = {t: self.document_frequency(t) for t in toks}
        selecting: set[str] = set()
        total = 0
        for t in sorted(counts, key=counts.__getitem__):
            if selecting and total + counts[t] > SELECT_BUDGET:
                break
            selecting.add(t)
            total += counts[t]
        return set(counts) - selecting

    def document_frequency(self, term: str) -> int:
        """Rows holding `term` (0 for a term that is not one token, so it is never treated as common)."""
        hit = self._df.get(term)
        if hit is None:
            if self._porter is None:
                self.db.execute("CREATE VIRTUAL TABLE IF NOT EXISTS temp.memories_fts_terms "
                                "USING fts5vocab(main, 'memories_fts', 'row')")
                self._porter = self.db.fts5_tokenizer("porter", ["unicode61"])  # as memories_fts tokenizes
            tokens = self._porter(term.encode("utf-8"), apsw.FTS5_TOKENIZE_QUERY, None, include_offsets=False)
            hit = 0
            if len(tokens) == 1:
                sql = "SELECT doc FROM temp.memories_fts_terms WHERE term = ?"
                hit = int(scalar(self.db, sql, (tokens[0][0],)) or 0)
            self._df[term] = hit
        return hit

    def _ids_for_rowids(self, rowids: Sequence[int], where: str, params: Sequence[Any]) -> dict[int, str]:
        if not rowids:
            return {}
        marks, values = in_list(rowids)
        sql = f"SELECT m.rowid, m.id FROM memories m WHERE m.rowid IN ({marks}) AND {where}"
        return {r[0]: r[1] for r in self.db.execute(sql, [*values, *params])}

    def _fields_for_rowids(self, rowids: Sequence[int], where: str, params: Sequence[Any],
                           previous: bool) -> dict[int, RankFields]:
        """RankFields, own vector copy included, of the rows of these rowids that pass `where`."""
        if not rowids:
            return {}
        marks, values = in_list(rowids)
        sql = (f"SELECT m.rowid, {_RANK_COLUMNS[previous]}, {_OWN_VECTOR} FROM memories m "
               f"WHERE m.rowid IN ({marks}) AND {where}")
        return {r[0]: _rank_fields_of(r[1:]) for r in self.db.execute(sql, [*values, *params])}

    # -- what ranking reads -------------------------------------------------------------------
    def rank_fields(self, ids: Iterable[str], *, include_forgotten: bool = False,
                    previous: bool = False) -> dict[str, RankFields]:
        """What ranking reads of each memory, without its text: ~3x cheaper than full rows. With `previous`,
        also the vector copy `store.vectors.previous` would give, in the same statement (the rows are found
        once)."""
        ids = list(ids)
        out: dict[str, RankFields] = {}
        live = "" if include_forgotten else " AND m.forgotten = 0"
        for start in range(0, len(ids), 500):
            marks, chunk = in_list(ids[start : start + 500])
            sql = f"SELECT {_RANK_COLUMNS[previous]}, NULL FROM memories m WHERE m.id IN ({marks}){live}"
            out.update((r[0], _rank_fields_of(r)) for r in self.db.execute(sql, chunk))
        return out

    def session_neighbourhood(self, ids: Sequence[str]) -> tuple[dict[str, list[str]], dict[str, list[str]]]:
        """For each id, the memories just before and after it in its session; and the same for those
        neighbours, in one statement.

        The memory just before a memory has that memory just after it, so its own neighbours are the one
        two steps before and the memory itself (and the other way round after it).
        """
        if not ids:
            return {}, {}
        step = ("(SELECT m.id FROM memories m WHERE m.session_id = s.session_id AND m.rowid {op} s.rowid "
                "ORDER BY m.rowid {order} LIMIT 1 OFFSET {skip})")
        sql = (
            "WITH s AS (SELECT rowid, id, session_id FROM memories "
            f"WHERE id IN ({','.join('?' * len(ids))}) AND session_id IS NOT NULL) "
            f"SELECT s.id, {step.format(op='<', order='DESC', skip=0)}, {step.format(op='>', order='', skip=0)}, "
            f"{step.format(op='<', order='DESC', skip=1)}, {step.format(op='>', order='', skip=1)} FROM s"
        )
        near: dict[str, list[str]] = {}
        of_near: dict[str, list[str]] = {}
        for mid, before, after, before2, after2 in self.db.execute(sql, list(ids)):
            near[mid] = [n for n in (before, after) if n is not None]
            if before is not None:
                of_near[before] = [n for n in (before2, mid) if n is not None]
            if after is not None:
                of_near[after] = [n for n in (mid, after2) if n is not None]
        return near, of_near

    # -- filtered ids -------------------------------------------------------------------------
    def filtered_ids(self, filters: Filters, cap: int) -> list[str] | None:
        """Ids matching the filters, or None when more than cap match."""
        where, params = filter_sql(filters)
        rows = self.db.execute(f"SELECT m.id FROM memories m WHERE {where} LIMIT ?", [*params, cap + 1]).fetchall()
        return None if len(rows) > cap else [str(r[0]) for r in rows]

    def newest_ids(self, filters: Filters, limit: int) -> list[str]:
        """The newest memories that pass the filters (pinned first)."""
        where, params = filter_sql(filters)
        sql = f"SELECT m.id FROM memories m WHERE {where} ORDER BY m.pinned DESC, m.created_at DESC LIMIT ?"
        return [r[0] for r in self.db.execute(sql, [*params, limit])]

    def count_filtered(self, filters: Filters) -> int:
        where, params = filter_sql(filters)
        return int(scalar(self.db, f"SELECT count(*) FROM memories m WHERE {where}", params))

    def filter_ids(self, ids: Sequence[str], filters: Filters) -> set[str]:
        """The subset of `ids` that passes the filters."""
        where, params = filter_sql(filters)
        out: set[str] = set()
        for start in range(0, len(ids), 500):
            chunk = list(ids[start : start + 500])
            sql = f"SELECT m.id FROM memories m WHERE m.id IN ({','.join('?' * len(chunk))}) AND {where}"
            out.update(r[0] for r in self.db.execute(sql, [*chunk, *params]))
        return out
