"""Deterministic entity extraction: patterns for URLs, emails, paths, code, dates and amounts, plus
capitalised names typed with small word lists. Pure functions, standard library only.

Entity types: person, organisation, product, place, datetime, url, email, path, code, amount.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

TYPES = ("person", "organisation", "product", "place", "datetime", "url", "email", "path", "code", "amount")
PATTERN_TYPES = frozenset({"datetime", "url", "email", "path", "code", "amount"})
MAX_SCAN_CHARS = 20_000  # entities past this point of a long paste add little
MAX_ENTITIES = 40

_TYPE_ALIASES = {
    "person": "person", "people": "person", "name": "person", "per": "person", "human": "person",
    "organisation": "organisation", "organization": "organisation", "org": "organisation",
    "company": "organisation", "team": "organisation",
    "product": "product", "technology": "product", "tech": "product", "software": "product", "tool": "product",
    "product/technology": "product", "language": "product", "library": "product",
    "place": "place", "location": "place", "city": "place", "country": "place", "loc": "place",
    "date": "datetime", "time": "datetime", "datetime": "datetime", "date/time": "datetime",
    "url": "url", "link": "url", "email": "email", "e-mail": "email",
    "path": "path", "file": "path", "file path": "path", "filepath": "path",
    "code": "code", "identifier": "code", "code identifier": "code", "function": "code", "variable": "code",
    "amount": "amount", "money": "amount", "number": "amount", "quantity": "amount", "price": "amount",
}


@dataclass(frozen=True)
class Entity:
    text: str
    type: str

    def to_dict(self) -> dict[str, str]:
        return {"text": self.text, "type": self.type}


def normalise_type(raw: object) -> str | None:
    """One of TYPES for a loosely named type ("Organization", "file path"), else None."""
    return _TYPE_ALIASES.get(str(raw or "").strip().lower())


# -- patterns ---------------------------------------------------------------------------------
_URL = re.compile(r"\b(?:https?|ftp|s3|git|ssh|postgres(?:ql)?|mysql|redis|mongodb(?:\+srv)?|wss?)://[^\s<>\"'`]+"
                  r"|\bwww\.[\w-]+(?:\.[\w-]+)+[^\s<>\"'`]*", re.I)
_EMAIL = re.compile(r"\b[\w.+-]+@[\w-]+(?:\.[\w-]+)*\.[A-Za-z]{2,}\b")
_WIN_PATH = re.compile(r"\b[A-Za-z]:\\(?:[^\\\s:*?\"<>|]+\\)*[^\\\s:*?\"<>|]*")
_UNIX_PATH = re.compile(r"(?<![\w/.:])(?:~|\.{1,2})?/(?:[\w.@+-]+/)*[\w.@+-]+/?"
                        r"|(?<![\w/.:~])(?:[\w.@+-]+/)+[\w@+-]+\.\w{1,6}\b")
_FILE_NAME = re.compile(r"(?<![\w/.@-])[\w-]+\.(?:py|js|ts|tsx|jsx|json|jsonl|yaml|yml|toml|md|txt|csv|sql|sh|rs|go|"
                        r"java|kt|c|h|cpp|hpp|rb|php|html|css|ini|cfg|conf|log|lock|xml|pdf|docx|xlsx|pptx|png|"
                        r"jpg|gguf|env)\b")
_BACKTICK = re.compile(r"`([^`\n]{2,60})`")
_CALL = re.compile(r"\b([A-Za-z_][\w]*(?:\.[A-Za-z_]\w*)*)\(\)?")
_SNAKE = re.compile(r"\b[a-z][a-z0-9]*(?:_[a-z0-9]+)+\b|\b[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+\b")
_CAMEL = re.compile(r"\b[a-z]+(?:[A-Z][a-z0-9]+)+\b|\b[A-Z][a-z0-9]+(?:[A-Z][a-z0-9]+)+\b")
_DOTTED = re.compile(r"\b[A-Za-z_]\w*(?:\.[A-Za-z_]\w*){1,4}\b")
_CODE_ROOTS = frozenset(["self", "os", "sys", "np", "pd", "re", "json", "path", "torch", "this", "console", "window",
                         "document", "math", "time", "datetime", "logging", "subprocess", "asyncio", "app", "req",
                         "res", "config", "settings", "args", "kwargs", "obj", "ctx", "db", "cls"])
_TLDS = frozenset(["com", "org", "net", "io", "dev", "app", "co", "uk", "de", "fr", "eu", "ai", "edu", "gov"])

_MONTHS = (r"(?:Jan(?:uary)?|Feb(?:ruary)?|Mar(?:ch)?|Apr(?:il)?|May|June?|July?|Aug(?:ust)?|"
           r"Sep(?:t(?:ember)?)?|Oct(?:ober)?|Nov(?:ember)?|Dec(?:ember)?)")
_DAYS = r"(?:Mon|Tues|Wednes|Thurs|Fri|Satur|Sun)day|(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun)(?=\s+[A-Z][a-z]{2}\s+\d)"
# other languages: German, French, Spanish, Italian, Portuguese, Dutch, Polish
_MONTHS_INTL = (r"(?:Januar|Februar|März|Mai|Juni|Juli|Oktober|Dezember|janvier|février|mars|avril|mai|juin|juillet|"
                r"août|septembre|octobre|novembre|décembre|enero|febrero|marzo|abril|mayo|junio|julio|agosto|"
                r"septiembre|octubre|noviembre|diciembre|gennaio|febbraio|aprile|maggio|giugno|luglio|settembre|"
                r"ottobre|dicembre|janeiro|fevereiro|março|maio|junho|julho|setembro|outubro|dezembro|januari|"
                r"februari|maart|mei|augustus|stycznia|lutego|marca|kwietnia|maja|czerwca|lipca|sierpnia|"
                r"września|października|listopada|grudnia)")
_DAYS_INTL = (r"(?:Montag|Dienstag|Mittwoch|Donnerstag|Freitag|Samstag|Sonntag|lundi|mardi|mercredi|jeudi|"
              r"vendredi|samedi|dimanche|lunes|martes|miércoles|jueves|viernes|sábado|domingo|lunedì|martedì|"
              r"mercoledì|giovedì|venerdì|sabato|segunda-feira|terça-feira|quarta-feira|quinta-feira|sexta-feira|"
              r"maandag|dinsdag|woensdag|donderdag|vrijdag|zaterdag|zondag|morgen|demain|mañana|domani|amanhã)")
_TIME_INTL = r"(?:\s+(?:um|à|a las|alle|às|om|o)\s+\d{1,2}(?:[:h]\d{2})?(?:\s?Uhr)?)?"
_TIME = r"(?<![\d.:])\d{1,2}(?::\d{2}){1,2}(?:\s?[ap]\.?m\.?)?(?![\d.:])|\d{1,2}\s?[ap]\.?m\.?"
_DATE = re.compile(
    r"\b(?:"
    rf"\d{{4}}-\d{{2}}-\d{{2}}(?:[T ]\d{{2}}:\d{{2}}(?::\d{{2}})?(?:Z|[+-]\d{{2}}:?\d{{2}})?)?"
    r"|(?<![\d.])(?:\d{1,2}/\d{1,2}/\d{2,4}|\d{1,2}\.\d{1,2}\.\d{4})(?![.\d])"
    rf"|\d{{1,2}}\.?\s+(?:de\s+)?{_MONTHS_INTL}(?:\s+(?:de\s+)?\d{{4}})?"
    rf"|{_DAYS_INTL}{_TIME_INTL}"
    r"|the\s+\d{1,2}(?:st|nd|rd|th)"
    r"|(?:a|one|two)\s+(?:week|month|day)s?\s+(?:later|ago|before|after)"

    rf"|(?:(?:next|last|this)\s+)?(?:{_DAYS})(?:,?\s+{_MONTHS}\.?\s+\d{{1,2}}(?:st|nd|rd|th)?)?"
    rf"(?:\s+(?:at\s+)?(?:{_TIME})(?:\s+\d{{4}})?)?"
    rf"|\d{{1,2}}(?:st|nd|rd|th)?\s+(?:of\s+)?{_MONTHS}\.?(?:,?\s+\d{{4}})?"
    rf"|{_MONTHS}\.?\s+\d{{1,2}}(?:st|nd|rd|th)?(?:,?\s+\d{{4}})?(?![\d:])"
    rf"|{_MONTHS}\s+\d{{4}}"
    r"|Q[1-4]\s+\d{4}"
    r"|(?:today|tomorrow|yesterday|tonight)(?:\s+(?:at\s+)?(?:" + _TIME + r"))?"
    r"|(?:next|last|this)\s+(?:week|month|year|quarter)"
    r"|(?<![\d.:])\d{1,2}:\d{2}:\d{2}\s+\d{4}"
    rf"|(?:at\s+)?(?:{_TIME})"
    r"|(?:January|February|March|April|June|July|August|September|October|November|December)"
    r"|(?<![\w.,:/#-])(?:19[5-9]\d|20[0-3]\d)(?![\w.,:/%-])"
    r")(?!\w)",
    re.I,
)
_CURRENCY = r"(?:USD|EUR|GBP|CHF|JPY|CAD|AUD|INR|SEK|NOK|DKK|PLN|dollars?|euros?|pounds?|francs?|yen)"
_UNITS = (r"(?:%|percent|KB|MB|GB|TB|kB|MiB|GiB|TiB|ms|kg|g|mg|km|m|cm|mm|mi|lbs?|oz|l|ml|bpm|"
          r"tokens?|users?|requests?|rps|req/s|/s|fps|GHz|MHz|W|kW|kWh|°C|°F|seconds?|minutes?|hours?|days?|"
          r"weeks?|months?|years?)")
_AMOUNT = re.compile(
    r"(?:[$€£¥₹]\s?\d[\d,]*(?:\.\d+)?(?:\s?(?:k|K|m|M|bn|million|billion)\b)?"
    rf"|\b{_CURRENCY}\s?\d[\d,.]*(?:\s?(?:k|K|m|M|bn|million|billion)\b)?"
    r"|\b\d[\d.,]*\s?[€$£]"
    rf"|\b\d[\d,.]*\s?(?:k|K|m|M|bn|million|billion)?\s?{_CURRENCY}\b"
    rf"|\b\d[\d,]*(?:\.\d+)?\s?{_UNITS}(?![\w])"
    r")"
)

def _wordset(text: str) -> frozenset[str]:
    return frozenset(text.split())


# -- names ------------------------------------------------------------------------------------
_CAP_WORD = r"(?:(?:Dr|St|Mr|Mrs|Ms|Prof)\.|[A-Z][\w'’-]*[a-z0-9][\w'’-]*|[A-Z]{2,}[a-z]?|[A-Z]\.)"
_NAME_SEQ = re.compile(rf"{_CAP_WORD}(?:(?:[ \t]+|[ \t]+(?:of|van|von|der|&)[ \t]+){_CAP_WORD})*")
_ORG_SUFFIX = _wordset(
    "inc inc. ltd ltd. llc gmbh ag corp corp. co co. plc sa bv university college institute bank group labs "
    "foundation ministry agency council committee association society hospital school team department "
    "partners capital ventures studios systems technologies"
)
_PERSON_TITLE = _wordset("mr mr. mrs mrs. ms ms. dr dr. prof prof. sir madam")
_PLACE_WORDS = _wordset(
    "street st. avenue road square park station airport lake river mountain bay island city county"
)

FIRST_NAMES = _wordset(
    """aaron adam adrian ahmed aisha alex alexander alice alicia amanda amelia amir ana andrea andrew angela anna
    anne anthony antonio arjun ava barbara ben benjamin beth bob brian bruno carla carlos carmen caroline
    catherine charlie charlotte chen chloe chris christina christopher claire clara daniel david deborah dennis
    diana diego dmitri elena eli elizabeth ella emily emma eric erik ethan eva fatima felix fernando fiona
    francesca frank gabriel george grace greg hannah harry helen henry hiroshi hugo ian igor isabel isabella
    jack jacob james jan jane jasmine jason javier jean jennifer jessica jim joanna joe john jon jonas jordan
    jose joseph josh julia julian karen kate katie kevin kim klaus laura lee lena leo liam linda lisa lucas
    lucy luis luka maria mariana mark marta martin mary matt matthew max maya mei mia michael michelle miguel
    mike mohammed nadia nancy nate nathan nick nicole nina noah olivia omar oscar pablo patricia paul pedro
    peter priya rachel rahul raj ravi rebecca ricardo richard robert roberto rosa ryan sam samuel sara sarah
    sean sebastian sergei sofia sophie stefan stephanie steve susan tariq thomas tim tom tomas tony victor
    vikram william yuki yusuf zoe caroline melanie audrey andrew jolene deborah gina jon nate tim joanna
    maria john evan sam calvin dave"""
)
TECH_PHRASES = frozenset(["vs code", "visual studio", "app store", "play store", "google cloud", "google docs",
                          "google drive", "github actions", "gitlab ci", "sql server", "home assistant"])
# Lower-case mentions that are not also everyday words.
TECH_LOWER = _wordset("""nginx npm docker kubernetes postgres postgresql mysql redis kafka python javascript typescript
    sqlite github gitlab terraform ansible webpack numpy pandas pytest django flask fastapi ollama chromadb pyside6
    vscode neovim firefox chromium systemd kubectl homebrew""")
TECH = _wordset(
    """python java javascript typescript rust go golang kotlin swift ruby php perl scala haskell elixir c++ c#
    sql sqlite postgres postgresql mysql mariadb mongodb redis kafka rabbitmq elasticsearch chroma chromadb
    docker kubernetes k8s helm terraform ansible nginx apache linux debian ubuntu fedora windows macos ios
    android git github gitlab bitbucket jira confluence slack teams zoom figma notion vscode vim emacs
    react vue angular svelte django flask fastapi node node.js nodejs npm pip pytest numpy pandas pytorch
    torch tensorflow keras llama llama.cpp ollama openai chatgpt gpt-4 claude gemini mistral qwen smollm2
    minilm aws s3 ec2 lambda gcp azure cloudflare vercel heroku firefox chrome safari excel word powerpoint
    outlook gmail whatsapp telegram signal iphone ipad macbook pixel pyside6 qt gtk apsw fts5 json
    yaml toml graphql grpc http https ssh tls oauth jwt webpack vite bash zsh powershell grafana prometheus
    sentry jenkins circleci postgis airflow spark hadoop snowflake bigquery tableau
    wordpress neovim kindle xcode intellij pycharm homebrew jupyter colab anki obsidian"""
)
PLACES = _wordset(
    """london paris berlin madrid rome lisbon dublin amsterdam brussels vienna zurich geneva munich hamburg
    frankfurt barcelona milan prague warsaw stockholm oslo copenhagen helsinki athens istanbul moscow kyiv
    tokyo osaka kyoto seoul beijing shanghai hong kong singapore bangkok delhi mumbai bangalore sydney
    melbourne auckland toronto vancouver montreal boston chicago seattle austin denver miami atlanta dallas
    houston portland phoenix york jersey francisco angeles diego washington california texas florida
    england scotland wales ireland france germany spain italy portugal netherlands belgium switzerland austria
    poland sweden norway denmark finland greece turkey russia ukraine japan china india korea brazil mexico
    canada australia argentina chile peru colombia egypt nigeria kenya africa europe asia america usa uk
    lyon marseille nice seville valencia porto krakow tallinn riga vilnius budapest bucharest sofia belgrade
    cape town nairobi lagos cairo dubai"""
)
ORGS = _wordset(
    """google microsoft apple amazon meta facebook netflix ibm intel amd nvidia oracle salesforce adobe
    spotify uber airbnb tesla samsung sony siemens bosch sap mozilla anthropic deepmind huggingface
    nasa who unesco un eu nato mit stanford harvard oxford cambridge acme stripe paypal shopify datadog
    hetzner ikea"""
)
# Capitalised words that start sentences or headings but name nothing.
COMMON_CAPS = _wordset(
    """a an the this that these those it its i i'm i've i'd we we're you your he she they our my me us
    and or but so if then when while because as at in on of for to from by with without about after before
    also just please thanks thank hi hello hey dear ok okay yes no not all any some each every here there
    what which who why how where note notes todo to-do fixme done decision decisions action meeting agenda
    summary update re fw fwd subject from cc bcc sent date error warning info debug traceback file line
    step steps run use see let lets let's can could should would will shall may might must do does did
    is are was were be been have has had get got make made new next last first second third today
    tomorrow yesterday good great nice sure sorry maybe well oh wow also remember remind reminder call
    buy pay send check fix add remove update install ask tell review idea ideas question questions answer
    important urgent fyi asap eta tbd n/a one two three four five monday tuesday wednesday thursday friday
    saturday sunday january february march april june july august september october november december
    morning evening afternoon night week month year team project task issue bug feature release version
    hotel restaurant meeting call email message chat link password key token server client user admin
    i'll i’ll i’m we'll we’ll you'll invoice order budget select where group insert join limit null values
    into create table filesystem size used avail mounted impl fn pub struct enum trait"""
)


def _add(found: list[tuple[int, int, str, str]], start: int, end: int, text: str, kind: str) -> None:
    found.append((start, end, text, kind))


def _strip_trailing(text: str) -> str:
    while text and text[-1] in ".,;:!?)]}'\"":
        if text[-1] == ")" and text.count("(") >= text.count(")"):
            break
        text = text[:-1]
    return text


def _pattern_spans(text: str) -> list[tuple[int, int, str, str]]:
    found: list[tuple[int, int, str, str]] = []
    for m in _URL.finditer(text):
        t = _strip_trailing(m.group())
        _add(found, m.start(), m.start() + len(t), t, "url")
    for m in _EMAIL.finditer(text):
        _add(found, m.start(), m.end(), m.group(), "email")
    for rx in (_WIN_PATH, _UNIX_PATH, _FILE_NAME):
        for m in rx.finditer(text):
            t = _strip_trailing(m.group())
            if len(t) > 2 and not t.isdigit() and not re.fullmatch(r"[\d/.:-]+", t):
                _add(found, m.start(), m.start() + len(t), t, "path")
    for m in _BACKTICK.finditer(text):
        inner = m.group(1).strip()
        if inner and not inner.startswith(("http", "/", "~")):
            _add(found, m.start(1), m.end(1), inner, "code")
    for m in _CALL.finditer(text):
        if m.group().endswith("(") or m.group().endswith("()"):
            name = m.group(1)
            if name.lower() not in COMMON_CAPS and (len(name) > 2 or "." in name):
                _add(found, m.start(1), m.end(1), name + "()" if m.group().endswith("()") else name, "code")
    for rx in (_SNAKE, _CAMEL):
        for m in rx.finditer(text):
            if m.group().lower() not in TECH and m.group().lower() not in ORGS:
                _add(found, m.start(), m.end(), m.group(), "code")
    for m in re.finditer(r"(?<![\w.-])[a-z][a-z0-9.]+(?![\w-])", text):
        if m.group() in TECH_LOWER:
            _add(found, m.start(), m.end(), m.group(), "product")
    for m in _DOTTED.finditer(text):
        t = m.group()
        parts = t.split(".")
        if parts[-1].lower() in _TLDS or len(parts[-1]) < 2:
            continue
        if "_" in t or parts[0] in _CODE_ROOTS or any(re.search(r"[a-z][A-Z]", p) for p in parts):
            _add(found, m.start(), m.end(), t, "code")
    for m in _DATE.finditer(text):
        t = m.group().strip()
        if t.lower().startswith("at "):
            t = t[3:]
        if t.endswith(".") and not t.lower().endswith(".m."):
            t = t.rstrip(".")
        if re.fullmatch(r"\d{1,2}", t):
            continue
        start = m.start() + m.group().find(t)
        _add(found, start, start + len(t), t, "datetime")
    for m in _AMOUNT.finditer(text):
        t = m.group().strip()
        if re.fullmatch(r"\d+\s?m", t):  # "5 m" is too often minutes or noise
            continue
        _add(found, m.start(), m.start() + len(t), t, "amount")
    return found


_PERSON_VERB = re.compile(r"\s+(?:is|was|said|says|will|wants|thinks|asked|told|has|had|and I|can|could)\b|'s\b")


_SPEECH = re.compile(r":\s.{0,40}\b(?:I|I'm|I'll|you|we|my|me|our)\b")


def _type_name(words: list[str], sentence_start: bool, before: str, after: str) -> str | None:
    lower = [w.lower().strip(".'’") for w in words]
    joined = " ".join(lower)
    if joined in TECH or joined in TECH_PHRASES or any(joined.startswith(p) for p in TECH_PHRASES):
        return "product"
    if joined in ORGS or lower[-1] in _ORG_SUFFIX or lower[0] in ORGS:
        return "organisation"
    if joined in PLACES or all(w in PLACES for w in lower) or lower[-1] in _PLACE_WORDS:
        return "place"
    if lower[0] in _PERSON_TITLE:
        return "person"
    if lower[0] in FIRST_NAMES:
        return "person"
    if any(w in TECH for w in lower):
        return "product"
    if len(words) == 1 and words[0].isupper() and words[0].isalpha() and 2 <= len(words[0]) <= 6:
        return "organisation"
    if len(words) > 3 and not any(w in FIRST_NAMES or w in TECH or w in PLACES for w in lower):
        return None  # a heading or a title in capitals: too unsure
    if sentence_start and len(words) == 1 and (_PERSON_VERB.match(after) or _SPEECH.match(after)):
        return "person"  # "Marcus is out", "Jake: did you see ..." in a chat
    if sentence_start and len(words) == 1:
        return None  # a capitalised first word of a sentence says nothing on its own
    prev = before.rstrip().rsplit(" ", 1)[-1].lower() if before.strip() else ""
    if prev in ("in", "to", "from", "near", "visiting", "visit", "around"):
        return "place"
    if prev in ("at", "for", "joined", "by") and len(words) > 1:
        return "organisation"
    if prev in ("using", "use", "install", "installed", "upgrade", "run", "via"):
        return "product"
    if len(words) > 1 and any(w.isupper() and len(w) > 1 for w in words):
        return "organisation"
    return "person" if len(words) <= 3 else "organisation"


def _names(text: str, covered: bytearray) -> list[tuple[int, int, str, str]]:
    found: list[tuple[int, int, str, str]] = []
    for m in _NAME_SEQ.finditer(text):
        start, end = m.start(), m.end()
        if any(covered[start:end]):
            continue
        words = m.group().split()
        # drop leading/trailing filler words ("The", "Hi", connectors)
        while words and words[0].lower().strip(".,'’") in COMMON_CAPS:
            start += text[start:end].find(words[0]) + len(words[0])
            start += len(text[start:end]) - len(text[start:end].lstrip())
            words = words[1:]
        while words and (words[-1].lower() in ("of", "van", "von", "der", "&")
                         or words[-1].lower().strip(".,'’") in COMMON_CAPS):
            words = words[:-1]
        if not words:
            continue
        name = " ".join(words).rstrip("'’s").rstrip("'’") if words[-1].endswith(("'s", "’s")) else " ".join(words)
        name = name.strip(".,")
        if len(name) < 2 or name.lower() in COMMON_CAPS or re.fullmatch(r"[A-Z]\.?", name):
            continue
        if text[start + len(name):start + len(name) + 1] in ("=", "(", "_"):
            continue  # ENV=staging, Foo(): code, found by the patterns or not at all
        before = text[max(0, start - 30):start]
        sentence_start = start == 0 or bool(re.search(r"(?:[.!?:]\s+|\n\s*|^\s*[-*>•]\s*|[\"“(]\s*)$", before))
        kind = _type_name(name.split(), sentence_start, before, text[start + len(name):start + len(name) + 50])
        if kind:
            found.append((start, start + len(name), name, kind))
    return found


def extract(text: str) -> list[Entity]:
    """Typed entities found by patterns and name rules, in order of appearance, without repeats."""
    text = text[:MAX_SCAN_CHARS]
    spans = _pattern_spans(text)
    priority = {"url": 0, "email": 1, "path": 2, "datetime": 3, "amount": 4, "code": 5, "product": 6}
    spans.sort(key=lambda s: (priority[s[3]], -(s[1] - s[0]), s[0]))
    kept: list[tuple[int, int, str, str]] = []
    covered = bytearray(len(text) + 1)
    for span in spans:
        if not any(covered[span[0]:span[1]]):
            kept.append(span)
            covered[span[0]:span[1]] = b"\x01" * (span[1] - span[0])
    kept += _names(text, covered)
    kept.sort()
    return dedupe(Entity(t, k) for _, _, t, k in kept)[:MAX_ENTITIES]


def dedupe(entities: Iterable[Entity]) -> list[Entity]:
    """First occurrence of each entity text (case-insensitive) wins."""
    seen: set[str] = set()
    out: list[Entity] = []
    for e in entities:
        key = " ".join(e.text.lower().split())
        if key and key not in seen:
            seen.add(key)
            out.append(e)
    return out


def merge(deterministic: list[Entity], model: Iterable[Entity], source_text: str) -> list[Entity]:
    """Pattern entities keep their types; the model may add names it found in the text and retype
    capitalised names the word lists could only guess. Entities not in the text are dropped."""
    haystack = source_text.lower()
    by_key = {" ".join(e.text.lower().split()): e for e in deterministic}
    out = list(deterministic)
    for e in model:
        text = " ".join(e.text.split()).strip(" .,;:\"'")
        key = text.lower()
        if not text or len(text.split()) > 4 or key not in haystack or key in COMMON_CAPS:
            continue
        if any(ch in text for ch in ":;()[]?!,<>\n"):
            continue  # a copied phrase or sentence, not a name
        if key in by_key:
            known = by_key[key]
            if known.type not in PATTERN_TYPES and e.type not in PATTERN_TYPES and known.type != e.type:
                out[out.index(known)] = Entity(known.text, e.type) if _trust_model_type(known, e) else known
            continue
        if e.type in PATTERN_TYPES:
            continue  # the patterns are better at these; a miss there is usually model noise
        if not any(ch.isupper() for ch in text) or any(key in k or k in key for k in by_key):
            continue
        by_key[key] = e
        out.append(Entity(text, e.type))
    return out[:MAX_ENTITIES]


def _trust_model_type(known: Entity, model: Entity) -> bool:
    """Word lists win when they are sure (a listed tech, place, org or first name)."""
    lower = known.text.lower()
    first = lower.split()[0]
    listed = lower in TECH or lower in PLACES or lower in ORGS or first in FIRST_NAMES
    return not listed
