#!/usr/bin/env python3
"""Speed benchmark of the desktop-memory engine on synthetic, deterministic text.

Measured through the public `desktop_memory.service.MemoryService` API (and the CLI as a fresh
subprocess for the cold-start figures), at each store size given by `--sizes`, on one data folder
that grows incrementally (import up to 1k, measure; up to 10k, measure; ...):

1. bulk import throughput of ~200-character JSON Lines records (`service.import_records`);
2. warm search latency, p50/p95 over distinct 2-8 word queries (query embedding included,
   `service.search(q, limit=10, record_access=True)`), plus a per-component breakdown;
3. freshness: `service.add` latency and the time until the new memory is found by a keyword
   search and by a purely semantic search (no shared words);
4. peak RSS (`ru_maxrss`) after each stage and the on-disk size of the data folder;
5. CLI cold start: `desktop-memory --data-dir DIR search "..." --json` and `desktop-memory --version`
   as fresh subprocesses (median of `--cli-runs`).

The text is generated here from a seeded `random.Random`: notes built from a vocabulary of a few
thousand English word forms, code-like lines, and notes with names and dates. No data set is read.

    .venv/bin/python bench/speed.py --sizes 1000,10000,100000 --out bench-speed.json --workdir /tmp/dm-speed
"""

from __future__ import annotations

import argparse
import cProfile
import datetime as dt
import io
import json
import os
import platform
import pstats
import random
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:  # run from a checkout without installing
    sys.path.insert(0, str(REPO))

from desktop_memory.core.query import Filters, terms  # noqa: E402
from desktop_memory.engine.embed import Embedder  # noqa: E402
from desktop_memory.service import ImportReport, MemoryService  # noqa: E402

TARGETS: dict[str, float] = {
    "import_per_s_min": 150.0,
    "search_p50_ms_max": 20.0,
    "search_p95_ms_max": 50.0,
    "fresh_keyword_ms_max": 50.0,
    "fresh_semantic_ms_max": 500.0,
}

# --------------------------------------------------------------------------------------------
# Synthetic text
# --------------------------------------------------------------------------------------------


def _w(text: str) -> list[str]:
    """A word list written as one string (easier to read and edit than a list literal)."""
    return text.split()


NOUNS = _w("""account action address agenda agent alarm album analysis answer apartment app archive
area argument article aspect asset assignment audience audit author backup badge balance band bank
basket battery beach bench bike bird blanket block board boat body book border bottle box branch
brand bread bridge browser brush bucket budget bug building bundle button cabinet cable cafe calendar
camera campaign candidate canvas capital card career carpet case cash castle catalog ceiling cell
center chair chance channel chapter chart check chicken child choice church circle city claim class
client cloud club coach coast code coffee collection college column comment committee company
compiler component computer concept concert condition conference connection contract control copy
corner cost cottage council counter country county course court cousin cover craft credit crowd
culture cup customer cycle dashboard data database date deadline deal debate decision deck default
degree delivery demand deposit design desk detail device diagram dinner director discount disk
district document dog domain door draft drawer dream dress driver duty editor effect election element
email employee engine entry error estate event evidence exam example exception feature fee festival
field figure file film filter finance flat floor flower folder forest form format forum frame friend
function fund furniture game garden gate glass goal grade graph group growth guest guide guitar habit
hall handle harbor hardware head heart heater highway history holiday home hotel house idea image
incident index industry input insurance interface interview invoice island issue item jacket job
journal judge kernel kitchen label ladder lake lamp language laptop launch layer leader lecture
letter level library license light limit line link list loan lock log logic machine magazine manager
map market meeting member memory menu message method metric middle milestone mirror mission model
module moment monitor month motor mountain mouse movie museum music network newspaper node note
notebook number object office officer option order outcome output owner package page painting panel
paper parameter parent park partner party patch path pattern pencil people period permission person
phone photo piano picture pipeline pitch plan planet plant plate platform player pocket poem policy
pool portal position post poster practice pressure price printer priority problem process product
profile program project property proposal protocol provider query question queue quote radio rate
reader recipe record region release report request research resource response result review river
road role roof room route row rule sample scale scene schedule school score screen script season
section sector segment seminar sensor sequence service session setting shelf shop signal site sketch
slide snapshot socket software solution song source space speaker spreadsheet stage standard station
statement status step storage store story strategy stream street student studio style subject
supplier support survey switch symbol system table tablet target task teacher team template tenant
terminal test theme thread ticket timeline title tool topic tower track trade traffic train
transaction transfer tree trend trial truck tunnel tutorial upgrade user valley value vendor version
video view village volume wallet warning warehouse website week window winter worker workshop year
zone""")

VERBS = _w("""accept access add adjust allow analyze announce apply approve archive arrange assign attach
attend avoid balance block book borrow brief build calculate call cancel capture change charge check
choose clean clear close collect combine commit compare compile complete configure confirm connect
consider contact contain continue convert copy correct count cover create debug decide deliver
deploy describe design detect develop discuss display divide download draft drop edit enable
encrypt ensure enter escalate estimate evaluate expand explain export extend fetch file fill filter
finish fix flag follow forward gather generate grant group handle hire host identify ignore improve
include increase index inform install invite join keep label launch learn limit list load lock log
maintain manage map mark measure merge migrate mention monitor move name notify open order organize
pack paint parse patch pause pick pin plan plot post prepare present print process publish pull
push question read rebuild receive record reduce refactor refresh register reject release remove
rename render repair repeat replace reply report request require reserve reset resolve restart
restore review revert rewrite rotate route run save scan search select send share ship sign sort
split start stop store submit suggest summarize support switch sync test track train transfer
translate trigger update upload validate verify visit wait watch wrap write""")

