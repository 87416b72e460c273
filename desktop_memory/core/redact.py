"""Find secrets (API keys, passwords, private keys, card numbers...) in text and mask them.

Pure standard library, no I/O. Every rule is one entry in ``_RULES``: a kind, a compiled pattern
and an optional check that the matched value really is a secret. A pattern marks the part to
replace with a group named ``s`` (or ``s2``/``s3`` for alternative spellings); without one the
whole match is replaced. Keys are kept so the text stays readable::

    password=[REDACTED:secret_assignment]
    postgres://app:[REDACTED:connection_string]@db/main

Rules are listed most specific first and applied in that order, each to the text the earlier ones
left. A placeholder never matches any rule, so a secret is replaced once, by the most specific
kind: an ``sk-ant-...`` key is an Anthropic key (not an OpenAI one) and the JWT in
``Authorization: Bearer eyJ...`` is counted once, as a JWT. Running the rules again until nothing
changes (normally one extra pass that finds nothing) makes ``redact`` idempotent.

Every pattern is safe on hostile input: quantifiers are bounded or possessive, and a rule only
runs when one of its literal "needles" occurs in the text, so a megabyte is handled quickly.

Judgement calls (see tests/data/redaction_corpus.jsonl for examples):

* Stripe publishable keys (``pk_live_``/``pk_test_``) are public by design and are kept;
  secret, restricted and webhook keys (``sk_``, ``rk_``, ``whsec_``) are redacted, test ones too.
* A value that names a secret instead of containing it is kept: ``${TOKEN}``, ``$TOKEN``,
  ``<your password>``, ``{{ vault_pw }}``, ``os.environ["KEY"]``, ``settings.API_KEY``,
  ``get_token()``, ``f(password=password)``, ``None``, ``****``, file paths and URLs.
* Tokens and API keys are machine-made, so under such keys a plain word or name is kept
  (``token: "keyword.operator"``, ``"output_token": "NextMarker"``); under password and secret
  keys any literal of three or more characters is redacted (``POSTGRES_PASSWORD: example``).
* ``key: value`` with an unquoted value is only taken when the value is a single word ending the
  line, so prose such as ``password: (see the vault)`` or ``Password: ask Bob`` is kept. In the
  middle of a line, in ``key = value`` (INI or code) and in keyword arguments the value must also
  look like a secret: a digit, a symbol or a random mix of cases.
* Card numbers: 13-19 digits, plain or grouped 4-4-4-4 / 4-6-5 / 4-6-4 with spaces or dashes,
  passing Luhn with a known network prefix and length. Digits glued to letters, dots or slashes
  (hashes, decimals, paths) are not cards.
* A PEM private key missing its END line is still redacted (header and base64 lines); a header
  quoted alone in documentation is not.
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
_MAX_PASSES = 8


@dataclass(frozen=True)
class Redaction:
    """Result of ``redact``: the masked text and how many secrets of each kind were replaced."""

    text: str
    counts: dict[str, int]

    @property
    def total(self) -> int:
        """Number of secrets replaced."""
        return sum(self.counts.values())


_Check = Callable[[str, re.Match[str]], bool]


@dataclass(frozen=True)
class _Rule:
    kind: str
    pattern: re.Pattern[str]
    needles: tuple[str, ...]  # lower-case; the rule runs only if one occurs in the lowered text
    check: _Check | None = None
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


_REFERENCE_START = ("$", "<", "{", "[", "%(", "%{", "#{", "/", "./", "../", "~/")
_CODE_REFERENCE = re.compile(
    r"[A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)*[(\[]"  # call or subscript: getenv(, os.environ[
    r"|[A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)+\Z"  # attribute: settings.API_KEY, self.password
    r"|[A-Za-z]:\\"  # Windows path
    r"|[A-Za-z][\w+.-]*://"  # URL
)
_PLACEHOLDER_VALUE = re.compile(
    r"(?i)(?:none|null|nil|undefined|true|false|redacted|hidden|masked|placeholder|replace[_-]?me"
    r"|todo|tbd|your[_-].*|.*[_-]here|[*•·.?#_-]+|x{3,}|\#[0-9a-f]{3,8}|pass|password|passwd|pwd|secret|token)\Z"
)
# Unquoted values that are code, not secrets: `token = await get()`, `password: str`.
_CODE_WORDS = frozenset(
    {"await", "new", "yield", "lambda", "function", "require", "input", "getpass", "this", "self", "not",
     "str", "string", "bytes", "bool", "boolean", "int", "integer", "float", "number", "any", "object",
     "dict", "list", "text", "secretstr", "required", "optional"}
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
        return start == 0 or not (m.string[start - 1].isalpha() or m.string[start - 1] == "]")
    return True


def _quoted(value: str, m: re.Match[str]) -> bool:
    """A literal value. One ending in its own key name is a name (``"next_token"``), and tokens
    and API keys are machine-made, so a plain word there is a name too (``token: "keyword"``)."""
    key = m.group("k")
    if not (_key_ok(m) and _literal(value, m)) or value.lower().endswith(key):
        return False
    return key.startswith(("pass", "pwd", "secret")) or _looks_secret(value)


def _bare(value: str, m: re.Match[str]) -> bool:
    """An unquoted value: also rule out code such as ``token = get_token()`` or ``pw=password``."""
    return _quoted(value, m) and not _CODE_REFERENCE.match(value) and value.lower() not in _CODE_WORDS


# Words, Capitalised or joined in camelCase/PascalCase/snake_case: names, not random strings.
_WORDS = re.compile(r"[A-Z]?[a-z]*+(?:[_.-]?[A-Z]?[a-z]++)*+\Z")


def _looks_secret(value: str) -> bool:
    """A digit, a symbol or a random mix of cases: ``hunter2``, ``Tr0ub4dor&3``, ``xKqPzRw`` are;
    ``expired``, ``EOF``, ``NextMarker``, ``string.quoted.double`` are not."""
    if any(c.isdigit() or not (c.isalnum() or c in "_-.") for c in value):
        return True
    return value.lower() != value != value.upper() and not _WORDS.match(value)


_IN_PATH = re.compile(r"[:/][\w.-]*\Z")
_KWARG = re.compile(r"[(,][ \t]*[\w.-]*\Z")
_REST_OF_LINE = re.compile(r"[ \t]*(?:[ \t][#;][^\n]*)?(?:\r?\n|\Z)")


def _env_value(value: str, m: re.Match[str]) -> bool:
    """``KEY=value``. Spaced out (``key = value``) it is INI or code: the value must then end the
    line and look like a secret, which rules out ``token = Ignore + Plain`` or ``a, pw = u, p``.
    A keyword argument must look like a secret too: ``f(token=next_token)`` passes a variable."""
    if not _bare(value, m):
        return False
    if " " in m.string[m.end("k") : m.start("s")]:
        return bool(_REST_OF_LINE.match(m.string, m.end("s"))) and _looks_secret(value)
    if _KWARG.search(m.string, max(0, m.start("k") - 80), m.start("k")):  # f(a, token=next_token)
        return _looks_secret(value)
    return True


# What may come before a key at the start of a line: indentation, a YAML "- ", "export ",
# a quote and the rest of the key name (the DB_ of DB_PASSWORD).
_LINE_PREFIX = re.compile(r"""[ \t]*(?:-[ \t]+)?(?:export[ \t]+)?\\?["']?[\w.-]*""")


