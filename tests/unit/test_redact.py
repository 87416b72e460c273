"""Tests for desktop_memory.core.redact: corpus, edge cases, speed and Hypothesis properties."""

from __future__ import annotations

import base64
import dataclasses
import json
import random
import re
import string
import sys
import time
from collections import Counter
from pathlib import Path
from urllib.parse import quote

import pytest
from hypothesis import HealthCheck, assume, example, given, settings
from hypothesis import strategies as st

from desktop_memory.core.redact import PLACEHOLDER, Redaction, redact

CORPUS_PATH = Path(__file__).resolve().parents[1] / "data" / "redaction_corpus.jsonl"
CORPUS = [json.loads(line) for line in CORPUS_PATH.read_text(encoding="utf-8").splitlines() if line.strip()]
POSITIVES = [row for row in CORPUS if row["kinds"]]
NEGATIVES = [row for row in CORPUS if not row["kinds"]]

KINDS = (
    "openai_api_key", "anthropic_api_key", "aws_access_key", "aws_secret_key", "github_token",
    "gitlab_token", "google_api_key", "slack_token", "slack_webhook", "stripe_key", "huggingface_token",
    "npm_token", "sendgrid_key", "twilio_api_key", "jwt", "private_key", "secret_assignment",
    "connection_string", "credit_card", "telegram_bot_token", "age_secret_key",
)  # fmt: skip

# No example database: the tests must not write a .hypothesis directory into the tree.
PROPERTY = settings(max_examples=200, deadline=None, database=None,
                    suppress_health_check=[HealthCheck.too_slow])


def _ph(kind: str) -> str:
    return PLACEHOLDER.format(kind=kind)


def _row_id(row: dict) -> str:
    return f"{CORPUS.index(row) + 1}:{row['note']}"


# --- corpus ---------------------------------------------------------------------------------------

def test_corpus_is_big_and_covers_every_kind() -> None:
    assert len(CORPUS) >= 300
    assert len(POSITIVES) >= 150
    assert len(NEGATIVES) >= 130
    per_kind = Counter(kind for row in POSITIVES for kind in row["kinds"])
    assert set(per_kind) == set(KINDS)
    assert all(per_kind[kind] >= 3 for kind in KINDS), per_kind


@pytest.mark.parametrize("row", CORPUS, ids=_row_id)
def test_corpus_sample(row: dict) -> None:
    result = redact(row["text"])
    assert result.counts == row["kinds"]
    assert result.total == sum(row["kinds"].values())
    if not row["kinds"]:
        assert result.text == row["text"]
    for secret in row.get("secrets", []):
        assert secret not in result.text
    for kind, n in row["kinds"].items():
        assert result.text.count(_ph(kind)) == n


@pytest.mark.parametrize("row", CORPUS, ids=_row_id)
def test_corpus_sample_is_idempotent(row: dict) -> None:
    once = redact(row["text"])
    twice = redact(once.text)
    assert twice.text == once.text
    assert twice.counts == {}


# --- API ------------------------------------------------------------------------------------------

def test_api_shape() -> None:
    assert PLACEHOLDER == "[REDACTED:{kind}]"
    result = redact("nothing to see here")
    assert isinstance(result, Redaction)
    assert result == Redaction("nothing to see here", {})
    assert result.total == 0
    with pytest.raises(dataclasses.FrozenInstanceError):
        result.text = "x"  # type: ignore[misc]


def test_counts_and_total() -> None:
    text = "AKIAABCDEFGHIJKLMN23 and AKIAZYXWVUTSRQPO7654 and password=hunter22"
    result = redact(text)
    assert result.counts == {"aws_access_key": 2, "secret_assignment": 1}
    assert result.total == 3
    assert result.text == (
        f"{_ph('aws_access_key')} and {_ph('aws_access_key')} and password={_ph('secret_assignment')}"
    )


# --- specific behaviour ---------------------------------------------------------------------------

ANTHROPIC = "sk-ant-api03-" + "Ab1Cd2Ef3Gh4Ij5Kl6Mn7Op8Qr9St0Uv1Wx2Yz3" * 2 + "AA"
OPENAI = "sk-proj-" + "Zy9Xw8Vu7Ts6Rq5Po4Nm3Lk2Ji1Hg0Fe" * 2
JWT = (
    "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkphbmUifQ."
    "c2lnbmF0dXJlLW5vdC1yZWFsLWJ1dC1sb29rcy1maW5l"
)


