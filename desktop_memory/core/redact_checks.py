"""Whether a matched value really is a secret: the checks of core/redact.py's rules (pure, standard library).

A rule's pattern finds a candidate; its check looks at the value and where it stands (a field, running
text, prose, a command's option) and keeps names, references, code and plain words. The rules are in
redact_rules.py; what counts as a secret is described in redact.py's docstring.
"""

from __future__ import annotations

import re

_MARK = "[REDACTED:"

# Key names that hold secrets: the prefix is free (DB_PASSWORD, clientSecret, x-api-key), the
# suffix is not, so token_count, tokenizer, max_tokens or password_file are not keys.
_KEY_NAMES = (  # factored by first letter: the engine tries fewer branches at each position
    r"(?:p(?:ass(?:word|wd|[ _-]?phrase|code|wort)?|wd?|rivate[ _-]?key)|s(?:ecret|enha)|token"
    r"|a(?:pi[ _-]?key|cc(?:ess|ount)[ _-]?key|uth(?:[_-]?key)?)|kennwort|mot[ _-]de[ _-]passe|contrase(?:ñ|n)a"
    r"|wachtwoord)"
)
_KEY_BASE = re.compile(_KEY_NAMES)


def _secret_span(m: re.Match[str]) -> tuple[int, int]:
    """The span of the secret in a match: group s (or s2...s5), else the whole match."""
    groups = m.re.groupindex
    for name in ("s", "s2", "s3", "s4", "s5"):
        if name in groups and m.group(name) is not None:
            return m.span(name)
    return m.span()


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
    if ends or not _WORD_KEY.match(key):  # a plain word, then "and ...": "password: sunshine and then"
        return ends and _strong(key)
    return bool(_AND.match(m.string, _value_end(m, value))) and not _describes(value, _language(key))


def _prose_value(value: str, m: re.Match[str]) -> bool:
    """"the password (for the wifi) is X", "api key for the weather service: X": X must look like a token
    (``hunter2``), not a measure, and under a token or API key not a short number (``Token of appreciation:
    50000``); under a password key a plain word that ends the clause is one too (``sunflower``), unless it
    describes the password (``the password is mandatory``, ``Das Passwort ist falsch``: ``_describes``)."""
    if m.group("s") is None:  # quoted: the password is "correct horse"
        return _quoted(value, m)
    if m.group("bare") is not None:  # no separator: api key 3f9a...
        return _machine_value(value, m)
    if not _token_like(value):
        return _plain_word(value, m)
    if not _strong(m.group("k")) and re.fullmatch(r"[0-9][0-9 .,-]*", value) and len(value) < 12:
        return False
    return _bare(value, m)


def _flag_value(value: str, m: re.Match[str]) -> bool:
    """``--password VALUE``: must look like a secret, as ``psql --password shop`` takes no value."""
    if m.group("s") is None:  # quoted
        return _literal(value, m)
    return _bare(value, m) and _looks_secret(value)


# --- plain words and passphrases in prose, YAML block scalars, machine keys without a separator, AWS in a sentence

