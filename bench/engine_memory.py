"""Resident memory of the engine host (idle, busy, idle again) and of a CLI `search` (issue 28 item 5).

Everything runs as the app runs it, in processes of their own, so the code measured is the tree given with
`--tree` (its `desktop_memory` on PYTHONPATH, this interpreter's venv); this script imports nothing of it.
Folders are throw-away and plain (`DESKTOP_MEMORY_ENCRYPTION=off`); settings.json sets `llm_idle_unload_s` to
`--unload-s`. `--memories` realistic memories (notes, mails, chat, code, addresses, links, and one in eight
a long article of 2,000-9,000 characters) are generated from `--seed`.

1. The engine host as the tray app starts it: `python -m desktop_memory --data-dir D engine-host`, stdin a
   pipe, waiting for `ready <pid>`. Measured after `--settle` seconds (nothing loaded), then after a warm-up
   search over the engine socket (the app sends one at start: the embedding model loaded) = **idle**.
2. **Busy**. `--via host` (default, as in the app): the memories are imported with the CLI, which goes
   through the running host (the host embeds and stores them), and the host's background enrichment then
   loads the local model (in the host before issue 28, in a model worker child process after) and works
   through the queue. `--via cli`: the folder was filled by the CLI before the host started (queue emptied
   with stdlib sqlite3), and every memory is queued again over the socket (`requeue_enrichment`). The host
   and each of its descendants are sampled every `--interval` seconds until the queue is empty (or
   `--busy-max-s`): peaks (sampled; the kernel's VmHWM) and steady (medians after the import).
3. **Idle again** once the model has unloaded (`--unload-s` + `--settle` seconds after the queue emptied).
4. **CLI `search`** on a second folder of the first 20 memories, no host running: peak RSS of the process
   (`ru_maxrss` from `os.wait4`), `--cli-runs` queries; with `--cli-import N`, also an `import` of N memories
   into a fresh folder (peak RSS, wall and CPU seconds).

Per process: RSS, and from /proc/PID/smaps_rollup PSS and USS (private pages); RssAnon / RssFile; the heavy
native libraries mapped; with `--mappings N` the N largest mappings by RSS (libraries, the GGUF, heaps).

    .venv/bin/python bench/engine_memory.py                                   # this checkout, ~5-15 min
    .venv/bin/python bench/engine_memory.py --tree base=/tmp/base-wt --tree head=. --repeat 2 --out F.json

`--repeat N` runs every tree N times, alternating the order (A B, B A, ...), for paired comparisons.
`--imports` first prints RSS after importing each heavy library alone in a fresh interpreter;
`--cold-cache` gives the host an empty model cache (a first start of a source install: it exports the graph).
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import random
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent.parent
if str(HERE) not in sys.path:  # `bench.speed` from a checkout without installing
    sys.path.insert(0, str(HERE))
DB_NAME = "memories.sqlite3"  # service/ownership.py

# -- realistic memories ----------------------------------------------------------------------------------
NAMES = ["Priya Raman", "Marcus Feld", "Elena Rossi", "Tom Becker", "Sarah Okafor", "Chen Wei", "Fatima Zahra",
         "Jordan Blake", "Lena Novak", "Omar Haddad", "Gonzalo Ruiz", "Maria Gonzalez"]
PLACES = ["Berlin", "Lisbon", "Toronto", "Kyoto", "Madrid", "Boston", "Munich", "Oslo", "Porto", "Vienna"]
PROJECTS = ["Atlas", "Northwind", "Heron", "Bluebird", "Quarry", "Lighthouse", "Orchard", "Saffron"]
APPS = ["firefox", "slack", "thunderbird", "code", "terminal", "obsidian", "keep", "dbeaver", "contacts"]
TOPICS = [
    ("lighthouse", "The tower stands on a reef fourteen kilometres offshore. Its granite blocks were dovetailed "
     "together so that the sea could not pull them apart, and the lime that bound them set under water. Keepers "
     "lived in rooms stacked one above the other, each reached by a ladder, and the light was first a ring of "
     "tallow candles, later oil lamps with reflectors, and finally an electric lamp turning inside a lens."),
    ("sourdough", "A starter is flour and water left to ferment until wild yeasts and lactic bacteria take over. "
     "Feed it daily, keep it at room temperature, and use it when it has doubled and smells of yoghurt. The "
     "dough rests overnight in the fridge; a long cold proof gives a sour crumb and a blistered crust."),
    ("postgres vacuum", "Every update in PostgreSQL writes a new row version and leaves the old one behind. "
     "Autovacuum reclaims those dead tuples, but a long-running transaction holds the horizon back, so tables "
     "bloat and index scans slow down. Watch pg_stat_user_tables for n_dead_tup and the age of datfrozenxid."),
    ("glaciers", "Alpine glaciers have lost about a third of their volume since 2000. Meltwater feeds rivers "
     "in late summer, so valleys downstream depend on ice that is disappearing; hydropower operators plan for "
     "earlier spring floods and weaker August flows."),
    ("negotiation", "Anchor with a precise number, not a round one; name the range you want and justify it "
     "with the market data. Silence after an offer is fine. Trade concessions rather than giving them, and "
     "write down what was agreed before the call ends."),
    ("kubernetes", "A pod that is OOMKilled restarts with the same limits, so the crash loops. Set requests to "
     "what the container uses at steady state and limits a little above its peak; the kubelet evicts pods that "
     "exceed requests first when the node runs short of memory."),
]


def _article(rng: random.Random, chars: int) -> str:
    title, para = rng.choice(TOPICS)
    out = [f"{title.title()}: notes from a long read ({rng.choice(PLACES)}, {rng.randint(2019, 2026)})"]
    while sum(len(p) for p in out) < chars:
        sentences = para.split(". ")
        rng.shuffle(sentences)
        out.append(". ".join(sentences).rstrip(".") + f". ({rng.choice(NAMES)} on {rng.choice(PROJECTS)}.)")
    return "\n\n".join(out)[:chars].rsplit(" ", 1)[0] + "."


def memory(rng: random.Random, i: int) -> dict[str, Any]:
    """One memory of the kinds a person copies in a day; about one in eight is a long article."""
    n1, n2 = rng.sample(NAMES, 2)
    place, project = rng.choice(PLACES), rng.choice(PROJECTS)
    day = f"{rng.randint(1, 28)} {rng.choice(['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Sep', 'Oct', 'Nov'])}"
    kind = i % 16
    if kind in (0, 9):
        text = _article(rng, rng.choice([2000, 3500, 5000, 9000]))
    elif kind == 1:
        text = (f"Weekly sync {day}\n- {n1}: {project} beta ships {day}, release notes by Friday\n- {n2}: migrate "
                f"the billing cron to the new queue\n- Decision: freeze the API before the {place} offsite\n"
                f"Action items: {n1.split()[0]} books the retro room; {n2.split()[0]} drafts the rollout plan")
    elif kind == 2:
        text = (f"def retry_{i}(fn, attempts={rng.randint(2, 6)}, delay=0.5):\n    for i in range(attempts):\n"
                "        try:\n            return fn()\n        except OSError:\n"
                "            time.sleep(delay * 2 ** i)\n    raise TimeoutError(\"gave up\")")
    elif kind == 3:
        text = (f"From: {n1} <{n1.split()[0].lower()}@{project.lower()}.example>\nSubject: Invoice "
                f"{rng.randint(1000, 9999)} overdue\n\nHi {n2.split()[0]}, the invoice for the {place} consulting "
                f"work is now {rng.randint(5, 40)} days overdue. Could you check with accounts? The amount is "
                f"EUR {rng.randint(800, 24000):,}. Thanks, {n1.split()[0]}")
    elif kind == 4:
        text = f"https://docs.example.org/{project.lower()}/guide/{rng.randint(1, 99)}#section-{rng.randint(1, 9)}"
    elif kind == 5:
        a, b = n1.split()[0].lower(), n2.split()[0].lower()
        text = (f"[09:{rng.randint(10, 59)}] {a}: did the {project} deploy go out?\n[09:42] {b}: yes, "
                f"{rng.randint(1, 4)}.{rng.randint(0, 9)}.{rng.randint(0, 9)} is live in {place}\n[09:43] {a}: "
                f"great, closing the incident\n[09:44] {b}: I'll write the postmortem tomorrow")
    elif kind == 6:
        items = rng.sample(["oat milk", "6 eggs", "sourdough", "basil", "parmesan", "lemons", "dish soap",
                            "coffee beans", "rice", "tomatoes", "olive oil", "yoghurt"], 6)
        text = "Shopping: " + ", ".join(items)
    elif kind == 7:
        text = f"{n1}\n{rng.randint(1, 90)} Harbour Street\n{rng.randint(10000, 99999)} {place}\n+44 20 7946 {i:04d}"
    elif kind == 8:
        text = (f"SELECT customer_id, sum(total) AS spent\nFROM orders_{project.lower()}\nWHERE created_at >= "
                f"'2026-{rng.randint(1, 9):02d}-01'\nGROUP BY customer_id\nORDER BY spent DESC\n"
                f"LIMIT {rng.randint(5, 50)};")
    elif kind == 10:
        text = (f"Flight LH {rng.randint(100, 2999)} {place} to {rng.choice(PLACES)}, {day} "
                f"{rng.randint(5, 22):02d}:{rng.randint(0, 59):02d}, seat {rng.randint(1, 40)}C, booking ref "
                f"{''.join(rng.choices('ABCDEFGHJKLMNPQRSTUVWXYZ23456789', k=6))}")
    elif kind == 11:
        text = (f"Idea for {project}: group look-alike invoices and show +N similar instead of rows that differ by "
                f"one number; ask {n1} whether the {place} team wants it before {day}.")
    elif kind == 12:
        text = f"git rebase -i HEAD~{rng.randint(2, 9)}  # squash the fixups before opening the {project} pull request"
    elif kind == 13:
        text = (f"Dr. {n1} - appointment {day} at {rng.randint(8, 17)}:30, {place} clinic, bring the referral "
                f"letter and the insurance card. Reschedule by phone at least 24 h before.")
    elif kind == 14:
        text = (f"Password rotation for the {project} staging database is due {day}; {n2} owns it. The runbook "
                f"is in the wiki under ops/{project.lower()}/rotate.md; the new value goes to the vault, never chat.")
    else:
        text = (f"Book recommendation from {n1}: 'The {rng.choice(['Quiet', 'Long', 'Hidden'])} "
                f"{rng.choice(['Harbour', 'Orchard', 'Glacier'])}', about a family in {place}; "
                f"{rng.randint(200, 600)} pages, start after the {project} launch.")
    return {"content": text, "source": "clipboard", "source_app": rng.choice(APPS)}


def write_memories(path: Path, n: int, seed: int) -> list[int]:
    rng = random.Random(seed)
    lengths = []
    with open(path, "w", encoding="utf-8") as fh:
        for i in range(n):
            m = memory(rng, i)
            lengths.append(len(m["content"]))
            fh.write(json.dumps(m) + "\n")
    return lengths


# -- /proc -------------------------------------------------------------------------------------------------
def _kb_fields(path: str, names: tuple[str, ...]) -> dict[str, float]:
    out: dict[str, float] = {}
    try:
        with open(path, encoding="ascii") as fh:
            for line in fh:
                key, _, rest = line.partition(":")
                if key in names:
                    out[key] = int(rest.split()[0]) / 1024
    except (OSError, ValueError, IndexError):
        pass
    return out


def proc_mem(pid: int) -> dict[str, float] | None:
    """MB: rss, hwm (peak RSS), anon / file parts, and pss / uss from smaps_rollup when the kernel has it."""
    status = _kb_fields(f"/proc/{pid}/status", ("VmRSS", "VmHWM", "RssAnon", "RssFile", "RssShmem"))
    if "VmRSS" not in status:
        return None
    out = {"rss": status["VmRSS"], "hwm": status.get("VmHWM", 0.0), "anon": status.get("RssAnon", 0.0),
           "file": status.get("RssFile", 0.0)}
    rollup = _kb_fields(f"/proc/{pid}/smaps_rollup", ("Pss", "Private_Clean", "Private_Dirty"))
    if "Pss" in rollup:
        out["pss"] = rollup["Pss"]
        out["uss"] = rollup.get("Private_Clean", 0.0) + rollup.get("Private_Dirty", 0.0)
    return {k: round(v, 1) for k, v in out.items()}


def descendants(pid: int) -> list[int]:
    """Every live descendant of `pid` (the model worker, and anything it starts)."""
    parents: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue
        fields = stat.rsplit(")", 1)[-1].split()
        if fields[0] != "Z":
            parents.setdefault(int(fields[1]), []).append(int(entry))
    out, todo = [], [pid]
    while todo:
        for child in parents.get(todo.pop(), []):
            out.append(child)
            todo.append(child)
    return out


def cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace").strip()
    except OSError:
        return ""


def mappings(pid: int, top: int) -> list[tuple[str, float]]:
    """The `top` largest holders of resident memory: files mapped (libraries, the GGUF) and anonymous memory."""
    sizes: dict[str, float] = {}
    name = ""
    try:
        with open(f"/proc/{pid}/smaps", encoding="utf-8", errors="replace") as fh:
            for line in fh:
                head = line.split(None, 5)
                if len(head) >= 5 and "-" in head[0] and ":" not in head[0]:
                    name = head[5].strip() if len(head) > 5 else "[anonymous]"
                    name = Path(name).name if name.startswith("/") else name
                elif line.startswith("Rss:"):
                    sizes[name] = sizes.get(name, 0.0) + int(line.split()[1]) / 1024
    except OSError:
        return []
    return [(k, round(v, 1)) for k, v in sorted(sizes.items(), key=lambda kv: -kv[1])[:top]]


def loaded_libraries(pid: int) -> list[str]:
    """Which of the heavy native libraries the process has mapped (torch? llama.cpp? onnxruntime?)."""
    marks = {"libtorch": "torch", "onnxruntime": "onnxruntime", "libllama": "llama.cpp", "libggml": "llama.cpp",
             "chromadb_rust": "chromadb", "apsw": "apsw", "tokenizers": "tokenizers", "_multiarray": "numpy"}
    found = set()
    try:
        text = Path(f"/proc/{pid}/maps").read_text(errors="replace")
    except OSError:
        return []
    for mark, label in marks.items():
        if mark in text:
            found.add(label)
    return sorted(found)


# -- running the tree under test -----------------------------------------------------------------------------
def tree_env(tree: Path) -> dict[str, str]:
    """The environment of every process of a run; each also starts in `tree` (`python -m` and `-c` put the
    current folder first on sys.path, before PYTHONPATH)."""
    env = dict(os.environ)
    env["PYTHONPATH"] = str(tree)
    env["DESKTOP_MEMORY_ENCRYPTION"] = "off"
    env.pop("DESKTOP_MEMORY_HOME", None)
    return env


def cli(env: dict[str, str], data: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run([sys.executable, "-m", "desktop_memory", "--data-dir", str(data), *args], env=env,
                          cwd=env["PYTHONPATH"], capture_output=True, text=True, timeout=1800)
    if check and proc.returncode != 0:
        raise RuntimeError(f"desktop-memory {' '.join(args)} failed ({proc.returncode}): {proc.stderr[-2000:]}")
    return proc


def cli_peak(env: dict[str, str], data: Path, *args: str) -> tuple[float, float]:
    """Peak RSS (MB, ru_maxrss of that process) and wall time of one CLI command."""
    peak, seconds, _ = cli_usage(env, data, *args)
    return peak, seconds


def cli_usage(env: dict[str, str], data: Path, *args: str) -> tuple[float, float, float]:
    """Peak RSS (MB, ru_maxrss of that process), wall time and CPU seconds of one CLI command."""
    started = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-m", "desktop_memory", "--data-dir", str(data), *args], env=env,
                            cwd=env["PYTHONPATH"], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    seconds = time.perf_counter() - started
    if os.waitstatus_to_exitcode(status) != 0:
        raise RuntimeError(f"desktop-memory {' '.join(args)} failed: {proc.stderr.read().decode()[-2000:]}")
    proc.stderr.close()
    proc.returncode = os.waitstatus_to_exitcode(status)
    return round(usage.ru_maxrss / 1024, 1), round(seconds, 2), round(usage.ru_utime + usage.ru_stime, 2)


def remote(env: dict[str, str], data: Path, call: str) -> str:
    """One call on the running host's engine over its socket (the app's client), in a process of its own."""
    code = ("import sys; from pathlib import Path; from desktop_memory.ipc.client import connect\n"
            "r = connect(Path(sys.argv[1]))\nassert r is not None, 'no host'\n"
            f"print(r.{call})\nr.close()\n")
    proc = subprocess.run([sys.executable, "-c", code, str(data)], env=env, cwd=env["PYTHONPATH"],
                          capture_output=True, text=True,
                          timeout=600)
    if proc.returncode != 0:
        raise RuntimeError(f"{call} failed: {proc.stderr[-2000:]}")
    return proc.stdout.strip()


def queued(db: Path) -> int:
    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=30)
    try:
        return int(con.execute("SELECT count(*) FROM enrichment_queue WHERE state = 'queued'").fetchone()[0])
    finally:
        con.close()


def make_folder(env: dict[str, str], data: Path, unload_s: int, source: Path | None = None) -> None:
    """A data folder with settings.json (`llm_idle_unload_s`); with `source`, its memories imported by the CLI
    (no host running) and their enrichment queue emptied, so that a host starts idle."""
    data.mkdir(parents=True, exist_ok=True)
    settings = data / "settings.json"
    current = json.loads(settings.read_text(encoding="utf-8")) if settings.exists() else {}
    current["llm_idle_unload_s"] = unload_s
    settings.write_text(json.dumps(current, indent=2), encoding="utf-8")
    if source is not None:
        cli(env, data, "import", str(source))
        con = sqlite3.connect(data / DB_NAME, timeout=30)
        with con:
            con.execute("DELETE FROM enrichment_queue")  # the host starts idle; the busy phase queues them again
        con.close()


def snapshot(pid: int, top: int) -> dict[str, Any]:
    out: dict[str, Any] = {"host": proc_mem(pid), "libraries": loaded_libraries(pid)}
    kids = {c: proc_mem(c) for c in descendants(pid)}
    out["children"] = {str(c): {**m, "cmd": cmdline(c)[-80:]} for c, m in kids.items() if m}
    out["children_rss"] = round(sum(m["rss"] for m in kids.values() if m), 1)
    if top:
        out["mappings"] = mappings(pid, top)
        out["children_mappings"] = {str(c): mappings(c, top) for c in kids}
    return out


class Sampler(threading.Thread):
    """RSS of the host and of each of its descendants every `interval` seconds, until stopped."""

    def __init__(self, pid: int, interval: float) -> None:
        super().__init__(daemon=True)
        self.pid, self.interval = pid, interval
        self.samples: list[tuple[float, float, float, int]] = []  # t, host rss, children rss, children
        self.child_hwm: dict[int, float] = {}
        self.t0 = time.monotonic()
        self.halt = threading.Event()

    def run(self) -> None:
        while not self.halt.wait(self.interval):
            host = proc_mem(self.pid)
            if host is None:
                return
            kids = {c: m for c in descendants(self.pid) if (m := proc_mem(c))}
            for c, m in kids.items():
                self.child_hwm[c] = max(self.child_hwm.get(c, 0.0), m["hwm"])
            self.samples.append((time.monotonic() - self.t0, host["rss"], sum(m["rss"] for m in kids.values()),
                                 len(kids)))

    def summary(self, after_s: float = 0.0) -> dict[str, Any]:
        """Peaks over all samples; steady = medians of the samples taken after `after_s` (with a worker)."""
        host = [s[1] for s in self.samples]
        late = [s for s in self.samples if s[0] >= after_s] or self.samples
        kids = [s[2] for s in late if s[3]]
        return {"samples": len(self.samples), "host_peak": max(host, default=0.0),
                "host_steady": round(statistics.median([s[1] for s in late]), 1) if late else 0.0,
                "children_peak": max((s[2] for s in self.samples if s[3]), default=0.0),
                "children_steady": round(statistics.median(kids), 1) if kids else 0.0,
                "children_hwm": round(sum(self.child_hwm.values()), 1), "workers_started": len(self.child_hwm),
                "sum_peak": round(max((s[1] + s[2] for s in self.samples), default=0.0), 1)}


def run_host(env: dict[str, str], data: Path, source: Path, args: argparse.Namespace) -> dict[str, Any]:
    """The host's memory: idle, busy (importing through it and enriching, or enriching again), idle again."""
    r: dict[str, Any] = {"via": args.via}
    host_env = dict(env)
    if args.cold_cache:  # a first start of a source install: the host exports the ONNX graph itself
        host_env["DESKTOP_MEMORY_CACHE"] = str(data.parent / "empty-cache")
    started = time.perf_counter()
    host = subprocess.Popen([sys.executable, "-m", "desktop_memory", "--data-dir", str(data), "engine-host"],
                            env=host_env, cwd=env["PYTHONPATH"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL,
                            text=True)
    try:
        assert host.stdout is not None
        line = host.stdout.readline().strip()
        if not line.startswith("ready"):
            raise RuntimeError(f"the host did not start: {line!r}")
        pid = host.pid
        r["start_to_ready_s"] = round(time.perf_counter() - started, 2)
        time.sleep(args.settle)
        r["idle_start"] = snapshot(pid, args.mappings)
        t = time.perf_counter()
        remote(env, data, "search('warm up the search model', limit=5, record_access=False) and 'ok'")
        r["warm_search_s"] = round(time.perf_counter() - t, 2)
        time.sleep(args.settle)
        r["idle"] = snapshot(pid, args.mappings)

        db = data / DB_NAME
        sampler = Sampler(pid, args.interval)
        sampler.start()
        if args.via == "host":  # as the app: memories arrive through the host, which embeds and then enriches them
            t = time.perf_counter()
            cli(env, data, "import", str(source))
            r["import_s"] = round(time.perf_counter() - t, 1)
            r["after_import"] = proc_mem(pid)
        else:
            r["requeued"] = int(remote(env, data, "requeue_enrichment()"))
        import_end = time.monotonic() - sampler.t0
        t0 = time.monotonic()
        while time.monotonic() - t0 < args.busy_max_s:
            time.sleep(2)
            if queued(db) == 0:
                break
        at_end = snapshot(pid, args.mappings)  # the model still loaded (it unloads after --unload-s)
        sampler.halt.set()
        sampler.join()
        r["busy"] = {"seconds": round(time.monotonic() - sampler.t0, 1), "left_in_queue": queued(db),
                     **sampler.summary(after_s=import_end), "host_hwm": (at_end["host"] or {}).get("hwm"),
                     "at_end": at_end}
        deadline = time.monotonic() + args.unload_s + args.settle + 30
        while time.monotonic() < deadline:  # the model unloads llm_idle_unload_s after its last job
            time.sleep(1)
            if time.monotonic() > deadline - 30 and not descendants(pid):
                break
        r["idle_after"] = snapshot(pid, args.mappings)
    finally:
        if host.stdin:
            host.stdin.close()
        try:
            host.wait(60)
        except subprocess.TimeoutExpired:
            host.kill()
            host.wait()
    return r


def one_run(name: str, tree: Path, args: argparse.Namespace) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="dm-engine-memory-") as tmp:
        home = Path(tmp)
        env = tree_env(tree)
        where = subprocess.run([sys.executable, "-c", "import desktop_memory; print(desktop_memory.__file__)"],
                               env=env, cwd=tree, capture_output=True, text=True, check=True).stdout.strip()
        if not where.startswith(str(tree) + os.sep):
            raise RuntimeError(f"{name}: desktop_memory imports from {where}, not from {tree}")
        out: dict[str, Any] = {"tree": name, "path": str(tree), "imports_from": where,
                               "commit": _git(tree, "rev-parse", "--short", "HEAD"),
                               "dirty": bool(_git(tree, "status", "--porcelain", "--untracked-files=no")),
                               "load_before": [round(x, 2) for x in os.getloadavg()],
                               "when": dt.datetime.now(dt.UTC).isoformat(timespec="seconds")}
        source = home / "memories.jsonl"
        lengths = write_memories(source, args.memories, args.seed)
        out["memories"] = {"n": len(lengths), "chars_total": sum(lengths), "over_2000": sum(x > 2000 for x in lengths),
                           "longest": max(lengths)}
        if not args.no_host:
            data = home / "data"
            make_folder(env, data, args.unload_s, source if args.via == "cli" else None)
            out.update(run_host(env, data, source, args))
        small, small_src = home / "small", home / "small.jsonl"
        small_src.write_text("".join(source.read_text(encoding="utf-8").splitlines(keepends=True)[:20]),
                             encoding="utf-8")
        make_folder(env, small, args.unload_s, small_src)
        runs = [cli_peak(env, small, "search", q) for q in
                ("when does my flight leave", "overdue invoice", "postgres autovacuum", "sourdough starter",
                 "who owns the password rotation")[: args.cli_runs]]
        out["cli_search"] = {"peak_mb": [p for p, _ in runs], "seconds": [s for _, s in runs],
                             "peak_median": statistics.median(p for p, _ in runs)}
        if args.cli_import:  # `import` of that many memories into a fresh folder, no host: peak, wall, CPU
            big = home / "import.jsonl"
            write_memories(big, args.cli_import, args.seed + 1)
            make_folder(env, home / "imported", args.unload_s)
            peak, seconds, cpu = cli_usage(env, home / "imported", "import", str(big))
            out["cli_import"] = {"n": args.cli_import, "peak_mb": peak, "seconds": seconds, "cpu_s": cpu}
        out["load_after"] = [round(x, 2) for x in os.getloadavg()]
        return out


