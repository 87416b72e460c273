"""SQLite through APSW: the source of truth for memories, sessions and queues.

`Store` holds the connection, the schema and transactions, and the memories themselves (reading, writing,
sessions, families and versions). What else the database keeps is read and written through its parts,
each on the same connection:

- `store.search` (store_search.py): keyword ranking, what ranking reads, session neighbours, filtered ids
- `store.vectors` (store_vectors.py): the durable queue for Chroma and the float16 vector copies
- `store.enrichment` (store_enrichment.py): the enrichment queue and its results
- `store.stats` (store_stats.py): whole-database figures and integrity checks
- `store.reembed` (store_reembed.py): the scratch table of a switch to another embedding model
- `store.passages` (store_passages.py): the vectors of long memories' passages and the queue of those without
- `store.sync` (store_sync.py): the merged state of a sync set between machines and what changed here since
"""

from __future__ import annotations

import json
import logging
import time
import uuid
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from importlib import resources
from pathlib import Path
from typing import Any, cast

import apsw

from ..core.errors import NotFound, StorageError
from ..core.models import Memory, Version
from ..core.query import Filters
from ..core.text import first_line
from . import encryption, failures
from .store_enrichment import EnrichmentQueue
from .store_passages import PassageRows
from .store_reembed import ReembedScratch
from .store_search import RankFields, SearchReads, filter_sql, register_functions
from .store_sql import in_list, scalar
from .store_stats import StatsReads
from .store_sync import SyncRows
from .store_vectors import VectorRows

__all__ = ["RankFields", "Store", "migrations"]

SESSION_GAP_S = 10 * 60
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
IMPORT_SESSIONS = uuid.UUID("5d1f0c2e-7b4a-4f3e-9a57-32e1c0de0032")  # uuid5 namespace of imported sessions


def migrations() -> list[tuple[int, str, str]]:
    """(number, name, sql) of every packaged migration, in order."""
    folder = resources.files("desktop_memory.engine") / "migrations"
    found = []
    for entry in folder.iterdir():
        name = entry.name
        if name.startswith("m") and name.endswith(".sql"):
            found.append((int(name[1:4]), name, entry.read_text(encoding="utf-8")))
    return sorted(found)


def _row_to_memory(row: Sequence[Any]) -> Memory:
    d = dict(zip(COLUMNS, row, strict=True))
    for key in ("tags", "entities", "metadata"):
        raw = d[key]
        d[key] = [] if raw == "[]" else {} if raw == "{}" else json.loads(raw)
    d["pinned"] = bool(d["pinned"])
    d["forgotten"] = bool(d["forgotten"])
    return Memory(**d)


