"""What kind of thing a copied text is: a shell command, a link, code (and its language), YAML, JSON, a stack
trace, a list, an email, chat messages, a postal address, a contact, else a note.

Plain text rules, no Qt and no model: the search window draws an icon per kind, the CLI and the MCP server can
say what a memory is. Best effort and cheap (a few regular expressions over at most SCAN_CHARS of the text);
when in doubt, "note" (prose that mentions git, an email address in a sentence, German or Chinese text).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from itertools import islice

KINDS = ("command", "link", "code", "yaml", "json", "trace", "list", "email", "chat", "address", "person",
         "note")
LANGUAGES = ("python", "javascript", "typescript", "sql", "shell", "rust", "go", "java", "c", "cpp", "html",
             "xml", "css")
SCAN_CHARS = 4_000  # of a text, what is read to tell its kind
SCAN_LINES = 60
LANGUAGE_CHARS = 1_500  # of a text, what its language is guessed from


@dataclass(frozen=True)
class Kind:
    """A text's kind (one of KINDS) and, for code, its language (one of LANGUAGES) when it can be told."""

    name: str
    language: str | None = None


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


# -- commands --------------------------------------------------------------------------------------------------
# programs that are rarely an English word: the first word of a line is enough (with a plausible second word)
_PROGRAMS = _words("""
rsync ssh scp sftp git curl wget docker docker-compose podman kubectl helm minikube npm npx yarn pnpm pip pip3 pipx
python python3 node deno bun cargo rustc rustup go gofmt apt apt-get dpkg brew dnf yum pacman zypper snap flatpak
systemctl journalctl sudo doas ls cp mv rm mkdir rmdir chmod chown chgrp ln tar gzip gunzip zip unzip 7z grep egrep
rg sed awk xargs psql mysql sqlite3 redis-cli mongosh terraform ansible ansible-playbook vagrant gcloud aws az
ffmpeg ffprobe magick uv poetry pytest tox mvn gradle dotnet javac openssl gpg ssh-keygen ssh-copy-id tmux vim
nvim nano emacs crontab du df htop jq yq nmap dig nslookup traceroute ip ifconfig netstat ss lsof chmod export
source alias unset env pwd whoami uname lsblk mount umount fdisk mkfs dd tee wc sort uniq diff patch make cmake
ninja gcc g++ clang clang++ cd cat echo printf touch head tail less more find kill killall pkill ps top ping nc
telnet which type watch time nohup screen code code-insiders xdg-open open pbcopy pbpaste xclip xsel pandoc hugo
gh glab heroku fly vercel netlify firebase supabase flutter dart swift xcodebuild adb fastboot conda mamba
virtualenv ruby gem bundle rails rake php composer artisan perl lua java kubectx kubens k9s stern skaffold
""")
# programs that are also common words ("make sure", "find out", "open the door"): need a shell-looking argument
_WORDY = _words("make find cat echo touch head tail less more kill top ping watch time type open code source "
                   "export env which sort diff patch screen alias go java ruby perl swift dart bundle composer "
                   "fly open cd ls ip ss dig nc tee wc du df ps")
_ENGLISH = _words("""
a an the is are was were be been being am i you he she it we they this that these those my your his her its our
their and or but if then so to of in on at by for with about as into from than too very not no can could should
would will shall may might must do does did has have had just also really always never often sometimes
""")
_PROMPT = re.compile(r"^\s*(?:\$|#|>|%|❯|➜)\s+")
_ENV_ASSIGN = re.compile(r"^[A-Z_][A-Z0-9_]*=\S*$")
_SHELL_ARG = re.compile(
    r"(?:^-{1,2}[\w?]|^[~./]|/|=|^\||^&&$|^\|\|$|^>>?$|^<$|^2>|\$\(|\$\{?\w|^\w[\w.-]*@[\w.-]+:|\*|"
    r"^HEAD|^\d+(?:\.\d+){3}(?::\d+)?$|:\d{2,5}$|\.(?:sh|py|js|ts|json|ya?ml|toml|txt|tar|gz|zip|conf|cfg|env|"
    r"lock|log|sql|csv|md|html|deb|rpm|iso|img)$)")


