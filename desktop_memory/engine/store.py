"""SQLite through APSW: the source of truth for memories, sessions and queues."""

from __future__ import annotations

import json
import logging
import time
import uuid
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from importlib import resources
from pathlib import Path
from typing import Any, NamedTuple

import apsw
import numpy as np

from ..core.errors import NotFound, StorageError
from ..core.models import Memory, Version
from ..core.query import Filters, fts_or
from ..core.text import first_line
from . import encryption, failures

SESSION_GAP_S = 10 * 60
DF_CACHE = 50_000  # document frequencies kept (a few MB at most)
SELECT_BUDGET = 8000  # query terms select rows, rarest first, until their document counts reach this
COLUMNS = [
    "id",
    "content",
    "summary",
    "title",
    "source",
    "source_app",
    "source_url",
    "session_id",
    "tags",
    "entities",
    "importance",
    "pinned",
    "forgotten",
    "created_at",
    "updated_at",
    "accessed_at",
    "access_count",
    "content_hash",
    "metadata",
    "enrichment_state",
    "redactions",
    "family_id",
]
_SELECT = "SELECT " + ", ".join(f"m.{c}" for c in COLUMNS) + " FROM memories m"


log = logging.getLogger(__name__)


def migrations() -> list[tuple[int, str, str]]:
    """(number, name, sql) of every packaged migration, in order."""
    folder = resources.files("desktop_memory.engine") / "migrations"
    found = []
    for entry in folder.iterdir():
        name = entry.name
        if name.startswith("m") and name.endswith(".sql"):
            found.append((int(name[1:4]), name, entry.read_text(encoding="utf-8")))
    return sorted(found)