class Store:
    """One connection to the memories database; used from one thread at a time.

    The memories' own rows are read and written here; the parts (`search`, `vectors`, `enrichment`,
    `stats`, `reembed`: see the module's docstring) share the connection and the transactions.
    """

    search: SearchReads
    vectors: VectorRows
    enrichment: EnrichmentQueue
    stats: StatsReads
    reembed: ReembedScratch
    passages: PassageRows
    sync: SyncRows

    def __init__(self, path: Path, key: str | None = None) -> None:
        """Open (creating) the database; `key` is its encryption key (engine/encryption.py), None if plain."""
        self.path = path
        try:
            self.db = encryption.connect(path, hexkey=key)
            self.db.set_busy_timeout(5000)
            register_functions(self.db)
            self.db.execute("PRAGMA journal_mode=WAL")
            self.db.execute("PRAGMA synchronous=NORMAL")
            self.db.execute("PRAGMA foreign_keys=ON")
            self.db.execute("PRAGMA secure_delete=ON")  # deleted text is overwritten, not left in free pages
            self.migrate()
            self.search = SearchReads(self.db)
            self.vectors = VectorRows(self.db)
            self.enrichment = EnrichmentQueue(self.db, self.transaction)
            self.stats = StatsReads(self.db)
            self.reembed = ReembedScratch(self.db)
            self.passages = PassageRows(self.db)
            self.sync = SyncRows(self.db)
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
        return int(scalar(self.db, "PRAGMA user_version"))

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

    def get_many(self, ids: Iterable[str], filters: Filters | None = None) -> dict[str, Memory]:
        """The memories with these ids; with `filters`, only those that pass them (`filter_sql`, same statement)."""
        ids = list(ids)
        out: dict[str, Memory] = {}
        where, params = filter_sql(filters) if filters is not None else ("1", [])
        for start in range(0, len(ids), 500):
            marks, chunk = in_list(ids[start : start + 500])
            for row in self.db.execute(_SELECT + f" WHERE m.id IN ({marks}) AND {where}", [*chunk, *params]):
                m = _row_to_memory(row)
                out[m.id] = m
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
            rows: list[Any] = self.db.execute(  # (rowid, *COLUMNS)
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
        return int(scalar(self.db, sql))

    def recent(self, limit: int) -> list[str]:
        """Ids of the most recently added memories, newest first."""
        return [r[0] for r in self.db.execute("SELECT id FROM memories ORDER BY rowid DESC LIMIT ?", (limit,))]

    def retention_candidates(self, cutoff: float, below_importance: float, *, forgotten_only: bool) -> list[str]:
        """Ids of memories created before `cutoff`, less important than `below_importance`, not pinned."""
        sql = ("SELECT id FROM memories WHERE pinned = 0 AND created_at < ? AND importance < ?"
               + (" AND forgotten = 1" if forgotten_only else ""))
        return [r[0] for r in self.db.execute(sql, (cutoff, below_importance))]

    # -- writing ------------------------------------------------------------------------------
    def session_for(self, source: str, source_app: str, at: float, title: str) -> str:
        """The session a memory captured at `at` belongs to (joined or newly started).

        Reads the few sessions that end first after `at - gap` (an index range, so importing old
        history into a large store costs the same as capturing now) and joins the latest-ending one
        that started by `at + gap`.
        """
        rows = cast("list[tuple[str, float, float]]", self.db.execute(
            "SELECT id, started_at, ended_at FROM sessions WHERE source = ? AND source_app = ? "
            "AND ended_at >= ? ORDER BY ended_at LIMIT 4",
            (source, source_app, at - SESSION_GAP_S),
        ).fetchall())
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

    # -- misc ---------------------------------------------------------------------------------
    def scalar(self, sql: str, params: Sequence[Any] = ()) -> Any:
        """The first column of the first row of a statement (None when there is none)."""
        return scalar(self.db, sql, params)

    # -- imports: identities and sessions by key (m007, issue 32) ---------------------------------
    def by_external_id(self, external_id: str) -> Memory | None:
        """The memory imported with this identity in its source (metadata.external_id; m007's index)."""
        row = self.db.execute(_SELECT + " WHERE json_extract(m.metadata, '$.external_id') = ? LIMIT 1",
                              (external_id,)).fetchone()
        return _row_to_memory(row) if row is not None else None

    def keyed_session(self, key: str, source: str, source_app: str, title: str, at: float) -> str:
        """The session of `key` (an imported conversation: one session per key, whatever the times of its
        exchanges), counting one more memory: its id derived from the key, started now or stretched to span `at`
        (the title kept unless it had none)."""
        sid = str(uuid.uuid5(IMPORT_SESSIONS, key))
        self.db.execute(
            "INSERT INTO sessions(id, source, source_app, title, started_at, ended_at, count) "
            "VALUES (?, ?, ?, ?, ?, ?, 1) ON CONFLICT(id) DO UPDATE SET "
            "started_at = min(started_at, excluded.started_at), ended_at = max(ended_at, excluded.ended_at), "
            "count = count + 1, title = CASE WHEN title = '' THEN excluded.title ELSE title END",
            (sid, source, source_app, title, at, at))
        return sid

    def join_keyed_session(self, memory_id: str, key: str, *, source: str, source_app: str, title: str,
                           at: float) -> str:
        """Move a stored memory into the session of `key` (`keyed_session`; a memory an earlier import stored
        elsewhere); the session it was in loses it (deleted when empty). Idempotent."""
        sid = str(uuid.uuid5(IMPORT_SESSIONS, key))
        old = self.scalar("SELECT session_id FROM memories WHERE id = ?", (memory_id,))
        if old == sid:
            return sid
        self.keyed_session(key, source, source_app, title, at)
        self.db.execute("UPDATE memories SET session_id = ? WHERE id = ?", (sid, memory_id))
        if old is not None:
            self.db.execute("UPDATE sessions SET count = count - 1 WHERE id = ?", (old,))
            self.db.execute("DELETE FROM sessions WHERE id = ? AND count <= 0", (old,))
        return sid