def _command_line(line: str) -> bool:
    """One line that reads as a shell command: a known program first, shell-looking arguments, not a sentence."""
    text = _PROMPT.sub("", line.strip(), count=1)
    text = text.split(" #", 1)[0].strip()  # a trailing comment
    words = text.split()
    while words and _ENV_ASSIGN.match(words[0]):
        words = words[1:]
    if words and words[0] in ("sudo", "doas", "time", "nohup", "env", "exec") and len(words) > 1:
        words = words[1:]
    if not words:
        return False
    first = words[0]
    program = first.rsplit("/", 1)[-1] if first.startswith(("./", "/", "~/")) else first
    args = words[1:]
    if len(args) > 40 or (program not in _PROGRAMS and not first.startswith(("./", "/", "~/"))):
        return False
    shellish = sum(1 for w in args if _SHELL_ARG.search(w))
    if first.startswith(("./", "/usr/", "/bin/", "/opt/", "~/")) and not first.endswith((".", ",")):
        return bool(args) or "." not in program
    if program not in _PROGRAMS:
        return False
    if text.endswith((".", "!", "?")) and shellish == 0:
        return False  # "git is great."
    if args and args[0].lower() in _ENGLISH:
        return False  # "git is a version control system", "make sure you..."
    if program in _WORDY and shellish == 0 and not (program in ("make", "cd", "ls", "cat") and len(args) <= 1):
        return False  # "find my keys", "open the window" (but "make", "make test", "ls", "cd src")
    prose = sum(1 for w in args if w.lower() in _ENGLISH)
    if prose >= 3 and prose * 3 >= len(args) and shellish < 2:
        return False
    return len(args) <= 3 or shellish > 0 or prose == 0


def _is_command(lines: list[str]) -> bool:
    code_lines = [ln for ln in lines if not ln.lstrip().startswith("#") or _PROMPT.match(ln)]
    if not code_lines or len(code_lines) > 12:
        return False
    joined: list[str] = []  # lines ending in a backslash go on
    for ln in code_lines:
        if joined and joined[-1].endswith("\\"):
            joined[-1] = joined[-1][:-1] + " " + ln.strip()
        else:
            joined.append(ln)
    heads = [ln for ln in joined if not ln.startswith((" ", "\t")) or _PROMPT.match(ln)]
    if not heads:
        return False
    prompted = sum(1 for ln in heads if _PROMPT.match(ln) and not ln.lstrip().startswith("#"))
    commands = sum(1 for ln in heads if _command_line(ln))
    if prompted and commands:
        return True  # a terminal copy: prompts, commands and their output
    return commands == len(heads)


# -- links, JSON, YAML, traces ---------------------------------------------------------------------------------
_URL = re.compile(r"^(?:https?://|ftp://|www\.)[^\s<>\"]+$", re.IGNORECASE)
_URL_START = re.compile(r"^(?:https?://|www\.)\S+(?:\s+[-–—|:]\s+.{0,160})?$", re.IGNORECASE)
_YAML_KEY = re.compile(r"^(\s*)(?:-\s+)?[\"']?[\w.$/@-]+[\"']?:(?:\s+\S.*|\s*)$")
_YAML_ITEM = re.compile(r"^\s*-\s+\S")
_TRACE_PY = re.compile(r"^Traceback \(most recent call last\):|^\s*File \"[^\"]+\", line \d+", re.MULTILINE)
_TRACE_FRAME = re.compile(
    r"^\s*at\s+(?:[\w$.<>\[\]/ ]+\s+)?\(?(?:[\w$.<>/\\:-]+\.(?:java|kt|scala|js|mjs|cjs|ts|tsx|jsx)|native|"
    r"Unknown Source|<anonymous>|node:[\w/]+)(?::\d+){0,2}\)?\s*$|^\s*at\s+[\w$.<>]+\([\w$.]+\.java:\d+\)",
    re.MULTILINE)