# Closed-class words (articles, pronouns, prepositions, auxiliaries, adverbs; "words", "characters") in English,
# German, French, Spanish, Portuguese and Dutch: a passphrase holds none ("the passphrase is at least 20 chars").
_FUNCTION_WORDS = frozenset(re.findall(r"\S+", """
a an the this that these those it its my your our their his her hers ours yours theirs mine me you we they he she them
us i is am are was were be been being do does did has have had will would shall should can could may might must not no
nor never always also too very so such than then there here where when what which who whom whose why how whatever
whichever something nothing anything everything someone anyone everyone somewhere nowhere anywhere everywhere elsewhere
all any some each every both either neither few many much more most less least other another own only just even still
already yet again ever now soon later before after above below under over into onto upon with without within from for
to of in on at by about as like per via off out up down through until unless because since while if or and but although
though enough quite rather pretty really actually basically probably maybe perhaps definitely certainly simply last
next words characters chars letters digits long der die das den dem des ein eine einen einem einer ist sind nicht kein
keine sehr zu zum zur auf im mit für von vom bei nach noch schon auch nur immer nie hier dort da wer wie wo und oder
aber dein deine mein meine sein seine ihr ihre unser unsere gleich le la les un une du de au aux est sont était pas ne
trop très aussi encore déjà toujours jamais ici là dans sur sous avec pour par sans et ou mais mon ma mes ton ta tes
son sa ses notre votre leur ce cette ces el los las unos unas es son era muy demasiado también ya siempre nunca aquí
allí en con para por sin y pero mi mis tu tus su sus nuestro nuestra este esta estos o os as um uma é são não muito
demais também já sempre aqui ali em com sem e mas meu minha teu tua seu sua nosso nossa isso het een zijn niet geen te
zeer erg ook al altijd nooit daar op voor van zonder maar mijn jouw je uw haar ons onze dit dat deze
"""))
# Words that describe a password instead of being it (English, then German, French, Spanish, Portuguese, Dutch;
# numbers, pointers such as "see" and "ask"), and the closed-class words; the tests use it.
DESCRIBING_WORDS = _FUNCTION_WORDS | NOT_SECRET_WORDS | frozenset(re.findall(r"\S+", """
wrong right correct incorrect valid invalid weak strong short long good bad fine great okay new old same different
simple complex easy hard difficult secure insecure safe unsafe unique random temporary permanent default blank empty
mandatory required optional needed necessary unnecessary sensitive insensitive public private personal secret known
unknown obvious common popular trivial fake real identical similar current previous gone lost missing available
unavailable active inactive visible invisible ready due inside outside lowercase uppercase numeric alphanumeric generic
automatic manual static dynamic irrelevant important relevant redundant sufficient insufficient consistent inconsistent
recent constant independent present absent urgent standard typical normal usual unusual special strange weird funny
silly stupid clever smart nice cool awesome terrible horrible awful perfect minimal limited unlimited single double
plain clear cleartext plaintext readable unreadable guessable unguessable predictable unpredictable memorable usable
unusable reusable recoverable unrecoverable possible impossible confidential classified internal external working
broken gibberish nonsense frozen hidden written given shown forgotten unclear unsure uncertain longer shorter stronger
weaker better worse safer easier harder simpler newer older one two three four five six seven eight nine ten eleven
twelve sixteen twenty first second third enter type choose pick keep write store save share request generate create
follow click refer consult falsch richtig korrekt ungültig gültig abgelaufen erforderlich notwendig nötig leer neu alt
geändert gesperrt sicher unsicher schwach stark kurz lang geheim bekannt unbekannt identisch anders vergessen weg
verschlüsselt gespeichert pflicht zufällig einfach schwierig öffentlich privat persönlich leicht schwer gross groß
klein siehe frag fragen incorrecte correcte invalide valide expiré expirée obligatoire requis nécessaire faux fausse
bon bonne mauvais mauvaise vide nouveau nouvelle ancien ancienne différent différente identique oublié changé modifié
bloqué sécurisé faible fort forte court courte longue secrète inconnu perdu temporaire provisoire aléatoire compliqué
facultatif optionnel personnel personnelle facile difficile erroné voir demande demander incorrecta incorrecto correcta
correcto inválida inválido válida válido obligatoria obligatorio requerida requerido necesaria necesario vacía vacío
nueva nuevo antigua antiguo diferente igual olvidada cambiada bloqueada segura seguro insegura débil fuerte corta corto
larga largo secreta secreto desconocida aleatoria opcional caducada guardada expirada errónea predeterminada pequeña
ver pregunta preguntar consulta mira incorreta incorreto correta correto obrigatória obrigatório necessária vazia vazio
nova antiga esquecida alterada fraca curta longa desconhecida temporária aleatória pessoal simples errada certa padrão
única fácil difícil pequena grande pergunte perguntar onjuist juist ongeldig geldig verplicht verlopen leeg nieuw oud
hetzelfde vergeten gewijzigd geblokkeerd veilig onveilig zwak sterk kort onbekend tijdelijk willekeurig optioneel
standaard fout zie vraag
"""))
# Endings of such words, by the language of the key: participles, adverbs, adjectives (not "butterfly", "seaweed").
_ENDINGS = {
    "en": r"(?:(?<!e)ed|ing|(?<![fl])ly|ous|ful|less|(?:siti|ssi|cti)ve)",
    "de": r"(?:ig|lich|isch|bar|los|\Age\w{3,}(?:t|en))",
    "fr": r"(?:ée?s?|ible|able)",
    "es": r"(?:ible|able)",
    "pt": r"(?:ível|ável)",
    "nl": r"(?:ig|lijk|baar|loos|\Age\w{3,}[dt])",
}
_DESCRIBING_END = {lang: re.compile(ending + r"\Z") for lang, ending in _ENDINGS.items()}
_ANY_END = re.compile("(?:" + "|".join(_ENDINGS.values()) + r")\Z")
_KEY_LANGUAGE = (("passwort", "de"), ("kennwort", "de"), ("mot", "fr"), ("contrase", "es"), ("senha", "pt"),
                 ("wachtwoord", "nl"))
# Password keys: people choose their values, so a plain word in prose is one (not a secret's or a token's).
_WORD_KEY = re.compile(r"pass(?:w(?:or)?d|wort|[ _-]?phrase|code)|kennwort|mot|contrase|senha|wachtwoord")
_PLAIN = re.compile(r"[^\W\d_]{2,}+(?:-[^\W\d_]{2,}+)*+")  # a word, or words joined by hyphens
_CONJUNCTION = r"(?:and|but|or|then|und|aber|oder|et|mais|ou|y|pero|e|mas|maar)(?![\w'-])"
# After a plain-word value: the end of its clause (a mark, a dash, a bracket, the line's end, a conjunction).
_CLAUSE_END = re.compile(r"[ \t]*+(?:[.,;:!?)\]}\"'`…]|[-–—](?:[ \t]|\Z)|\(|\r?\n|\Z)|[ \t]++" + _CONJUNCTION, re.I)
_AND = re.compile(r"[ \t]++" + _CONJUNCTION, re.I)


