"""The merged state of a sync set, kept in the data folder's database (m008) beside the memories it produces:
the store's `sync` part (engine/store.py), on the store's connection and inside its transactions.

Every change travels as an op:
  add    {"o": "add", "id", "g": group, "t": clock, "r": {source, source_app, source_url, created_at, metadata,
          importance, redactions}, "v": {content, title, pinned, forgotten, tags}}
  set    {"o": "set", "id", "f": field, "t": clock, "v": value}   field: content, title, pinned, forgotten, tag:<name>
  purge  {"o": "purge", "g": group, "t": clock, "m": {memory id: its add's clock}}  (m: the members it removes)
A memory is a group: every add of the same text (its hash when added), on whichever machine, is one memory. The
group lives while an add of it is newer than its tombstone (a purge removes every add up to its clock; the same
text captured again afterwards is a new memory). Each field is the value of the newest `set` (or add) of any
member of the group: last writer wins by hybrid logical clock (sync/hlc.py), ties broken by the value, so every
machine that has the same ops computes the same memory, in any order, with repeats. The ops are applied here
(`apply`), then `target` says what the group's memory must be and the component (service/sync.py) makes the
store say it.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import apsw

from ..core.models import Memory

BASE = ("source", "source_app", "source_url", "created_at", "metadata", "importance", "redactions")
FIELDS = ("content", "title", "pinned", "forgotten")


def _value(v: Any) -> str:
    return json.dumps(v, ensure_ascii=False, sort_keys=True, separators=(",", ":"))


def values_of(m: Memory) -> dict[str, Any]:
    """A memory's synced fields, as registers: content, title, pinned, forgotten, tag:<name>."""
    out: dict[str, Any] = {"content": m.content, "title": m.title, "pinned": bool(m.pinned),
                           "forgotten": bool(m.forgotten)}
    for t in m.tags:
        out["tag:" + t] = True
    return out


def record_of(m: Memory) -> dict[str, Any]:
    return {"source": m.source, "source_app": m.source_app, "source_url": m.source_url,
            "created_at": m.created_at, "metadata": m.metadata, "importance": m.importance,
            "redactions": m.redactions}


@dataclass
class Target:
    """What a group's memory is: None `memory_id` when the group is gone (purged)."""

    group: str
    memory_id: str | None  # the id a new memory gets here (the group's first add)
    members: list[str] = field(default_factory=list)  # every id of the group (live or purged)
    base: dict[str, Any] = field(default_factory=dict)
    content: str = ""
    title: str = ""
    pinned: bool = False
    forgotten: bool = False
    tags: list[str] = field(default_factory=list)