_TRACE_HEAD = re.compile(r"^(?:Exception in thread|Caused by:|[\w.$]+(?:Error|Exception)(?::|$)|panic:|goroutine \d+)",
                         re.MULTILINE)
_RUST_TRACE = re.compile(r"^thread '[^']+' panicked at", re.MULTILINE)


def _is_json(text: str) -> bool:
    if not ((text.startswith("{") and text.endswith("}")) or (text.startswith("[") and text.endswith("]"))):
        return text.startswith(("{\"", "[{\"", "[\n", "{\n")) and len(text) >= SCAN_CHARS and "\":" in text
    try:
        value = json.loads(text)
    except ValueError:
        return False
    return isinstance(value, dict | list) and bool(value)


def _is_yaml(lines: list[str]) -> bool:
    body = [ln for ln in lines if not ln.lstrip().startswith("#")]
    if body and body[0].strip() == "---":  # front matter or a YAML document
        end = next((i for i, ln in enumerate(body[1:], 1) if ln.strip() in ("---", "...")), len(body))
        head = body[1:end]
        found = sum(1 for ln in head if _YAML_KEY.match(ln))
        after = body[end + 1:]
        return found >= 1 and found * 2 >= len(head) and len(after) <= len(head)
    if len(body) < 2:
        return False
    keys = [m for ln in body if (m := _YAML_KEY.match(ln))]
    items = sum(1 for ln in body if _YAML_ITEM.match(ln) and not _YAML_KEY.match(ln))
    if len(keys) < 2 or (len(keys) + items) * 10 < len(body) * 8:
        return False
    nested = any(m.group(1) for m in keys) or items > 0
    bare = sum(1 for ln in body if ln.rstrip().endswith(":"))  # "server:" opening a block
    sentences = sum(1 for ln in body if ln.rstrip().endswith((".", "!", "?")) and len(ln.split()) > 4)
    return (nested or bare > 0) and sentences * 3 < len(body)


def _is_trace(text: str, lines: list[str]) -> bool:
    if "Traceback (most recent call last):" in text or _RUST_TRACE.search(text):
        return True
    frames = len(_TRACE_FRAME.findall(text)) + len(_TRACE_PY.findall(text))
    return frames >= 2 or (frames >= 1 and bool(_TRACE_HEAD.search(text)) and len(lines) <= 40)


# -- email, chat, contacts, addresses, lists -------------------------------------------------------------------
_EMAIL_HEAD = re.compile(r"^(from|to|subject|cc|bcc|date|reply-to|von|an|betreff|de|à|objet|发件人|收件人|主题):\s",
                         re.IGNORECASE | re.MULTILINE)
_EMAIL_ADDR = re.compile(r"(?<![\w.+-])[\w.+-]+@[\w-]+(?:\.[\w-]+)*\.[a-z]{2,}\b(?!:)", re.IGNORECASE)
_GREETING = re.compile(r"^(hi|hello|hey|dear|hallo|liebe[rs]?|sehr geehrte[rs]?|bonjour|ciao|hola)\b[^\n]{0,40},?\s*$",
                       re.IGNORECASE | re.MULTILINE)
_SIGN_OFF = re.compile(r"^(best|regards|kind regards|thanks|cheers|viele grüße|beste grüße|mit freundlichen "
                       r"grüßen|lg|vg|cordialement|saluti)\b.{0,30}$", re.IGNORECASE | re.MULTILINE)
_CHAT_STAMP = re.compile(  # [09:41] alex: / 09:41 alex: / [12.11.26, 09:41:12] Alex: / 12/11/2026, 09:41 - Alex:
    r"^\s*\[?(?:\d{1,4}[./-]\d{1,2}[./-]\d{1,4},?\s+)?\d{1,2}:\d{2}(?::\d{2})?(?:\s?[AP]M)?\]?\s*(?:-\s*)?"
    r"[^\n:]{1,32}?:\s", re.MULTILINE | re.IGNORECASE)