def _yaml_value(value: str, m: re.Match[str]) -> bool:
    """``key: value``: at the start of a line any literal; mid-line only secret-looking ones.

    A quoted key with an unquoted value is JSON or a Python dict (``"token": next_token,``), a
    value ending in punctuation is code (``token: str):``) and a key inside an ARN or a path
    (``arn:aws:...:secret:name``) is no key: none of them holds a literal secret.
    """
    if not _bare(value, m) or value[-1] in ",;:(){}[]" or m.string[m.end("k")] in "\"'\\":
        return False
    if _IN_PATH.search(m.string, max(0, m.start("k") - 80), m.start("k")):  # arn:aws:...:secret:x
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

# Token patterns start with their literal prefix so the regex engine can jump to it; a look-behind
# placed after the prefix then checks the character before the token. Look-behinds also refuse
# "]" and look-aheads "[", the edges of a placeholder, so that a token glued to a secret does not
# turn into a match once that secret has been replaced.
_T = r"A-Za-z0-9_\-"  # characters of a token; a token must not be glued to more of them
_B = _T + r"\]"
_A = _T + r"\["

# Secret-assignment rules run on the lower-cased text (same length, so positions carry over).
# Key names that hold secrets: the prefix is free (DB_PASSWORD, clientSecret, x-api-key), the
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
_NL = r"(?:\r?\n|\\n)"  # a newline, or the two characters \n inside a JSON string
# The lines of a key whose END line is missing: base64 lines and Proc-Type/DEK-Info headers.
_PEM_LINES = (
    rf"(?=[ \t]*{_NL}[ \t]*(?:[A-Za-z0-9+/=]{{16}}|Proc-Type:))"
    rf"(?:{_NL}[ \t]*(?:[A-Za-z0-9+/=]{{4,}}+(?=[ \t]*(?:{_NL}|\Z))"
    rf"|(?:Proc-Type|DEK-Info|Comment):[^\r\n\\]*+|(?={_NL})))*+"
)
_ASSIGN_NEEDLES = ("pass", "pwd", "secret", "token", "key")


