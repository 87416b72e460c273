"""Sync between the person's machines through a folder they already sync (issue 35): the `sync` component.

Each machine writes only its own append-only log into the shared folder: encrypted segments that are never
changed once complete (sync/wire.py), so a file-sync tool (Syncthing, Dropbox, iCloud Drive, OneDrive, a USB
stick) only ever copies whole, immutable files; never the database or the vector index. Each machine replays the
others' logs into its own store: the ops are merged (engine/store_sync.py: memories are a union, fields
last-writer-wins by hybrid logical clock, purges are tombstones) and the store is made to say what they say, new
memories going through the ingest path (embedded, indexed and enriched here, locally).

What this machine changed is found by the database itself (m008's triggers note every memory inserted, changed in
a synced field, or deleted, however it happened: the app, the CLI, an agent, an import, retention) and written out
at the next `sync_now`: a change made while no sync ran is never missed. The set's keys live in the OS keyring
(`sync-key:<set id>`); the recovery phrase (sync/phrase.py) carries the current one to another machine.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import socket
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..core.errors import InvalidInput, KeyringUnavailable, NotFound
from ..core.models import Memory
from ..core.text import content_hash
from ..engine import keys as keyring_keys
from ..engine.store_sync import BASE, SyncRows, Target, record_of, values_of
from ..sync import hlc, phrases, wire
from ..sync.status import MachineState, SyncStatus
from .ingest import Prepared

if TYPE_CHECKING:
    from ..engine.settings import Settings
    from ..engine.store import Store
    from .ingest import Ingest
    from .vector_sync import VectorSync

log = logging.getLogger(__name__)
KEY_ENTRY = "sync-key:"  # + set id + ":" + machine id: {"keys": {epoch: hex}, "private", "public"} in the keyring
SEGMENT_OPS = 5000  # ops per log segment
COMPACT_AFTER = 64  # own segments before they are replaced by a snapshot
APPLY_BATCH = 5000  # ops applied to the store at a time (a new machine's catch-up)
# one `sync_now` stops reading and storing after about this long: the engine lane serves others in between
STEP_S = float(os.environ.get("DESKTOP_MEMORY_SYNC_STEP_S", "8"))
INSERT_BATCH = 256  # new memories embedded and stored at a time


class Secrets:
    """Where the set's keys are kept: the OS keyring (tests pass another)."""

    get = staticmethod(keyring_keys.get_secret)
    set = staticmethod(keyring_keys.set_secret)
    delete = staticmethod(keyring_keys.delete_secret)


