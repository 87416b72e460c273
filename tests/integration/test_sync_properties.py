"""Sync converges and stays safe whatever a file-sync tool does (issue 35).

Three data folders (machines A, B, C) and one shared folder that each machine sees through its own copy (a
"view"), which the test fills as a file-sync tool would: files arrive late, out of order, twice or never, cut
short under their final name (completed later), as conflict copies, next to junk; deletions (compaction) travel
late. The machines meanwhile add (the same text on two machines, other scripts, long texts, code), pin, tag,
edit, forget, purge and sync, with clocks hours or years off, one of them offline for long, a view moved away
and back, and one machine removed from the set. After everything is delivered and every machine has synced:
every export is the same, every memory added and never purged is everywhere, a purged text is nowhere (stores,
sync tables, and the decrypted log files), and no text is readable in the shared folder.
"""

from __future__ import annotations

import json
import os
import random
import sys
import uuid
from pathlib import Path
from typing import Any

import pytest

from desktop_memory.core.errors import NotFound
from desktop_memory.core.text import content_hash
from desktop_memory.service import MemoryService
from desktop_memory.service import ingest as ingest_module
from desktop_memory.sync import wire
from tests.fakes import FakeEmbedder, MemorySecrets

NAMES = ("A", "B", "C")
SHARED_TEXTS = [  # added on several machines: one memory
    "the same note on two machines: buy oat milk",
    "Déjà vu: ça marche très bien, merci beaucoup",
    "日本語のメモ：明日の会議は十時から",
    "def add(a, b):\n    return a + b  # code kept as is\n",
    "Привет, это заметка о синхронизации",
]
LONG = "long text " + " ".join(f"word{i} λ" for i in range(900))  # > 4000 characters
assert len(LONG) > 4000


def deterministic(monkeypatch: pytest.MonkeyPatch, seed: int) -> None:
    """The product's randomness that orders things (memory ids, machine ids, keys) drawn from the seed: a seed's
    story is the same every run (nonces stay random: they order nothing)."""
    rng = random.Random(f"ids {seed}")
    monkeypatch.setattr(ingest_module, "uuid", type("uuid", (), {
        "uuid4": staticmethod(lambda: uuid.UUID(int=rng.getrandbits(128), version=4))}))
    monkeypatch.setattr(wire, "new_machine_id", lambda: f"{rng.getrandbits(128):032x}")
    monkeypatch.setattr(wire, "new_key", lambda: rng.randbytes(wire.KEY_BYTES))


def export(s: MemoryService) -> list[str]:
    return sorted(json.dumps(r, sort_keys=True, ensure_ascii=False) for r in s.export_records(include_forgotten=True))


