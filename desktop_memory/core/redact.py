"""Find secrets (API keys, passwords, private keys, card numbers...) in text and mask them.

Pure standard library, no I/O. Every rule is one entry in ``_RULES``: a kind, a compiled pattern
and an optional check that the matched value really is a secret. A pattern marks the part to
replace with a group named ``s`` (or ``s2``/``s3`` for alternative spellings); without one the
whole match is replaced. Keys are kept so the text stays readable::

    password=[REDACTED:secret_assignment]
    postgres://app:[REDACTED:connection_string]@db/main

Rules are listed most specific first. When matches overlap, the earlier rule wins and the other
match is dropped, so an ``sk-ant-...`` key is an Anthropic key (not an OpenAI one) and the JWT in
``Authorization: Bearer eyJ...`` is counted once, as a JWT.

Every pattern is safe on hostile input: quantifiers are bounded or possessive, and a rule only
runs when one of its literal "needles" occurs in the text, so a megabyte is handled quickly.

Judgement calls (see tests/data/redaction_corpus.jsonl for examples):

* Stripe publishable keys (``pk_live_``/``pk_test_``) are public by design and are kept;
  secret, restricted and webhook keys (``sk_``, ``rk_``, ``whsec_``) are redacted, test ones too.
* A value that names a secret instead of containing it is kept: ``${TOKEN}``, ``$TOKEN``,
  ``<your password>``, ``{{ vault_pw }}``, ``os.environ["KEY"]``, ``settings.API_KEY``,
  ``get_token()``, ``None``, ``****``, file paths and URLs.
* ``key: value`` with an unquoted value is only taken when the value is a single word ending the
  line, so prose such as ``password: (see the vault)`` or ``Password: ask Bob`` is kept. In the
  middle of a line the value must also look like a secret (a digit, a symbol or mixed case).
* Secrets written as plain prose ("the password is hunter2") are not detected.
"""

from __future__ import annotations

import re
import string
from collections.abc import Callable
from dataclasses import dataclass

PLACEHOLDER = "[REDACTED:{kind}]"
_MARK = "[REDACTED:"
_ASCII_LOWER = str.maketrans(string.ascii_uppercase, string.ascii_lowercase)


@dataclass(frozen=True)
class Redaction:
    """Result of ``redact``: the masked text and how many secrets of each kind were replaced."""

    text: str
    counts: dict[str, int]

    @property
    def total(self) -> int:
        """Number of secrets replaced."""
        return sum(self.counts.values())


Check = Callable[[str, re.Match[str]], bool]


@dataclass(frozen=True)
class _Rule:
    kind: str
    pattern: re.Pattern[str]
    needles: tuple[str, ...]  # lower-case; the rule runs only if one occurs in the lowered text
    check: Check | None = None
    lower: bool = False  # match against the lower-cased text (for case-insensitive key names)


# --- checks -------------------------------------------------------------------------------------

def _luhn(digits: str) -> bool:
    total = 0
    for i, ch in enumerate(reversed(digits)):
        d = ord(ch) - 48
        if i % 2:
            d = d * 2 - 9 if d > 4 else d * 2
        total += d
    return total % 10 == 0


# (prefix width, lowest prefix, highest prefix, allowed lengths)
_CARD_RANGES = (
    (1, 4, 4, (13, 16, 19)),  # Visa
    (2, 51, 55, (16,)),  # Mastercard
    (4, 2221, 2720, (16,)),  # Mastercard 2-series
    (2, 34, 34, (15,)),  # American Express
    (2, 37, 37, (15,)),
    (4, 6011, 6011, (16, 19)),  # Discover
    (3, 644, 649, (16, 19)),
    (2, 65, 65, (16, 19)),
    (3, 300, 305, (14, 16)),  # Diners Club
    (2, 36, 36, (14, 16)),
    (2, 38, 39, (14, 16)),
    (4, 3528, 3589, (16, 17, 18, 19)),  # JCB
    (2, 62, 62, (16, 17, 18, 19)),  # UnionPay
)


def _is_card(value: str, _m: re.Match[str]) -> bool:
    digits = value.replace(" ", "").replace("-", "")
    if not _luhn(digits):
        return False
    return any(
        lo <= int(digits[:width]) <= hi and len(digits) in lengths
        for width, lo, hi, lengths in _CARD_RANGES
    )


def _mixed_case(value: str, _m: re.Match[str]) -> bool:
    """Random-looking: upper and lower case letters (real keys are; kebab-case words are not)."""
    return any(c.isupper() for c in value) and any(c.islower() for c in value)


def _random_key(value: str, _m: re.Match[str]) -> bool:
    return _mixed_case(value, _m) and any(c.isdigit() for c in value)


def _has_digit(value: str, _m: re.Match[str]) -> bool:
    return any(c.isdigit() for c in value)