ADJECTIVES = _w("""able active actual annual automatic available basic brief broad busy careful central
certain cheap clean clever cold common complete complex correct creative critical current daily dark
deep direct dirty double dry easy empty entire equal exact external extra fair familiar fast final
fine flat formal free fresh friendly full general gentle global good great green happy hard heavy
helpful hidden high huge important initial inner internal large legal light likely little local
long loud low main major manual minor mobile modern monthly narrow native natural nearby neat
necessary negative nervous normal obvious official old open optional ordinary original overall
patient perfect personal physical plain polite popular positive possible powerful practical precise
previous primary private proper public quick quiet rapid rare raw ready recent regular relevant
remote responsible rich rough round safe secure separate serious sharp short simple single slow
small smart smooth soft solid special specific stable steady strict strong sudden sweet tall
temporary thick thin tight tiny total tough typical ugly unique unusual upper urgent useful usual
valid various vast visible warm weekly whole wide wild wise wooden young""")

ADVERBS = _w("""again almost already always carefully clearly currently definitely easily eventually
exactly finally hardly instead later likely maybe mostly nearly never often perhaps probably quickly
rarely recently simply slowly soon still suddenly today together tomorrow usually yesterday""")

FUNCTION = _w("the the the a a an to to of of in in on for for with and and but or at by from as is was be")

FIRST_NAMES = _w("""Alice Amara Ben Bruno Carla Chen Daniel Diego Elena Emma Farid Fatima Gabriel Grace Hana
Hugo Ingrid Ivan Jonas Julia Kai Karim Laura Leo Lina Lucas Maria Marco Maya Mehmet Nadia Nina Omar
Oscar Paula Pedro Priya Quentin Rafael Rosa Sam Sara Sofia Tariq Tom Uma Victor Wen Yara Yusuf Zoe""")

LAST_NAMES = _w("""Abbott Alvarez Bauer Becker Costa Dubois Eriksen Fischer Garcia Haddad Hansen Ivanova
Jensen Kim Kowalski Larsen Lopez Martin Meyer Moreau Nakamura Novak Okafor Olsen Patel Petrov Quinn
Rossi Schmidt Silva Singh Tanaka Torres Varga Wagner Weber Wong Yilmaz Zhang""")

MONTHS = _w("January February March April May June July August September October November December")
WEEKDAYS = _w("Monday Tuesday Wednesday Thursday Friday Saturday Sunday")
APPS = ["firefox", "code", "slack", "terminal", "obsidian", "thunderbird", "libreoffice", ""]
SOURCES = ["clipboard", "clipboard", "clipboard", "import", "manual", "hotkey"]
LANG_WORDS = ["api", "cli", "json", "yaml", "sql", "http", "css", "html", "regex", "cron", "docker", "git"]

# Freshness: each fresh memory is about a topic the synthetic corpus never mentions, and is looked
# up (a) by a unique keyword and (b) by a paraphrase that shares no indexed word with it.
FRESH_TOPICS: list[tuple[str, list[str]]] = [
    ("Reminder: {name}'s dentist appointment moved to {weekday} at {hour}pm, clinic on {street} "
     "Street, ref {token}.",
     ["dental checkup rescheduled", "tooth doctor slot shifted", "dentists visit new day"]),
    ("Flight {code} to Lisbon departs {weekday} 07:40 from terminal 2, seat {seat}, {name} booked it "
     "({token}).",
     ["plane journey Portugal", "my plane trip to Portugal", "airport boarding time for the Portugal trip"]),
    ("Grocery list for {weekday}: oat milk, eggs, spinach, basmati rice, lemons, coffee beans; {name} "
     "wants bananas too ({token}).",
     ["what to buy at the supermarket", "food purchases needed", "shopping for food"]),
    ("Invoice {code} from {last} Hosting is overdue: pay 49 EUR by {weekday}, otherwise the domain "
     "lapses ({token}).",
     ["money owed for the website server", "outstanding charge webspace", "late payment owed"]),
    ("The kubernetes pod crashloops because the readiness probe hits /healthz before migrations "
     "finish ({token}), says {name}.",
     ["k8s container restart loop", "health check failing container restarts", "k8s liveness restart loop"]),
    ("{name}'s birthday party is on {weekday}: bring the cake, candles and balloons ({token}).",
     ["surprise celebration weekend", "celebration gathering weekend", "surprise celebration dessert"]),
    ("Car service at the garage on {street} Street: replace brake pads and rotate tyres, about 180 "
     "euros ({token}).",
     ["vehicle maintenance at the mechanic", "automobile repair wheels", "auto repair shop visit"]),
    ("Recipe: simmer red lentils with cumin, garlic and tomatoes for 25 minutes, then add lime "
     "({token}).",
     ["legume stew cooking instructions", "spicy vegetarian dish preparation", "cooking pulses with spices"]),
    ("Passport renewal needs two photos and the old passport; the embassy opens at 9 on {weekday} "
     "({token}).",
     ["consulate travel ID documents", "consulate visa documents",
      "travel identification paperwork expiring"]),
    ("Gym plan: squats, deadlifts and bench press on {weekday}, running intervals on Thursday "
     "({token}).",
     ["weekly workout schedule", "workout routine exercise", "weightlifting cardio program"]),
]
QUESTION_PREFIXES = ["", "what about the ", "when was ", "where is my ", "any ", "the ", "how about "]
SYLLABLES = _w("""ba be bi bo bu da de di do du fa fe fi fo ga ge gi go ka ke ki ko ku la le li lo lu ma
me mi mo mu na ne ni no nu pa pe pi po ra re ri ro ru sa se si so ta te ti to tu va ve vi vo za ze zi
zo bar ben dor fen gar kel lor mar nor pel quo rin sol tor vek wyn xan yor zel""")


def _inflect(word: str, suffix: str) -> str:
    if suffix in ("ed", "ing", "er") and word.endswith("e"):
        word = word[:-1]
    elif suffix in ("ed", "ing", "er") and re.fullmatch(r"[^aeiou]*[aeiou][^aeiouwxy]", word):
        word += word[-1]  # scan -> scanned, plan -> planning
    if suffix in ("ed", "s", "es") and word.endswith("y") and word[-2:-1] not in "aeiou":
        return word[:-1] + ("ied" if suffix == "ed" else "ies")
    if suffix == "s" and word.endswith(("s", "x", "ch", "sh")):
        return word + "es"
    if suffix == "ly" and word.endswith("y"):
        return word[:-1] + "ily"
    if suffix == "ly" and word.endswith("le"):
        return word[:-1] + "y"
    return word + suffix