@pytest.mark.parametrize(
    ("text", "expected", "counts"),
    [
        (ANTHROPIC, _ph("anthropic_api_key"), {"anthropic_api_key": 1}),
        (OPENAI, _ph("openai_api_key"), {"openai_api_key": 1}),
        (f"Authorization: Bearer {JWT}", f"Authorization: Bearer {_ph('jwt')}", {"jwt": 1}),
        (f'api_key = "{OPENAI}"', f'api_key = "{_ph("openai_api_key")}"', {"openai_api_key": 1}),
        (f"token={JWT}", f"token={_ph('jwt')}", {"jwt": 1}),
        (
            "https://user:ghp_abcdefghijklmnopqrstuvwxyz0123456789@github.com/x.git",
            f"https://user:{_ph('github_token')}@github.com/x.git",
            {"github_token": 1},
        ),
    ],
    ids=["anthropic", "openai", "bearer-jwt", "key-in-assignment", "jwt-in-assignment", "token-in-url"],
)
def test_overlaps_use_the_most_specific_kind_once(text: str, expected: str, counts: dict) -> None:
    result = redact(text)
    assert result.text == expected
    assert result.counts == counts


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("password=hunter22", "password=[REDACTED:secret_assignment]"),
        ("passwd: s3cr3t!x", "passwd: [REDACTED:secret_assignment]"),
        ("pwd = Zx81!kq", "pwd = [REDACTED:secret_assignment]"),
        ("export DB_PASSWORD=Tr0ub4dor", "export DB_PASSWORD=[REDACTED:secret_assignment]"),
        ('{"password": "correct horse"}', '{"password": "[REDACTED:secret_assignment]"}'),
        ("  client_secret: abc123XYZ", "  client_secret: [REDACTED:secret_assignment]"),
        ("apikey: 9f8e7d6c5b", "apikey: [REDACTED:secret_assignment]"),
        ("access_token=opaque-42-value", "access_token=[REDACTED:secret_assignment]"),
        ("Authorization: Basic dXNlcjpwYXNz", "Authorization: Basic [REDACTED:secret_assignment]"),
        ("postgres://app:pa55word@db/main", "postgres://app:[REDACTED:connection_string]@db/main"),
        ("redis://:s3cret@cache:6379", "redis://:[REDACTED:connection_string]@cache:6379"),
    ],
)
def test_key_names_are_kept(text: str, expected: str) -> None:
    assert redact(text).text == expected


@pytest.mark.parametrize(
    "text",
    [
        "password=",
        "password=<your password>",
        "token: ${TOKEN}",
        'api_key=os.environ["KEY"]',
        "password: (see the vault)",
        "I forgot my password again",
        "the token count is high",
        "pk_live_51HxYzAbCdEfGhIjKlMnOpQr",
        "4111 1111 1111 1112",  # fails the Luhn check
        "1234567812345670",  # passes Luhn, but no card network starts with 1
        "0.4111111111111111",  # a decimal, not a card
        "f47ac10b-58cc-4372-a567-0e02b2c3d479",
        "da39a3ee5e6b4b0d3255bfef95601890afd80709",
        "risk-free ask-me task-runner",
        "-----BEGIN PUBLIC KEY-----\nMFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAE\n-----END PUBLIC KEY-----",
    ],
)
def test_look_alikes_are_kept(text: str) -> None:
    assert redact(text) == Redaction(text, {})


@pytest.mark.parametrize(
    "number",
    ["4111111111111111", "4111 1111 1111 1111", "5555-5555-5555-4444", "378282246310005", "3782 822463 10005",
     "6011111111111117", "2223003122003222", "3530111333300000", "30569309025904"],
)
def test_card_numbers(number: str) -> None:
    result = redact(f"pay with {number} today")
    assert result.text == f"pay with {_ph('credit_card')} today"
    assert result.counts == {"credit_card": 1}


@pytest.mark.parametrize(
    "label",
    ["RSA PRIVATE KEY", "OPENSSH PRIVATE KEY", "EC PRIVATE KEY", "ENCRYPTED PRIVATE KEY", "PRIVATE KEY"],
)
def test_private_key_blocks(label: str) -> None:
    body = "\n".join(base64.b64encode(bytes(range(i, i + 48))).decode() for i in range(0, 200, 50))
    text = f"key:\n-----BEGIN {label}-----\n{body}\n-----END {label}-----\nbye"
    assert redact(text) == Redaction(f"key:\n{_ph('private_key')}\nbye", {"private_key": 1})


