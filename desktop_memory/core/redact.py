"""Find secrets (API keys, passwords, private keys, card numbers...) in text and mask them.

Pure standard library, no I/O. Every rule is one entry in ``_RULES``: a kind, a compiled pattern
and an optional check that the matched value really is a secret. A pattern marks the part to
replace with a group named ``s`` (or ``s2``...``s5`` for alternative spellings); without one the
whole match is replaced. Keys are kept so the text stays readable::

    password=[REDACTED:secret_assignment]
    postgres://app:[REDACTED:connection_string]@db/main

Rules are listed most specific first and applied in that order, each to the text the earlier ones
left. A placeholder never matches any rule, so a secret is replaced once, by the most specific
kind: an ``sk-ant-...`` key is an Anthropic key (not an OpenAI one) and the JWT in
``Authorization: Bearer eyJ...`` is counted once, as a JWT. Running the rules again until nothing
changes (normally one extra pass that finds nothing) makes ``redact`` idempotent.

Every pattern is safe on hostile input: quantifiers are bounded or possessive, a command's options
are read at most 12 arguments after its name, and a rule only runs when one of its literal
"needles" occurs in the text (outside placeholders), so a megabyte is handled quickly.

Secret fields. The keys are password, passwd, pass, pwd, pw, passphrase, passcode, secret, token,
api key / apikey / api_key / api-key, access key, auth / auth_key, and Passwort, Kennwort, mot de
passe, contraseña, senha, wachtwoord: in any case and with any prefix (``DB_PASSWORD``,
``client_secret``, ``X-Api-Key``) but no suffix (``token_count``, ``password_file`` are no keys).
Short names (pass, pwd, pw, auth) must not end a longer word (``bypass``, ``oauth``). Where the
value stands decides whether it is a secret:

* In a field (``key=value``, ``"key": "value"``, any quoted value, ``key: value`` ending its line
  or field, ``--password=X``, ``mysql -pX``, ``sshpass -p X``, ``docker login -p X``,
  ``redis-cli -a X``, ``curl -u user:X``, ``-passin pass:X``, ``requirepass X``, URL userinfo,
  ``Authorization: Bearer|Basic|Token X``) the value under a password or secret key is a secret
  whatever characters it has, a plain word included (``POSTGRES_PASSWORD: example``). Tokens and
  API keys are machine-made, so under them the value must look like one: a digit, a symbol or a
  random mix of cases (``token: "keyword.operator"`` is a name). ``auth`` also names methods
  (``auth: oauth2``, ``md5``): its value needs 8 characters and mixed case or a symbol.
* In running text (``key: value`` followed by more words) a value that looks like a secret is one
  (``I set it up, password: irKEeDTl9pIR! and then``); a plain word is prose (``password: see the
  vault``, ``Password: ask Alice``). A word that describes instead of being a secret
  (``required``, ``same``, ``none``, ``min``...: ``NOT_SECRET_WORDS``) is never taken.
* In prose, "the password (for the wifi) is X" (also was, ist, est, es): X is a secret only if it
  looks like a token: 5 characters or more, with a digit or a symbol but not a number with a unit,
  a version or a date (``128-bit``, ``v2``, ``24h``, ``2024-01-31``), or 8 letters in a random mix
  of cases. "the password is incorrect", "is case-sensitive", "is 12 characters long" are kept; a
  quoted X ("the password is 'open sesame'") is always a secret.
* ``key = value`` with spaces (INI or code) and keyword arguments: the value must look like a
  secret, and with spaces end the line (``token = Ignore + Plain`` is code). ``--password VALUE``
  too, as ``psql --password shop`` takes no value.
* An unquoted value is a run of non-blanks. A trailing ``.``, ``,``, ``;`` or ``:`` and unbalanced
  closing brackets or quotes belong to the text around it (``is hunter2.``,
  ``connect(password=x9y8)``); in ``key=value`` a following ``&key=``, ``;key=`` or ``,key=``
  starts the next pair (query strings, ADO.NET), unless the value is then rejected: then the whole
  run is taken.

Other judgement calls (see tests/data/redaction_corpus.jsonl for examples):

* Stripe publishable keys (``pk_live_``/``pk_test_``) are public by design and are kept;
  secret, restricted and webhook keys (``sk_``, ``rk_``, ``whsec_``) are redacted, test ones too.
* A value that names a secret instead of containing it is kept: ``${TOKEN}``, ``$TOKEN``,
  ``<your password>``, ``{{ vault_pw }}``, ``[Password]``, ``os.environ["KEY"]``, ``get_token()``,
  ``settings.API_KEY`` (a dotted name without digits; with digits too after ``key = ``),
  ``f(password=password)``, code going on after a blank (``hash(pw, 10)``,
  ``Optional[Dict[str, Any]]``), Python strings with a prefix (``f"<{lang}>"``, ``r'[a-z]+'``), names
  made from the key (``hashedPassword``, ``next_token``, ``PasswordHash``), a token value closing a
  bracket it did not open (``token=t)[0].id``), ``None``, ``N/A``, ``****``, a public prefix
  masked (``hf_***``, ``sk-proj-...``; but ``hunt...`` is a secret cut short), YAML tags and
  aliases (``!vault``, ``*db_password``), URLs and paths of plain path characters
  (``/run/secrets/db``; ``/Xk9!mm`` is a secret). ``key :`` with a blank before the colon is only a
  field for "mot de passe :" (French typography); ``Pass :meth:`` is a verb.
* Card numbers: 13-19 digits, plain or grouped 4-4-4-4 / 4-6-5 / 4-6-4 with spaces or dashes,
  passing Luhn with a known network prefix and length. Digits glued to letters, dots or slashes
  (hashes, decimals, paths) are not cards.
* A PEM private key missing its END line is still redacted (header and base64 lines); a header
  quoted alone in documentation is not.
* URL userinfo must be percent-encoded to contain ``/``, ``?`` or ``#``, as URLs require.

Known gaps: an unquoted passphrase of several words (``passphrase: correct horse battery``), a plain
word followed by more prose (``password: sunshine and then``) and a plain-word secret in prose
("the password is sunshine") are kept; a plain-word variable in a JavaScript object literal
(``{password: hashed, salt}``) is taken for a password (privacy first).
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
    trim: bool = False  # group s is a run of non-blanks: drop what running text put after it (_trimmed)


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


_REFERENCE_START = ("$", "<", "{", "[", "%(", "%{", "#{")
# A path made of plain path characters: /run/secrets/db, ./pw.txt, ~/.pgpass (not "/Xk9!mm").
_PATH = re.compile(r"(?:~|\.{1,2})?/[\w.@+-]*+(?:/[\w.@+-]*+)*+\Z")
_CODE_REFERENCE = re.compile(
    r"[A-Za-z_$][\w$]*+(?:\.[A-Za-z_$][\w$]*+)*+"  # a name, then a call or subscript: getpass(), os.environ["K"],
    r"(?:(?:\(\)|\[\])(?:\.|\Z)|[(\[][\"']|[(\[].*[)\]](?:=.*)?\Z)"  # input("pw: "), Optional[str]=None
    r"|[rRbBuUfF]{1,2}([\"']).*\1\Z"  # a Python string with a prefix: f"<{lang}>", r'\w+'
    r"|[A-Za-z_$][\w$]*+(?:\.[A-Za-z_$][\w$]*+)*+(?=[^(\[]*+[(\[])(?:[(\[][A-Za-z_$][\w$.]*+)*+[(\[]?\Z"
    # ^ code going on after a blank: hash(pw, 10) | Optional[Dict[str, Any]] | self.refresh_token(
    r"|[A-Za-z_$]++(?:\.[A-Za-z_$]++)+\Z"  # attribute without digits: settings.API_KEY, self.password
    r"|[A-Za-z]:\\"  # Windows path
    r"|[A-Za-z][\w+.-]*+://"  # URL
)
_PLACEHOLDER_VALUE = re.compile(
    r"(?i)(?:none|null|nil|undefined|true|false|redacted|hidden|masked|placeholder|replace[_-]?me"
    r"|todo|tbd|n/?a|your[_-].*|.*[_-]here|[*•·.?#_-]+|x{3,}|\#[0-9a-f]{3,8}|pass|password|passwd|pwd|secret"
    r"|(?:[a-z0-9]{1,8}[_-]){1,3}(?:\*{3,}|•{3,}|\.{3,}|…)"  # a public prefix, masked: hf_***, sk-proj-...
    r"|token|api[_-]?key"
    r"|![A-Za-z]++|\*[A-Za-z_][\w-]*+|&[A-Za-z_][\w-]*+)\Z"  # YAML: !vault tag, *alias, &anchor
)
# Unquoted values that are code, not secrets: `token = await get()`, `password: str`.
_CODE_WORDS = frozenset(
    {"await", "new", "yield", "lambda", "function", "require", "input", "getpass", "this", "self", "not",
     "str", "string", "bytes", "bool", "boolean", "int", "integer", "float", "number", "any", "object",
     "dict", "list", "text", "secretstr", "required", "optional"}
)
# Words that say something about a secret instead of being it, after `password:` or `token:` in prose
# and forms: "Password: required", "password: see the vault", "api key: pending approval".
_PROSE_WORDS = frozenset((
    "required", "optional", "needed", "mandatory", "missing", "invalid", "incorrect", "wrong", "expired",
    "expires", "revoked", "disabled", "enabled", "empty", "blank", "unset", "set", "changed", "reset",
    "updated", "unchanged", "same", "different", "default", "unknown", "none", "hidden", "masked", "encrypted",
    "hashed", "stored", "saved", "sent", "attached", "provided", "generated", "below", "above", "elsewhere",
    "separately", "pending", "approved", "see", "ask", "check", "use", "contact", "call", "ping", "read",
    "look", "find", "get", "in", "on", "at", "from", "via", "the", "a", "an", "as", "per", "sso", "ldap",
    "shared", "personal", "yours", "mine", "it", "this", "that", "here", "there", "ok", "okay", "yes", "no",
    "off", "is", "was", "will", "must", "should", "can", "cannot", "not", "too", "very", "min", "max", "minimum",
    "maximum", "length", "chars", "characters", "strong", "weak",
))
# The words that are never taken as the secret (placeholders, code, prose); the tests use it.
NOT_SECRET_WORDS = _PROSE_WORDS | _CODE_WORDS | frozenset((
    "none", "null", "nil", "undefined", "true", "false", "redacted", "hidden", "masked", "placeholder",
    "replaceme", "todo", "tbd", "na", "n/a", "pass", "password", "passwd", "pwd", "secret", "token", "apikey",
    "api_key", "api-key",
))
# Numbers with a unit, versions, dates and times: "128-bit", "24h", "v2.1", "2024-01-31", "12:30".
_MEASURE = re.compile(
    r"(?i)(?=.*[^0-9])v?[0-9]++(?:[.,:/x-][0-9]++)*+(?:[ -]?(?:%|[kmgt]i?b|bits?|bytes?|chars?|characters?"
    r"|digits?|letters?|words?|ms|s|secs?|seconds?|m|mins?|minutes?|h|hrs?|hours?|d|days?|w|weeks?|months?"
    r"|y|years?|px|em|st|nd|rd|th|am|pm|k|x))?\+?\Z"
)


def _literal(value: str, _m: re.Match[str]) -> bool:
    """A literal secret, not a reference to one (variable, template, placeholder, path...)."""
    value = value.strip()
    if len(value) < 3 or _MARK in value or value.startswith(_REFERENCE_START) or _PATH.match(value):
        return False
    return not _PLACEHOLDER_VALUE.match(value)


_FULL_WORDS = ("password", "passwd", "passphrase", "passcode", "passwort")
_SHORT_KEYS = ("pass", "pwd", "pw", "auth")
_STRONG_KEYS = ("pass", "pwd", "pw", "secret", "kennwort", "mot", "contrase", "senha", "wachtwoord")


def _key_ok(m: re.Match[str]) -> bool:
    """Short key names (``pass``, ``pwd``, ``pw``, ``auth``) must not end a longer word: ``bypass``,
    ``compass``, ``oauth``."""
    key = m.group("k")
    if key.startswith(_SHORT_KEYS) and not key.startswith(_FULL_WORDS):
        start = m.start("k")
        return start == 0 or not (m.string[start - 1].isalpha() or m.string[start - 1] == "]")
    return True


def _strong(key: str) -> bool:
    """Password and secret keys: people choose their values, so a plain word there is a secret too.
    Tokens and API keys are machine-made: under them a plain word is a name."""
    return key.startswith(_STRONG_KEYS)


def _names_itself(value: str, key: str) -> bool:
    """``next_token``, ``userPassword``, ``PasswordHash``: a name made from its key (not ``mypassword``)."""
    lowered = value.lower()
    base = _KEY_BASE.search(key)
    for name in {key, base.group() if base else key}:  # secret_value and secret
        n = len(name)
        if lowered.startswith(name) and len(value) > n and _joint(value, n):
            return True  # PasswordHash, token_type, SecretType
        if lowered.endswith(name) and (len(value) == n or _joint(value, len(value) - n)):
            return True
    return False


def _joint(value: str, i: int) -> bool:
    """Two words meet at ``i``: ``user_password``, ``userPassword`` (not ``mypassword``, ``AAAAPW``)."""
    return value[i] in "_-." or value[i - 1] in "_-." or value[i].isupper() and value[i - 1].islower()


def _quoted(value: str, m: re.Match[str]) -> bool:
    """A literal value under a secret key. Tokens and API keys are machine-made, so a plain word
    there is a name (``token: "keyword"``); ``auth`` also names methods (``oauth2``, ``md5``)."""
    key = m.group("k")
    if not (_key_ok(m) and _literal(value, m)) or _names_itself(value, key):
        return False
    if key == "auth":
        return len(value) >= 8 and (_mixed_case(value, m) or any(not (c.isalnum() or c in "_-.") for c in value))
    return _strong(key) or _looks_secret(value)


def _bare(value: str, m: re.Match[str]) -> bool:
    """An unquoted value: also rule out code such as ``token = get_token()`` or ``pw=password``, and
    words that describe a secret (``password: required``)."""
    if value.lower() in NOT_SECRET_WORDS:  # first: the cheapest test, and the commonest answer
        return False
    if not _strong(m.group("k")) and _UNBALANCED.search(value):  # token=t).load(x): tokens have no ")"
        return False
    return _quoted(value, m) and not _CODE_REFERENCE.match(value)


# Words, Capitalised or joined in camelCase/PascalCase/snake_case: names, not random strings.
_WORDS = re.compile(r"[A-Z]?[a-z]*+(?:[_.-]?[A-Z]?[a-z]++)*+\Z")


def _looks_secret(value: str) -> bool:
    """A digit, a symbol or a random mix of cases: ``hunter2``, ``Tr0ub4dor&3``, ``xKqPzRw`` are;
    ``expired``, ``EOF``, ``NextMarker``, ``string.quoted.double`` are not."""
    if any(c.isdigit() or not (c.isalnum() or c in "_-.") for c in value):
        return True
    return value.lower() != value != value.upper() and not _WORDS.match(value)


_TRAILING_MARKS = re.compile(r"[^\w]+\Z")


def _token_like(value: str) -> bool:
    """What prose can hold as a secret: a digit or a symbol, or eight letters in a random mix of cases
    (``hunter2``, ``Xk9!mm``, ``xKqPzRwT``; not ``case-sensitive``, ``JWT-encoded``, ``John's``).
    Marks after the last letter or digit are the sentence's (``correct.");``, ``supplied.</p>``)."""
    value = _TRAILING_MARKS.sub("", value)
    if any(c.isdigit() or not (c.isalnum() or c in "_-.'") for c in value):
        return not _MEASURE.match(value)
    return len(value) >= 8 and value.isalpha() and _looks_secret(value)


_PAIRS = {")": "(", "]": "[", "}": "{"}
_UNBALANCED = re.compile(r"^[^(]*\)|^[^\[]*\]|^[^{]*\}")  # a closer of what the value did not open: code
_RUN = re.compile(r"\S{0,512}+")


def _trimmed(value: str) -> str:
    """The secret in a run of non-blanks, without what running text put after it: one sentence mark
    and unbalanced closing brackets or quotes (``hunter2.``, ``connect(password=x9y8z7)``,
    ``"Bearer abc123"``)."""
    punct = False
    for _ in range(8):
        if len(value) <= 1:
            break
        last = value[-1]
        closer = last in _PAIRS and value.count(last) > value.count(_PAIRS[last])
        if closer or last in "\"'`" and (value.count(last) % 2 or last not in value.rstrip(last)):
            value = value[:-1]
        elif last in ".,;:" and not punct:
            value, punct = value[:-1], True
        else:
            break
    return value


_IN_PATH = re.compile(r"[:/][\w.-]*\Z")
_KWARG = re.compile(r"[(,][ \t]*[\w.-]*\Z")
_REST_OF_LINE = re.compile(r"[ \t]*(?:[ \t][#;][^\n]*)?(?:\r?\n|\Z)")
# After a value: the end of the field (line end, a comment, a clause mark, the next "key:").
_FIELD_END = re.compile(r"""[.,;:!?)\]}"'`]|[ \t]*(?:\r?\n|\Z|#|//|\||[\w.-]{1,64}[ \t]*[:=](?:[ \t]|\Z))""")


def _value_end(m: re.Match[str], value: str) -> int:
    return _secret_span(m)[0] + len(value)


def _env_value(value: str, m: re.Match[str]) -> bool:
    """``KEY=value``. Spaced out (``key = value``) it is INI or code: the value must then end the
    line and look like a secret, which rules out ``token = Ignore + Plain`` or ``a, pw = u, p``.
    A keyword argument must look like a secret too: ``f(token=next_token)`` passes a variable."""
    if not _bare(value, m):
        return False
    if " " in m.string[m.end("k") : m.start("s")]:  # code: an attribute may have digits (ctypes.c_int32)
        return (bool(_REST_OF_LINE.match(m.string, _value_end(m, value))) and _looks_secret(value)
                and not _ATTRIBUTE.match(value))
    if _KWARG.search(m.string, max(0, m.start("k") - 80), m.start("k")):  # f(a, token=next_token)
        return _looks_secret(value) and not _UNBALANCED.search(value)  # f(token=token)[0].id: code
    return True


_ATTRIBUTE = re.compile(r"[A-Za-z_$][\w$]*+(?:\.[A-Za-z_$][\w$]*+)++\Z")
_IDENTIFIER = re.compile(r"[A-Za-z_$][\w$]*+\Z")


def _colon_value(value: str, m: re.Match[str]) -> bool:
    """``key: value`` (YAML, headers, forms, chat). A value that looks like a secret is one, even in
    the middle of a sentence (``password: irKEeDTl9pIR! and then``). A plain word is one only under
    a password key and only when it ends the field (``password: sunshine``, ``Password: Sunshine,``);
    followed by more words it is prose (``password: see the vault``). Words that describe instead of
    being a secret (``required``, ``same``, ``ask``...), code (``token: str):``), a quoted key with a
    bare name (``"token": next_token,``) and a key inside an ARN or path are kept."""
    key = m.group("k")
    if not _bare(value, m):
        return False
    if _IN_PATH.search(m.string, max(0, m.start("k") - 80), m.start("k")):  # arn:aws:...:secret:x
        return False
    after = m.string[m.end("k")]
    if after in "\"'\\":  # "token": value, in JSON or a dict: a number or a token, not a name
        return _looks_secret(value) and not _IDENTIFIER.match(value)
    if after in " \t" and not key.startswith("mot"):  # "Pass :meth:`peek`": only French puts a blank there
        return False
    ends = bool(_FIELD_END.match(m.string, _value_end(m, value)))
    if _looks_secret(value):
        return ends and _strong(key) or not _MEASURE.match(value)
    return ends and _strong(key)


def _prose_value(value: str, m: re.Match[str]) -> bool:
    """"the password is X": X must look like a token (``hunter2``), not a word or a measure."""
    if m.group("s") is None:  # quoted: the password is "correct horse"
        return _quoted(value, m)
    return _token_like(value) and _bare(value, m)


def _flag_value(value: str, m: re.Match[str]) -> bool:
    """``--password VALUE``: must look like a secret, as ``psql --password shop`` takes no value."""
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
_KEY_NAMES = (  # factored by first letter: the engine tries fewer branches at each position
    r"(?:p(?:ass(?:word|wd|phrase|code|wort)?|wd?)|s(?:ecret|enha)|token|a(?:pi[ _-]?key|ccess[ _-]?key"
    r"|uth(?:[_-]?key)?)|kennwort|mot[ _-]de[ _-]passe|contrase(?:ñ|n)a|wachtwoord)"
)
_KEY_BASE = re.compile(_KEY_NAMES)
_KEY = rf"(?P<k>{_KEY_NAMES}(?:[ _.-]?(?:key|value))?)" r"""\\?["']?[ \t]*"""
# A quoted value. Opened by \" (a JSON string inside a string) it ends at the next \"; opened by a
# bare quote it ends at the next bare one, and \" inside is an escaped quote ("ab\"c").
_DQ = r'(?:\\"(?P<s4>(?:[^"\\\r\n]|\\[^"\r\n]){1,512}+)\\"|"(?P<s>(?:[^"\\\r\n]|\\[^\r\n]){1,512}+)")'
_SQ = r"(?:\\'(?P<s5>(?:[^'\\\r\n]|\\[^'\r\n]){1,512}+)\\'|'(?P<s2>(?:[^'\\\r\n]|\\[^\r\n]){1,512}+)')"
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
_ASSIGN_NEEDLES = ("pass", "pw", "secret", "token", "key", "auth", "kennwort", "contrase", "senha", "wachtwoord")
_VALUE = r"(?P<s>[^\s\"'`$<{\[(-]\S{0,255}+)"  # an unquoted option value: a run of non-blanks
_ARGS = r"(?:[ \t]++[^\s;|&]++){0,12}?"  # up to 12 arguments of a command before the option, lazily
_OPTION = rf"(?:'(?P<s2>[^'\r\n]{{1,256}}+)'|\"(?P<s3>[^\"\r\n]{{1,256}}+)\"|{_VALUE})"  # or quoted


def _rule(
    kind: str,
    pattern: str,
    needles: tuple[str, ...],
    check: _Check | None = None,
    *,
    lower: bool = False,
    trim: bool = False,
) -> _Rule:
    return _Rule(kind, re.compile(pattern), needles, check, lower, trim)


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
        r"(?:bearer|basic|token|apikey|api-key)[ \t]+(?P<s>\S{1,1024}+)",
        ("authorization",),
        _literal,
        lower=True,
        trim=True,
    ),
    _rule(
        "secret_assignment",
        _KEY + rf"(?:=>|:=|=|:)[ \t]*(?:{_DQ}|{_SQ}|{_BQ})",
        _ASSIGN_NEEDLES,
        _quoted,
        lower=True,
    ),
    # Command options that take a password, on the command's own line (at most 12 arguments after the
    # command name): mysql -pX, sshpass -p X, docker login -p X, redis-cli -a X, curl -u user:X.
    _rule(
        "secret_assignment",
        # the value is read in a look-ahead, so that a search goes on right after "-p"
        r"(?:(?<![\w-])|(?<=-p))(?:mysql|mariadb)[\w-]*+" + _ARGS + r"[ \t]++-p(?=" + _OPTION + ")",
        ("mysql", "mariadb"),
        _literal,
        trim=True,
    ),
    _rule(
        "secret_assignment",
        r"(?<![\w-])(?:sshpass|(?:docker|podman|buildah|skopeo|nerdctl|oras)[ \t]++login)"
        + _ARGS + r"[ \t]++(?:-p|--password)[ \t]++" + _OPTION,
        ("sshpass", "docker", "podman", "buildah", "skopeo", "nerdctl", "oras"),
        _literal,
        trim=True,
    ),
    _rule("secret_assignment", r"(?<![\w-])redis-cli" + _ARGS + r"[ \t]++-a[ \t]++" + _OPTION, ("redis-cli",),
          _literal, trim=True),
    _rule(
        "secret_assignment",
        r"(?<![\w-])curl" + _ARGS + r"[ \t]++(?:-u[ \t]*+|--user(?:[ \t]++|=))[\"']?[^\s:\"'\[\]$]{1,128}+:"
        r"(?P<s>[^\s\"'$]\S{0,255}+)",
        ("curl",),
        _literal,
        trim=True,
    ),
    _rule("secret_assignment", r"-pass(?:in|out)?[ \t]+pass:(?P<s>\S{1,256}+)", ("pass:",), _literal, trim=True),
    _rule(  # redis.conf
        "secret_assignment",
        r"(?m)^[ \t]*(?:requirepass|masterauth)[ \t]+(?P<s>[^\s\"']\S{0,255}+)",
        ("requirepass", "masterauth"),
        _literal,
        trim=True,
    ),
    _rule(  # KEY=value (env files, shell, URLs, INI, kwargs)
        "secret_assignment",
        _KEY + r"(?:=>|:=|=)[ \t]*(?P<s>(?![#=\"'`\\\[&;,(])\S{1,3}+(?:[^\s&;,]|[&;,](?![\w.-]{1,64}=)){0,509}+)",
        _ASSIGN_NEEDLES,
        _env_value,
        lower=True,
        trim=True,
    ),
    _rule(  # key: value (YAML, HTTP headers, forms, logs, chat); key:value stops at "{" (CSS: .password:focus{)
        "secret_assignment",
        _KEY + r":(?P<sp>[ \t]++)?(?P<s>[^\s\"'`|>#{\[(,:;](?(sp)\S|[^\s{]){0,511}+)",
        _ASSIGN_NEEDLES,
        _colon_value,
        lower=True,
        trim=True,
    ),
    _rule(  # the password (for the wifi) is X
        "secret_assignment",
        rf"(?P<k>{_KEY_NAMES})(?:[ \t]+(?:for|of|on|to|at)[ \t]+[^\n.:;,!?=]{{1,40}}?)?"
        r"[ \t]+(?:(?:is|was)(?:[ \t]+now)?|ist|est|es|é)[ \t]*:?[ \t]+"
        r"(?:\"(?P<s2>[^\"\r\n]{1,256}+)\"|'(?P<s3>[^'\r\n]{1,256}+)'|(?P<s>[^\s\"'`(\[{<]\S{4,511}+))",
        _ASSIGN_NEEDLES,  # an unquoted X has 5 characters or more (before trimming)
        _prose_value,
        lower=True,
        trim=True,
    ),
    _rule(  # --password VALUE
        "secret_assignment",
        r"--(?<![\w\-\]]--)(?P<k>[a-z0-9-]{0,30}?(?:pass(?:word|wd|phrase)?|pwd|token|secret|api-?key|access-key))"
        r"[ \t]+" + _OPTION,
        ("--",),
        _flag_value,
        lower=True,
        trim=True,
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
    for name in ("s", "s2", "s3", "s4", "s5"):
        if name in groups and m.group(name) is not None:
            return m.span(name)
    return m.span()


def _lower(text: str) -> str:
    lowered = text.lower()
    if len(lowered) != len(text):  # a few characters lower-case to two; keep positions aligned
        lowered = text.translate(_ASCII_LOWER)
    return lowered


_PLACEHOLDERS_LOWER = re.compile(r"\[redacted:[a-z_]{1,40}\]")


_NEEDLES = frozenset(n for rule in _RULES for n in rule.needles)


def _needles_in(lowered: str) -> frozenset[str]:
    """The needles that occur in the text outside placeholders ("secret" in one is no needle)."""
    plain = _PLACEHOLDERS_LOWER.sub("", lowered) if "[redacted:" in lowered else lowered
    return frozenset(n for n in _NEEDLES if n in plain)


def _accepted_end(rule: _Rule, text: str, start: int, end: int, m: re.Match[str]) -> int:
    """Where the accepted value of an unquoted run ends, or -1. The value is trimmed (``_trimmed``);
    when it stopped before a next ``&key=``/``;key=``/``,key=`` pair (query strings, ADO.NET) and is
    rejected, the whole run is tried, in case what follows was the secret's own."""
    check = rule.check
    value = _trimmed(text[start:end])
    if check is None or check(value, m):
        return start + len(value)
    if end < len(text) and text[end] in "&;,":
        value = _trimmed(text[start : _RUN.match(text, start).end()])
        if check(value, m):
            return start + len(value)
    return -1


def _redact_once(text: str, counts: dict[str, int]) -> str:
    """Apply every rule once, in order, each to the text the previous ones left."""
    lowered = _lower(text)
    present = _needles_in(lowered)  # a superset for the whole pass: replacing adds no needle
    for rule in _RULES:
        if rule.needles and present.isdisjoint(rule.needles):
            continue
        spans: list[tuple[int, int]] = []
        for m in rule.pattern.finditer(lowered if rule.lower else text):
            start, end = _secret_span(m)
            if start >= end or (spans and start < spans[-1][1]):  # inside a whole run taken just before
                continue
            if rule.trim and m.group("s") is not None:
                end = _accepted_end(rule, text, start, end, m)
            elif rule.check is not None and not rule.check(text[start:end], m):
                end = -1
            if end > start:
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