def _excluded_words() -> set[str]:
    """Words of the fresh-memory paraphrases: kept out of the corpus so they match no old memory."""
    out: set[str] = set()
    for _, paraphrases in FRESH_TOPICS:
        for p in paraphrases:
            out.update(w.lower() for w in p.split())
    return out


def build_vocabulary(seed: int) -> list[str]:
    """A few thousand English word forms, most frequent first: base words (shuffled), then their
    regular inflections, then adjective-noun compounds. Deterministic for a seed."""
    excluded = _excluded_words()
    rng = random.Random(seed)

    def allowed(base: str) -> bool:
        return base not in excluded and not any(
            base.startswith(x[:5]) or x.startswith(base[:5]) for x in excluded if len(x) >= 5)

    bases: list[str] = []
    inflected: list[str] = []
    for words, suffixes in ((NOUNS, ("s",)), (VERBS, ("s", "ed", "ing", "er")),
                            (ADJECTIVES, ("ly", "ness")), (ADVERBS, ())):
        for w in words:
            if allowed(w):
                bases.append(w)
                inflected += [_inflect(w, s) for s in suffixes]
    compounds = [f"{a}-{n}" for a in ADJECTIVES[::5] for n in NOUNS[::41] if allowed(a) and allowed(n)]
    out: dict[str, None] = {}
    for group in (bases, inflected, compounds):
        group = sorted(set(group))
        rng.shuffle(group)
        out.update(dict.fromkeys(group))
    return list(out)