def _rule(
    kind: str, pattern: str, needles: tuple[str, ...], check: _Check | None = None, *, lower: bool = False
) -> _Rule:
    return _Rule(kind, re.compile(pattern), needles, check, lower)


_RULES: tuple[_Rule, ...] = (
    # A whole PEM block, or a pasted key whose END line is missing.
    _rule("private_key", _PEM + r"(?:[A-Za-z0-9+/=\s:,\\]++|-(?!----))*+" + _PEM_END, ("private key",)),
    _rule("private_key", _PEM + _PEM_LINES, ("private key",)),
    _rule("anthropic_api_key", rf"sk-ant-(?<![{_B}]sk-ant-)[{_T}]{{32,}}+", ("sk-ant-",), _mixed_case),
    _rule("openai_api_key", rf"sk-(?<![{_B}]sk-)(?!ant-)[{_T}]{{32,}}+", ("sk-",), _random_key),
    _rule(
        "github_token",
        r"gh[pousr]_(?<![A-Za-z0-9_\]]gh[pousr]_)[A-Za-z0-9]{36,}+"
        r"|github_pat_(?<![A-Za-z0-9_\]]github_pat_)[A-Za-z0-9_]{60,}+",
        ("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"),
    ),
    _rule(
        "gitlab_token",
        rf"gl(?<![{_B}]gl)(?:pat|dt|rt|ptt|cbt|oas)-[{_T}]{{20,}}+",
        ("glpat-", "gldt-", "glrt-", "glptt-", "glcbt-", "gloas-"),
    ),
    _rule(
        "slack_webhook",
        r"hooks\.slack\.com/(?:services|workflows|triggers)/(?P<s>[A-Za-z0-9_/-]{20,}+)",
        ("hooks.slack.com",),
    ),
    _rule("slack_token", rf"xox(?<![{_B}]xox)[abeprs]-[A-Za-z0-9-]{{10,}}+", ("xox",), _has_digit),
    _rule(
        "stripe_key",
        rf"[sr]k_(?<![{_B}][sr]k_)(?:live|test)_[A-Za-z0-9]{{16,}}+"
        rf"|whsec_(?<![{_B}]whsec_)[A-Za-z0-9]{{24,}}+",
        ("_live_", "_test_", "whsec_"),
    ),
    _rule("sendgrid_key", rf"SG\.(?<![{_B}.]SG\.)[{_T}]{{22}}\.[{_T}]{{43}}(?![{_A}])", ("sg.",)),
    _rule("google_api_key", rf"AIza(?<![{_B}]AIza)[{_T}]{{35}}(?![{_A}])", ("aiza",)),
    _rule("huggingface_token", rf"hf_(?<![{_B}]hf_)[A-Za-z0-9]{{30,}}+", ("hf_",), _mixed_case),
    _rule("npm_token", rf"npm_(?<![{_B}]npm_)[A-Za-z0-9]{{36}}(?![A-Za-z0-9\[])", ("npm_",), _mixed_case),
    _rule("twilio_api_key", r"SK(?<![A-Za-z0-9\]]SK)[0-9a-f]{32}(?![A-Za-z0-9\[])", ("sk",)),
    _rule(
        "aws_access_key",
        r"A(?<![A-Za-z0-9\]]A)(?:KIA|SIA|BIA|CCA)[A-Z0-9]{16}(?![A-Za-z0-9\[])",
        ("akia", "asia", "abia", "acca"),
    ),
    _rule(
        "aws_secret_key",
        r"(?:aws[\w.-]{0,24}?secret[\w.-]{0,24}?|secret[_-]?access[_-]?)key"
        r"""\\?["']?[ \t]*(?:=>|:=|=|:)[ \t]*\\?["']?(?P<s>[a-z0-9/+]{40})(?![a-z0-9/+=\[])""",
        ("secret",),
        _mixed_case,
        lower=True,
    ),
    _rule("jwt", rf"eyJ(?<![{_B}]eyJ)[{_T}]{{8,}}+\.[{_T}]{{8,}}+\.[{_T}]{{8,}}+", ("eyj",)),
    # Only the password of user:password@host is replaced.
    _rule(
        "connection_string",
        r"""://[^\s:/@?#'"\[\]]{0,256}:(?P<s>[^\s/?#'"]{1,256})@(?=[\w\[])""",
        ("://",),
        _literal,
    ),
    _rule(
        "credit_card",
        r"[0-9](?<![A-Za-z0-9_./\-\]][0-9])"
        r"(?:[0-9]{12,18}|[0-9]{3}([ -])[0-9]{4}\1[0-9]{4}\1[0-9]{4}|[0-9]{3}([ -])[0-9]{6}\2[0-9]{4,5})"
        r"(?![A-Za-z0-9_\[]|[.,][0-9])",
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
        _env_value,
        lower=True,
    ),
    _rule(  # key: value (YAML, HTTP headers, logs); the value must end the line
        "secret_assignment",
        _KEY + r":[ \t]*(?P<s>[^\s\"'`|>&*!{\[#%@,:][^\s\"'`(){};,]{0,511}+)"
        r"(?=[ \t]*(?:#|[\"'`]|\r?\n|\Z))",
        _ASSIGN_NEEDLES,
        _yaml_value,
        lower=True,
    ),
    _rule(  # --password VALUE
        "secret_assignment",
        r"--(?<![\w\-\]]--)(?P<k>[a-z0-9-]{0,30}?(?:password|passwd|token|secret|api-?key|access-key))"
        r"[ \t]+(?:\"(?P<s2>[^\"\r\n]{1,256}+)\"|'(?P<s3>[^'\r\n]{1,256}+)'"
        r"|(?P<s>[^\s\"'`$<{-][^\s\"'`]{0,255}+))",
        ("--",),
        _flag_value,
        lower=True,
    ),
    _rule(  # .netrc
        "secret_assignment",
        r"machine(?<![\w\-\]]machine)\s+\S{1,256}+\s+login\s+\S{1,256}+\s+password\s+(?P<s>\S{1,256}+)",
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


def _lower(text: str) -> str:
    lowered = text.lower()
    if len(lowered) != len(text):  # a few characters lower-case to two; keep positions aligned
        lowered = text.translate(_ASCII_LOWER)
    return lowered


def _redact_once(text: str, counts: dict[str, int]) -> str:
    """Apply every rule once, in order, each to the text the previous ones left."""
    lowered = _lower(text)
    for rule in _RULES:
        if rule.needles and not any(n in lowered for n in rule.needles):
            continue
        spans = []
        for m in rule.pattern.finditer(lowered if rule.lower else text):
            start, end = _secret_span(m)
            if start < end and (rule.check is None or rule.check(text[start:end], m)):
                spans.append((start, end))
        if not spans:
            continue
        placeholder = PLACEHOLDER.format(kind=rule.kind)
        parts, pos = [], 0
        for start, end in spans:
            parts += (text[pos:start], placeholder)
            pos = end
        parts.append(text[pos:])
        text = "".join(parts)
        lowered = _lower(text)
        counts[rule.kind] = counts.get(rule.kind, 0) + len(spans)
    return text


def redact(text: str) -> Redaction:
    """Replace every secret in ``text`` with ``[REDACTED:<kind>]``; never raises on a str.

    A placeholder can expose a match that the replaced text hid (a rejected match no longer
    swallows its neighbour), so the rules run again until nothing changes; usually one extra
    pass, which finds nothing. That makes ``redact`` idempotent.
    """
    counts: dict[str, int] = {}
    for _ in range(_MAX_PASSES):
        before = sum(counts.values())
        text = _redact_once(text, counts)
        if sum(counts.values()) == before:
            break
    return Redaction(text, counts)