_CHAT_NAME_TIME = re.compile(r"^\s*[\w .'-]{1,30}\s+(?:\[\d{1,2}:\d{2}\]|\d{1,2}:\d{2}(?:\s?[AP]M)?)\s*$",
                             re.MULTILINE | re.IGNORECASE)
_IRC = re.compile(r"^\s*<[\w.|-]{1,20}>\s+\S", re.MULTILINE)
_SPEAKER = re.compile(
    r"^\s*([A-Z][\w.'-]{0,20}(?: [A-Z][\w.'-]{0,20})?|[\u4e00-\u9fff]{1,4}|me|ich|我)\s?[:：]\s*(\S.*)$", re.MULTILINE)
_PHONE = re.compile(r"(?:\+|\b00)\d[\d ()/.-]{6,}\d|\(\d{3}\)\s?\d{3}-\d{4}|\b0\d{2,4}[ /-]\d{3,}[ -]?\d{0,5}\b")
_STREET = re.compile(
    r"(?:^|\n)\s*(?:\d{1,5}[a-z]?\s+[\w .'-]{2,40}\b(?:street|st\.?|avenue|ave\.?|road|rd\.?|lane|ln\.?|drive|dr\.?|"
    r"boulevard|blvd\.?|way|place|pl\.?|court|ct\.?|square|sq\.?|terrace|close|crescent)\b|"
    r"[\w.'-]*(?:straße|strasse|str\.|weg|gasse|allee|platz|ring|damm|ufer)\s+\d{1,4}\s*[a-z]?\b|"
    r"(?:via|viale|piazza|corso|rue|avenue|boulevard|calle|avenida|plaza|rua|ulica|straat)\s+[\w .'-]{2,40}?,?\s*"
    r"\d{1,4}\b|[\w.'-]+(?:straat|laan|gracht|plein|vej|gatan|gate|katu)\s+\d{1,4}\b)",
    re.IGNORECASE)
_POSTCODE_CITY = re.compile(
    r"\b(?:[A-Z]{1,2}-?)?\d{4,5}\s+[A-ZÄÖÜÉÈ][\w.'-]+|\b[A-Z]{1,2}\d[A-Z\d]?\s\d[A-Z]{2}\b|"
    r"\b[A-Z][\w .'-]+,\s*[A-Z]{2}\s+\d{5}(?:-\d{4})?\b|\b\d{3}-\d{4}\b\s+[\w]+|\b\d{2}-\d{3}\s+[A-Z]")
_LIST_ITEM = re.compile(r"^\s*(?:[-*•◦▪‣–+]\s+|[-*]\s*\[[ xX]\]\s*|\d{1,3}[.)]\s+|[a-z][.)]\s+|☐|☑|✓|✔|✗)\s*\S")
_ANY_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af]")


def _is_email(text: str) -> bool:
    heads = {m.group(1).lower() for ln in text.splitlines()[:40] if (m := _EMAIL_HEAD.match(ln))}
    if len(heads) >= 2 or (heads and _EMAIL_ADDR.search(text)):
        return True
    return bool(_GREETING.search(text) and _SIGN_OFF.search(text) and len(text) > 60)


def _is_chat(lines: list[str]) -> bool:
    text = "\n".join(lines)
    if len(_CHAT_STAMP.findall(text)) >= 2 or len(_IRC.findall(text)) >= 2:
        return True
    if len(_CHAT_NAME_TIME.findall(text)) >= 2 and len(lines) >= 4:
        return True
    speakers = [m.group(1).lower() for ln in lines if (m := _SPEAKER.match(ln)) and not m.group(2).startswith("//")]
    if len(speakers) < 3 or len(speakers) * 10 < len(lines) * 6:
        return False
    names = set(speakers)
    changes = sum(1 for a, b in zip(speakers, speakers[1:], strict=False) if a != b)
    return 2 <= len(names) <= 6 and changes >= 2 and len(names) < len(speakers)