class SyncRows:
    """The sync tables of one database connection (the store's: written inside its transactions)."""

    def __init__(self, db: apsw.Connection) -> None:
        self.db = db

    # -- applying ops -------------------------------------------------------------------------
    def apply(self, ops: Iterable[dict[str, Any]]) -> set[str]:
        """Apply ops (any order, repeats harmless); the groups they touch. A malformed op is skipped."""
        groups: set[str] = set()
        unknown: set[str] = set()
        for op in ops:
            try:
                kind, t = op["o"], str(op["t"])
                if kind == "add":
                    mid, grp = str(op["id"]), str(op["g"])
                    self.db.execute("INSERT OR IGNORE INTO sync_adds(memory_id, grp, hlc, record) VALUES (?,?,?,?)",
                                    (mid, grp, t, _value(op.get("r") or {})))
                    for f, v in (op.get("v") or {}).items():
                        if f == "tags":
                            for tag in v:
                                self._register(mid, "tag:" + str(tag), t, True)
                        else:
                            self._register(mid, str(f), t, v)
                    groups.add(grp)
                elif kind == "set":
                    mid = str(op["id"])
                    self._register(mid, str(op["f"]), t, op["v"])
                    unknown.add(mid)
                elif kind == "purge":
                    grp = str(op["g"])
                    self.db.execute("INSERT INTO sync_tombstones(grp, hlc) VALUES (?, ?) ON CONFLICT(grp) DO UPDATE "
                                    "SET hlc = excluded.hlc WHERE excluded.hlc > sync_tombstones.hlc", (grp, t))
                    # the members it removes, known here even when their add never arrives (compacted away after the
                    # purge): a value set on one of them is then dropped with the group's texts
                    for mid, added in (op.get("m") or {}).items():
                        if str(added) <= t:
                            self.db.execute("INSERT OR IGNORE INTO sync_adds(memory_id, grp, hlc) VALUES (?, ?, ?)",
                                            (str(mid), grp, str(added)))
                    groups.add(grp)
            except (KeyError, TypeError, ValueError):
                continue
        groups.update(self.groups_of(unknown))
        return groups

    def _register(self, memory_id: str, name: str, t: str, value: Any) -> None:
        if name not in FIELDS and not name.startswith("tag:"):
            return
        self.db.execute(
            "INSERT INTO sync_registers(memory_id, field, hlc, value) VALUES (?, ?, ?, ?) "
            "ON CONFLICT(memory_id, field) DO UPDATE SET hlc = excluded.hlc, value = excluded.value "
            "WHERE (excluded.hlc, excluded.value) > (sync_registers.hlc, sync_registers.value)",
            (memory_id, name, t, _value(value)))

    def groups_of(self, ids: Iterable[str]) -> set[str]:
        ids = list(ids)
        out: set[str] = set()
        for i in range(0, len(ids), 500):
            chunk = ids[i:i + 500]
            out.update(r[0] for r in self.db.execute(
                f"SELECT DISTINCT grp FROM sync_adds WHERE memory_id IN ({','.join('?' * len(chunk))})", chunk))
        return out

    def purged_members(self, group: str, t: str) -> dict[str, str]:
        """The group's members a purge at this clock removes: {memory id: its add's clock}."""
        return {str(m): str(h) for m, h in self.db.execute(
            "SELECT memory_id, hlc FROM sync_adds WHERE grp = ? AND hlc <= ? ORDER BY memory_id", (group, t))}

    def add_of(self, memory_id: str) -> tuple[str, str] | None:
        """(group, clock) of a memory id the set knows."""
        row = self.db.execute("SELECT grp, hlc FROM sync_adds WHERE memory_id = ?", (memory_id,)).fetchone()
        return None if row is None else (str(row[0]), str(row[1]))

    # -- what a group is ------------------------------------------------------------------------
    def target(self, group: str) -> Target:
        tomb_row = self.db.execute("SELECT hlc FROM sync_tombstones WHERE grp = ?", (group,)).fetchone()
        tomb = str(tomb_row[0]) if tomb_row else ""
        adds = self.db.execute("SELECT memory_id, hlc, record FROM sync_adds WHERE grp = ? ORDER BY hlc, memory_id",
                               (group,)).fetchall()
        members = [str(a[0]) for a in adds]
        live = [a for a in adds if str(a[1]) > tomb]
        if not live:
            return Target(group, None, members)
        first = live[0]
        alive = [str(a[0]) for a in live]  # a purged member's values are gone with it (a snapshot leaves them out)
        marks = ",".join("?" * len(alive))
        best: dict[str, tuple[str, str]] = {}
        for name, hlc, value in self.db.execute(
                f"SELECT field, hlc, value FROM sync_registers WHERE memory_id IN ({marks}) AND hlc > ?",
                [*alive, tomb]):
            if name not in best or (hlc, value) > best[name]:
                best[name] = (hlc, value)

        def val(name: str, default: Any) -> Any:
            return json.loads(str(best[name][1])) if name in best else default

        tags = sorted(n[4:] for n, (_, v) in best.items() if n.startswith("tag:") and json.loads(str(v)) is True)
        try:
            base = json.loads(str(first[2]))
        except ValueError:
            base = {}
        return Target(group, str(first[0]), members, base if isinstance(base, dict) else {},
                      str(val("content", "")), str(val("title", "")), bool(val("pinned", False)),
                      bool(val("forgotten", False)), tags)

    def forget_texts(self, group: str) -> None:
        """A group with a tombstone: what its ops said (texts, titles, tags) is dropped here too, up to its tombstone,
        and every value of a purged member (a memory captured again after the purge is a new one)."""
        tomb_row = self.db.execute("SELECT hlc FROM sync_tombstones WHERE grp = ?", (group,)).fetchone()
        if tomb_row is None:
            return
        tomb = str(tomb_row[0])
        adds = [(str(r[0]), str(r[1])) for r in self.db.execute("SELECT memory_id, hlc FROM sync_adds WHERE grp = ?",
                                                                (group,))]
        self.db.execute("UPDATE sync_adds SET record = '{}' WHERE grp = ? AND hlc <= ?", (group, tomb))
        for mid, added in adds:  # a purged member: every value (even one set after the purge); a live one: older
            self.db.execute("DELETE FROM sync_registers WHERE memory_id = ? AND hlc <= ?",
                            (mid, "\uffff" if added <= tomb else tomb))

    # -- this machine's ops, for a snapshot ---------------------------------------------------------
    def own_ops(self, machine: str) -> Iterable[dict[str, Any]]:
        """Every op of this machine still in effect: its live adds (with the values still theirs), its newest
        values of any memory, its tombstones. Replaces its log (compaction)."""
        suffix = "%-" + machine
        tombs = {str(g): str(t) for g, t in self.db.execute("SELECT grp, hlc FROM sync_tombstones")}
        add_clock: dict[str, str] = {}
        for mid, grp, hlc, record in self.db.execute(
                "SELECT memory_id, grp, hlc, record FROM sync_adds WHERE hlc LIKE ?", (suffix,)).fetchall():
            if str(hlc) <= tombs.get(str(grp), ""):
                continue
            add_clock[str(mid)] = str(hlc)
            yield {"o": "add", "id": mid, "g": grp, "t": hlc, "r": json.loads(str(record)), "v": {}}
        dead = {str(r[0]) for r in self.db.execute(
            "SELECT a.memory_id FROM sync_adds a JOIN sync_tombstones t ON t.grp = a.grp WHERE a.hlc <= t.hlc")}
        for mid, name, hlc, value in self.db.execute(
                "SELECT memory_id, field, hlc, value FROM sync_registers WHERE hlc LIKE ?", (suffix,)).fetchall():
            if str(mid) in dead:
                continue
            yield {"o": "set", "id": mid, "f": name, "t": hlc, "v": json.loads(str(value))}
        for grp, hlc in tombs.items():
            if hlc.endswith("-" + machine):
                yield {"o": "purge", "g": grp, "t": hlc, "m": self.purged_members(grp, hlc)}

    # -- bookkeeping of the other machines' logs -------------------------------------------------
    def applied(self, machine: str) -> tuple[int, set[int]]:
        row = self.db.execute("SELECT covered FROM sync_machines WHERE machine = ?", (machine,)).fetchone()
        covered = int(row[0]) if row else 0
        seqs = {int(r[0]) for r in self.db.execute("SELECT seq FROM sync_applied WHERE machine = ? AND seq > ?",
                                                   (machine, covered))}
        return covered, seqs

    def mark_applied(self, machine: str, seqs: Sequence[int], *, snapshot: int = 0) -> None:
        self.db.execute("INSERT OR IGNORE INTO sync_machines(machine) VALUES (?)", (machine,))
        for s in seqs:
            self.db.execute("INSERT OR IGNORE INTO sync_applied(machine, seq) VALUES (?, ?)", (machine, s))
        covered = int(self.db.execute("SELECT covered FROM sync_machines WHERE machine = ?",
                                      (machine,)).fetchone()[0])  # type: ignore[index]
        covered = max(covered, snapshot)
        present = {int(r[0]) for r in self.db.execute("SELECT seq FROM sync_applied WHERE machine = ? AND seq > ?",
                                                       (machine, covered))}
        while covered + 1 in present:
            covered += 1
        self.db.execute("UPDATE sync_machines SET covered = ? WHERE machine = ?", (covered, machine))
        self.db.execute("DELETE FROM sync_applied WHERE machine = ? AND seq <= ?", (machine, covered))

    def saw_machine(self, machine: str, *, name: str | None = None, public_key: str | None = None,
                    seq: int = 0, when: float | None = None) -> None:
        self.db.execute("INSERT OR IGNORE INTO sync_machines(machine) VALUES (?)", (machine,))
        if name is not None:
            self.db.execute("UPDATE sync_machines SET name = ? WHERE machine = ?", (name[:80], machine))
        if public_key is not None:
            self.db.execute("UPDATE sync_machines SET public_key = ? WHERE machine = ?", (public_key, machine))
        self.db.execute("UPDATE sync_machines SET last_seq = max(last_seq, ?) WHERE machine = ?", (seq, machine))
        if when is not None:
            self.db.execute("UPDATE sync_machines SET last_change = max(coalesce(last_change, 0), ?) "
                            "WHERE machine = ?", (when, machine))

    # -- what changed here (m008's triggers note it while sync is on) -------------------------------
    def note_all_changed(self) -> None:
        """Every memory of the store counts as changed (a machine joining a set brings all of them)."""
        self.db.execute("INSERT OR IGNORE INTO sync_changes(memory_id) SELECT id FROM memories")

    def changed_ids(self) -> list[str]:
        return [str(r[0]) for r in self.db.execute("SELECT memory_id FROM sync_changes")]

    def done_changes(self, ids: Sequence[str]) -> None:
        for i in range(0, len(ids), 500):
            chunk = list(ids[i:i + 500])
            self.db.execute(f"DELETE FROM sync_changes WHERE memory_id IN ({','.join('?' * len(chunk))})", chunk)

    def pending(self) -> int:
        return int(self.db.execute("SELECT count(*) FROM sync_changes").fetchone()[0])  # type: ignore[index]

    def drop_meta(self, keys: Iterable[str]) -> None:
        for key in keys:
            self.db.execute("DELETE FROM meta WHERE key = ?", (key,))

    # -- the machines of the set ----------------------------------------------------------------
    def machines(self) -> list[tuple[str, str, int, int, float | None, int | None]]:
        """(machine, name, covered, last_seq, last_change, removed_at) of every machine heard of, by name."""
        return [(str(m), str(n), int(c), int(s), None if w is None else float(w), None if r is None else int(r))
                for m, n, c, s, w, r in self.db.execute(
                    "SELECT machine, name, covered, last_seq, last_change, removed_at FROM sync_machines "
                    "ORDER BY name")]

    def cuts(self) -> dict[str, int]:
        """The removed machines and how far their logs are kept."""
        return {str(m): int(c) for m, c in self.db.execute(
            "SELECT machine, removed_at FROM sync_machines WHERE removed_at IS NOT NULL ORDER BY machine")}

    def removed_at(self, machine: str) -> int | None:
        row = self.db.execute("SELECT removed_at FROM sync_machines WHERE machine = ?", (machine,)).fetchone()
        return None if row is None or row[0] is None else int(row[0])

    def set_removed_at(self, machine: str, at: int) -> None:
        self.db.execute("INSERT OR IGNORE INTO sync_machines(machine) VALUES (?)", (machine,))
        self.db.execute("UPDATE sync_machines SET removed_at = ? WHERE machine = ?", (at, machine))

    def members(self) -> list[tuple[str, str, int]]:
        """(machine, name, covered) of the machines not removed."""
        return [(str(m), str(n), int(c)) for m, n, c in self.db.execute(
            "SELECT machine, name, covered FROM sync_machines WHERE removed_at IS NULL")]

    def public_keys(self, but: str) -> list[tuple[str, str]]:
        """(machine, public key) of the machines not removed whose key is known, but `but`."""
        return [(str(m), str(p)) for m, p in self.db.execute(
            "SELECT machine, public_key FROM sync_machines WHERE removed_at IS NULL AND machine != ? "
            "AND public_key != ''", (but,))]

    def log_holds(self, groups: Iterable[str], machine: str) -> bool:
        """Whether `machine`'s log holds an op about these groups' memories (an add, or a value it set)."""
        groups_ = sorted(groups)
        for i in range(0, len(groups_), 500):
            chunk = groups_[i:i + 500]
            marks = ",".join("?" * len(chunk))
            if self.db.execute(
                    f"SELECT EXISTS (SELECT 1 FROM sync_adds a WHERE a.grp IN ({marks}) AND (a.hlc LIKE ? OR EXISTS "
                    "(SELECT 1 FROM sync_registers r WHERE r.memory_id = a.memory_id AND r.hlc LIKE ?)))",
                    [*chunk, "%-" + machine, "%-" + machine]).fetchone()[0]:  # type: ignore[index]
                return True
        return False

    def clear(self) -> None:
        for table in ("sync_changes", "sync_adds", "sync_registers", "sync_tombstones", "sync_applied",
                      "sync_machines"):
            self.db.execute(f"DELETE FROM {table}")