class Sync:
    """The operations `sync_setup`, `sync_now`, `sync_status`, `sync_phrase`, `sync_leave`, `sync_remove`."""

    def __init__(self, folder: Path, store: Store, settings: Settings, ingest: Ingest, vectors: VectorSync,
                 secrets: Any = None, wall: Callable[[], float] = time.time) -> None:
        self.folder = folder
        self.store = store
        self.settings = settings
        self.ingest = ingest
        self.vectors = vectors
        self.secrets = secrets or Secrets()
        self.wall = wall
        self._problem: str | None = None
        self._deadline: float | None = None  # this step's end (time.monotonic)
        self._behind = False  # the last step stopped with more of the others' logs to read
        self._unreadable: dict[str, tuple[int, float]] = {}  # files that did not open: (size, since)
        self._foreign: set[tuple[str, int]] = set()  # conflict copies already read: (path, size)
        self._adopt: set[str] = set()  # removed machines whose log was applied in this sync (their ops are kept on)

    # -- meta ----------------------------------------------------------------------------------
    def _meta(self, key: str) -> str | None:
        return self.store.get_meta("sync." + key)

    def _set_meta(self, key: str, value: str) -> None:
        self.store.set_meta("sync." + key, value)

    @property
    def configured(self) -> bool:
        return self._meta("on") == "1"

    @property
    def _state(self) -> SyncRows:
        return self.store.sync

    def _where(self) -> Path:
        return wire.sync_dir(Path(self._meta("folder") or ""))

    def _keyring(self) -> dict[str, Any]:
        raw = self.secrets.get(self._entry())
        if not raw:
            raise KeyringUnavailable("this machine's sync key is not in the OS keyring: join the set again with "
                                     "`desktop-memory sync setup FOLDER --phrase ...`")
        data = json.loads(raw)
        return data if isinstance(data, dict) else {}

    def _entry(self, set_id: str | None = None, machine: str | None = None) -> str:
        """This machine's keyring entry (one per data folder: two folders on one computer never share one)."""
        return f"{KEY_ENTRY}{set_id or self._meta('set') or ''}:{machine or self._meta('machine') or ''}"

    def _keys(self) -> dict[int, bytes]:
        return {int(e): bytes.fromhex(k) for e, k in self._keyring().get("keys", {}).items()}

    def _clock(self) -> hlc.Clock:
        return hlc.Clock(self._meta("machine") or "", self._meta("clock") or hlc.ZERO, self.wall)

    # -- setting up ----------------------------------------------------------------------------
    def sync_setup(self, folder: Path, phrase: str | None = None, name: str | None = None) -> SyncStatus:
        shared = Path(folder).expanduser()
        if self.configured:
            if Path(self._meta("folder") or "") == shared.resolve():
                return self.sync_now()
            with contextlib.suppress(wire.NotOurs, OSError):  # the folder moved (or is reached by another path now)
                found = wire.read_set(wire.sync_dir(shared)) if shared.is_dir() else None
                if found is not None and found[0] == self._meta("set"):
                    self._set_meta_now("folder", str(shared.resolve()))
                    return self.sync_now()
            raise InvalidInput(f"this machine already syncs through {self._meta('folder')}: run `desktop-memory sync "
                               "leave` first")
        if not shared.is_dir():
            raise InvalidInput(f"{shared} is not a folder: make it (or let your sync app make it) first")
        shared = shared.resolve()
        data = Path(self.folder).resolve()
        if shared == data or data in shared.parents or shared in data.parents:
            raise InvalidInput("the sync folder and the data folder must be apart (neither inside the other): a "
                               "sync app must never copy the database")
        where = wire.sync_dir(shared)
        try:
            found = wire.read_set(where)
        except wire.NotOurs as exc:
            raise InvalidInput(f"{where / wire.SET_FILE} is {exc}: it is not a desktop-memory sync set") from None
        if found is None:
            if phrase is not None:
                raise InvalidInput(f"{shared} holds no sync set yet: run `desktop-memory sync setup {shared}` without "
                                   "--phrase on the first machine, then join with its phrase")
            key = wire.new_key()
            set_id, epoch = wire.create_set(where, key), 0
        else:
            if phrase is None:
                raise InvalidInput(f"{shared} already holds a sync set: join it with its recovery phrase "
                                   f"(`desktop-memory sync setup {shared} --phrase ...`, shown by `sync phrase` on a "
                                   "machine of the set)")
            key = phrases.from_phrase(phrase)
            set_id = found[0]
            found_epoch = wire.epoch_for_key(where, key)
            if found_epoch is None:
                raise InvalidInput(f"this recovery phrase does not open the sync set in {shared}")
            epoch = found_epoch
        from ..browser.spool import new_keypair

        private, public = new_keypair()
        machine = wire.new_machine_id()
        self.secrets.set(self._entry(set_id, machine), json.dumps(
            {"keys": {str(epoch): key.hex()}, "private": private.hex(), "public": public.hex()}))
        label = (name or socket.gethostname() or "this machine").strip()[:80] or "this machine"
        with self.store.transaction():
            self._state.clear()
            for k, v in (("folder", str(shared)), ("set", set_id), ("machine", machine), ("name", label),
                         ("epoch", str(epoch)), ("clock", hlc.ZERO), ("seq", "0"), ("last", "")):
                self._set_meta(k, v)
            self._set_meta("on", "1")
            self._state.note_all_changed()
        log.info("sync set up (%s)", "new set" if found is None else "joined")
        return self.sync_now()

    def sync_phrase(self) -> str:
        self._need()
        epoch = int(self._meta("epoch") or 0)
        return phrases.to_phrase(self._keys()[epoch])

    def sync_leave(self) -> SyncStatus:
        if not self.configured:
            return self.sync_status()
        entry = self._entry()
        with self.store.transaction():
            self._state.clear()
            self._state.drop_meta("sync." + k for k in ("on", "folder", "set", "machine", "name", "epoch", "clock",
                                                         "seq", "last", "cuts"))
        with contextlib.suppress(Exception):  # the keyring may be gone: the folder no longer syncs anyway
            self.secrets.delete(entry)
        return self.sync_status()

    def _need(self) -> None:
        if not self.configured:
            raise InvalidInput("sync is not set up on this machine: `desktop-memory sync setup FOLDER`")

    # -- status --------------------------------------------------------------------------------
    def sync_status(self) -> SyncStatus:
        if not self.configured:
            return SyncStatus()
        me = self._meta("machine") or ""
        machines = [MachineState(me, self._meta("name") or "", me=True, last_seq=int(self._meta("seq") or 0),
                                 seen_seq=int(self._meta("seq") or 0))]
        for mid, name, covered, last_seq, last_change, removed in self._state.machines():
            if mid != me:
                machines.append(MachineState(mid, name or mid[:8], False, int(last_seq), int(covered), last_change,
                                             removed is not None))
        last = self._meta("last") or ""
        pending = self._state.pending()
        written = 0
        with contextlib.suppress(OSError):
            for entry in os.scandir(wire.machine_dir(self._where(), me)):
                with contextlib.suppress(OSError):
                    written += entry.stat().st_size
        return SyncStatus(True, self._meta("folder"), me, self._meta("name") or "", machines,
                          float(last) if last else None, self._problem or self._folder_problem(), pending, written,
                          self._behind)

    def _folder_problem(self) -> str | None:
        where = self._where()
        if not where.parent.is_dir():
            # the words that matter first: a tray line cuts a long path short
            return f"the sync folder is missing (moved or deleted?): {where.parent}: set it up again where it is now"
        return None

    # -- syncing -------------------------------------------------------------------------------
    def sync_now(self) -> SyncStatus:
        """One step: this machine's changes written, then the others' read and stored for about STEP_S; the status
        says `catching_up` when more is waiting (the engine host steps again at once; `sync now` in the CLI too)."""
        self._need()
        self._problem = None
        self._behind = False
        self._deadline = time.monotonic() + STEP_S
        where = self._where()
        problem = self._folder_problem()
        if problem is None:
            try:
                found = wire.read_set(where)
            except wire.NotOurs as exc:
                found, problem = None, f"the sync folder's set file is {exc}"
            if problem is None and (found is None or found[0] != self._meta("set")):
                problem = (f"{where.parent} no longer holds this machine's sync set (deleted or replaced?): "
                           "set sync up again")
        if problem is not None:
            self._problem = problem
            return self.sync_status()
        keys = self._take_new_keys(where, self._keys())
        me = self._meta("machine") or ""
        if (where / f"removed-{me}{wire.SUFFIX}").exists():
            self._problem = "this machine was removed from the sync set on another machine: set it up again to rejoin"
            return self.sync_status()
        clock = self._clock()
        self._write_own(where, keys, clock)
        self._read_others(where, keys, clock, me)
        self._set_meta_now("clock", clock.last)
        self._set_meta_now("last", repr(self.wall()))
        return self.sync_status()

    def _set_meta_now(self, key: str, value: str) -> None:
        with self.store.transaction():
            self._set_meta(key, value)

    # -- this machine's changes ------------------------------------------------------------------
    def _write_own(self, where: Path, keys: dict[int, bytes], clock: hlc.Clock) -> None:
        """Turn what changed here into ops, write them as new segments, then record them as applied."""
        ids = self._state.changed_ids()
        if not ids:
            return
        state = self._state
        me = self._meta("machine") or ""
        holds = False  # a purge here of something this machine's own log holds: the log is compacted after
        for start in range(0, len(ids), SEGMENT_OPS):
            chunk = ids[start:start + SEGMENT_OPS]
            ops = self._changes_to_ops(chunk, state, clock)
            holds |= self._log_holds({str(op["g"]) for op in ops if op["o"] == "purge"}, me)
            if ops:
                self._write_segment(where, keys, ops, clock)
            with self.store.transaction():
                groups = state.apply(ops)
                self._state.done_changes(chunk)
                self._set_meta("clock", clock.last)
            self._materialize(groups)
        if holds:
            self.compact(where, keys, clock)

    def _changes_to_ops(self, ids: list[str], state: SyncRows, clock: hlc.Clock) -> list[dict[str, Any]]:
        found = self.store.get_many(ids)
        ops: list[dict[str, Any]] = []
        for mid in ids:
            known = state.add_of(mid)
            m = found.get(mid)
            if m is None:
                if known is not None and state.target(known[0]).memory_id is not None:
                    t = clock.now()
                    ops.append({"o": "purge", "g": known[0], "t": t, "m": state.purged_members(known[0], t)})
                continue
            if known is None:
                vals = values_of(m)
                v: dict[str, Any] = {k: vals[k] for k in ("content", "title", "pinned", "forgotten")}
                v["tags"] = sorted(m.tags)
                ops.append({"o": "add", "id": mid, "g": m.content_hash, "t": clock.now(), "r": record_of(m), "v": v})
                continue
            target = state.target(known[0])
            if target.memory_id is None:  # its group was purged; this row is what a purge left: a new memory
                continue
            have = {"content": target.content, "title": target.title, "pinned": target.pinned,
                    "forgotten": target.forgotten}
            now = values_of(m)
            for f in ("content", "title", "pinned", "forgotten"):
                if now[f] != have[f]:
                    ops.append({"o": "set", "id": mid, "f": f, "t": clock.now(), "v": now[f]})
            old, new = set(target.tags), set(m.tags)
            for tag in sorted(new - old):
                ops.append({"o": "set", "id": mid, "f": "tag:" + tag, "t": clock.now(), "v": True})
            for tag in sorted(old - new):
                ops.append({"o": "set", "id": mid, "f": "tag:" + tag, "t": clock.now(), "v": False})
        return ops

    def _next_seq(self, mine: Path) -> int:
        seq = int(self._meta("seq") or 0)
        with contextlib.suppress(OSError):
            for entry in os.scandir(mine):
                m = wire._SEGMENT.match(entry.name)
                if m:
                    seq = max(seq, int(m.group(2)))
        return seq + 1

    def _write_segment(self, where: Path, keys: dict[int, bytes], ops: list[dict[str, Any]], clock: hlc.Clock,
                       *, snapshot: bool = False) -> int:
        me, epoch = self._meta("machine") or "", int(self._meta("epoch") or 0)
        mine = wire.machine_dir(where, me)
        seq = self._next_seq(mine)
        public = self._keyring().get("public", "")
        while True:
            cuts = self._cuts()
            payload = {"machine": me, "seq": seq, "snapshot": snapshot, "name": self._meta("name") or "",
                       "public": public, "t": clock.now(), "ops": ops, "cuts": cuts}
            if wire.write_new(mine / wire.segment_name(seq, snapshot=snapshot), wire.seal(keys[epoch], epoch, payload)):
                break
            seq += 1  # a file of that number exists (written before a crash): the next one
        with self.store.transaction():
            self._set_meta("seq", str(seq))
            self._set_meta("cuts", json.dumps(cuts))
        return seq

    # -- the other machines' changes -------------------------------------------------------------
    def _read_others(self, where: Path, keys: dict[int, bytes], clock: hlc.Clock, me: str) -> None:
        self._adopt = set()
        for _ in range(4):  # again when another machine's cut let more of a removed machine's log in
            if not self._read_pass(where, keys, clock, me) or self._behind:
                break
        cuts = self._cuts()
        changed = cuts != json.loads(self._meta("cuts") or "{}")
        if changed or self._adopt or not int(self._meta("seq") or 0):
            # this machine's cuts, for the others to agree on; or its name and public key, so that the others
            # know it (and can give it the set's next key) before it has changed anything. And a removed machine's
            # ops in effect here (up to its cut), carried on in this log: a machine that can no longer read that part
            # of the removed machine's log (compacted into a snapshot past the cut) gets them from here
            adopt = sorted(set(cuts) if changed else self._adopt & set(cuts))
            self._write_segment(where, keys, [op for m in adopt for op in self._state.own_ops(m)], clock)
        self._grant_missing(where, keys, me)

    def _read_pass(self, where: Path, keys: dict[int, bytes], clock: hlc.Clock, me: str) -> bool:
        """Read and apply what is new; whether a removed machine's cut rose (more of its log to read)."""
        state = self._state
        removed = self._removals(where, keys)
        rose = False
        pending: list[tuple[str, int, bool, list[dict[str, Any]]]] = []
        count = 0
        own_snapshot_needed = False
        unreadable = 0
        read_foreign: list[tuple[str, int]] = []
        for entry in sorted(wire.listing(where), key=lambda e: (e.kind != "snapshot", e.machine, e.seq)):
            if entry.kind not in ("segment", "snapshot") or entry.machine == me:
                continue
            if self._behind or (pending and self._late()):
                self._behind = True  # the rest in the next step
                break
            covered, seqs = state.applied(entry.machine)
            if entry.canonical and (entry.seq <= covered or (entry.kind == "segment" and entry.seq in seqs)):
                continue
            try:
                size = entry.path.stat().st_size
            except OSError:
                continue
            if not entry.canonical and (str(entry.path), size) in self._foreign:
                continue
            try:
                payload = wire.unseal(keys, wire.read_small(entry.path))
                machine, seq = str(payload["machine"]), int(payload["seq"])
                ops = payload["ops"]
                if not isinstance(ops, list):
                    raise wire.NotOurs("does not hold a log")
            except (wire.NotOurs, KeyError, TypeError, ValueError) as exc:
                first = self._unreadable.setdefault(str(entry.path), (size, self.wall()))
                if self.wall() - first[1] > 600 and entry.canonical:  # a damaged conflict copy is no loss
                    unreadable += 1
                log.debug("sync file %s not read: %s", entry.path.name, exc)
                continue
            self._unreadable.pop(str(entry.path), None)
            if not entry.canonical:  # not read again in this process once what it holds is stored (end of pass)
                read_foreign.append((str(entry.path), size))
            if machine == me or (entry.canonical and machine != entry.machine):
                continue
            snapshot = bool(payload.get("snapshot"))
            cov, done = state.applied(machine)
            if entry.canonical and (seq <= cov or (not snapshot and seq in done)):
                continue  # a conflict copy is read for what it holds (a cloned machine's other segment of that seq)
            if machine in removed and seq > removed[machine]:
                continue
            if machine not in removed:
                cuts = payload.get("cuts")
                if pending and isinstance(cuts, dict) and set(cuts) - set(removed) - {me}:
                    # a removal learned here: what was read before counts as applied (the cut is at least that)
                    own_snapshot_needed |= self._apply_files(pending, me)
                    pending, count = [], 0
                rose |= self._raise_cuts(cuts, me)
                removed = self._cuts()  # a later file of the removed machine is held to its cut in this pass too
            for op in ops:
                if isinstance(op, dict) and "t" in op:
                    with contextlib.suppress(ValueError, TypeError):
                        ahead = clock.see(str(op["t"]))
                        if ahead:
                            self._problem = (f"the clock of {payload.get('name') or machine[:8]} runs "
                                             f"{ahead / 3600:.0f} h ahead: set its date and time right")
            with self.store.transaction():
                state.saw_machine(machine, name=str(payload.get("name") or "")[:80] or None,
                                  public_key=str(payload.get("public") or "") or None, seq=seq,
                                  when=_seconds(payload.get("t")))
            if machine in removed:
                self._adopt.add(machine)
            pending.append((machine, seq if entry.canonical else 0, snapshot,
                            [op for op in ops if isinstance(op, dict)]))
            count += len(ops)
            if count >= APPLY_BATCH or self._late():
                own_snapshot_needed |= self._apply_files(pending, me)
                pending, count = [], 0
        if pending:
            own_snapshot_needed |= self._apply_files(pending, me)
        if not self._behind:  # a step cut short reads its conflict copies again (applying twice changes nothing)
            self._foreign.update(read_foreign)
        if unreadable and self._problem is None:
            self._problem = (f"{unreadable} file{'s' if unreadable != 1 else ''} in the sync folder cannot be read "
                             "(still arriving, damaged, or from a set this machine no longer has the key of)")
        if own_snapshot_needed or self._own_segments(where, me) > COMPACT_AFTER:
            self.compact(where, keys, clock)
        return rose

    # -- a removed machine's cut: how much of its log every machine keeps ----------------------------
    # A removal record says how far the remover had applied the removed machine's log; another machine may have
    # applied more of it before it learned of the removal. Each machine therefore keeps the removed machine's log
    # up to the highest cut any remaining machine published (its own: as far as it had applied when it learned),
    # and publishes its cuts in its segments: every machine ends with the same part of that log. The removed
    # machine may have compacted that part into a snapshot past the cut (unreadable then): so every remaining
    # machine also writes the removed machine's ops in effect here into its own log and snapshots (`_read_others`,
    # `compact`), and a machine that could not read them from the removed machine's log gets them from there.
    def _cuts(self) -> dict[str, int]:
        return self._state.cuts()

    def _applied_max(self, machine: str) -> int:
        covered, seqs = self._state.applied(machine)
        return max([covered, *seqs])

    def _raise_cuts(self, cuts: Any, me: str) -> bool:
        if not isinstance(cuts, dict):
            return False
        rose = False
        for mid, cut in cuts.items():
            if isinstance(cut, int) and str(mid) != me:
                rose |= self._cut(str(mid), cut)
        return rose

    def _cut(self, machine: str, at_least: int) -> bool:
        """Raise a removed machine's cut to at least this; the first time, to at least what was applied here (kept:
        the others will raise theirs to it). Whether it rose."""
        applied = self._applied_max(machine)
        with self.store.transaction():
            before = self._state.removed_at(machine)
            after = max(applied if before is None else before, at_least)
            self._state.set_removed_at(machine, after)
        return before is None or after > before

    def _apply_files(self, files: list[tuple[str, int, bool, list[dict[str, Any]]]], me: str) -> bool:
        """Apply these files' ops, bring the store in line, then record them as applied; whether a purge among them
        removed something this machine's own log still holds (its log is then compacted)."""
        state = self._state
        purged = {str(op.get("g")) for _, _, _, ops in files for op in ops if op.get("o") == "purge"}
        holds = self._log_holds(purged, me)  # asked before the purges drop what they name
        with self.store.transaction():
            groups: set[str] = set()
            for _, _, _, ops in files:
                groups |= state.apply(ops)
        if not self._materialize(groups, bounded=True):
            self._behind = True  # these files again in the next step (applying them twice changes nothing)
            return holds
        with self.store.transaction():
            for machine, seq, snapshot, _ in files:  # seq 0: a conflict copy (never counted as its seq's segment)
                state.mark_applied(machine, [] if snapshot or not seq else [seq], snapshot=seq if snapshot else 0)
        return holds

    def _log_holds(self, groups: set[str], me: str) -> bool:
        """Whether this machine's log holds an op about these groups' memories (an add, or a value it set; or one of a
        removed machine, carried on here)."""
        return bool(groups) and any(self._state.log_holds(groups, machine) for machine in (me, *self._cuts()))

    def _own_segments(self, where: Path, me: str) -> int:
        try:
            return sum(1 for e in os.scandir(wire.machine_dir(where, me)) if e.name.endswith(wire.SUFFIX))
        except OSError:
            return 0

    # -- the store made to say what the ops say ----------------------------------------------------
    def _late(self) -> bool:
        return self._deadline is not None and time.monotonic() > self._deadline

    def _materialize(self, groups: Iterable[str], *, bounded: bool = False) -> bool:
        """Make the store say what these groups are; with `bounded`, new memories are stored until the step's time
        is up (False: some are left for the next step)."""
        state = self._state
        complete = True
        inserts: list[Target] = []
        changed_texts: list[str] = []
        touched: list[str] = []
        groups = sorted(groups)
        for start in range(0, len(groups), 500):
            with self.store.transaction():
                for group in groups[start:start + 500]:
                    target = state.target(group)
                    rows = self._local_rows(target.members)
                    state.forget_texts(group)
                    if target.memory_id is None:
                        if rows:
                            self.store.delete([m.id for m in rows])
                            touched += [m.id for m in rows]
                        continue
                    # one memory per group: a second row here (the text added again after its first row's text was
                    # edited away, or added twice before the sync) is merged into the one kept
                    local = next((m for m in rows if m.id == target.memory_id), rows[0] if rows else None)
                    extra = [m.id for m in rows if local is not None and m.id != local.id]
                    if extra:
                        self.store.delete(extra)
                        touched += extra
                    if local is None:
                        inserts.append(target)
                        continue
                    fields = _differences(local, target)
                    if fields:
                        if "content" in fields:
                            fields["content_hash"] = content_hash(target.content)
                            changed_texts.append(local.id)
                        fields["updated_at"] = self.wall()
                        self.store.update(local.id, **fields)
                        touched.append(local.id)
        if changed_texts:
            self.vectors.embed_passages(changed_texts)
        for start in range(0, len(inserts), INSERT_BATCH):
            if bounded and start and self._late():
                complete = False
                break
            batch = inserts[start:start + INSERT_BATCH]
            prepared = [Prepared(0, _memory(t, self.wall()), {}) for t in batch]
            self.vectors.embedding_ready()
            vecs = self.ingest.embedder.encode([p.memory.content for p in prepared])
            self.ingest.commit(prepared, vecs, index=False)
            touched += [t.memory_id for t in batch if t.memory_id]
        if touched or changed_texts:
            self.ingest.forget_recent()
            with self.store.transaction():
                self._state.done_changes(touched)
            self.vectors.sync()
        return complete

    def _local_rows(self, members: list[str]) -> list[Memory]:
        """The rows of this store that belong to a group (normally one), in the group's order."""
        found = self.store.get_many(members) if members else {}
        return [found[mid] for mid in members if mid in found]

    # -- compaction ----------------------------------------------------------------------------
    def compact(self, where: Path, keys: dict[int, bytes], clock: hlc.Clock) -> None:
        """Replace this machine's log by one snapshot of its ops still in effect (purged texts left out), then
        remove the segments and snapshots it covers."""
        me = self._meta("machine") or ""
        mine = wire.machine_dir(where, me)
        ops = [op for m in (me, *self._cuts()) for op in self._state.own_ops(m)]  # a removed machine's: carried on
        seq = self._write_segment(where, keys, ops, clock, snapshot=True)
        if not (mine / wire.segment_name(seq, snapshot=True)).is_file():
            return
        for entry in wire.listing(where):
            if entry.machine == me and entry.kind in ("segment", "snapshot") and entry.canonical and entry.seq <= seq \
                    and not (entry.kind == "snapshot" and entry.seq == seq):
                entry.path.unlink(missing_ok=True)

    # -- removing a machine: a new key it does not have -------------------------------------------
    def sync_remove(self, machine: str) -> SyncStatus:
        self._need()
        me = self._meta("machine") or ""
        wanted = machine.strip().lower()
        hits = [r for r in self._state.members() if r[0] != me]
        # a machine's name first: "c" or "bad" must not also pick the machines whose hex id starts so; an id by at
        # least four of its characters (a name this machine has not heard yet must not pick another machine)
        hits = [r for r in hits if r[1].lower() == wanted] or [r for r in hits if len(wanted) >= 4
                                                               and r[0].startswith(wanted)]
        if not wanted or not hits:
            raise NotFound(f"no other machine of the sync set is called {machine!r}: `desktop-memory sync status` "
                           "lists them")
        if len(hits) > 1:
            raise InvalidInput(f"{machine!r} names {len(hits)} machines: give more of its id")
        gone, _, covered = hits[0]
        where = self._where()
        keys = self._keys()
        epoch = int(self._meta("epoch") or 0)
        clock = self._clock()
        last = self._applied_max(gone)
        wire.write_new(where / f"removed-{gone}{wire.SUFFIX}",
                       wire.seal(keys[epoch], epoch, {"machine": gone, "after": last, "by": me, "t": clock.now()}))
        new_epoch, new_key = epoch + 1, wire.new_key()
        while (where / f"epoch-{new_epoch}").exists():
            new_epoch += 1
        from ..browser.spool import seal as seal_to

        stay = [(m, p) for m, p in self._state.public_keys(gone) if m != me]
        stay.append((me, self._keyring().get("public", "")))
        for mid, public in stay:
            with contextlib.suppress(ValueError):
                wire.write_new(where / f"grant-{new_epoch}-{mid}{wire.SUFFIX}",
                               seal_to(bytes.fromhex(public), {"epoch": new_epoch, "key": new_key.hex()}))
        out = sorted({gone, *self._cuts()})
        wire.write_new(where / f"keys-{new_epoch}{wire.SUFFIX}",
                       wire.seal(new_key, new_epoch, {"keys": {str(e): k.hex() for e, k in keys.items()},
                                                      "removed": out}))
        wire.write_epoch(where, new_epoch, new_key)
        self._save_keys({**keys, new_epoch: new_key})
        with self.store.transaction():
            self._set_meta("epoch", str(new_epoch))
            self._state.set_removed_at(gone, last)
        return self.sync_now()

    def _grant_missing(self, where: Path, keys: dict[int, bytes], me: str) -> None:
        """Give the set's current key to every remaining machine this one knows that has no grant of it yet (the
        remover knew only the machines it had heard from: one it had not would otherwise never read the set)."""
        epoch = int(self._meta("epoch") or 0)
        if epoch == 0 or epoch not in keys:
            return
        try:  # the machines removed when this key was made: never given it, whatever this machine has heard yet
            out = wire.unseal(keys, wire.read_small(where / f"keys-{epoch}{wire.SUFFIX}"))["removed"]
            if not isinstance(out, list):
                return
        except (wire.NotOurs, KeyError):
            return
        from ..browser.spool import seal as seal_to

        for mid, public in self._state.public_keys(me):
            if mid in out:
                continue
            target = where / f"grant-{epoch}-{mid}{wire.SUFFIX}"
            if not target.exists():
                with contextlib.suppress(ValueError, OSError):
                    wire.write_new(target, seal_to(bytes.fromhex(str(public)),
                                                   {"epoch": epoch, "key": keys[epoch].hex()}))

    def _save_keys(self, keys: dict[int, bytes]) -> None:
        data = self._keyring()
        data["keys"] = {str(e): k.hex() for e, k in keys.items()}
        self.secrets.set(self._entry(), json.dumps(data))

    def _take_new_keys(self, where: Path, keys: dict[int, bytes]) -> dict[int, bytes]:
        """Keys the set moved to (after a removal) granted to this machine, and the older ones a joiner needs."""
        me = self._meta("machine") or ""
        changed = False
        entries = wire.listing(where)
        for entry in entries:
            if entry.kind == "grant" and entry.machine == me and entry.seq not in keys:
                from ..browser.spool import open_file

                with contextlib.suppress(ValueError, OSError, KeyError):
                    got = open_file(entry.path, bytes.fromhex(self._keyring().get("private", "")))
                    keys[int(got["epoch"])] = bytes.fromhex(str(got["key"]))
                    changed = True
        for entry in entries:
            if entry.kind == "keys" and entry.seq in keys:
                with contextlib.suppress(wire.NotOurs, KeyError, ValueError, AttributeError):
                    got = wire.unseal(keys, wire.read_small(entry.path))
                    for e, k in got["keys"].items():
                        if int(e) not in keys:
                            keys[int(e)] = bytes.fromhex(k)
                            changed = True
        if changed:
            self._save_keys(keys)
            newest = max(keys)
            if newest > int(self._meta("epoch") or 0):
                self._set_meta_now("epoch", str(newest))
        return keys

    def _removals(self, where: Path, keys: dict[int, bytes]) -> dict[str, int]:
        out: dict[str, int] = {}
        for entry in wire.listing(where):
            if entry.kind != "removed":
                continue
            with contextlib.suppress(wire.NotOurs, KeyError, ValueError, TypeError):
                got = wire.unseal(keys, wire.read_small(entry.path))
                if str(got["machine"]) == entry.machine:
                    out[entry.machine] = int(got["after"])
        for mid, after in out.items():
            self._cut(mid, after)
        return self._cuts()