class TextGenerator:
    """Deterministic memories and queries; every method draws from this generator's own RNG."""

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)
        vocab = build_vocabulary(seed ^ 0x5EED)
        self.vocab = vocab
        self.vocab_set = set(vocab)
        self.nouns = [w for w in NOUNS if w in self.vocab_set]
        self.verbs = [w for w in VERBS if w in self.vocab_set]
        self.adjs = [w for w in ADJECTIVES if w in self.vocab_set]
        # Zipf-like weights over the shuffled vocabulary: a few frequent words, a long tail.
        self._cum = []
        total = 0.0
        for rank in range(len(vocab)):
            total += 1.0 / (rank + 1) ** 0.85
            self._cum.append(total)
        self._made_up: set[str] = set()

    # -- pieces ----------------------------------------------------------------------------------
    def word(self) -> str:
        return self.rng.choices(self.vocab, cum_weights=self._cum, k=1)[0]

    def words(self, n: int) -> list[str]:
        return self.rng.choices(self.vocab, cum_weights=self._cum, k=n)

    def name(self) -> str:
        return f"{self.rng.choice(FIRST_NAMES)} {self.rng.choice(LAST_NAMES)}"

    def date(self) -> str:
        r = self.rng
        day = r.randint(1, 28)
        style = r.randrange(3)
        if style == 0:
            return f"{r.randint(2019, 2026)}-{r.randint(1, 12):02d}-{day:02d}"
        if style == 1:
            suffix = {1: "st", 2: "nd", 3: "rd", 21: "st", 22: "nd", 23: "rd"}.get(day, "th")
            return f"{r.choice(MONTHS)} {day}{suffix}"
        return f"{r.choice(WEEKDAYS)} {day} {r.choice(MONTHS)[:3]}"

    def made_up_word(self) -> str:
        """A pronounceable non-word that is in no memory of the corpus (and never repeats)."""
        while True:
            w = "".join(self.rng.choice(SYLLABLES) for _ in range(self.rng.randint(3, 4)))
            if w not in self.vocab_set and w not in self._made_up:
                self._made_up.add(w)
                return w

    def sentence(self) -> str:
        r = self.rng
        n = r.choice(self.nouns)
        pattern = r.randrange(6)
        tail = " ".join(self.words(r.randint(2, 6)))
        if pattern == 0:
            s = f"{r.choice(self.adjs)} {n} {r.choice(FUNCTION)} {tail}"
        elif pattern == 1:
            s = f"need to {r.choice(self.verbs)} the {n} {r.choice(FUNCTION)} {tail}"
        elif pattern == 2:
            s = f"{' '.join(self.words(r.randint(2, 4)))} {r.choice(ADVERBS)} {tail}"
        elif pattern == 3:
            verb = r.choice(["is", "was", "looks", "seems"])
            s = f"the {n} {verb} {r.choice(self.adjs)} {r.choice(FUNCTION)} {tail}"
        elif pattern == 4:
            det, when = r.choice(["the", "a", "our", "my"]), r.choice(["before", "after", "during"])
            s = f"{r.choice(self.verbs)} {det} {n} {when} {tail}"
        else:
            s = " ".join(self.words(r.randint(5, 10)))
        return s[0].upper() + s[1:] + r.choice([".", ".", ".", "!", "?", ";"])

    def _fill(self, head: str, target: int) -> str:
        text = head
        while len(text) < target:
            text += " " + self.sentence()
        if len(text) > target + 25:
            cut = text.rfind(" ", 0, target + 20)
            text = text[: cut if cut > target // 2 else target + 20].rstrip(",;: ") + "."
        return text

    def note(self, target: int) -> str:
        return self._fill(self.sentence(), target)

    def people_note(self, target: int) -> str:
        r = self.rng
        who, when = self.name(), self.date()
        head = r.choice([
            f"Call with {who} on {when}:",
            f"{who} said the {r.choice(self.nouns)} {r.choice(self.nouns)} is due {when}.",
            f"Meeting notes {when} ({who}, {r.choice(FIRST_NAMES)} and {r.choice(FIRST_NAMES)}):",
            f"Email from {who} — {r.choice(self.verbs)} the {r.choice(self.nouns)} by {when}.",
            f"Decision ({when}): {who} owns the {r.choice(self.adjs)} {r.choice(self.nouns)}.",
        ])
        return self._fill(head, target)

    def code_note(self, target: int) -> str:
        r = self.rng
        n1, n2, v = r.choice(self.nouns), r.choice(self.nouns), r.choice(self.verbs)
        head = r.choice([
            f"def {v}_{n1}(self, {n2}_id: int, {n1}=None):\n    return self.{n2}s.{v}({n2}_id, {n1})",
            f'git commit -m "{v.capitalize()} {n1} {n2} in the {r.choice(LANG_WORDS)} layer"',
            f"SELECT {n1}_id, {n2} FROM {n1}s WHERE {n2} > {r.randint(1, 999)} ORDER BY {n2} DESC;",
            f"docker run --rm -p {r.randint(3000, 9000)}:80 {n1}-{n2}:{r.randint(1, 9)}.{r.randint(0, 20)}",
            f"const {n1}{n2.capitalize()} = await fetch(`/api/{n1}/${{id}}/{n2}`);",
            f"ERROR {self.date()} {n1}.{n2}: {v} failed after {r.randint(2, 9)} retries "
            f"(timeout {r.randint(1, 60)}s)",
            f"for {n1} in {n2}s:\n    if {n1}.{r.choice(self.adjs)}:\n        {v}({n1})",
            f"$ {r.choice(LANG_WORDS)} {v} --{n1} {n2}.{r.choice(['json', 'yaml', 'txt', 'py'])}",
        ])
        return self._fill(head + "\n#", target)

    def memory_text(self) -> str:
        target = int(min(300, max(120, self.rng.gauss(200, 30))))
        kind = self.rng.random()
        if kind < 0.55:
            return self.note(target)
        if kind < 0.80:
            return self.people_note(target)
        return self.code_note(target)


@dataclass
class Corpus:
    """The stream of imported records (JSON Lines) and a sample of their texts for queries."""

    seed: int
    start: float = field(default_factory=lambda: dt.datetime(2025, 11, 21, 8, 0).timestamp())
    gen: TextGenerator = field(init=False)
    produced: int = 0
    sample: list[str] = field(default_factory=list)
    gen_seconds: float = 0.0

    def __post_init__(self) -> None:
        self.gen = TextGenerator(self.seed)
        self._clock = self.start
        self._keep = random.Random(self.seed + 7)

    def records(self, n: int) -> Iterator[str]:
        """The next n JSON Lines records; time spent here is added to `gen_seconds`."""
        g = self.gen
        for _ in range(n):
            t0 = time.perf_counter()
            r = g.rng
            text = g.memory_text()
            # about 300 per day: bursts (sessions) of a few minutes apart, then a gap
            self._clock += r.expovariate(1 / 20) if r.random() < 0.8 else r.expovariate(1 / 1500)
            rec: dict[str, Any] = {
                "content": text,
                "created_at": dt.datetime.fromtimestamp(self._clock).isoformat(timespec="seconds"),
                "source": r.choice(SOURCES),
                "source_app": r.choice(APPS),
            }
            if r.random() < 0.15:
                rec["tags"] = [r.choice(g.nouns) for _ in range(r.randint(1, 3))]
            if r.random() < 0.02:
                rec["pinned"] = True
            self.produced += 1
            if len(self.sample) < 5000:  # reservoir sample of texts for matching queries
                self.sample.append(text)
            else:
                j = self._keep.randrange(self.produced)
                if j < len(self.sample):
                    self.sample[j] = text
            line = json.dumps(rec, ensure_ascii=False)
            self.gen_seconds += time.perf_counter() - t0
            yield line


class QueryMaker:
    """Distinct queries of 2-8 words: phrases from stored texts, vocabulary words, non-words."""

    def __init__(self, seed: int, corpus: Corpus) -> None:
        self.rng = random.Random(seed)
        self.corpus = corpus
        self.gen = corpus.gen
        self.seen: set[str] = set()

    def _one(self) -> tuple[str, str]:
        r = self.rng
        n = r.randint(2, 8)
        kind = r.random()
        if kind < 0.45 and self.corpus.sample:
            words = [w.strip(".,;:!?()\"'`#$") for w in r.choice(self.corpus.sample).split()]
            words = [w for w in words if w]
            start = r.randrange(max(1, len(words) - n))
            picked = words[start : start + n]
            if r.random() < 0.5:  # scramble some: people do not remember the exact wording
                r.shuffle(picked)
            return "phrase", " ".join(picked).lower()
        if kind < 0.60:
            who, about = r.choice(FIRST_NAMES), " ".join(self.gen.words(n - 2))
            return "question", f"what did {who} say about the {about}"
        if kind < 0.80:
            return "vocabulary", " ".join(self.gen.words(n))
        if kind < 0.92:
            return "no-match", " ".join(self.gen.made_up_word() for _ in range(n))
        mixed = self.gen.words(n - 1)
        mixed.insert(r.randrange(n), self.gen.made_up_word())
        return "mixed", " ".join(mixed)

    def make(self, count: int) -> list[tuple[str, str]]:
        out: list[tuple[str, str]] = []
        while len(out) < count:
            kind, q = self._one()
            if q and q not in self.seen and 2 <= len(q.split()) <= 8:
                self.seen.add(q)
                out.append((kind, q))
        return out


# --------------------------------------------------------------------------------------------
# Measurement helpers
# --------------------------------------------------------------------------------------------


def pct(values: Sequence[float], p: float) -> float:
    """Percentile with linear interpolation (p in 0..100)."""
    if not values:
        return float("nan")
    s = sorted(values)
    k = (len(s) - 1) * p / 100.0
    lo = int(k)
    hi = min(lo + 1, len(s) - 1)
    return s[lo] + (s[hi] - s[lo]) * (k - lo)


def summary_ms(values: Sequence[float]) -> dict[str, Any]:
    """p50/p95/max/mean in milliseconds of durations given in seconds (None when there are none)."""
    ms = [v * 1000 for v in values]
    if not ms:
        return {"n": 0, "p50_ms": None, "p95_ms": None, "max_ms": None, "mean_ms": None}
    return {
        "n": len(ms),
        "p50_ms": round(pct(ms, 50), 2),
        "p95_ms": round(pct(ms, 95), 2),
        "max_ms": round(max(ms), 2),
        "mean_ms": round(statistics.fmean(ms), 2),
    }


def peak_rss_mb() -> float:
    """Peak resident set size of this process (ru_maxrss is KiB on Linux, bytes on macOS)."""
    raw = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return round(raw / (1024 * 1024) if sys.platform == "darwin" else raw / 1024, 1)


def current_rss_mb() -> float | None:
    try:
        pages = int(Path("/proc/self/statm").read_text().split()[1])
    except (OSError, IndexError, ValueError):
        return None
    return round(pages * os.sysconf("SC_PAGE_SIZE") / (1024 * 1024), 1)


def cpu_seconds() -> float:
    """User + system CPU time of this process (all threads) so far."""
    ru = resource.getrusage(resource.RUSAGE_SELF)
    return ru.ru_utime + ru.ru_stime


def loadavg() -> list[float] | None:
    try:
        return [round(x, 2) for x in os.getloadavg()]
    except OSError:
        return None


def disk_usage(folder: Path) -> dict[str, int]:
    """Bytes of the data folder: SQLite files (db, WAL, SHM), the Chroma folder, the rest."""
    out = {"sqlite_bytes": 0, "sqlite_wal_bytes": 0, "vectors_bytes": 0, "other_bytes": 0,
           "total_bytes": 0, "allocated_bytes": 0}
    for p in folder.rglob("*"):
        if not p.is_file():
            continue
        st = p.stat()
        rel = p.relative_to(folder).parts
        if rel[0] == "vectors":
            out["vectors_bytes"] += st.st_size
        elif rel[0].startswith("memories.sqlite3"):
            out["sqlite_wal_bytes" if rel[0].endswith(("-wal", "-shm")) else "sqlite_bytes"] += st.st_size
        else:
            out["other_bytes"] += st.st_size
        out["total_bytes"] += st.st_size
        out["allocated_bytes"] += st.st_blocks * 512
    return out


def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def mem_total_gb() -> float | None:
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                return round(int(line.split()[1]) / 1024 / 1024, 1)
    except OSError:
        pass
    return None


def log(msg: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


# --------------------------------------------------------------------------------------------
# Stages
# --------------------------------------------------------------------------------------------


def stage_import(service: MemoryService, corpus: Corpus, target: int) -> dict[str, Any]:
    """Import records until the store holds `target` memories; throughput of the whole increment."""
    before = service.store.count()
    lines = 0
    totals = ImportReport()
    curve: list[tuple[int, float]] = []
    gen0 = corpus.gen_seconds
    load0 = loadavg()
    cpu0 = cpu_seconds()
    t0 = time.perf_counter()
    state = {"base": 0, "need": 0}

    def progress(report: ImportReport) -> None:
        done = state["base"] + report.added + report.duplicates + report.related
        elapsed = time.perf_counter() - t0
        if not curve or done - curve[-1][0] >= 2560 or done >= state["base"] + state["need"]:
            curve.append((done, round(elapsed, 2)))
            if len(curve) % 4 == 0:
                log(f"  imported {done:,} of this stage in {elapsed:,.0f}s ({done / elapsed:,.0f}/s)")

    for _attempt in range(5):  # again if some records were duplicates
        need = target - service.store.count()
        if need <= 0:
            break
        state.update(base=lines, need=need)
        report = service.import_records(corpus.records(need), progress=progress)
        lines += need
        totals.added += report.added
        totals.duplicates += report.duplicates
        totals.related += report.related
        totals.redacted += report.redacted
        totals.errors += report.errors
    seconds = time.perf_counter() - t0
    cpu_s = cpu_seconds() - cpu0
    gen_s = corpus.gen_seconds - gen0
    return {
        "from": before,
        "to": service.store.count(),
        "records": lines,
        "added": totals.added,
        "duplicates": totals.duplicates,
        "related": totals.related,
        "redacted": totals.redacted,
        "bad_lines": len(totals.errors),
        "seconds": round(seconds, 2),
        "generator_seconds": round(gen_s, 2),
        "per_s": round(lines / seconds, 1) if seconds else None,
        "per_s_excluding_generator": round(lines / (seconds - gen_s), 1) if seconds > gen_s else None,
        "cpu_seconds": round(cpu_s, 1),
        "per_cpu_s": round(lines / cpu_s, 1) if cpu_s else None,
        "curve": curve,
        "loadavg_before": load0,
        "loadavg_after": loadavg(),
    }


def stage_search(service: MemoryService, queries: QueryMaker, n: int, warmup: int) -> dict[str, Any]:
    """Warm search latency over n distinct queries (embedding included), by query kind."""
    for _, q in queries.make(warmup):
        service.search(q, limit=10, record_access=True)
    load0 = loadavg()
    timings: list[float] = []
    by_kind: dict[str, list[float]] = {}
    empty = 0
    todo = queries.make(n)
    cpu0 = cpu_seconds()
    for kind, q in todo:
        t0 = time.perf_counter()
        hits = service.search(q, limit=10, record_access=True)
        dt_s = time.perf_counter() - t0
        timings.append(dt_s)
        by_kind.setdefault(kind, []).append(dt_s)
        empty += not hits
    cpu_s = cpu_seconds() - cpu0
    out: dict[str, Any] = summary_ms(timings)
    out["cpu_ms_per_query"] = round(cpu_s * 1000 / n, 2)
    out["queries_without_hits"] = empty
    out["by_kind"] = {k: summary_ms(v) for k, v in sorted(by_kind.items())}
    out["loadavg_before"], out["loadavg_after"] = load0, loadavg()
    return out


def stage_breakdown(service: MemoryService, queries: QueryMaker, n: int) -> dict[str, Any]:
    """Time the parts of a search on their own (serially, on this thread; the engine overlaps the
    query embedding and the Chroma query with the FTS5 query on a helper thread)."""
    parts: dict[str, list[float]] = {k: [] for k in ("embed_query", "keyword_fts5", "vector_chroma",
                                                      "exact_cosines", "rows")}
    kw_hits: list[int] = []
    for _, q in queries.make(n):
        t0 = time.perf_counter()
        qvec = service.embedder.encode([q])[0]  # encode() has no cache
        t1 = time.perf_counter()
        found = dict(service.store.search.keyword(terms(q), Filters(), 100))
        t2 = time.perf_counter()
        sem = dict(service.vectors.query(qvec, 110))
        t3 = time.perf_counter()
        service.vector_sync.similarities(qvec, [i for i in found if i not in sem])  # SQLite copies (m004)
        t4 = time.perf_counter()
        service.store.get_many(set(found) | set(sem))
        t5 = time.perf_counter()
        for key, dt_ in zip(parts, (t1 - t0, t2 - t1, t3 - t2, t4 - t3, t5 - t4), strict=True):
            parts[key].append(dt_)
        kw_hits.append(len(found))
    out = {k: summary_ms(v) for k, v in parts.items()}
    out["keyword_candidates_mean"] = round(statistics.fmean(kw_hits), 1) if kw_hits else 0
    return out


def stage_freshness(service: MemoryService, gen: TextGenerator, rng: random.Random, trials: int,
                    used_queries: set[str]) -> dict[str, Any]:
    """add() one new memory, then find it by a unique keyword and by a paraphrase (no shared word)."""
    add_t: list[float] = []
    kw_total: list[float] = []
    sem_total: list[float] = []
    kw_search_t: list[float] = []
    sem_search_t: list[float] = []
    statuses: dict[str, int] = {}
    kw_found = sem_found = sem_only = 0
    sem_ranks: list[int] = []
    misses: list[dict[str, Any]] = []
    in_index = 0
    load0 = loadavg()
    for i in range(trials):
        template, paraphrases = FRESH_TOPICS[(i + rng.randrange(len(FRESH_TOPICS))) % len(FRESH_TOPICS)]
        token = gen.made_up_word()
        text = template.format(
            name=rng.choice(FIRST_NAMES), last=rng.choice(LAST_NAMES), weekday=rng.choice(WEEKDAYS),
            hour=rng.randint(1, 6), street=rng.choice(LAST_NAMES),
            code=f"{rng.choice('ABCDEFGH')}{rng.randint(100, 9999)}",
            seat=f"{rng.randint(1, 40)}{rng.choice('ABCDEF')}", token=token,
        )
        while True:
            sem_q = rng.choice(QUESTION_PREFIXES) + rng.choice(paraphrases)
            if sem_q not in used_queries:
                used_queries.add(sem_q)
                break
            # all phrasings of this topic used: make the query distinct with an extra stop word
            extra = ["then", "again", "now", "there", "here"]
            paraphrases = [p + " " + rng.choice(extra) for p in paraphrases]
        kw_q = f"{token} {rng.choice(['ref', 'note', 'the', 'about'])}"
        t0 = time.perf_counter()
        res = service.add(text, source="manual")
        t1 = time.perf_counter()
        statuses[res.status] = statuses.get(res.status, 0) + 1
        hits = service.search(kw_q, limit=10, record_access=True)
        t2 = time.perf_counter()
        ok_kw = any(h.memory.id == res.memory.id for h in hits)
        t3 = time.perf_counter()
        hits = service.search(sem_q, limit=10, record_access=True)
        t4 = time.perf_counter()
        ids = [h.memory.id for h in hits]
        ok_sem = res.memory.id in ids
        add_t.append(t1 - t0)
        kw_search_t.append(t2 - t1)
        sem_search_t.append(t4 - t3)
        if ok_kw:
            kw_found += 1
            kw_total.append((t1 - t0) + (t2 - t1))
        if ok_sem:
            sem_found += 1
            sem_total.append((t1 - t0) + (t4 - t3))
            rank = ids.index(res.memory.id)
            sem_ranks.append(rank + 1)
            if hits[rank].explain.get("keyword_bm25", 0) == 0:
                sem_only += 1
        # after the timing: is its vector stored (its SQLite copy, which searches read until the
        # vector reaches Chroma with the next PENDING_FLUSH, or Chroma's)?
        own = service.vector_sync.similarities(service.embedder.encode([res.memory.content])[0], [res.memory.id])
        in_index += own.get(res.memory.id, 0.0) > 0.9
        if not ok_sem and len(misses) < 10:  # where did it rank, and what beat it?
            deeper = [h.memory.id for h in service.search(sem_q, limit=100, record_access=False)]
            rank = deeper.index(res.memory.id) + 1 if res.memory.id in deeper else None
            misses.append({"query": sem_q, "status": res.status, "rank_in_100": rank,
                           "top_hit": hits[0].memory.content[:80] if hits else None})
    return {
        "trials": trials,
        "add": summary_ms(add_t),
        "add_status": statuses,
        "keyword": {"found": kw_found, "add_plus_search": summary_ms(kw_total),
                    "search_only": summary_ms(kw_search_t)},
        "semantic": {
            "found": sem_found, "found_without_keyword_match": sem_only, "vector_stored_on_return": in_index,
            "rank_mean": round(statistics.fmean(sem_ranks), 2) if sem_ranks else None,
            "add_plus_search": summary_ms(sem_total), "search_only": summary_ms(sem_search_t),
            "misses": misses,
        },
        "loadavg_before": load0,
        "loadavg_after": loadavg(),
    }


def run_timed(cmd: list[str], runs: int) -> dict[str, Any]:
    """Median wall time of a command run as fresh subprocesses; the last run's output is checked."""
    times: list[float] = []
    rc = 0
    stdout = stderr = ""
    for _ in range(runs):
        t0 = time.perf_counter()
        proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
        times.append(time.perf_counter() - t0)
        rc, stdout, stderr = proc.returncode, proc.stdout, proc.stderr
    out: dict[str, Any] = {"runs": runs, "median_s": round(statistics.median(times), 3),
                           "all_s": [round(t, 3) for t in times], "exit_code": rc}
    if rc != 0:
        out["stderr"] = stderr[-500:]
    out["_stdout"] = stdout
    return out


def stage_cli(cli: str, folder: Path, queries: QueryMaker, runs: int) -> dict[str, Any]:
    """Cold start of the CLI (fresh processes, OS file cache warm): search and --version."""
    load0 = loadavg()
    search_times: list[float] = []
    hits_found: list[int] = []
    codes: list[int] = []
    errors: list[str] = []
    for _, q in queries.make(runs):  # a different query each run
        res = run_timed([cli, "--data-dir", str(folder), "search", q, "--json"], 1)
        search_times.append(res["all_s"][0])
        codes.append(res["exit_code"])
        try:
            hits_found.append(len(json.loads(res["_stdout"].splitlines()[0])))
        except (ValueError, IndexError):
            hits_found.append(-1)
            errors.append(res.get("stderr", "")[-300:])
    version = run_timed([cli, "--version"], runs)
    version.pop("_stdout", None)
    floor = run_timed([sys.executable, "-c", "pass"], runs)
    floor.pop("_stdout", None)
    heavy = run_timed([sys.executable, "-c", "import sentence_transformers, chromadb"], runs)
    heavy.pop("_stdout", None)
    out: dict[str, Any] = {
        "search": {"runs": runs, "median_s": round(statistics.median(search_times), 3),
                   "all_s": [round(t, 3) for t in search_times], "exit_codes": codes, "hits": hits_found},
        "version": version,
        "python_startup": floor,
        "import_sentence_transformers_and_chromadb": heavy,
        "loadavg_before": load0,
        "loadavg_after": loadavg(),
    }
    if errors:
        out["search"]["errors"] = errors
    return out


def profile_searches(service: MemoryService, queries: QueryMaker, n: int, dest: Path) -> str:
    """cProfile n extra searches; writes a .prof file and returns the top functions by own time."""
    prof = cProfile.Profile()
    qs = [q for _, q in queries.make(n)]
    prof.enable()
    for q in qs:
        service.search(q, limit=10, record_access=True)
    prof.disable()
    prof.dump_stats(str(dest))
    buf = io.StringIO()
    stats = pstats.Stats(prof, stream=buf)
    stats.sort_stats("cumulative").print_stats(30)
    stats.sort_stats("tottime").print_stats(20)
    dest.with_suffix(".txt").write_text(buf.getvalue(), encoding="utf-8")
    return buf.getvalue()


# --------------------------------------------------------------------------------------------
# Main
# --------------------------------------------------------------------------------------------


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", default="1000,10000,100000",
                    help="comma-separated store sizes, built incrementally (default: 1000,10000,100000)")
    ap.add_argument("--out", type=Path, help="write all figures to this JSON file")
    ap.add_argument("--workdir", type=Path,
                    help="folder for the data folder (default: a temporary folder, removed afterwards)")
    ap.add_argument("--overwrite", action="store_true", help="delete WORKDIR/data if it exists")
    ap.add_argument("--reuse", action="store_true",
                    help="measure on the memories already in WORKDIR/data (sizes it holds are not imported again)")
    ap.add_argument("--seed", type=int, default=20261121)
    ap.add_argument("--queries", type=int, default=200, help="timed search queries per size (>= 200)")
    ap.add_argument("--warmup", type=int, default=20, help="untimed search queries before timing")
    ap.add_argument("--breakdown", type=int, default=50, help="queries for the per-component breakdown")
    ap.add_argument("--trials", type=int, default=30, help="add + find trials per size")
    ap.add_argument("--cli-runs", type=int, default=3)
    ap.add_argument("--cli", help="the desktop-memory executable (default: next to this Python)")
    ap.add_argument("--profile", type=Path, help="also cProfile extra searches at each size into this folder")
    ap.add_argument("--threads", type=int, help="embedding threads (default: the engine's)")
    ap.add_argument("--backend", choices=["onnx", "torch"], help="embedding runtime (default: the engine's)")
    args = ap.parse_args(argv)
    try:
        args.size_list = sorted({int(s.replace("_", "")) for s in args.sizes.split(",") if s.strip()})
    except ValueError:
        ap.error("--sizes must be comma-separated integers")
    if not args.size_list or args.size_list[0] < 1:
        ap.error("--sizes must be positive")
    return args


def _ms(d: dict[str, Any]) -> str:
    if d.get("p50_ms") is None:
        return "n/a"
    return f"{d['p50_ms']:.0f} / {d['p95_ms']:.0f}"


def print_summary(result: dict[str, Any]) -> None:
    """A human table of every figure against its target."""
    t = TARGETS

    def mark(ok: bool | None) -> str:
        return "" if ok is None else (" ok " if ok else "MISS")

    def within(d: dict[str, Any], limit: float, found: int, trials: int) -> bool:
        return found == trials and d["p95_ms"] is not None and d["p95_ms"] <= limit

    m = result["machine"]
    print()
    print(f"desktop-memory speed — {result['date']} — {m['platform']}, "
          f"{m['cpu_count']} CPU ({m['cpu_model']})")
    print(f"{'size':>8} | {'figure':<38} | {'value':>12} | {'target':>10} |")
    print("-" * 82)
    for st in result["stages"]:
        imp, srch, fr = st["import"], st["search"], st["freshness"]
        kw, sem, n = fr["keyword"], fr["semantic"], fr["trials"]
        rows: list[tuple[str, str, str, bool | None]] = [
            ("import memories/s", f"{imp['per_s']:,.0f}", f">= {t['import_per_s_min']:.0f}",
             imp["per_s"] >= t["import_per_s_min"]),
            ("search p50 (ms)", f"{srch['p50_ms']:.1f}", f"<= {t['search_p50_ms_max']:.0f}",
             srch["p50_ms"] <= t["search_p50_ms_max"]),
            ("search p95 (ms)", f"{srch['p95_ms']:.1f}", f"<= {t['search_p95_ms_max']:.0f}",
             srch["p95_ms"] <= t["search_p95_ms_max"]),
            ("add p50 / p95 (ms)", _ms(fr["add"]), "", None),
            (f"fresh keyword p50/p95 ms (found {kw['found']}/{n})", _ms(kw["add_plus_search"]),
             f"<= {t['fresh_keyword_ms_max']:.0f}",
             within(kw["add_plus_search"], t["fresh_keyword_ms_max"], kw["found"], n)),
            (f"fresh semantic p50/p95 ms (found {sem['found']}/{n})", _ms(sem["add_plus_search"]),
             f"<= {t['fresh_semantic_ms_max']:.0f}",
             within(sem["add_plus_search"], t["fresh_semantic_ms_max"], sem["found"], n)),
            ("peak RSS (MB)", f"{st['rss_mb']['peak_after_freshness']:,.0f}", "", None),
            ("data folder (MB)", f"{st['disk']['total_bytes'] / 1e6:,.1f}", "", None),
            ("CLI search cold start (s)", f"{st['cli']['search']['median_s']:.2f}", "", None),
            ("CLI --version (s)", f"{st['cli']['version']['median_s']:.2f}", "", None),
        ]
        for i, (name, value, target, ok) in enumerate(rows):
            print(f"{st['size'] if i == 0 else '':>8} | {name:<38} | {value:>12} | {target:>10} | {mark(ok)}")
        print(f"{'':>8} | load average after import / search: "
              f"{imp['loadavg_after']} / {srch['loadavg_after']}")
        print("-" * 82)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    tmp: str | None = None
    if args.workdir is None:
        tmp = tempfile.mkdtemp(prefix="dm-speed-")
        workdir = Path(tmp)
    else:
        workdir = args.workdir.resolve()
    folder = workdir / "data"
    if folder.exists() and any(folder.iterdir()):
        if not (args.overwrite or args.reuse):
            print(f"{folder} is not empty; use --overwrite, --reuse or another --workdir", file=sys.stderr)
            return 2
        if args.overwrite:
            shutil.rmtree(folder)
    folder.mkdir(parents=True, exist_ok=True)
    cli = args.cli or str(Path(sys.executable).parent / "desktop-memory")
    if args.profile:
        args.profile.mkdir(parents=True, exist_ok=True)

    result: dict[str, Any] = {
        "benchmark": "desktop-memory speed",
        "date": dt.datetime.now().astimezone().isoformat(timespec="seconds"),
        "machine": {
            "platform": platform.platform(), "cpu_count": os.cpu_count(), "cpu_model": cpu_model(),
            "mem_total_gb": mem_total_gb(), "python": sys.version.split()[0],
            "python_implementation": platform.python_implementation(),
        },
        "args": {"sizes": args.size_list, "seed": args.seed, "queries": args.queries, "warmup": args.warmup,
                 "trials": args.trials, "cli_runs": args.cli_runs, "data_dir": str(folder)},
        "targets": TARGETS,
        "loadavg_start": loadavg(),
        "stages": [],
    }
    corpus = Corpus(args.seed)
    queries = QueryMaker(args.seed + 1, corpus)
    fresh_rng = random.Random(args.seed + 2)
    fresh_queries: set[str] = set()
    result["vocabulary_size"] = len(corpus.gen.vocab)

    log(f"data folder {folder}; vocabulary {len(corpus.gen.vocab):,} word forms")
    t_load = time.perf_counter()
    embedder = Embedder(backend=args.backend, threads=args.threads)
    service = MemoryService(folder, embedder=embedder)
    embedder.encode(["load the model"])
    _ = service.vectors
    for _ in corpus.records(service.store.count()):  # --reuse: the queries sample what is stored
        pass
    result["startup"] = {"open_and_load_model_s": round(time.perf_counter() - t_load, 2),
                         "rss_mb_after_model": current_rss_mb(), "embedder": embedder.describe()}
    try:
        for size in args.size_list:
            st: dict[str, Any] = {"size": size}
            log(f"size {size:,}: importing from {service.store.count():,}")
            st["import"] = stage_import(service, corpus, size)
            st["memories"] = service.store.count()
            st["vectors"] = service.vectors.count()
            st["rss_mb"] = {"peak_after_import": peak_rss_mb(), "current_after_import": current_rss_mb()}
            log(f"size {size:,}: import {st['import']['per_s'] or 0:,.0f}/s; searching")
            st["search"] = stage_search(service, queries, args.queries, args.warmup)
            st["search_breakdown"] = stage_breakdown(service, queries, args.breakdown)
            st["rss_mb"]["peak_after_search"] = peak_rss_mb()
            log(f"size {size:,}: search p50 {st['search']['p50_ms']} ms p95 {st['search']['p95_ms']} ms; "
                "freshness")
            if args.profile:
                profile_searches(service, queries, args.queries, args.profile / f"search-{size}.prof")
            st["freshness"] = stage_freshness(service, corpus.gen, fresh_rng, args.trials, fresh_queries)
            st["rss_mb"]["peak_after_freshness"] = peak_rss_mb()
            st["rss_mb"]["current_after_freshness"] = current_rss_mb()
            service.close()  # the CLI needs the data folder lock
            st["disk"] = disk_usage(folder)
            log(f"size {size:,}: CLI cold start")
            st["cli"] = stage_cli(cli, folder, queries, args.cli_runs)
            t0 = time.perf_counter()
            service = MemoryService(folder, embedder=embedder)
            _ = service.vectors
            st["reopen_service_s"] = round(time.perf_counter() - t0, 3)
            result["stages"].append(st)
            if args.out:  # write as we go: a long run that dies still leaves its figures
                args.out.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    finally:
        service.close()
    result["loadavg_end"] = loadavg()
    result["peak_rss_mb"] = peak_rss_mb()
    if args.out:
        args.out.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
        log(f"wrote {args.out}")
    print_summary(result)
    if tmp:
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