class World:
    """Three machines, their views of the shared folder, and what the test did (to check it afterwards)."""

    def __init__(self, root: Path, rnd: random.Random) -> None:
        self.root, self.rnd = root, rnd
        self.offset = dict.fromkeys(NAMES, 0.0)
        self.now = 1_795_000_000.0  # the test's clock (2026-11-18): a second a step, each machine's off by offset
        self.svc: dict[str, MemoryService] = {}
        for n in NAMES:
            s = MemoryService(root / f"data-{n}", embedder=FakeEmbedder())
            s.sync.secrets = MemorySecrets()  # one machine's keyring, in memory
            s.sync.wall = (lambda n=n: self.now + self.offset[n])
            (root / f"view-{n}").mkdir(parents=True)
            self.svc[n] = s
        self.removed: set[str] = set()
        self.partial: set[tuple[str, Path]] = set()  # (view, file) cut short there, still arriving
        self.moved: set[str] = set()
        self.added: list[tuple[str, str]] = []  # (machine, text as stored)
        self.purged: set[str] = set()  # groups (content hash when added) purged at least once
        self.edited_groups: set[str] = set()  # groups whose text was edited somewhere
        self.group_of: dict[tuple[str, str], str] = {}  # (machine, memory id) -> group
        self.edit_texts: set[str] = set()  # texts a memory was edited to (they may stay in live memories' logs)
        a = self.svc["A"]
        a.sync_setup(self.view("A"), name="A")
        phrase = a.sync_phrase()
        for n in ("B", "C"):
            self.deliver("A", n)
            st_ = self.svc[n].sync_setup(self.view(n), phrase=phrase, name=n)
            assert st_.configured and st_.problem is None, st_.problem

    def close(self) -> None:
        for s in self.svc.values():
            s.close()

    def view(self, n: str) -> Path:
        return self.root / f"view-{n}"

    def sdir(self, n: str) -> Path:
        return wire.sync_dir(self.view(n))

    def me(self, n: str) -> str:
        return self.svc[n].sync.store.get_meta("sync.machine") or ""

    def live(self) -> list[str]:
        return [n for n in NAMES if n not in self.removed]

    # -- the file-sync tool ------------------------------------------------------------------------
    def files(self, n: str) -> list[Path]:
        base = self.sdir(n)
        if not base.is_dir():
            return []
        out = []
        for p in sorted(base.rglob("*")):
            rel = p.relative_to(base)
            variant = "conflict" in p.name or " (" in p.name or p.name.endswith(".junk")
            if p.is_file() and not any(part.startswith(".") for part in rel.parts) and not variant \
                    and p.suffix in (".dms", ""):
                out.append(rel)
        return out

    def _owner_dir(self, n: str) -> str:
        return f"m-{self.me(n)}"

    def deliver(self, src: str, dst: str, pick: float = 1.0, *, complete: bool = True) -> None:
        """Copy some of src's files into dst's view (not into dst's own log dir: only dst writes there)."""
        if src in self.moved or dst in self.moved or src == dst:
            return
        for rel in self.files(src):
            if rel.parts[0] == self._owner_dir(dst) or self.rnd.random() > pick:
                continue
            data = (self.sdir(src) / rel).read_bytes()
            target = self.sdir(dst) / rel
            if (src, rel) in self.partial or (target.is_file() and target.read_bytes() == data):
                continue  # a file still arriving in src is not passed on
            self.partial.discard((dst, rel))
            if not complete and len(data) > 8 and self.rnd.random() < 0.3:
                data = data[: self.rnd.randrange(1, len(data))]  # still arriving: the final name, cut short
                self.partial.add((dst, rel))
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data)

    def propagate_deletions(self, pick: float = 1.0) -> None:
        """A log file its writer deleted (compaction) disappears from the other views, some of them late."""
        for owner in NAMES:
            if owner in self.moved:
                continue
            own = self._owner_dir(owner)
            have = {p.name for p in (self.sdir(owner) / own).glob("*")} if (self.sdir(owner) / own).is_dir() else set()
            for n in NAMES:
                d = self.sdir(n) / own
                if n == owner or n in self.moved or not d.is_dir():
                    continue
                for p in d.iterdir():
                    if p.is_file() and p.name not in have and wire._SEGMENT.match(p.name) \
                            and self.rnd.random() <= pick:
                        p.unlink()

    def conflict_copy(self, src: str, dst: str) -> None:
        files = [f for f in self.files(src) if f.parts[0] != self._owner_dir(dst)]
        if not files or src in self.moved or dst in self.moved:
            return
        rel = self.rnd.choice(files)
        data = (self.sdir(src) / rel).read_bytes()
        if self.rnd.random() < 0.4 and len(data) > 4:
            data = data[: len(data) // 2] + bytes(self.rnd.randrange(256) for _ in range(8))
        stem, suffix = (rel.name[:-4], ".dms") if rel.name.endswith(".dms") else (rel.name, "")
        name = self.rnd.choice([f"{stem}.sync-conflict-20261128-101010-ABCDEFG{suffix}",
                                f"{stem} (conflicted copy 2026-11-28){suffix}", f"{stem} (1){suffix}"])
        target = self.sdir(dst) / rel.parent / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)

    def junk(self, n: str) -> None:
        base = self.sdir(n)
        if n in self.moved or not base.is_dir():
            return
        (base / ".DS_Store").write_bytes(b"\0\0\0\1Bud1" + bytes(20))
        (base / ".stfolder").mkdir(exist_ok=True)
        (base / "desktop.ini").write_text("[.ShellClassInfo]\n")
        dirs = [d for d in base.iterdir() if d.is_dir() and d.name.startswith("m-") and d.name != self._owner_dir(n)]
        for d in dirs:
            (d / ".syncthing.0000000001.dms.tmp").write_bytes(b"partial")
            (d / f"{self.rnd.randrange(10**9, 10**10):010d}.dms.junk").write_bytes(b"x")
            (d / "0999999999.dms").write_bytes(bytes(self.rnd.randrange(256) for _ in range(200)))
            (d / "~lock.0000000001.dms#").write_bytes(b"")

    # -- the machines ---------------------------------------------------------------------------------
    def memories(self, n: str) -> list[Any]:
        return list(self.svc[n].store.iter_all(include_forgotten=True))

    def add(self, n: str, text: str) -> None:
        r = self.svc[n].add(text)
        self.added.append((n, r.memory.content))
        self.group_of[(n, r.memory.id)] = r.memory.content_hash

    def sync(self, n: str) -> Any:
        return self.svc[n].sync_now()

    def full_rounds(self) -> None:
        """Everything delivered everywhere (completing cut-short files), deletions travelled, every machine synced;
        twice over so that what a round wrote (a snapshot after a purge) travels too."""
        for n in list(self.moved):
            self.move_back(n)
        for _ in range(3):
            self.now += 60.0
            for n in NAMES:
                self.sync(n)
            for s in NAMES:
                for d in NAMES:
                    self.deliver(s, d)
            self.propagate_deletions()
        for n in NAMES:
            self.sync(n)

    def move_away(self, n: str) -> None:
        self.view(n).rename(self.root / f"moved-{n}")
        self.moved.add(n)

    def move_back(self, n: str) -> None:
        (self.root / f"moved-{n}").rename(self.view(n))
        self.moved.discard(n)

    # -- the checks -----------------------------------------------------------------------------------
    def check(self) -> None:
        if os.environ.get("SYNCPROP_DEBUG"):
            print("check:", len(self.added), "adds", len(self.purged), "purged", sorted(self.removed), file=sys.stderr)
        self.full_rounds()
        live = self.live()
        exports = {n: export(self.svc[n]) for n in live}
        first = exports[live[0]]
        for n in live[1:]:
            assert exports[n] == first, f"{live[0]} and {n} differ:\n" + "\n".join(
                sorted(set(first) ^ set(exports[n])))
        contents = [json.loads(r)["content"] for r in first]
        for n, text in self.added:
            g = content_hash(text)
            if n in self.removed or g in self.purged or g in self.edited_groups:
                continue
            assert text in contents, f"{text[:40]!r} added on {n} is missing"
        for n in live:
            st_ = self.svc[n].sync_status()
            assert st_.pending == 0
            assert st_.problem is None or "clock" in st_.problem, f"{n}: {st_.problem}"
        for gone_machine in self.removed:  # the removed machine never got the set's new key
            newest = max(self.svc[live[0]].sync._keys())
            assert newest > 0 and newest not in self.svc[gone_machine].sync._keys()
        # a purged text is nowhere: no store, no sync table, no log file still there (decrypted)
        alive = set(contents)
        # a group still alive (its memory edited to another text) keeps its first text in its log: not purged
        state = self.svc[live[0]].sync._state
        alive_groups = {known[0] for m in self.memories(live[0]) if (known := state.add_of(m.id))}
        gone = {t for _, t in self.added if content_hash(t) in self.purged and content_hash(t) not in alive_groups
                and t not in alive and t not in self.edit_texts}
        keys = {}
        for n in live:
            s = self.svc[n]
            keys.update(s.sync._keys())
            for table, col in (("sync_adds", "record"), ("sync_registers", "value")):
                for (value,) in s.store.db.execute(f"SELECT {col} FROM {table}"):
                    for t in gone:
                        assert json.dumps(t, ensure_ascii=False)[1:-1] not in str(value), (
                            f"purged {t[:30]!r} still in {n}'s {table}")
        for n in live:
            for rel in self.files(n):
                raw = (self.sdir(n) / rel).read_bytes()
                for _, t in self.added:
                    assert t[:24].encode() not in raw
                if rel.parts[0].startswith("m-") and rel.parts[0][2:] in {self.me(x) for x in live}:
                    payload = json.dumps(wire.unseal(keys, raw), ensure_ascii=False)
                    for t in gone:
                        assert json.dumps(t, ensure_ascii=False)[1:-1] not in payload, (
                            f"purged {t[:30]!r} still in {n}'s view of {rel}")