def _seconds(value: Any) -> float | None:
    try:
        return hlc.seconds(str(value))
    except (ValueError, TypeError):
        return None


def _differences(m: Memory, t: Target) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if m.content != t.content:
        out["content"] = t.content
    if m.title != t.title:
        out["title"] = t.title
    if bool(m.pinned) != t.pinned:
        out["pinned"] = t.pinned
    if bool(m.forgotten) != t.forgotten:
        out["forgotten"] = t.forgotten
    if list(m.tags) != t.tags:
        out["tags"] = t.tags
    # what the group's first add was added with (the same text added on two machines: one memory, one origin);
    # importance is the enricher's, here as everywhere
    base = _memory(t, m.updated_at)
    for key in ("source", "source_app", "source_url", "created_at", "metadata"):
        if getattr(m, key) != getattr(base, key):
            out[key] = getattr(base, key)
    return out


def _memory(t: Target, now: float) -> Memory:
    base = {k: t.base.get(k) for k in BASE}
    created = base["created_at"] if isinstance(base["created_at"], (int, float)) else now
    importance = base["importance"] if isinstance(base["importance"], (int, float)) else 0.5
    return Memory(
        id=str(t.memory_id), content=t.content, source=str(base["source"] or "manual"), title=t.title,
        source_app=str(base["source_app"] or ""), source_url=str(base["source_url"] or ""), tags=list(t.tags),
        importance=min(1.0, max(0.0, float(importance))), pinned=t.pinned, forgotten=t.forgotten,
        created_at=float(created), updated_at=now, content_hash=content_hash(t.content),
        metadata=base["metadata"] if isinstance(base["metadata"], dict) else {},
        redactions=int(base["redactions"]) if isinstance(base["redactions"], int) else 0)