def _git(tree: Path, *args: str) -> str:
    proc = subprocess.run(["git", "-C", str(tree), *args], capture_output=True, text=True)
    return proc.stdout.strip()


IMPORTS = ["numpy", "apsw", "tokenizers", "onnxruntime", "chromadb", "llama_cpp", "torch", "transformers",
           "sentence_transformers", "desktop_memory.cli.main", "desktop_memory.service.facade"]


def import_costs(tree: Path) -> dict[str, float]:
    """RSS (MB) of a fresh interpreter after importing each module alone ("": the bare interpreter)."""
    env = {**os.environ, "PYTHONPATH": str(tree)}
    out = {}
    for mod in ["", *IMPORTS]:
        code = (f"import {mod}\n" if mod else "") + (
            "print([l.split()[1] for l in open('/proc/self/status') if l.startswith('VmRSS')][0])")
        proc = subprocess.run([sys.executable, "-c", code], env=env, cwd=tree, capture_output=True, text=True)
        out[mod or "(python)"] = round(int(proc.stdout.strip()) / 1024, 1) if proc.returncode == 0 else float("nan")
    return out


def _mb(x: float | None) -> str:
    return "-" if x is None else f"{x:.0f}"


def _cell(m: dict[str, Any] | None) -> str:
    if not m:
        return "-"
    pss = f" / {m['pss']:.0f} / {m['uss']:.0f}" if "pss" in m else ""
    return f"{m['rss']:.0f}{pss}"


