"""Find secrets (API keys, passwords, private keys, card numbers...) in text and mask them.

Pure standard library, no I/O. Every rule is one entry in ``_RULES`` (redact_rules.py, its checks in
redact_checks.py): a kind, a compiled pattern
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

Secret fields. The keys are password, passwd, pass, pwd, pw, passphrase / pass phrase, passcode, secret,
token, api key / apikey / api_key / api-key, access key, account key (Azure's ``AccountKey=``), private key,
auth / auth_key, and Passwort, Kennwort, mot de passe, contraseña, senha, wachtwoord: in any case and with any
prefix (``DB_PASSWORD``, ``client_secret``, ``X-Api-Key``, ``SharedAccessKey``) but no suffix (``token_count``,
``password_file``, ``SharedAccessKeyName`` are no keys).
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
  vault``, ``Password: ask Alice``) unless a password's plain word is followed by "and", "but"...
  (``password: sunshine and then``). A word that describes instead of being a secret
  (``required``, ``same``, ``none``, ``min``...: ``NOT_SECRET_WORDS``) is never taken.
* In prose, a key, optionally words about it ("(prod)", "for the wifi", "für das NAS", "de la box"),
  then "is" (was, ist, lautet, est, es, é), "->", "-", or after such words ":" or "=", then X:
  "the wifi password is X", "api key for the weather service: X", "token for the bot -> X". X is a
  secret if it looks like a token: 5 characters or more, with a digit or a symbol but not a number
  with a unit, a version or a date (``128-bit``, ``v2``, ``24h``, ``2024-01-31``), not a short
  number under a token or API key (``Token of appreciation: 50000``), or 8 letters in a random mix
  of cases. Under a password key (not secret, token, API key) after "is", ":" or "=" a plain word of
  5 letters or more is one too (``sunflower``, ``Correct-Horse-Battery-Staple``) when it ends its
  clause (a mark, a bracket, the line's end, "and"...) and does not describe the password
  (``DESCRIBING_WORDS`` in six languages, and endings by the key's language: ``-ed``, ``-ing``, ``-ly``,
  ``-ous``, ``-ig``, ``-lich``, ``-é``...): "the password is incorrect", "is case-sensitive", "is
  mandatory", "is stored in 1Password", "Das Passwort ist falsch", "Password - Wikipedia" are kept. A
  quoted X ("the password is 'open sesame'", also “...”) is always a secret.
* A passphrase (passphrase, pass phrase, seed / recovery phrase) is several words: "my passphrase is
  correct horse battery staple", "passphrase: violet tractor umbrella seven", up to the end of the
  clause; they are a passphrase when none is a closed-class word (the, to, in, your, very...), the
  first is no pointer (see, ask) and at most one describes ("the passphrase is stored securely",
  "is twelve words long" are kept); a seed or recovery phrase of 12-24 lower-case words always is.
* A YAML block scalar under a secret key (``password: |``, ``>-``, ``|+``...) is the lines indented
  under it, replaced as one; under a token or API key each line must be one secret-looking run.
* A machine-made value right after the key word, without a separator (``api key 3f9a...``,
  ``client secret 9fK2...``): 16 characters or more, hex with letters and digits or a random mix of
  cases and digits, not a UUID.
* ``key = value`` with spaces (INI or code) and keyword arguments: the value must look like a
  secret, and with spaces end the line (``token = Ignore + Plain`` is code). ``--password VALUE``
  too, as ``psql --password shop`` takes no value.
* An unquoted value is a run of non-blanks. A trailing ``.``, ``,``, ``;`` or ``:`` and unbalanced
  closing brackets or quotes belong to the text around it (``is hunter2.``,
  ``connect(password=x9y8)``); in ``key=value`` a following ``&key=``, ``;key=`` or ``,key=``
  starts the next pair (query strings, ADO.NET), unless the value is then rejected: then the whole
  run is taken. A value that holds another key's assignment (``password: pW=X``, ``--password
  a:PW=X``, ``password=${PW}&pw=X``) is taken whole, its inner key included.

Other judgement calls (see tests/data/redaction_corpus.jsonl for examples):

* Named formats: Telegram bot tokens (``123456789:AA...``, 35 characters after the colon, also in
  ``/bot<token>/`` URLs), age identities (``AGE-SECRET-KEY-1...``; ``age1...`` public keys are kept),
  Azure SAS signatures (``&sig=``), a connection string's ``Password=`` with blanks up to its ``;``, and
  an AWS secret key in a sentence: 40 characters of base64 with both cases and a digit, the word AWS
  or an access key id at most 200 characters before it or 80 after (``Prod AWS: key AKIA... secret
  9fK2... region eu-west-1``), not a line of a base64 block (a certificate).
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

Known gaps (tests/data/redaction_corpus_family.jsonl, rows marked ``gap``): a plain word of fewer than 5
letters or ending like a participle (``the password is dumpling``), a plain word right after the key
(``wifi password sunflower``), several unquoted words under a password key (only passphrase keys take
them), a value in a clause of its own ("what's the wifi password? it's sunflower"), "PIN", API key words in
other languages (``clé API``) and a YAML plain scalar on the next line are kept. Taken wrongly: a plain-word
variable in a JavaScript object literal (``{password: hashed, salt}``) and an idiom ("the password to
happiness is gratitude"): privacy first.
"""