def _is_list(lines: list[str]) -> bool:
    items = sum(1 for ln in lines if _LIST_ITEM.match(ln))
    rest = lines[1:] if lines and not _LIST_ITEM.match(lines[0]) else lines  # a heading line
    return items >= 2 and items * 10 >= len(rest) * 6


def _contact_or_address(text: str, lines: list[str]) -> str | None:
    if text.upper().startswith("BEGIN:VCARD"):
        return "person"
    if len(text) > 400 or len(lines) > 8 or any(len(ln) > 90 for ln in lines):
        return None
    addresses = _EMAIL_ADDR.findall(text)
    phone = bool(_PHONE.search(text))
    street = bool(_STREET.search(text))
    city = bool(_POSTCODE_CITY.search(text))
    sentence = any(ln.rstrip().endswith((".", "!", "?")) and len(ln.split()) > 5 for ln in lines)
    if sentence:
        return None
    if street and city:
        return "person" if (phone or addresses) else "address"
    if len(lines) >= 2 and (phone or addresses) and len(lines) <= 6:
        labelled = sum(1 for ln in lines if _PHONE.search(ln) or _EMAIL_ADDR.search(ln))
        return "person" if labelled >= 1 and len(lines) - labelled <= 3 else None
    if len(lines) == 1 and len(addresses) == 1:  # "priya@example.com", "Priya Shah <priya@example.com>"
        rest = _EMAIL_ADDR.sub("", text).strip(" <>()\"',;")
        return "person" if len(rest.split()) <= 4 and not any(w.lower() in _ENGLISH for w in rest.split()) else None
    if len(lines) == 1 and phone and len(text) < 60 and len(text.split()) <= 6:
        return "person"
    return None


