"""Turning whatever the person types into a safe FTS5 query and a set of filters.

Any text is a valid query: FTS5 operators, quotes, `?`, `*`, unicode and huge pastes are
reduced to plain word tokens, each quoted, joined with OR. Filter words (`source:clipboard`,
`app:firefox`, `after:2026-01-01`, `before:...`, `#tag`, `is:pinned`, `is:forgotten`, `entity:priya`,
`entity:person:priya`, `entity:place:`) are taken out of the text and become filters.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace

from .models import in_range, readable

MAX_TERMS = 48
_WORD = re.compile(r"\w+", re.UNICODE)
_TYPING = re.compile(r"(\w+)\*?\Z", re.UNICODE)  # the text ends in a word: it may be half typed
# a word with an inflection ending is finished; as a prefix FTS5 would stem it ("owed"* -> "ow"*)
_INFLECTED = re.compile(r"\w\w(ed|ing|ings|ly|ies|ness|ment|ments|ation|ations)\Z")
MIN_PREFIX = 3  # shorter last words stay whole words (a 1-2 letter prefix matches most of a large store)
_FILTER = re.compile(r"(?<!\S)(source|app|after|before|is|tag|entity):(\S+)|(?<!\S)#([\w\-/.]+)", re.UNICODE)

STOP_WORDS = frozenset(
    [
        "a",
        "about",
        "above",
        "after",
        "again",
        "against",
        "all",
        "am",
        "an",
        "and",
        "any",
        "are",
        "as",
        "at",
        "be",
        "because",
        "been",
        "before",
        "being",
        "below",
        "between",
        "both",
        "but",
        "by",
        "can",
        "could",
        "did",
        "do",
        "does",
        "doing",
        "down",
        "during",
        "each",
        "few",
        "for",
        "from",
        "further",
        "had",
        "has",
        "have",
        "having",
        "he",
        "her",
        "here",
        "hers",
        "herself",
        "him",
        "himself",
        "his",
        "how",
        "i",
        "if",
        "in",
        "into",
        "is",
        "it",
        "its",
        "itself",
        "just",
        "me",
        "more",
        "most",
        "my",
        "myself",
        "no",
        "nor",
        "not",
        "now",
        "of",
        "off",
        "on",
        "once",
        "only",
        "or",
        "other",
        "our",
        "ours",
        "ourselves",
        "out",
        "over",
        "own",
        "same",
        "she",
        "should",
        "so",
        "some",
        "such",
        "than",
        "that",
        "the",
        "their",
        "theirs",
        "them",
        "themselves",
        "then",
        "there",
        "these",
        "they",
        "this",
        "those",
        "through",
        "to",
        "too",
        "under",
        "until",
        "up",
        "very",
        "was",
        "we",
        "were",
        "what",
        "when",
        "where",
        "which",
        "while",
        "who",
        "whom",
        "why",
        "will",
        "with",
        "would",
        "you",
        "your",
        "yours",
        "yourself",
        "yourselves",
        "s",
        "t",
        "d",
        "ll",
        "m",
        "re",
        "ve",
        "y",
        "don",
        "doesn",
        "didn",
        "isn",
        "wasn",
        "weren",
        "hasn",
        "haven",
        "hadn",
        "won",
        "wouldn",
        "shouldn",
        "couldn",
        "mustn",
        "also",
        "get",
        "got",
        "really",
    ]
)


ENTITY_TYPES = ("person", "organisation", "product", "place", "datetime", "url", "email", "path", "code", "amount")


@dataclass(frozen=True)
class EntityFilter:
    """An enrichment entity the memory must have: its text contains `text` (any case), of `type` if set."""

    text: str = ""
    type: str = ""

    @classmethod
    def parse(cls, value: str) -> EntityFilter | None:
        """`priya`, `person:priya` or `person:` (any person); underscores stand for spaces."""
        kind, sep, rest = value.partition(":")
        if sep and kind.lower() in ENTITY_TYPES:
            found = cls(rest.replace("_", " ").strip().lower(), kind.lower())
        else:
            found = cls(value.replace("_", " ").strip().lower())
        return found if found.text or found.type else None


@dataclass(frozen=True)
class Filters:
    """Restrictions on which memories a search may return."""

    sources: tuple[str, ...] = ()
    apps: tuple[str, ...] = ()
    tags: tuple[str, ...] = ()
    after: dt.datetime | None = None
    before: dt.datetime | None = None
    pinned_only: bool = False
    include_forgotten: bool = False
    entities: tuple[EntityFilter, ...] = ()

    def merged(self, other: Filters) -> Filters:
        """Combine two filter sets (the other's settings add to or override ours)."""
        return replace(
            self,
            sources=self.sources + other.sources,
            apps=self.apps + other.apps,
            tags=self.tags + other.tags,
            after=other.after or self.after,
            before=other.before or self.before,
            pinned_only=self.pinned_only or other.pinned_only,
            include_forgotten=self.include_forgotten or other.include_forgotten,
            entities=self.entities + other.entities,
        )

    @property
    def active(self) -> bool:
        return bool(self.sources or self.apps or self.tags or self.after or self.before or self.pinned_only
                    or self.entities)


@dataclass(frozen=True)
class ParsedQuery:
    text: str
    filters: Filters = field(default_factory=Filters)


def parse_date(value: str, *, end_of_day: bool = False) -> dt.datetime | None:
    """Parse an ISO date or datetime; a bare date means its start (or end) in UTC.

    A moment outside the times a memory may carry (models.EARLIEST to LATEST) is moved to the nearest end of
    that range, which filters the same memories: after:0001-01-01 is after 1970, before:9999-12-31 before 3000.
    """
    value = value.strip()
    try:
        if len(value) == 10:
            day = dt.date.fromisoformat(value)
            moment = dt.datetime.combine(day, dt.time.max if end_of_day else dt.time.min, dt.UTC)
        else:
            moment = dt.datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    moment = moment if moment.tzinfo else moment.replace(tzinfo=dt.UTC)
    ts = moment.timestamp()
    return moment if in_range(ts) else dt.datetime.fromtimestamp(readable(ts), dt.UTC)


def parse(text: str) -> ParsedQuery:
    """Split filter words out of a typed query; unknown `x:y` words stay as text."""
    sources: list[str] = []
    apps: list[str] = []
    tags: list[str] = []
    after = before = None
    pinned = forgotten = False
    entities: list[EntityFilter] = []
    kept: list[str] = []
    last = 0
    for m in _FILTER.finditer(text):
        key, value, hashtag = m.group(1), m.group(2), m.group(3)
        used = True
        if hashtag:
            tags.append(hashtag.lower())
        elif key == "source":
            sources.append(value.lower())
        elif key == "app":
            apps.append(value.lower())
        elif key == "tag":
            tags.append(value.lower())
        elif key == "after" and (d := parse_date(value)):
            after = d
        elif key == "before" and (d := parse_date(value, end_of_day=False)):
            before = d
        elif key == "is" and value.lower() == "pinned":
            pinned = True
        elif key == "is" and value.lower() == "forgotten":
            forgotten = True
        elif key == "entity" and (ef := EntityFilter.parse(value)):
            entities.append(ef)
        else:
            used = False
        if used:
            kept.append(text[last : m.start()])
            last = m.end()
    kept.append(text[last:])
    filters = Filters(tuple(sources), tuple(apps), tuple(tags), after, before, pinned, forgotten, tuple(entities))
    return ParsedQuery(" ".join("".join(kept).split()), filters)


def terms(text: str, *, limit: int = MAX_TERMS, prefix_last: bool = False) -> list[str]:
    """Distinct lower-case word tokens without stop words (all tokens if only stop words).

    With `prefix_last`, a last word still being typed (the text ends in it, or in `word*`) of at
    least MIN_PREFIX characters comes back marked with a trailing `*`: `fts_or` makes it a prefix query.
    """
    seen: dict[str, None] = {}
    for tok in _WORD.findall(text.lower()):
        tok = tok.strip("_")
        if tok and tok not in seen:
            seen[tok] = None
    words = list(seen)
    content = [w for w in words if w not in STOP_WORDS]
    out = (content or words)[:limit]
    typing = _TYPING.search(text.lower()) if prefix_last else None
    last = typing.group(1).strip("_") if typing else ""
    if len(last) >= MIN_PREFIX and last in out and not _INFLECTED.search(last):
        out[out.index(last)] = last + "*"
    return out


def settle_prefix(toks: Sequence[str], known: Callable[[str], bool]) -> list[str]:
    """Terms from `terms(..., prefix_last=True)` with the prefix mark dropped from a word `known` whole.

    A word the store already holds is most likely finished ("owed"), and FTS5 stems a prefix before
    matching it (Porter makes "owed"* into "ow"*, matching "own", "owner"...); only a word the store
    does not hold ("lighthou", "Gonz") is still being typed.
    """
    return [t[:-1] if t.endswith("*") and len(t) > 1 and known(t[:-1]) else t for t in toks]


def fts_or(toks: Sequence[str]) -> str:
    """Terms from `terms` as quoted FTS5 strings joined by OR ('' for none); `word*` becomes `"word"*`."""
    return " OR ".join(_quoted(t) for t in toks)


def _quoted(tok: str) -> str:
    if tok.endswith("*") and len(tok) > 1:
        return '"' + tok[:-1].replace('"', '""') + '"*'
    return '"' + tok.replace('"', '""') + '"'