from __future__ import annotations

import re
import string
from dataclasses import dataclass

from .redact_checks import _RUN, DESCRIBING_WORDS, NOT_SECRET_WORDS, _secret_span, _trimmed
from .redact_rules import _NESTED_IN, _RULES, _Rule

PLACEHOLDER = "[REDACTED:{kind}]"
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
    """Where the accepted value of an unquoted run ends, or -1. The value is trimmed (``_trimmed``); when
    rejected it is tried without a ``!`` or ``?`` ending a sentence ("the password is marigold!"); when it stopped
    before a next ``&key=``/``;key=``/``,key=`` pair (query strings, ADO.NET) and is rejected, the whole run is
    tried, in case what follows was the secret's own."""
    check = rule.check
    value = _trimmed(text[start:end])
    if check is None or check(value, m):
        return start + len(value)
    if value[-1:] in ("!", "?") and (word := value.rstrip("!?")) and check(word, m):  # "is marigold!"
        return start + len(word)
    if end < len(text) and text[end] in "&;,":
        run = _RUN.match(text, start)  # always matches (possibly empty)
        value = _trimmed(text[start : run.end() if run else end])
        if check(value, m):
            return start + len(value)
    return -1


def _nested_start(lowered: str, m: re.Match[str], start: int, floor: int) -> int:
    """Where an unquoted value starts that is itself the value of a secret key before it on its line
    (``password: pW=X``, ``--password a0PW:X``): the whole of it is the secret, not only what follows its own key."""
    key_at = m.start("k")
    line = lowered.rfind("\n", 0, key_at) + 1
    outer = _NESTED_IN.search(lowered, max(line, key_at - 120, floor), key_at)
    if outer is None or outer.group("blank") is not None and lowered[outer.start() - 1 : outer.start()] != "-":
        return start
    return outer.start("pre")


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
                if rule.trim and m.group("s") is not None and "k" in m.re.groupindex and m.group("k") is not None:
                    start = _nested_start(lowered, m, start, spans[-1][1] if spans else 0)
                spans.append((start, end))
        if not spans:
            continue
        placeholder = PLACEHOLDER.format(kind=rule.kind)
        parts: list[str] = []
        pos = 0
        for start, end in spans:
            parts += (text[pos:start], placeholder)
            pos = end
        parts.append(text[pos:])
        text = "".join(parts)
        lowered = _lower(text)
        counts[rule.kind] = counts.get(rule.kind, 0) + len(spans)
    return text


__all__ = ["DESCRIBING_WORDS", "NOT_SECRET_WORDS", "PLACEHOLDER", "Redaction", "redact"]


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