# -- code and its language -------------------------------------------------------------------------------------
_LANGS: dict[str, list[tuple[re.Pattern[str], int]]] = {
    name: [(re.compile(p, re.MULTILINE), w) for p, w in rules] for name, rules in {
        "python": [(r"^\s*def \w+\(.*\)\s*(->\s*[\w\[\], .|]+)?:\s*$", 4), (r"^\s*class \w+(\(.*\))?:\s*$", 4),
                   (r"^\s*(from [\w.]+ import \w|import [\w.]+(\s+as \w+)?\s*$)", 3), (r"^\s*elif .*:\s*$", 3),
                   (r"\bself\.\w", 2), (r"^\s*(try|else|finally):\s*$", 2), (r"^\s*except\b.*:\s*$", 3),
                   (r"^\s*(if|for|while|with) .+:\s*$", 2), (r"\bprint\(", 1), (r"__\w+__", 2),
                   (r"^\s*@\w+", 1), (r"\bNone\b|\bTrue\b|\bFalse\b", 1), (r"^\s*return\b", 1)],
        "javascript": [(r"^\s*(const|let|var) \w+\s*=", 3), (r"\bfunction\s*\w*\s*\(", 3), (r"=>", 2),
                       (r"\bconsole\.\w+\(", 3), (r"^\s*(export|import) .*\bfrom\s+['\"]", 3),
                       (r"\brequire\(['\"]", 3), (r"\b(document|window)\.\w", 2), (r"===|!==", 2),
                       (r"\basync\s+function|\bawait\s+\w", 1), (r";\s*$", 1)],
        "typescript": [(r"^\s*(export\s+)?(interface|type) \w+(<.*>)?\s*(=|\{)", 5),
                       (r"\b\w+\??:\s*(string|number|boolean|any|unknown|void|never)\b", 4),
                       (r"\):\s*(Promise<|string|number|boolean|void)", 4), (r"\bas const\b", 3)],
        "sql": [(r"(?i)^\s*select\b.+", 3), (r"(?i)^\s*from\s+\w", 2), (r"(?i)^\s*where\b", 2),
                (r"(?i)^\s*(insert into|update \w+ set|delete from|create (table|index|view)|alter table|drop table)",
                 5), (r"(?i)\b(group by|order by|inner join|left join|limit \d+)\b", 2),
                (r"(?i)^\s*select\b.*\bfrom\b", 3)],
        "shell": [(r"^#!\s*/(usr/)?bin/(env\s+)?(ba|z|k|da)?sh", 6),
                  (r"^\s*(if|while) \[\[? .+ \]\]?;?\s*(then|do)?$", 4),
                  (r"^\s*(fi|done|esac|then)\s*$", 4), (r"\$\{?\w+\}?", 1), (r"^\s*(export|local) \w+=", 3),
                  (r"^\s*echo\b", 2), (r"\|\s*(grep|awk|sed|xargs|sort)\b", 3), (r"^\s*set -[euxo]", 4)],
        "rust": [(r"^\s*(pub\s+)?fn \w+(<.*>)?\(.*\)(\s*->\s*.+)?\s*\{?\s*$", 5), (r"\blet mut\b", 4),
                 (r"^\s*(use (std|crate|super)::|impl\b|mod \w+;|#\[derive)", 5), (r"\bprintln!|\bvec!|\bformat!", 4),
                 (r"&str\b|&mut\b|Option<|Result<|\.unwrap\(\)", 3)],
        "go": [(r"^\s*package \w+\s*$", 5), (r"^\s*func (\(\w+ \*?\w+\) )?\w+\(", 5), (r":=", 2),
               (r"\bfmt\.\w+\(", 4), (r"^\s*import \(\s*$", 4), (r"\berr != nil\b", 4)],
        "java": [(r"^\s*(public|private|protected)\s+(static\s+)?(final\s+)?"
                  r"(class|interface|enum|void|[A-Z]\w*(<.*>)?)\s", 4), (r"\bSystem\.out\.print", 5),
                 (r"^\s*@Override\b", 4), (r"\bnew [A-Z]\w*(<.*>)?\(", 2),
                 (r"^\s*import java\.", 5), (r"\bString\[\] args\b", 5)],
        "c": [(r"^\s*#include\s*[<\"]", 5), (r"\bint main\s*\(", 4), (r"\bprintf\s*\(", 3), (r"\bmalloc\(|\bfree\(", 3),
              (r"^\s*#define\s+\w", 4), (r"->\w", 1)],
        "cpp": [(r"\bstd::\w+", 4), (r"^\s*#include\s*<(iostream|vector|string|memory|map)>", 5),
                (r"\b(cout|cin|endl)\b", 3), (r"^\s*template\s*<", 5), (r"\bnullptr\b", 3), (r"^\s*namespace \w+", 3)],
        "html": [(r"(?i)<!doctype html", 6), (r"(?i)</?(html|head|body|div|span|p|a|ul|li|table|script|style|section)"
                  r"\b[^>]*>", 3), (r"(?i)\bclass=\"", 1)],
        "xml": [(r"^<\?xml\b", 6), (r"</[\w:.-]+>", 1), (r"\bxmlns(:\w+)?=", 4)],
        "css": [(r"^\s*[.#]?[\w\-: .>#\[\]=\"*,]+\{\s*$", 2), (r"^\s*[\w-]+\s*:\s*[^;{}]+;\s*$", 2),
                (r"^\s*@(media|import|keyframes|font-face)\b", 5), (r"^\s*\}\s*$", 1)],
    }.items()
}
_CODE_START = re.compile(  # the start of a line of code in any language (used with match)
    r"\s*(?:(?:def|class|return|import|from|function|const|let|var|if|for|while|fn|func|pub|use|public|private|"
    r"package|SELECT|FROM|WHERE|INSERT|UPDATE|CREATE|try|catch|except)\b|#include|#define|[}\])];?,?\s*$|"
    r"<[\w/!?][^>]*>|//|/\*|\*|@\w+)")
_ASSIGNMENT = re.compile(r"\s*[\w.\[\]\"'$]+\s*[-+*/|&]?=\s*\S")  # x = 1, total += n (used with match)