def random_text(rnd: random.Random) -> str:
    r = rnd.random()
    if r < 0.35:
        return rnd.choice(SHARED_TEXTS)
    if r < 0.4:
        return LONG
    alphabet = "abcdefghij klmnopé日本語ДЖ\n{}();=#"
    return "note " + "".join(rnd.choice(alphabet) for _ in range(rnd.randrange(3, 40))) + f" {rnd.randrange(10**6)}"


def story(w: World, steps: int) -> None:
    """Random steps: the machines' actions, the file-sync tool's deliveries and faults."""
    rnd = w.rnd
    for _ in range(steps):
        w.now += rnd.choice([0.001, 1.0, 30.0])
        n = rnd.choice(NAMES)
        other = rnd.choice([x for x in NAMES if x != n])
        s = w.svc[n]
        ms = w.memories(n)
        m = rnd.choice(ms) if ms else None
        what = rnd.choices(["add", "pin", "forget", "tag", "title", "edit", "purge", "sync", "deliver", "deletions",
                            "conflict", "junk", "skew", "move", "remove"],
                           [10, 3, 2, 3, 2, 1, 2, 8, 12, 2, 1, 1, 1, 0.3, 0.2])[0]
        if what == "add":
            w.add(n, random_text(rnd))
        elif what in ("pin", "forget") and m is not None:
            (s.set_pinned if what == "pin" else s.set_forgotten)(m.id, rnd.random() < 0.6)
        elif what == "tag" and m is not None:
            tag = rnd.choice(["work", "home", "zeta", "alpha", "日本"])
            s.tag(m.id, add=[tag]) if rnd.random() < 0.6 else s.tag(m.id, remove=[tag])
        elif what == "title" and m is not None:
            s.edit(m.id, title=f"title {rnd.randrange(1000)}")
        elif what == "edit" and m is not None:
            text = rnd.choice(SHARED_TEXTS)
            known = s.sync._state.add_of(m.id)
            stored = s.edit(m.id, content=text).content  # as stored (normalised)
            w.edited_groups.update({known[0] if known else m.content_hash, m.content_hash, content_hash(stored)})
            w.edit_texts.add(stored)
        elif what == "purge" and m is not None:
            known = s.sync._state.add_of(m.id)
            w.purged.update({known[0] if known else m.content_hash, m.content_hash})
            s.purge([m.id])
        elif what == "sync":
            got = w.sync(n)
            assert got.configured and (n not in w.moved or got.problem)
        elif what == "deliver":
            w.deliver(other, n, rnd.choice([0.3, 0.7, 1.0]), complete=rnd.random() < 0.5)
        elif what == "deletions":
            w.propagate_deletions(rnd.choice([0.3, 1.0]))
        elif what == "conflict":
            w.conflict_copy(other, n)
        elif what == "junk":
            w.junk(n)
        elif what == "skew":
            w.offset[n] = rnd.choice([0.0, 3.0, -5.0, 24 * 365 * 3.0, -24 * 365 * 2.0]) * 3600
        elif what == "move":
            if n in w.moved:
                w.move_back(n)
                assert w.sync(n).configured
            elif not w.moved:
                w.move_away(n)
                assert "missing" in (w.sync(n).problem or "")
        elif what == "remove" and not w.removed and not w.moved and n != "C":
            try:
                s.sync_remove("C")
            except NotFound:
                continue
            w.removed.add("C")
        for x in NAMES:
            assert "\n" not in w.svc[x].sync_status().line()