def _language(key: str) -> str:
    return next((lang for prefix, lang in _KEY_LANGUAGE if key.startswith(prefix)), "en")


def _describes(word: str, lang: str | None = None) -> bool:
    """A word that says something about a password (``mandatory``, ``hashed``, ``falsch``, ``expiré``), or a
    closed-class word. ``lang`` picks the endings checked (all languages when None)."""
    word = word.lower()
    if word in DESCRIBING_WORDS:
        return True
    ending = _DESCRIBING_END[lang] if lang else _ANY_END
    return len(word) > 4 and bool(ending.search(word))


def _words_secret(words: list[str], lang: str) -> bool:
    """Several plain words are a passphrase (``correct horse battery staple``) when none is a closed-class
    word, the first is no pointer (``see``, ``ask``) and at most one describes (two words: none)."""
    lowered = [w.lower() for w in words]
    if lowered[0] in NOT_SECRET_WORDS or any(w in _FUNCTION_WORDS for w in lowered):
        return False
    described = sum(_describes(w, lang) for w in lowered)
    return described == 0 if len(words) == 2 else described <= 1


def _plain_word(value: str, m: re.Match[str]) -> bool:
    """A plain word in prose under a password key (``the wifi password is sunflower``, ``Passwort für das NAS:
    Himbeere``) when it ends its clause and does not describe the password."""
    key = m.group("k")
    if m.group("is") is None and m.group("eq") is None:  # "Password - Wikipedia", "password -> hash": a title, a step
        return False
    if not (_WORD_KEY.match(key) and _key_ok(m) and _PLAIN.fullmatch(value)) or _names_itself(value, key):
        return False
    if not _CLAUSE_END.match(m.string, _value_end(m, value)):
        return False  # "the password is case sensitive", "is stored in 1Password"
    parts, lang = value.split("-"), _language(key)
    if _describes(value, lang):
        return False
    return len(value) >= 5 if len(parts) == 1 else _words_secret(parts, lang)  # Correct-Horse-Battery-Staple


def _phrase_value(value: str, m: re.Match[str]) -> bool:
    """Several words after a passphrase key, up to the end of the clause: ``my passphrase is correct horse
    battery staple``; a seed or recovery phrase is 12-24 lower-case words whatever they are."""
    key = m.group("k")
    if not _key_ok(m) or _MARK in value:
        return False
    words = [w.strip("'") for w in value.split()]
    if not key.startswith("pass") and len(words) in (12, 15, 18, 21, 24) and all(w.isalpha() for w in words):
        return True
    return all(words) and _words_secret(words, _language(key))


def _block_value(value: str, m: re.Match[str]) -> bool:
    """A YAML block scalar (``password: |`` and the lines indented under it). Under a password key any
    literal is the secret; under a secret, token or API key each line is one run of a secret-looking value."""
    key = m.group("k")
    if not (_key_ok(m) and _literal(value, m)) or _names_itself(value, key) or value.lower() in NOT_SECRET_WORDS:
        return False
    if _WORD_KEY.match(key):
        return True
    lines = [line.strip() for line in value.splitlines()]
    return all(len(line.split()) == 1 for line in lines if line) and _looks_secret("".join(lines))


_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\Z", re.I)
_HEX = re.compile(r"(?=[^a-f]*[a-f])(?=[^0-9]*[0-9])[0-9a-f]{16,}+\Z", re.I)


def _machine_value(value: str, m: re.Match[str]) -> bool:
    """A value right after the key word, without a separator (``api key 3f9a...``, ``secret 9fK2...``): only a
    machine-made one, hex with letters and digits or a random mix of cases and digits, 16 characters or more."""
    if not _key_ok(m) or _names_itself(value, m.group("k")) or _UUID.match(value):
        return False
    return bool(_HEX.match(value)) or _random_key(value, m)


_AWS_NEAR = re.compile(r"(?<![a-z])aws(?![a-z])|(?<![a-z0-9])a[sk]ia[a-z0-9]{16}(?![a-z0-9])")
_B64_LINE = re.compile(r"[A-Za-z0-9+/=]{32,}\Z")


def _aws_secret(value: str, m: re.Match[str]) -> bool:
    """40 characters of base64 with both cases and a digit near the word AWS or an access key id (``Prod AWS: key
    AKIA... secret 9fK2...``), not a line of a base64 block (a certificate's last line)."""
    if not _random_key(value, m):
        return False
    text, start, end = m.string, m.start(), m.end()
    lines = text[max(0, start - 100) : end + 100].split("\n")  # the value's line and the lines around it
    at = text.count("\n", max(0, start - 100), start)
    around = [lines[i].strip() for i in (at - 1, at + 1) if 0 <= i < len(lines)]
    if lines[at].strip() == value and any(_B64_LINE.match(line) for line in around):
        return False
    return bool(_AWS_NEAR.search(text[max(0, start - 200) : end + 80].lower()))