def _code_line(line: str) -> bool:
    """A line that reads like code in any language (cheap: anchored checks and a few ends)."""
    s = line.rstrip()
    return (s.endswith((";", "{", "}")) or "=>" in s or ":=" in s or bool(_CODE_START.match(s))
            or ("(" in s and s.endswith((")", "):", ");", ") {", "){")) and not s.endswith(".)"))
            or bool(_ASSIGNMENT.match(s)))


def _prose_line(line: str) -> bool:
    """A sentence: starts with a letter, ends with . ! or ?, no code punctuation."""
    s = line.strip()
    return (len(s) >= 32 and s[0].isalpha() and s.endswith((".", "!", "?"))
            and not any(c in s for c in ";{}=<>"))


def _language(text: str) -> tuple[str | None, int]:
    """The best-scoring language and its score."""
    scores = {}
    for name, rules in _LANGS.items():
        scores[name] = sum(w * sum(1 for _ in islice(p.finditer(text), 3)) for p, w in rules)
    if scores["typescript"] and scores["javascript"]:
        scores["typescript"] += scores["javascript"]
    if scores["cpp"] and scores["c"]:
        scores["cpp"] += scores["c"]
    if scores["html"] and text.lstrip().startswith("<?xml"):
        scores["html"] = 0
    best = max(scores, key=lambda k: scores[k])
    return (best, scores[best]) if scores[best] > 0 else (None, 0)


def _code(text: str, lines: list[str]) -> Kind | None:
    if len(lines) == 1 and (len(lines[0]) > 300 or not _code_line(lines[0])):
        return None  # one line of prose, not code
    coded = sum(1 for ln in lines if _code_line(ln))
    prose = sum(1 for ln in lines if _prose_line(ln) and not _code_line(ln))
    if len(lines) > 1 and (prose * 3 > len(lines) or coded * 4 < len(lines)) and not text.startswith(("#!", "<")):
        return None
    language, score = _language(text[:LANGUAGE_CHARS])
    indented = any(ln.startswith(("    ", "\t", "  ")) for ln in lines)
    n = len(lines)
    if language in ("html", "xml") and text.lstrip().startswith("<") and text.rstrip().endswith(">") and score >= 4:
        return Kind("code", language)
    if n == 1:
        one = lines[0]
        if score >= 5 and len(one) < 300 and not _prose_line(one):
            return Kind("code", language)
        return None
    if prose * 3 > n:
        return None
    if score >= 8 and prose == 0:
        return Kind("code", language)
    if score >= 4 and coded * 2 >= n:
        return Kind("code", language)
    if score >= 3 and coded * 3 >= n * 2 and (indented or coded >= 3):
        return Kind("code", language)
    return None


def classify(text: str) -> Kind:
    """The kind of a text (see KINDS); 'note' when nothing more specific fits. Never raises."""
    text = text[:SCAN_CHARS].strip()
    if not text:
        return Kind("note")
    if _URL.match(text) or (_URL_START.match(text) and "\n" not in text):
        return Kind("link")
    all_lines = [ln.rstrip() for ln in text.splitlines()[:SCAN_LINES]]
    lines = [ln for ln in all_lines if ln.strip()]
    if _is_json(text):
        return Kind("json")
    if _is_trace(text, lines):
        return Kind("trace")
    if _is_command(lines):
        return Kind("command", "shell")
    if _is_email(text):
        return Kind("email")
    if _is_chat(lines):
        return Kind("chat")
    if _is_yaml(lines):
        return Kind("yaml")
    if (code := _code(text, lines)) is not None:
        return code
    if (contact := _contact_or_address(text, lines)) is not None:
        return Kind(contact)
    if _is_list(lines):
        return Kind("list")
    head, _, rest = text.partition(":")
    if len(head) < 20 and rest.count(",") >= 3 and "\n" not in text and not _ANY_CJK.search(rest):
        return Kind("list")  # "Shopping: oat milk, eggs, sourdough, basil"
    return Kind("note")