_REFERENCE_START = ("$", "<", "{{", "{%", "%(", "%{", "#{", "/", "./", "../", "~/", _MARK)
_CODE_REFERENCE = re.compile(
    r"[A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)*[(\[]"  # call or subscript: getenv(, os.environ[
    r"|[A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)+\Z"  # attribute: settings.API_KEY, self.password
    r"|[A-Za-z]:\\"  # Windows path
    r"|[A-Za-z][\w+.-]*://"  # URL
)
_PLACEHOLDER_VALUE = re.compile(
    r"(?i)(?:none|null|nil|undefined|true|false|redacted|hidden|masked|placeholder|replace[_-]?me"
    r"|todo|tbd|your[_-].*|.*[_-]here|[*•·.?#_-]+|x{3,})\Z"
)
_CODE_WORDS = frozenset(
    {"await", "new", "yield", "lambda", "function", "require", "input", "getpass", "this", "self", "not"}
)


def _literal(value: str, _m: re.Match[str]) -> bool:
    """A literal secret, not a reference to one (variable, template, placeholder, path...)."""
    value = value.strip()
    if len(value) < 3 or _MARK in value or value.startswith(_REFERENCE_START):
        return False
    return not _PLACEHOLDER_VALUE.match(value)


_FULL_WORDS = ("password", "passwd", "passphrase", "passcode")


def _key_ok(m: re.Match[str]) -> bool:
    """The short key names ``pass``/``pwd`` must not end a longer word (``bypass``, ``compass``)."""
    key = m.group("k")
    if key.startswith(("pass", "pwd")) and not key.startswith(_FULL_WORDS):
        start = m.start("k")
        return start == 0 or not m.string[start - 1].isalpha()
    return True


def _quoted(value: str, m: re.Match[str]) -> bool:
    return _key_ok(m) and _literal(value, m)


def _bare(value: str, m: re.Match[str]) -> bool:
    """An unquoted value: also rule out code such as ``token = get_token()`` or ``pw=password``."""
    if not _quoted(value, m) or _CODE_REFERENCE.match(value) or value in _CODE_WORDS:
        return False
    return not value.lower().endswith(m.group("k"))


def _looks_secret(value: str) -> bool:
    """Has a digit, a symbol or inner capitals: ``hunter2``/``Tr0ub4dor&3`` yes, ``expired`` no."""
    return (
        any(c.isdigit() for c in value)
        or any(not c.isalnum() for c in value)
        or (any(c.isupper() for c in value[1:]) and any(c.islower() for c in value))
    )


# What may come before a key at the start of a line: indentation, a YAML "- ", "export ",
# a quote and the rest of the key name (the DB_ of DB_PASSWORD).
_LINE_PREFIX = re.compile(r"""[ \t]*(?:-[ \t]+)?(?:export[ \t]+)?\\?["']?[\w.-]*""")


def _yaml_value(value: str, m: re.Match[str]) -> bool:
    """``key: value``: at the start of a line any literal; mid-line only secret-looking ones."""
    if not _bare(value, m):
        return False
    start = m.start()
    newline = m.string.rfind("\n", max(0, start - 120), start)
    if newline == -1 and start > 120:
        return _looks_secret(value)
    line_start = newline + 1
    return bool(_LINE_PREFIX.fullmatch(m.string, line_start, start)) or _looks_secret(value)


def _flag_value(value: str, m: re.Match[str]) -> bool:
    if m.group("s") is None:  # quoted
        return _literal(value, m)
    return _bare(value, m) and _looks_secret(value)


# --- patterns -----------------------------------------------------------------------------------

_T = r"A-Za-z0-9_\-"  # characters of a token; a token must not be glued to more of them
# Patterns start with a literal so the regex engine can jump to it; a look-behind placed after
# the literal then checks the character before the token.

# Secret-assignment rules run on lower-cased text (same length, so spans carry over).
# Key names that hold secrets. The prefix is free (DB_PASSWORD, clientSecret, x-api-key), the
# suffix is not, so token_count, tokenizer, max_tokens or password_file are not keys.
_KEY = (
    r"(?P<k>(?:pass(?:word|wd|phrase|code)?|pwd|secret|token|api[_-]?key|access[_-]?key|auth[_-]?key)"
    r"(?:[_.-]?(?:key|value))?)"
    r"""\\?["']?[ \t]*"""
)
_DQ = r'\\?"(?P<s>(?:[^"\\\r\n]|\\[^"\r\n]){1,512}+)\\?"'
_SQ = r"\\?'(?P<s2>(?:[^'\\\r\n]|\\[^'\r\n]){1,512}+)\\?'"
_BQ = r"`(?P<s3>[^`\r\n]{1,512}+)`"
_PEM = r"-----BEGIN[A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----"
_PEM_END = r"-----END[A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----"
_NL = r"(?:\r?\n|\\n)"
_ASSIGN_NEEDLES = ("pass", "pwd", "secret", "token", "key")