@pytest.mark.parametrize("kind", KINDS)
def test_placeholders_never_match(kind: str) -> None:
    ph = _ph(kind)
    for text in (ph, f"password={ph}", f'"token": "{ph}"', f"secret: {ph}", f"postgres://u:{ph}@h/db",
                 f"Authorization: Bearer {ph}", f"--password {ph}", f"https://{ph}@github.com/x"):
        assert redact(text) == Redaction(text, {})


@pytest.mark.parametrize(
    "text",
    ["", "\x00", "password=\x00abc123", "🔑🔑 password=🔑🔑🔑x1", "\ud800 lone surrogate",
     "İ" * 50 + " password=Ab12cd", "a" * 10_000, "\n" * 1000, "-----BEGIN PRIVATE KEY-----", "://:@",
     "eyJ.eyJ.eyJ", "=" * 100],
)
def test_odd_input_never_raises(text: str) -> None:
    result = redact(text)
    assert isinstance(result.text, str)
    assert redact(result.text).counts == {}


def test_unicode_that_changes_length_when_lowercased() -> None:
    # "İ".lower() is two characters; positions must still line up with the original text.
    result = redact("İİİ password=Ab12cd İİİ")
    assert result.text == f"İİİ password={_ph('secret_assignment')} İİİ"


# --- speed: every pattern must be linear-time ------------------------------------------------------

_MB = 1_000_000