@pytest.mark.parametrize("seed", range(int(os.environ.get("SYNCPROP_SEEDS", "30"))))
def test_sync_random_stories_converge(tmp_path: Path, seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    deterministic(monkeypatch, seed)
    w = World(tmp_path, random.Random(seed))
    try:
        story(w, int(os.environ.get("SYNCPROP_STEPS", "200")))
        w.check()
    finally:
        w.close()


def test_sync_smoke_deterministic(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """One fixed story through every fault, quickly."""
    deterministic(monkeypatch, 7)
    w = World(tmp_path, random.Random(7))
    try:
        a, b, c = (w.svc[n] for n in NAMES)
        w.add("A", SHARED_TEXTS[0])
        w.add("B", SHARED_TEXTS[0])  # the same text on two machines: one memory
        w.add("A", LONG)
        w.add("B", SHARED_TEXTS[2])
        w.add("C", "note from C that C purges later")
        w.offset["B"] = 3 * 365 * 86400  # B's clock runs years ahead
        for n in NAMES:
            w.sync(n)
        w.deliver("A", "B", complete=False)  # cut short
        w.conflict_copy("A", "C")
        w.junk("C")
        w.deliver("B", "C")
        w.deliver("C", "A")
        for n in NAMES:
            w.sync(n)
        mid = next(m for m in w.memories("A") if m.content == LONG)
        a.set_pinned(mid.id, True)
        a.tag(mid.id, add=["zeta", "alpha"])
        purge_me = next(m for m in w.memories("C") if m.content.startswith("note from C"))
        w.purged.add(purge_me.content_hash)
        c.purge([purge_me.id])
        w.move_away("B")
        assert "missing" in (w.sync("B").problem or "")
        w.move_back("B")
        w.full_rounds()
        same = [m for m in w.memories("A") if m.content == SHARED_TEXTS[0]]
        assert len(same) == 1
        b_long = next(m for m in w.memories("B") if m.content == LONG)
        assert b_long.pinned and b_long.tags == ["alpha", "zeta"]
        b.sync_remove("C")
        w.removed.add("C")
        w.add("C", "added on C after it was removed")
        w.check()
        assert not any("after it was removed" in m.content for m in w.memories("A"))
    finally:
        w.close()