def _rule(
    kind: str, pattern: str, needles: tuple[str, ...], check: Check | None = None, *, lower: bool = False
) -> _Rule:
    return _Rule(kind, re.compile(pattern), needles, check, lower)


_RULES: tuple[_Rule, ...] = (
    # A whole PEM block, or a pasted key whose END line is missing.
    _rule("private_key", _PEM + r"(?:[^-]++|-(?!----))*+" + _PEM_END, ("private key",)),
    _rule(
        "private_key",
        _PEM + rf"(?:{_NL}[ \t]*(?:[A-Za-z0-9+/=]{{4,}}+(?=[ \t]*(?:{_NL}|\Z))"
        rf"|(?:Proc-Type|DEK-Info|Comment):[^\r\n\\]*+|(?={_NL})))*+",
        ("private key",),
    ),
    _rule("anthropic_api_key", rf"sk-ant-(?<![{_T}]sk-ant-)[{_T}]{{32,}}+", ("sk-ant-",), _mixed_case),
    _rule("openai_api_key", rf"sk-(?<![{_T}]sk-)(?!ant-)[{_T}]{{32,}}+", ("sk-",), _random_key),
    _rule(
        "github_token",
        r"gh[pousr]_(?<![A-Za-z0-9_]gh[pousr]_)[A-Za-z0-9]{36,}+"
        r"|github_pat_(?<![A-Za-z0-9_]github_pat_)[A-Za-z0-9_]{60,}+",
        ("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"),
    ),
    _rule(
        "gitlab_token",
        rf"gl(?<![{_T}]gl)(?:pat|dt|rt|ptt|cbt|oas)-[{_T}]{{20,}}+",
        ("glpat-", "gldt-", "glrt-", "glptt-", "glcbt-", "gloas-"),
    ),
    _rule(
        "slack_webhook",
        r"hooks\.slack\.com/(?:services|workflows|triggers)/(?P<s>[A-Za-z0-9_/-]{20,}+)",
        ("hooks.slack.com",),
    ),
    _rule("slack_token", rf"xox(?<![{_T}]xox)[abeprs]-[A-Za-z0-9-]{{10,}}+", ("xox",), _has_digit),
    _rule(
        "stripe_key",
        rf"[sr]k_(?<![{_T}][sr]k_)(?:live|test)_[A-Za-z0-9]{{16,}}+"
        rf"|whsec_(?<![{_T}]whsec_)[A-Za-z0-9]{{24,}}+",
        ("_live_", "_test_", "whsec_"),
    ),
    _rule("sendgrid_key", rf"SG\.(?<![{_T}.]SG\.)[{_T}]{{22}}\.[{_T}]{{43}}(?![{_T}])", ("sg.",)),
    _rule("google_api_key", rf"AIza(?<![{_T}]AIza)[{_T}]{{35}}(?![{_T}])", ("aiza",)),
    _rule("huggingface_token", rf"hf_(?<![{_T}]hf_)[A-Za-z0-9]{{30,}}+", ("hf_",), _mixed_case),
    _rule("npm_token", rf"npm_(?<![{_T}]npm_)[A-Za-z0-9]{{36}}(?![A-Za-z0-9])", ("npm_",), _mixed_case),
    _rule("twilio_api_key", r"SK(?<![A-Za-z0-9]SK)[0-9a-f]{32}(?![A-Za-z0-9])", ("sk",)),
    _rule(
        "aws_access_key",
        r"A(?<![A-Za-z0-9]A)(?:KIA|SIA|BIA|CCA)[A-Z0-9]{16}(?![A-Za-z0-9])",
        ("akia", "asia", "abia", "acca"),
    ),
    _rule(
        "aws_secret_key",
        r"(?:aws[\w.-]{0,24}?secret[\w.-]{0,24}?|secret[_-]?access[_-]?)key"
        r"""\\?["']?[ \t]*(?:=>|:=|=|:)[ \t]*\\?["']?(?P<s>[a-z0-9/+]{40})(?![a-z0-9/+=])""",
        ("secret",),
        _mixed_case,
        lower=True,
    ),
    _rule("jwt", rf"eyJ(?<![{_T}]eyJ)[{_T}]{{8,}}+\.[{_T}]{{8,}}+\.[{_T}]{{8,}}+", ("eyj",)),
    # Only the password of user:password@host is replaced.
    _rule(
        "connection_string",
        r"""://[^\s:/@?#'"\[\]]{0,256}:(?P<s>[^\s/?#'"]{1,256})@(?=[\w\[])""",
        ("://",),
        _literal,
    ),
    _rule(
        "credit_card",
        r"[0-9](?<![A-Za-z0-9_./-][0-9])"
        r"(?:[0-9]{12,18}|[0-9]{3}([ -])[0-9]{4}\1[0-9]{4}\1[0-9]{4}|[0-9]{3}([ -])[0-9]{6}\2[0-9]{4,5})"
        r"(?![A-Za-z0-9_]|[.,][0-9])",
        (),
        _is_card,
    ),
    # --- secret_assignment: the value after a secret-sounding key ---
    _rule(
        "secret_assignment",
        r"authorization\\?[\"']?[ \t]*[:=][ \t]*\\?[\"']?"
        r"(?:bearer|basic|token|apikey|api-key)[ \t]+(?P<s>[a-z0-9._~+/=:\[\]-]{6,}+)",
        ("authorization",),
        _literal,
        lower=True,
    ),
    _rule(
        "secret_assignment",
        _KEY + rf"(?:=>|:=|=|:)[ \t]*(?:{_DQ}|{_SQ}|{_BQ})",
        _ASSIGN_NEEDLES,
        _quoted,
        lower=True,
    ),
    _rule(  # KEY=value (env files, shell, URLs, INI, kwargs)
        "secret_assignment",
        _KEY + r"(?:=>|:=|=)[ \t]*"
        r"(?P<s>(?![#=])(?:[^\s\"'`,;&)}\\]|&(?![\w.-]{1,64}=)){1,512}+)",
        _ASSIGN_NEEDLES,
        _bare,
        lower=True,
    ),
    _rule(  # key: value (YAML, HTTP headers, logs); the value must end the line
        "secret_assignment",
        _KEY + r":[ \t]*(?P<s>[^\s\"'`|>&*!{\[#%@,:][^\s\"'`]{0,511}+)"
        r"(?=[ \t]*(?:#|[\"'`]|\r?\n|\Z))",
        _ASSIGN_NEEDLES,
        _yaml_value,
        lower=True,
    ),
    _rule(  # --password VALUE
        "secret_assignment",
        r"--(?<![\w-]--)(?P<k>[a-z0-9-]{0,30}?(?:password|passwd|token|secret|api-?key|access-key))"
        r"[ \t]+(?:\"(?P<s2>[^\"\r\n]{1,256}+)\"|'(?P<s3>[^'\r\n]{1,256}+)'"
        r"|(?P<s>[^\s\"'`$<{-][^\s\"'`]{0,255}+))",
        ("--",),
        _flag_value,
        lower=True,
    ),
    _rule(  # .netrc
        "secret_assignment",
        r"machine(?<![\w-]machine)\s+\S{1,256}+\s+login\s+\S{1,256}+\s+password\s+(?P<s>\S{1,256}+)",
        ("machine",),
        _literal,
    ),
)