def _big_inputs() -> dict[str, str]:
    rng = random.Random(0)
    return {
        "random": "".join(rng.choices(string.printable, k=_MB)),
        "a": "a" * _MB,
        "equals": "=" * _MB,
        "digits": "7" * _MB,
        "digits-and-spaces": "".join(rng.choices("0123456789 -", k=_MB)),
        "password=": "password=" * (_MB // 9),
        "key-colon": "token: " * (_MB // 7),
        "url": "://a:" * (_MB // 5),
        "jwt-ish": "eyJaaaaaaaaa." * (_MB // 13),
        "pem": "-----BEGIN RSA PRIVATE KEY-----\n" * (_MB // 32),
        "flags": "--password " * (_MB // 11),
        "colon-run": "password: " + "x!" * (_MB // 2),
        "colon-words": "password: a " * (_MB // 12),
        "prose-is": "the password is " * (_MB // 16),
        "prose-for": "password for the " * (_MB // 17),
        "mysql-p": "mysql -p" * (_MB // 8),
        "mysql-long": "mysql " + "a " * (_MB // 2),
        "bearer": "Authorization: Bearer " * (_MB // 22),
        "curl-u": "curl -u a:" * (_MB // 10),
        "env-cut": "token=a&b=" * (_MB // 10),
        "closers": "password=" + ")]}'\"" * (_MB // 5),
        # issue 29: the key-value family in prose and YAML blocks, and the named formats
        "passphrase-words": "my passphrase is " + "lorem " * (_MB // 6),
        "passphrase-keys": "passphrase is a b " * (_MB // 18),
        "yaml-block": "password: |\n" + "    x y\n" * (_MB // 8),
        "yaml-keys": "  password: |\n" * (_MB // 14),
        "yaml-blank-lines": "password: |\n" + "  \n" * (_MB // 3),
        "qualified": "api key for the weather service " * (_MB // 32),
        "bare-key": "token a1b2c3d4e5f6a7b8c9d0 " * (_MB // 27),
        "telegram-ish": "1234567:A" * (_MB // 9),
        "aws-base64": "aws " + "Ab1/" * (_MB // 4),
        "aws-40s": ("AWS " + "Ab1+" * 10 + " ") * (_MB // 45),
        "age-prefix": "AGE-SECRET-KEY-1" * (_MB // 16),
        "conn-password": ";password=a b" * (_MB // 13),
        "sas-sig": "&sig=" * (_MB // 5),
        "plain-word-prose": "the wifi password is sunflower and " * (_MB // 35),
    }


def _under_wine() -> bool:
    """Run by the Windows tier (scripts/windows/check.sh) under Wine, whose heap makes regex work ~5x slower."""
    if sys.platform != "win32":
        return False
    import ctypes

    return hasattr(ctypes.WinDLL("ntdll"), "wine_get_version")


@pytest.mark.parametrize("name", list(_big_inputs()))
def test_one_megabyte_is_fast(name: str) -> None:
    text = _big_inputs()[name]
    start = time.process_time()  # CPU time: a busy machine does not fail it; catastrophic backtracking does
    redact(text)
    assert time.process_time() - start < (15.0 if _under_wine() else 3.0)  # 1.4 s here, 7.7 s under Wine


# --- Hypothesis properties ------------------------------------------------------------------------

_UPPER_DIGITS = string.ascii_uppercase + string.digits
_ALNUM = string.ascii_letters + string.digits

# Fragments that look like the start of a secret, to push the patterns into their corners.
FRAGMENTS = [
    "password", "passwd", "pwd", "token", "secret", "api_key", "Authorization: Bearer ", "Basic ", "=",
    ": ", "\"", "'", "`", "\\", "\n", " ", "-", "_", ".", "/", "@", "://", ":", "[REDACTED:", "]", "${",
    "<", ">", "sk-", "sk-ant-", "AKIA", "ASIA", "ghp_", "github_pat_", "glpat-", "AIza", "xoxb-",
    "hooks.slack.com/services/", "sk_live_", "pk_live_", "hf_", "npm_", "SG.", "SK", "eyJ",
    "-----BEGIN PRIVATE KEY-----", "-----END PRIVATE KEY-----", "4111", "1111 ", "-4242", "0", "9",
    "aws_secret_access_key=", "machine h login u ", "--token ", "postgres://", "user:", "Ab1", "xyz9",
    "QWERTYUIOPASDFGHJKLZ", "0123456789abcdef", "passphrase is ", "the wifi password is ", ": |\n  ", "AccountKey=",
    "12345678:A", "AGE-SECRET-KEY-1", " for the wifi: ", " -> ", " and ",
]
secretish_text = st.lists(
    st.one_of(st.sampled_from(FRAGMENTS), st.text(max_size=12), st.text(alphabet=_ALNUM)),
    max_size=40,
).map("".join)


@PROPERTY
@given(st.text())
def test_never_raises(text: str) -> None:
    result = redact(text)
    assert isinstance(result.text, str)
    assert all(isinstance(k, str) and n > 0 for k, n in result.counts.items())


@PROPERTY
@given(st.one_of(st.text(), secretish_text))
def test_idempotent(text: str) -> None:
    once = redact(text)
    twice = redact(once.text)
    assert twice.text == once.text
    assert twice.counts == {}


@PROPERTY
@given(secretish_text)
def test_counts_match_placeholders(text: str) -> None:
    result = redact(text)
    added = Counter({kind: result.text.count(_ph(kind)) - text.count(_ph(kind)) for kind in result.counts})
    assert dict(added) == result.counts


@PROPERTY
@given(st.text(alphabet=string.ascii_letters + " \n.,!?'"))
def test_plain_prose_is_unchanged(text: str) -> None:
    assert redact(text) == Redaction(text, {})


def _luhn_complete(partial: str) -> str:
    for check in "0123456789":
        number = partial + check
        total = 0
        for i, ch in enumerate(reversed(number)):
            d = int(ch)
            if i % 2:
                d = d * 2 - 9 if d > 4 else d * 2
            total += d
        if total % 10 == 0:
            return number
    raise AssertionError("unreachable")


@st.composite
def visa(draw: st.DrawFn) -> str:
    number = _luhn_complete("4" + draw(st.text(alphabet=string.digits, min_size=14, max_size=14)))
    sep = draw(st.sampled_from(["", " ", "-"]))
    return sep.join(number[i : i + 4] for i in range(0, 16, 4))


@st.composite
def jwt(draw: st.DrawFn) -> str:
    def part(data: bytes) -> str:
        return base64.urlsafe_b64encode(data).rstrip(b"=").decode()

    subject = draw(st.text(alphabet=_ALNUM, min_size=1, max_size=20))
    claims = json.dumps({"sub": subject, "iat": draw(st.integers(0, 2**31))}).encode()
    signature = draw(st.binary(min_size=16, max_size=64))
    return ".".join([part(b'{"alg":"HS256","typ":"JWT"}'), part(claims), part(signature)])


def _with_classes(s: str) -> bool:
    return any(c.isupper() for c in s) and any(c.islower() for c in s) and any(c.isdigit() for c in s)


def _key(kind: str, prefix: str, alphabet: str, size: int, most: int | None = None) -> st.SearchStrategy:
    """(kind, prefix + random body) pairs; OpenAI bodies are forced to mix cases and digits."""
    body = st.text(alphabet=alphabet, min_size=size, max_size=most or size)
    if kind == "openai_api_key":
        body = body.filter(_with_classes)
    return st.tuples(st.just(kind), body.map(prefix.__add__))


SECRETS = st.one_of(
    _key("aws_access_key", "AKIA", _UPPER_DIGITS, 16),
    st.tuples(st.just("credit_card"), visa()),
    _key("github_token", "ghp_", _ALNUM, 36),
    st.tuples(st.just("jwt"), jwt()),
    _key("stripe_key", "sk_live_", _ALNUM, 24, 40),
    _key("openai_api_key", "sk-proj-", _ALNUM, 48, 60),
    _key("google_api_key", "AIza", _ALNUM + "_-", 35),
)
prose = st.lists(st.text(alphabet=string.ascii_lowercase, min_size=1, max_size=9), max_size=12).map(" ".join)


@PROPERTY
@given(prose, SECRETS, prose)
def test_inserted_secret_is_redacted_and_prose_kept(before: str, secret: tuple[str, str], after: str) -> None:
    kind, value = secret
    result = redact(f"{before} {value} {after}")
    assert result.text == f"{before} {_ph(kind)} {after}"
    assert result.counts == {kind: 1}


@PROPERTY
@given(
    prose,
    st.sampled_from(["password", "DB_PASSWORD", "api_key", "client_secret", "auth_token", "apiKey"]),
    st.sampled_from(["=", ": ", " = ", '="', ': "']),
    st.tuples(st.sampled_from(_ALNUM), st.text(alphabet=_ALNUM + "!%^*+", min_size=7, max_size=23))
    .map("".join)
    .filter(_with_classes),
    prose,
)
def test_inserted_assignment_keeps_key(before: str, key: str, sep: str, value: str, after: str) -> None:
    quote = '"' if sep.endswith('"') else ""
    result = redact(f"{before}\n{key}{sep}{value}{quote}\n{after}")
    assert result.text == f"{before}\n{key}{sep}{_ph('secret_assignment')}{quote}\n{after}"
    assert result.counts == {"secret_assignment": 1}


# --- issue 16: the value after a secret field, whatever characters it has ------------------------------

def test_issue16_password_with_one_digit_inside_a_sentence() -> None:
    text = "I set it up, password: irKEeDTl9pIR! and then logged in"
    assert redact(text) == Redaction(
        f"I set it up, password: {_ph('secret_assignment')} and then logged in", {"secret_assignment": 1}
    )


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("database:\n  password: sunshine\n  pool: 5", "database:\n  password: {}\n  pool: 5"),
        ('{"password": "see the vault"}', '{{"password": "{}"}}'),
        ('{"password": "ab\\"c!9"}', '{{"password": "{}"}}'),
        ('{"password": 48151623, "retries": 3}', '{{"password": {}, "retries": 3}}'),
        ("PGPASSWORD=sunshine psql -h db", "PGPASSWORD={} psql -h db"),
        ("export API_TOKEN=Zx8-q2Lr0", "export API_TOKEN={}"),
        ("mysql -u root -pS3cr3t! shop", "mysql -u root -p{} shop"),
        ("mysqldump -uroot -p'a b!9' db", "mysqldump -uroot -p'{}' db"),
        ("wget --password Xk9!mm2q url", "wget --password {} url"),
        ("redis-server --requirepass Xk9!mm2q", "redis-server --requirepass {}"),
        ("sshpass -p 'Xk9 mm2q' ssh ops@h", "sshpass -p '{}' ssh ops@h"),
        ("docker login -u bot -p Xk9!mm2q reg.example.com", "docker login -u bot -p {} reg.example.com"),
        ("redis-cli -a Xk9!mm2q ping", "redis-cli -a {} ping"),
        ("curl -u admin:Xk9!mm2q https://h/api", "curl -u admin:{} https://h/api"),
        ("openssl pkcs12 -passout pass:Xk9!mm2q", "openssl pkcs12 -passout pass:{}"),
        ("requirepass Xk9!mm2q", "requirepass {}"),
        ("Authorization: Bearer ab!cd%ef", "Authorization: Bearer {}"),
        ('-H "Authorization: Bearer abc123xyz"', '-H "Authorization: Bearer {}"'),
        ("the password is hunter2.", "the password is {}."),
        ("The password for the wifi is Xk9!mm2q, enjoy", "The password for the wifi is {}, enjoy"),
        ("pw: Xk9!mm2q", "pw: {}"),
        ("my wifi password: sunshine", "my wifi password: {}"),
        ("Passwort: geheim99 bitte", "Passwort: {} bitte"),
        ("mot de passe : azerty", "mot de passe : {}"),
        ("contraseña: hola1234", "contraseña: {}"),
        ("api key: Zx8q2Lr0Tk and more", "api key: {} and more"),
        ("user: ops password: Xk9!mm2q host: db", "user: ops password: {} host: db"),
        ("(password: Xk9!mm2q)", "(password: {})"),
        ("Password=q9!x;Encrypt=True", "Password={};Encrypt=True"),
        ("?user=a&password=Xk9!mm&ssl=1", "?user=a&password={}&ssl=1"),
        ("connect(password=Xk9!mm2q)", "connect(password={})"),
    ],
)
def test_issue16_field_values_are_redacted(text: str, expected: str) -> None:
    result = redact(text)
    assert result.text == expected.format(_ph("secret_assignment"))
    assert result.counts == {"secret_assignment": 1}


@pytest.mark.parametrize(
    "text",
    [
        "reset your password in settings",
        "the password field is required",
        "password: see the vault",
        "token bucket algorithm",
        "password must be at least 8 characters",
        "api key rotation is due Monday",
        "Password: required",
        "the password is incorrect.",
        "the token is 128-bit",
        "the password is 12 characters long",
        "password: N/A",
        "password: !vault |",
        "password: *db_password",
        "def f(token: str, password: str):",
        "password = getpass.getpass('Password: ')",
        ".password:focus{outline:none}",
        "mysql -u root -p shop",
        "ssh -p 2222 host",
        "psql -U app --password shop",
        "auth: oauth2",
        "auth: md5",
        "Le mot de passe est incorrect.",
        "password: {{ vault_pw }}",
        "curl -u \"$USER:$PASS\" https://h",
        "openssl req -passin env:KEY_PASS",
    ],
)
def test_issue16_look_alikes_are_kept(text: str) -> None:
    assert redact(text) == Redaction(text, {})


# Templates: (template, any literal counts); the value slot is {v}. Templates whose value must
# look like a token (prose, machine keys, a bare --password that psql reads as a database) are False.
FIELD_TEMPLATES = [
    ("password: {v}", True),
    ("database:\n  db_password: {v}\n  pool: 5", True),
    ("Passwort: {v}", True),
    ("mot de passe : {v}", True),
    ("pw: {v}", True),
    ('{"user": "app", "password": "{j}"}', True),
    ("PGPASSWORD={v} psql -h db", True),
    ("DB_HOST=db\nSECRET_KEY={v}\nDEBUG=0", True),
    ("mysql --user=app --password={v} shop", True),
    ("mysql -u root -p{v} shop", True),
    ("postgres://app:{u}@db:5432/shop", True),
    ("Authorization: Bearer {v}", True),
    ("I set it up, password: {v} and then logged in", False),
    ("export API_TOKEN={v}", False),
    ("psql --password {v}", False),
    ("the password is {v}", False),
    ("btw the api key is {v} for staging", False),
]
_PRINTABLE = "".join(chr(c) for c in range(33, 127))  # printable ASCII without spaces
_SYMBOLS = "".join(c for c in _PRINTABLE if not c.isalnum() and c not in "_-.'")  # "John's" is a word
# What the module documents as a reference, not a literal: a call or subscript, a dotted name
# without digits, a URL or a Windows path, a "your_..." / "..._here" placeholder.
_DOCUMENTED_REFERENCE = re.compile(
    r"[A-Za-z_$][\w$.]*(?:(?:\(\)|\[\])(?:\..*)?|[(\[][\"'].*|[(\[].*[)\]](?:=.*)?)"
    r"|[A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)*(?=[^(\[]*[(\[])(?:[(\[][A-Za-z_$][\w$.]*)*[(\[]?"
    r"|[A-Za-z_$]+(?:\.[A-Za-z_$]+)+|[A-Za-z][\w+.-]*://.*|[A-Za-z]:\\.*|(?i:your[_-].*|.*[_-]here)"
    r"|[rRbBuUfF]{1,2}([\"']).*\1|(?i:(?:[a-z0-9]{1,8}[_-]){1,3}(?:\*{3,}|•{3,}|\.{3,}|…))"
)


_AROUND = ".,;:!?)]}\"'`"


_CLOSES_UNOPENED = re.compile(r"[^(]*\)|[^\[]*\]|[^{]*\}")


def _named_after(v: str) -> bool:
    """A name made from a key word, as documented: ``user_password``, ``PasswordHash``, ``aPw``."""
    low = v.lower()
    for key in ("password", "passwort", "pwd", "pw", "passe", "secret", "token", "key"):
        if low == key:
            return True
        cuts = ([len(v) - len(key)] if low.endswith(key) else []) + ([len(key)] if low.startswith(key) else [])
        for i in cuts:
            if 0 < i < len(v) and (v[i] in "_-." or v[i - 1] in "_-." or v[i].isupper() and v[i - 1].islower()):
                return True
    return False


def _stems(v: str) -> list[str]:
    """The value without 0, 1, 2... of the trailing marks that may belong to the text around it."""
    stems = [v]
    while stems[-1] and stems[-1][-1] in _AROUND:
        stems.append(stems[-1][:-1])
    return stems


def _token_like(v: str) -> bool:
    return any(c.isdigit() or c in _SYMBOLS for c in v)


random_secret = (
    st.tuples(st.sampled_from(string.ascii_letters.replace("v", "").replace("V", "")),
              st.text(alphabet=_PRINTABLE, min_size=5, max_size=39))
    .map("".join)
    .filter(_token_like)
    .filter(lambda v: PLACEHOLDER[:10] not in v)  # a placeholder is never a secret again
    # a trailing mark or unbalanced closer belongs to the text around an unquoted value: not the value
    .filter(lambda v: not any(_DOCUMENTED_REFERENCE.fullmatch(stem) for stem in _stems(v)))
    .filter(lambda v: len(_stems(v)[-1]) >= 3)  # "ab))))": the secret is "ab", too short to be one
    .filter(lambda v: not any(_named_after(stem) for stem in _stems(v)))
)


def _assert_value_redacted(template: str, value: str) -> None:
    """The text around the value is kept as it was, and where the value was is a placeholder."""
    text, written = _fill(template, value)
    slot = next(slot for slot in ("{j}", "{u}", "{v}") if slot in template)
    before, after = template.split(slot)
    result = redact(text)
    assert result.text.startswith(before) and result.text.endswith(after), result.text
    middle = result.text[len(before) : len(result.text) - len(after)]
    assert written not in middle and value not in middle
    assert middle.startswith("[REDACTED:") and result.total == 1, middle


def _fill(template: str, value: str) -> tuple[str, str]:
    """The text, and the value as it is written there (escaped in JSON, percent-encoded in a URL)."""
    written = {"{j}": json.dumps(value)[1:-1], "{u}": quote(value, safe=""), "{v}": value}
    for slot, form in written.items():
        if slot in template:
            return template.replace(slot, form), form
    raise AssertionError(template)


@PROPERTY
@given(st.sampled_from(FIELD_TEMPLATES), random_secret)
# a value that is itself an assignment was redacted only after its inner key: "password: pW=[REDACTED:...]"
@example(("password: {v}", True), "pW=000")
@example(("psql --password {v}", False), "a0PW:000")
@example(("the password is {v}", False), "pW=000x")
@example(("password: {v}", True), "a:PW=000")
def test_any_secret_in_any_field_template_is_redacted(template: tuple[str, bool], value: str) -> None:
    if not template[1]:  # in prose, trailing punctuation is the sentence's: "is hunter2." or "is aAAA:)"
        assume(_token_like(re.sub(r"\W+\Z", "", value)))
    if "TOKEN" in template[0] or "api key" in template[0]:  # machine-made tokens never close what they
        assume(not _CLOSES_UNOPENED.match(value))  # did not open: token=t).load(x) is code
    _assert_value_redacted(template[0], value)


@PROPERTY
@given(
    st.sampled_from([t for t, any_literal in FIELD_TEMPLATES if any_literal]),
    st.text(alphabet=string.ascii_letters, min_size=6, max_size=40),
)
def test_plain_word_under_a_password_field_is_redacted(template: str, value: str) -> None:
    from desktop_memory.core.redact import NOT_SECRET_WORDS

    if value.lower() in NOT_SECRET_WORDS or set(value.lower()) == {"x"} or _named_after(value):
        return  # documented: "password: required", "xxxxxx", "pw: userPw"
    _assert_value_redacted(template, value)