def table(runs: list[dict[str, Any]]) -> str:
    head = [f"{r['tree']} ({r['commit']}{'+' if r['dirty'] else ''})" for r in runs]
    rows: list[tuple[str, list[str]]] = []
    if "idle" in runs[0]:
        rows += [
            ("host start to ready, s; warm-up search, s",
             [f"{r['start_to_ready_s']}; {r['warm_search_s']}" for r in runs]),
            ("host idle at start (nothing loaded): RSS / PSS / USS, MB",
             [_cell(r["idle_start"]["host"]) for r in runs]),
            ("host idle after a warm-up search (embedder loaded)", [_cell(r["idle"]["host"]) for r in runs]),
        ]
        if "after_import" in runs[0]:
            rows.append(("host after importing through it, s: RSS / PSS / USS",
                         [f"{r['import_s']}: {_cell(r['after_import'])}" for r in runs]))
        rows += [
            ("busy: host peak / steady RSS, MB", [f"{r['busy']['host_peak']:.0f} / {r['busy']['host_steady']:.0f}"
                                                  for r in runs]),
            ("busy: host VmHWM, MB", [_mb(r["busy"]["host_hwm"]) for r in runs]),
            ("busy: model worker(s) peak / steady RSS, MB (VmHWM)", [
                f"{r['busy']['children_peak']:.0f} / {r['busy']['children_steady']:.0f} "
                f"({r['busy']['children_hwm']:.0f})" if r["busy"]["workers_started"] else "none" for r in runs]),
            ("busy: host + workers peak, MB", [f"{r['busy']['sum_peak']:.0f}" for r in runs]),
            ("busy: s to an empty queue (jobs left)", [f"{r['busy']['seconds']:.0f} ({r['busy']['left_in_queue']})"
                                                     for r in runs]),
            ("host at the end of busy (model loaded): RSS / PSS / USS",
             [_cell(r["busy"]["at_end"]["host"]) for r in runs]),
            ("host idle after the model unloaded", [_cell(r["idle_after"]["host"]) for r in runs]),
            ("children left after unload (RSS, MB)", [_mb(r["idle_after"]["children_rss"]) for r in runs]),
            ("libraries mapped in the host when idle after", [",".join(r["idle_after"]["libraries"]) for r in runs]),
        ]
    rows.append(("CLI search, 20 memories, no host: peak RSS, MB (median)", [
        f"{r['cli_search']['peak_median']:.0f} ({', '.join(f'{p:.0f}' for p in r['cli_search']['peak_mb'])})"
        for r in runs]))
    if "cli_import" in runs[0]:
        rows.append((f"CLI import of {runs[0]['cli_import']['n']} memories: peak RSS, MB; wall / CPU, s", [
            f"{r['cli_import']['peak_mb']:.0f}; {r['cli_import']['seconds']} / {r['cli_import']['cpu_s']}"
            for r in runs]))
    rows.append(("load average before / after", [f"{r['load_before'][0]} / {r['load_after'][0]}" for r in runs]))
    width = max(len(n) for n, _ in rows)
    lines = [" " * width + " | " + " | ".join(head)]
    for n, cells in rows:
        lines.append(n.ljust(width) + " | " + " | ".join(cells))
    return "\n".join(lines)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tree", action="append", default=[],
                    help="NAME=PATH of a checkout to measure (repeatable; default: this checkout)")
    ap.add_argument("--repeat", type=int, default=1, help="runs per tree, alternating the order")
    ap.add_argument("--memories", type=int, default=100)
    ap.add_argument("--seed", type=int, default=28)
    ap.add_argument("--unload-s", type=int, default=15, help="llm_idle_unload_s in the folder's settings")
    ap.add_argument("--settle", type=float, default=5.0, help="seconds to wait before an idle measurement")
    ap.add_argument("--interval", type=float, default=0.5, help="seconds between samples while busy")
    ap.add_argument("--busy-max-s", type=float, default=1200)
    ap.add_argument("--cli-runs", type=int, default=3)
    ap.add_argument("--cli-import", type=int, default=0, metavar="N",
                    help="also time an `import` of N memories into a fresh folder (no host): peak RSS, wall, CPU")
    ap.add_argument("--mappings", type=int, default=0, help="also record the N largest mappings per process")
    ap.add_argument("--via", choices=("host", "cli"), default="host",
                    help="host: the memories are imported through the running host (as in the app), which then "
                         "enriches them; cli: imported before the host starts, then queued again over the socket")
    ap.add_argument("--cold-cache", action="store_true",
                    help="the host gets an empty DESKTOP_MEMORY_CACHE: it exports the ONNX graph itself (first start)")
    ap.add_argument("--no-host", action="store_true", help="only the CLI search")
    ap.add_argument("--imports", action="store_true", help="RSS after importing each heavy library alone")
    ap.add_argument("--out", type=Path)
    args = ap.parse_args()
    trees = [(t.split("=", 1) if "=" in t else (Path(t).name, t)) for t in args.tree] or [("this", str(HERE))]
    trees = [(n, Path(p).resolve()) for n, p in trees]
    from bench.speed import cpu_model  # here: speed.py imports the engine, which this process does not need before

    machine = f"{platform.platform()}, {os.cpu_count()} CPUs, {cpu_model()}, Python {platform.python_version()}"
    report: dict[str, Any] = {"date": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"), "machine": machine,
                              "args": {k: str(v) for k, v in vars(args).items()}, "runs": []}
    if args.imports:
        report["imports"] = {name: import_costs(path) for name, path in trees}
        print(json.dumps(report["imports"], indent=1), flush=True)
    for rnd in range(args.repeat):
        for name, path in (trees if rnd % 2 == 0 else list(reversed(trees))):
            print(f"round {rnd + 1}: {name} ({path})...", file=sys.stderr, flush=True)
            report["runs"].append(one_run(name, path, args))
            if args.out:
                args.out.write_text(json.dumps(report, indent=1), encoding="utf-8")
    print(table(report["runs"]))
    if args.out:
        args.out.write_text(json.dumps(report, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