def _secret_span(m: re.Match[str]) -> tuple[int, int]:
    groups = m.re.groupindex
    for name in ("s", "s2", "s3"):
        if name in groups and m.group(name) is not None:
            return m.span(name)
    return m.span()


def _candidates(text: str) -> list[tuple[int, int, int, str]]:
    """All (rank, start, end, kind) matches that pass their rule's check."""
    lowered = text.lower()
    if len(lowered) != len(text):  # a few characters lower-case to two; keep positions aligned
        lowered = text.translate(_ASCII_LOWER)
    found = []
    for rank, rule in enumerate(_RULES):
        if rule.needles and not any(n in lowered for n in rule.needles):
            continue
        for m in rule.pattern.finditer(lowered if rule.lower else text):
            start, end = _secret_span(m)
            if start == end:
                continue
            if rule.check is None or rule.check(text[start:end], m):
                found.append((rank, start, end, rule.kind))
    return found


def redact(text: str) -> Redaction:
    """Replace every secret in ``text`` with ``[REDACTED:<kind>]``; never raises on a str."""
    taken = bytearray(len(text))
    chosen: list[tuple[int, int, str]] = []
    # Most specific rule first, then the longer match, then the earlier one; skip overlaps.
    for _rank, start, end, kind in sorted(_candidates(text), key=lambda c: (c[0], c[1] - c[2], c[1])):
        if taken.find(1, start, end) == -1:
            taken[start:end] = b"\x01" * (end - start)
            chosen.append((start, end, kind))
    if not chosen:
        return Redaction(text, {})
    chosen.sort()
    parts: list[str] = []
    counts: dict[str, int] = {}
    pos = 0
    for start, end, kind in chosen:
        parts.append(text[pos:start])
        parts.append(PLACEHOLDER.format(kind=kind))
        counts[kind] = counts.get(kind, 0) + 1
        pos = end
    parts.append(text[pos:])
    return Redaction("".join(parts), counts)