def _moved(top: int, since: int | None, *, floor: int, share: int) -> bool:
    """Whether the highest rowid moved by more than 1/`share` (at least `floor` rows) since `since`."""
    return since is None or abs(top - since) > max(floor, since // share)


def _row_to_memory(row: Sequence[Any]) -> Memory:
    d = dict(zip(COLUMNS, row, strict=True))
    for key in ("tags", "entities", "metadata"):
        raw = d[key]
        d[key] = [] if raw == "[]" else {} if raw == "{}" else json.loads(raw)
    d["pinned"] = bool(d["pinned"])
    d["forgotten"] = bool(d["forgotten"])
    return Memory(**d)


class RankFields(NamedTuple):
    """The fields of a memory that `ranking.fuse` reads."""

    id: str
    created_at: float
    importance: float
    pinned: bool
    family_id: str | None = None


class Store:
    """One connection to the memories database; used from one thread at a time."""

    def __init__(self, path: Path, key: str | None = None) -> None:
        """Open (creating) the database; `key` is its encryption key (engine/encryption.py), None if plain."""
        self.path = path
        try:
            self.db = encryption.connect(path, hexkey=key)
            self.db.set_busy_timeout(5000)
            self.db.execute("PRAGMA journal_mode=WAL")
            self.db.execute("PRAGMA synchronous=NORMAL")
            self.db.execute("PRAGMA foreign_keys=ON")
            self.db.execute("PRAGMA secure_delete=ON")  # deleted text is overwritten, not left in free pages
            self.migrate()
            self._porter: Any = None
            self._df_top: int | None = None
            self._rows_top: int | None = None
            self._df: dict[str, int] = {}
            self._fts_rows = 0
        except apsw.NotADBError as exc:
            raise StorageError(f"{path} is not a desktop-memory database (damaged or not SQLite): "
                               f"{failures.DAMAGED_ADVICE}") from exc
        except apsw.Error as exc:  # a full disk, a read-only folder...: say so; else what SQLite said
            raise (self._failure(exc) or StorageError(f"cannot open the database {path}: {exc}")) from exc

    @contextmanager
    def _mapped(self) -> Iterator[None]:
        """Storage failures inside become StorageErrors (engine/failures.py); anything else passes unchanged."""
        try:
            yield
        except Exception as exc:
            if (error := self._failure(exc)) is not None:
                raise error from exc
            raise

    def _failure(self, exc: BaseException) -> StorageError | None:
        """The StorageError for a storage failure (the OS error behind an I/O error tells which), else None."""
        db = getattr(self, "db", None)
        return failures.storage_error(exc, os_errno=db.system_errno if db is not None else None)

    # -- schema -------------------------------------------------------------------------------
    @property
    def schema_version(self) -> int:
        return int(self.db.execute("PRAGMA user_version").fetchone()[0])

    def migrate(self) -> list[str]:
        """Apply every migration newer than the database, each in its own transaction."""
        applied = []
        known = migrations()
        current = self.schema_version
        if known and current > known[-1][0]:
            raise StorageError(f"the database was written by a newer desktop-memory (schema {current}); please upgrade")
        for number, name, sql in known:
            if number <= current:
                continue
            with self.db:
                self.db.execute(sql)
                self.db.execute(f"PRAGMA user_version={number}")
            applied.append(name)
        return applied

    @contextmanager
    def transaction(self) -> Iterator[None]:
        """A write transaction. The outermost one takes the write lock at once (BEGIN IMMEDIATE): the
        enrichment thread writes through a second connection, and a deferred transaction that reads and
        then writes would fail with SQLITE_BUSY_SNAPSHOT if that connection committed in between.

        A full disk, a read-only folder or a damaged file becomes a StorageError saying what to do
        (engine/failures.py). SQLite rolls some failures back by itself (SQLITE_FULL, SQLITE_IOERR...):
        the ROLLBACK here runs only while a transaction is still open, so it never replaces the real error.
        """
        if self.db.in_transaction:
            with self._mapped(), self.db:
                yield
            return
        with self._mapped():
            self.db.execute("BEGIN IMMEDIATE")
        try:
            yield
            self.db.execute("COMMIT")
        except BaseException as exc:
            self._rollback()
            if (error := self._failure(exc)) is not None:
                raise error from exc
            raise

    def _rollback(self) -> None:
        """Roll back what is still open; a failure here is logged, never raised over the real error."""
        if not self.db.in_transaction:
            return
        try:
            self.db.execute("ROLLBACK")
        except apsw.Error:
            log.warning("rollback after a failed transaction failed too", exc_info=True)

    def close(self) -> None:
        self.db.close()

    # -- reading ------------------------------------------------------------------------------
    def get(self, memory_id: str) -> Memory:
        """A memory by full id or unique id prefix (at least 4 characters)."""
        row = self.db.execute(_SELECT + " WHERE m.id = ?", (memory_id,)).fetchone()
        if row is None and len(memory_id) >= 4:
            rows = self.db.execute(
                _SELECT + " WHERE m.id >= ? AND m.id < ? LIMIT 2", (memory_id, memory_id + "\uffff")
            ).fetchall()
            if len(rows) > 1:
                raise NotFound(f"id prefix {memory_id!r} matches more than one memory; give more of it")
            row = rows[0] if rows else None
        if row is None:
            raise NotFound(f"no memory with id {memory_id!r}")
        return _row_to_memory(row)

    def get_many(self, ids: Iterable[str]) -> dict[str, Memory]:
        ids = list(ids)
        out: dict[str, Memory] = {}
        for start in range(0, len(ids), 500):
            chunk = ids[start : start + 500]
            marks = ",".join("?" * len(chunk))
            for row in self.db.execute(_SELECT + f" WHERE m.id IN ({marks})", chunk):
                m = _row_to_memory(row)
                out[m.id] = m
        return out

    def rank_fields(self, ids: Iterable[str], *, include_forgotten: bool = False) -> dict[str, RankFields]:
        """What ranking reads of each memory, without its text: ~3x cheaper than full rows."""
        ids = list(ids)
        out: dict[str, RankFields] = {}
        live = "" if include_forgotten else " AND forgotten = 0"
        for start in range(0, len(ids), 500):
            chunk = ids[start : start + 500]
            sql = (f"SELECT id, created_at, importance, pinned, family_id FROM memories "
                   f"WHERE id IN ({','.join('?' * len(chunk))}){live}")
            for r in self.db.execute(sql, chunk):
                out[r[0]] = RankFields(r[0], r[1], r[2], bool(r[3]), r[4])
        return out

    def by_hash(self, content_hash: str) -> Memory | None:
        row = self.db.execute(
            _SELECT + " WHERE m.content_hash = ? ORDER BY m.forgotten, m.created_at LIMIT 1", (content_hash,)
        ).fetchone()
        return _row_to_memory(row) if row else None

    def iter_all(self, *, include_forgotten: bool = True, batch: int = 1000) -> Iterator[Memory]:
        """Every memory in the order it was added."""
        extra = "" if include_forgotten else " AND m.forgotten = 0"
        last = -1
        while True:
            rows = self.db.execute(
                _SELECT.replace("SELECT ", "SELECT m.rowid, ", 1)
                + f" WHERE m.rowid > ?{extra} ORDER BY m.rowid LIMIT ?",
                (last, batch),
            ).fetchall()
            if not rows:
                return
            for row in rows:
                yield _row_to_memory(row[1:])
            last = rows[-1][0]

    def get_meta(self, key: str) -> str | None:
        row = self.db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return None if row is None else str(row[0])

    def set_meta(self, key: str, value: str) -> None:
        self.db.execute("INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)", (key, value))

    def all_ids(self) -> set[str]:
        return {r[0] for r in self.db.execute("SELECT id FROM memories")}

    def count(self, *, include_forgotten: bool = False) -> int:
        sql = "SELECT count(*) FROM memories" + ("" if include_forgotten else " WHERE forgotten = 0")
        return int(self.db.execute(sql).fetchone()[0])

    def recent(self, limit: int) -> list[str]:
        """Ids of the most recently added memories, newest first."""
        return [r[0] for r in self.db.execute("SELECT id FROM memories ORDER BY rowid DESC LIMIT ?", (limit,))]

    # -- filters ------------------------------------------------------------------------------
    @staticmethod
    def filter_sql(filters: Filters, alias: str = "m") -> tuple[str, list[Any]]:
        """A WHERE fragment (always valid SQL) and its parameters for the given filters."""
        clauses, params = [], []
        if not filters.include_forgotten:
            clauses.append(f"{alias}.forgotten = 0")
        if filters.pinned_only:
            clauses.append(f"{alias}.pinned = 1")
        if filters.sources:
            clauses.append(f"lower({alias}.source) IN ({','.join('?' * len(filters.sources))})")
            params += [s.lower() for s in filters.sources]
        if filters.apps:
            clauses.append("(" + " OR ".join(f"lower({alias}.source_app) LIKE ?" for _ in filters.apps) + ")")
            params += [f"%{a.lower()}%" for a in filters.apps]
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
                           "instr(lower(json_extract(value, '$.text')), ?) > 0"
                           + (" AND json_extract(value, '$.type') = ?)" if ent.type else ")"))
            params += [ent.text, ent.type] if ent.type else [ent.text]
        return (" AND ".join(clauses) or "1"), params

    def keyword_search(self, match: str, filters: Filters, limit: int) -> list[tuple[str, float]]:
        """(id, bm25 score, higher is better) for an already-sanitised FTS5 expression.

        Without filters the FTS index is ranked on its own and only the top rows are joined
        (2-4x faster at 100k memories than joining every match before sorting).
        """
        score = "-bm25(memories_fts, 1.0, 0.5, 1.0, 1.0, 0.5)"
        where, params = self.filter_sql(filters)
        try:
            if not filters.active:
                fetch = limit + limit // 2 + 10
                top = self.db.execute(
                    f"SELECT rowid, {score} AS s FROM memories_fts WHERE memories_fts MATCH ? ORDER BY s DESC LIMIT ?",
                    (match, fetch),
                ).fetchall()
                ids = self._ids_for_rowids([r[0] for r in top], where, params)
                found = [(ids[r], float(s)) for r, s in top if r in ids][:limit]
                if len(found) == limit or len(top) < fetch:
                    return found
            sql = (
                f"SELECT m.id, {score} AS s FROM memories_fts "
                "JOIN memories m ON m.rowid = memories_fts.rowid "
                f"WHERE memories_fts MATCH ? AND {where} ORDER BY s DESC LIMIT ?"
            )
            return [(r[0], float(r[1])) for r in self.db.execute(sql, [match, *params, limit])]
        except apsw.SQLError as exc:  # a sanitiser bug must not become a traceback
            raise StorageError(f"keyword search failed: {exc}") from exc

    def keyword_search_terms(self, toks: Sequence[str], filters: Filters, limit: int) -> list[tuple[str, float]]:
        """bm25 over OR-ed terms, ranking a bounded number of rows whatever the store's size.

        FTS5 ranks every row that matches any term (~1.5 us a row: ~60 ms for a word in half of 100k
        memories). So the rarest terms select rows until their document counts add up to
        SELECT_BUDGET; the commoner ones are kept for scoring but no longer select rows on their own:
        the query becomes `(selecting terms) AND (all terms)`. A row that holds only common words
        scores at most 2.2 x their small IDFs and rarely reaches the top; bm25 then counts the
        selecting terms twice, which only shifts weight toward them. When fewer than `limit` rows
        match, the whole query runs. (Measured on 100k synthetic notes: docs/benchmarks.md.)
        """
        if not toks:
            return []
        common = self._common_terms(toks)
        if common:
            selecting = [t for t in toks if t not in common]
            found = self.keyword_search(f"({fts_or(selecting)}) AND ({fts_or(toks)})", filters, limit)
            if len(found) >= limit:
                return found
        return self.keyword_search(fts_or(toks), filters, limit)

    def _common_terms(self, toks: Sequence[str]) -> set[str]:
        """The terms left out of row selection (never the rarest; none when the budget covers all)."""
        top = int(self.scalar("SELECT coalesce(max(rowid), 0) FROM memories"))
        if _moved(top, self._rows_top, floor=100, share=100):  # the row count: after 1 % more rows
            self._rows_top, self._fts_rows = top, int(self.scalar("SELECT count(*) FROM memories"))
        # a term's count walks its whole doclist (~2 ms a query at 100k when none is cached); counts
        # only decide which terms select rows, so they are kept until the store grows by 10 %
        if _moved(top, self._df_top, floor=1000, share=10) or len(self._df) > DF_CACHE:
            self._df_top, self._df = top, {}
        if self._fts_rows <= SELECT_BUDGET or len(toks) < 2:
            return set()  # no query can rank more rows than the budget
        counts = {t: self._document_frequency(t) for t in toks}
        selecting: set[str] = set()
        total = 0
        for t in sorted(counts, key=counts.__getitem__):
            if selecting and total + counts[t] > SELECT_BUDGET:
                break
            selecting.add(t)
            total += counts[t]
        return set(counts) - selecting

    def _document_frequency(self, term: str) -> int:
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
                hit = int(self.scalar("SELECT doc FROM temp.memories_fts_terms WHERE term = ?", (tokens[0][0],)) or 0)
            self._df[term] = hit
        return hit

    def _ids_for_rowids(self, rowids: Sequence[int], where: str, params: Sequence[Any]) -> dict[int, str]:
        if not rowids:
            return {}
        sql = f"SELECT m.rowid, m.id FROM memories m WHERE m.rowid IN ({','.join('?' * len(rowids))}) AND {where}"
        return {r[0]: r[1] for r in self.db.execute(sql, [*rowids, *params])}

    def session_neighbours(self, ids: Sequence[str]) -> dict[str, list[str]]:
        """For each id, the memories just before and after it in its session (one statement)."""
        if not ids:
            return {}
        sql = (
            "WITH s AS (SELECT rowid, id, session_id FROM memories "
            f"WHERE id IN ({','.join('?' * len(ids))}) AND session_id IS NOT NULL) "
            "SELECT s.id, "
            "(SELECT m.id FROM memories m WHERE m.session_id = s.session_id AND m.rowid < s.rowid "
            "ORDER BY m.rowid DESC LIMIT 1), "
            "(SELECT m.id FROM memories m WHERE m.session_id = s.session_id AND m.rowid > s.rowid "
            "ORDER BY m.rowid LIMIT 1) FROM s"
        )
        return {mid: [n for n in (before, after) if n is not None]
                for mid, before, after in self.db.execute(sql, list(ids))}

    def filtered_ids(self, filters: Filters, cap: int) -> list[str] | None:
        """Ids matching the filters, or None when more than cap match."""
        where, params = self.filter_sql(filters)
        rows = self.db.execute(f"SELECT m.id FROM memories m WHERE {where} LIMIT ?", [*params, cap + 1]).fetchall()
        return None if len(rows) > cap else [r[0] for r in rows]

    def count_filtered(self, filters: Filters) -> int:
        where, params = self.filter_sql(filters)
        return int(self.db.execute(f"SELECT count(*) FROM memories m WHERE {where}", params).fetchone()[0])

    def filter_ids(self, ids: Sequence[str], filters: Filters) -> set[str]:
        """The subset of `ids` that passes the filters."""
        where, params = self.filter_sql(filters)
        out: set[str] = set()
        for start in range(0, len(ids), 500):
            chunk = list(ids[start : start + 500])
            sql = f"SELECT m.id FROM memories m WHERE m.id IN ({','.join('?' * len(chunk))}) AND {where}"
            out.update(r[0] for r in self.db.execute(sql, [*chunk, *params]))
        return out

    # -- writing ------------------------------------------------------------------------------
    def session_for(self, source: str, source_app: str, at: float, title: str) -> str:
        """The session a memory captured at `at` belongs to (joined or newly started).

        Reads the few sessions that end first after `at - gap` (an index range, so importing old
        history into a large store costs the same as capturing now) and joins the latest-ending one
        that started by `at + gap`.
        """
        rows = self.db.execute(
            "SELECT id, started_at, ended_at FROM sessions WHERE source = ? AND source_app = ? "
            "AND ended_at >= ? ORDER BY ended_at LIMIT 4",
            (source, source_app, at - SESSION_GAP_S),
        ).fetchall()
        near = [r for r in rows if r[1] <= at + SESSION_GAP_S]
        if near:
            sid, started, ended = near[-1]
            self.db.execute(
                "UPDATE sessions SET started_at = ?, ended_at = ?, count = count + 1 WHERE id = ?",
                (min(started, at), max(ended, at), sid),
            )
            return sid
        sid = str(uuid.uuid4())
        self.db.execute(
            "INSERT INTO sessions(id, source, source_app, title, started_at, ended_at, count) "
            "VALUES (?, ?, ?, ?, ?, ?, 1)",
            (sid, source, source_app, title, at, at),
        )
        return sid

    def insert(self, m: Memory) -> None:
        values = [getattr(m, c) for c in COLUMNS]
        for i, c in enumerate(COLUMNS):
            if c in ("tags", "entities", "metadata"):
                values[i] = json.dumps(values[i], ensure_ascii=False)
            elif c in ("pinned", "forgotten"):
                values[i] = int(values[i])
        self.db.execute(f"INSERT INTO memories({', '.join(COLUMNS)}) VALUES ({', '.join('?' * len(COLUMNS))})", values)

    def update(self, memory_id: str, **fields: Any) -> None:
        """Set some columns of one memory (JSON columns take Python values)."""
        if not fields:
            return
        sets, values = [], []
        for key, value in fields.items():
            if key not in COLUMNS or key == "id":
                raise ValueError(f"unknown column {key}")
            if key in ("tags", "entities", "metadata"):
                value = json.dumps(value, ensure_ascii=False)
            elif key in ("pinned", "forgotten"):
                value = int(value)
            sets.append(f"{key} = ?")
            values.append(value)
        cur = self.db.execute(f"UPDATE memories SET {', '.join(sets)} WHERE id = ?", [*values, memory_id])
        del cur
        if self.db.changes() == 0:
            raise NotFound(f"no memory with id {memory_id!r}")

    def touch(self, ids: Sequence[str], at: float | None = None) -> None:
        """Record that these memories were shown to the person."""
        if not ids:
            return
        at = at or time.time()
        marks = ",".join("?" * len(ids))
        with self.db:
            self.db.execute(
                f"UPDATE memories SET accessed_at = ?, access_count = access_count + 1 WHERE id IN ({marks})",
                [at, *ids],
            )

    def delete(self, ids: Sequence[str]) -> int:
        """Hard-delete memories (FTS rows go with them through triggers)."""
        total = 0
        sessions: set[str] = set()
        for start in range(0, len(ids), 500):
            chunk = list(ids[start : start + 500])
            marks = ",".join("?" * len(chunk))
            sessions.update(
                r[0]
                for r in self.db.execute(
                    f"SELECT DISTINCT session_id FROM memories WHERE id IN ({marks}) AND session_id IS NOT NULL", chunk
                )
            )
            self.db.execute(f"DELETE FROM memories WHERE id IN ({marks})", chunk)
            total += self.db.changes()
        for sid in sessions:  # the session title may have come from a deleted memory's text
            first = self.db.execute(
                "SELECT title, content FROM memories WHERE session_id = ? ORDER BY rowid LIMIT 1", (sid,)
            ).fetchone()
            if first is None:
                self.db.execute("DELETE FROM sessions WHERE id = ?", (sid,))
            else:
                self.db.execute(
                    "UPDATE sessions SET title = ?, count = (SELECT count(*) FROM memories WHERE session_id = ?) "
                    "WHERE id = ?",
                    (first[0] or first_line(first[1], 60), sid, sid),
                )
        return total

    def scrub(self) -> None:
        """After a purge: rewrite the FTS index without deleted entries and empty the WAL."""
        with self.db:
            self.db.execute("INSERT INTO memories_fts(memories_fts) VALUES ('optimize')")
        self.db.execute("PRAGMA wal_checkpoint(TRUNCATE)")

    # -- families and versions (m005) ---------------------------------------------------------
    def family_members(self, family_ids: Iterable[str], limit: int) -> dict[str, list[Memory]]:
        """Up to `limit` members of each family, newest first."""
        out: dict[str, list[Memory]] = {}
        for fid in dict.fromkeys(family_ids):
            rows = self.db.execute(_SELECT + " WHERE m.family_id = ? ORDER BY m.rowid DESC LIMIT ?",
                                   (fid, limit)).fetchall()
            out[fid] = [_row_to_memory(r) for r in rows]
        return out

    def previous_capture(self, source: str, source_app: str, at: float) -> Memory | None:
        """The latest memory from this source and app captured at or before `at`, through its session
        (an index range on sessions and one on memories, whatever the store's size)."""
        sid = self.scalar(
            "SELECT id FROM sessions WHERE source = ? AND source_app = ? AND ended_at >= ? AND started_at <= ? "
            "ORDER BY ended_at DESC LIMIT 1", (source, source_app, at - SESSION_GAP_S, at))
        if sid is None:
            return None
        row = self.db.execute(_SELECT + " WHERE m.session_id = ? ORDER BY m.rowid DESC LIMIT 1", (sid,)).fetchone()
        return _row_to_memory(row) if row else None

    def session_reaches(self, session_id: str | None, at: float) -> None:
        """A capture at `at` extended a memory of this session: the session lasts until then."""
        if session_id:
            self.db.execute("UPDATE sessions SET ended_at = max(ended_at, ?) WHERE id = ?", (at, session_id))

    def versions(self, memory_id: str) -> list[Version]:
        """The earlier texts of a memory, oldest first."""
        return [Version(*r) for r in self.db.execute(
            "SELECT seq, content, content_hash, created_at, replaced_at, redactions FROM memory_versions "
            "WHERE memory_id = ? ORDER BY seq", (memory_id,))]

    def add_version(self, memory_id: str, v: Version) -> int:
        """Keep an earlier text of a memory (skipped when that text is kept already); returns its seq."""
        same = self.db.execute("SELECT seq FROM memory_versions WHERE memory_id = ? AND content_hash = ?",
                               (memory_id, v.content_hash)).fetchone()
        if same:
            return int(same[0])
        seq = int(self.scalar("SELECT coalesce(max(seq), 0) + 1 FROM memory_versions WHERE memory_id = ?",
                              (memory_id,)))
        self.db.execute(
            "INSERT INTO memory_versions(memory_id, seq, content, content_hash, created_at, replaced_at, redactions) "
            "VALUES (?, ?, ?, ?, ?, ?, ?)",
            (memory_id, seq, v.content, v.content_hash, v.created_at, v.replaced_at, v.redactions))
        return seq

    def ids_with_versions(self) -> set[str]:
        return {r[0] for r in self.db.execute("SELECT DISTINCT memory_id FROM memory_versions")}

    def delete_version(self, memory_id: str, seq: int) -> None:
        self.db.execute("DELETE FROM memory_versions WHERE memory_id = ? AND seq = ?", (memory_id, seq))

    def last_replaced(self, memory_id: str) -> float | None:
        """When the memory's text was last replaced by a longer capture (None if never)."""
        return self.scalar("SELECT max(replaced_at) FROM memory_versions WHERE memory_id = ?", (memory_id,))

    # -- vector queue -------------------------------------------------------------------------
    def queued(self, limit: int = 512) -> list[tuple[str, str]]:
        return [
            (r[0], r[1])
            for r in self.db.execute("SELECT memory_id, op FROM vector_queue ORDER BY queued_at LIMIT ?", (limit,))
        ]

    def queued_upserts(self, limit: int) -> list[str]:
        return [r[0] for r in self.db.execute(
            "SELECT memory_id FROM vector_queue WHERE op = 'upsert' LIMIT ?", (limit,))]

    def queue_length(self) -> int:
        return int(self.db.execute("SELECT count(*) FROM vector_queue").fetchone()[0])

    def enqueue(self, ids: Iterable[str], op: str) -> None:
        self.db.executemany("INSERT OR REPLACE INTO vector_queue(memory_id, op) VALUES (?, ?)", [(i, op) for i in ids])

    def dequeue(self, ids: Iterable[str]) -> None:
        with self.db:
            self.db.executemany("DELETE FROM vector_queue WHERE memory_id = ?", [(i,) for i in ids])

    # -- vector copies (m004) -----------------------------------------------------------------
    def put_vectors(self, pairs: Iterable[tuple[str, np.ndarray]]) -> None:
        """Keep a float16 copy of each memory's vector (call inside the transaction that wrote it)."""
        self.db.executemany(
            "INSERT OR REPLACE INTO memory_vectors(rowid, vec) SELECT rowid, ? FROM memories WHERE id = ?",
            [(np.asarray(v, dtype=np.float16).tobytes(), i) for i, v in pairs],
        )

    def stored_vectors(self, ids: Iterable[str]) -> dict[str, np.ndarray]:
        """The float32 vectors of those memories that have a copy."""
        ids = list(ids)
        out: dict[str, np.ndarray] = {}
        for start in range(0, len(ids), 500):
            chunk = ids[start : start + 500]
            sql = ("SELECT m.id, v.vec FROM memories m JOIN memory_vectors v ON v.rowid = m.rowid "
                   f"WHERE m.id IN ({','.join('?' * len(chunk))})")
            for mid, blob in self.db.execute(sql, chunk):
                out[mid] = np.frombuffer(blob, dtype=np.float16).astype(np.float32)
        return out

    def ids_without_vector(self) -> list[str]:
        return [r[0] for r in self.db.execute(
            "SELECT m.id FROM memories m WHERE NOT EXISTS "
            "(SELECT 1 FROM memory_vectors v WHERE v.rowid = m.rowid) ORDER BY m.rowid")]

    def drop_vectors(self) -> None:
        """Forget every copy (the embedding model changed)."""
        self.db.execute("DELETE FROM memory_vectors")

    # -- misc ---------------------------------------------------------------------------------
    def fts_count(self) -> int:
        return int(self.db.execute("SELECT count(*) FROM memories_fts").fetchone()[0])

    def fts_integrity(self) -> bool:
        try:
            self.db.execute("INSERT INTO memories_fts(memories_fts, rank) VALUES ('integrity-check', 0)")
        except apsw.Error:
            return False
        return True

    def scalar(self, sql: str, params: Sequence[Any] = ()) -> Any:
        row = self.db.execute(sql, params).fetchone()
        return row[0] if row else None

    def rows(self, sql: str, params: Sequence[Any] = ()) -> list[tuple]:
        return self.db.execute(sql, params).fetchall()
