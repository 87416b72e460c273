"""The secret patterns of core/redact.py: one `_Rule` per kind and spelling, most specific first (pure data).

Each rule is a kind, a compiled pattern, the literal needles that must occur for it to run, and an
optional check (redact_checks.py) that the matched value really is a secret. How they are applied is in
redact.py.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from .redact_checks import (
    _CONJUNCTION,
    _KEY_NAMES,
    _aws_secret,
    _block_value,
    _colon_value,
    _env_value,
    _flag_value,
    _has_digit,
    _is_card,
    _literal,
    _mixed_case,
    _phrase_value,
    _prose_value,
    _quoted,
    _random_key,
)

_Check = Callable[[str, re.Match[str]], bool]


@dataclass(frozen=True)
class _Rule:
    kind: str
    pattern: re.Pattern[str]
    needles: tuple[str, ...]  # lower-case; the rule runs only if one occurs in the lowered text
    check: _Check | None = None
    lower: bool = False  # match against the lower-cased text (for case-insensitive key names)
    trim: bool = False  # group s is a run of non-blanks: drop what running text put after it (_trimmed)



# Token patterns start with their literal prefix so the regex engine can jump to it; a look-behind
# placed after the prefix then checks the character before the token. Look-behinds also refuse
# "]" and look-aheads "[", the edges of a placeholder, so that a token glued to a secret does not
# turn into a match once that secret has been replaced.
_T = r"A-Za-z0-9_\-"  # characters of a token; a token must not be glued to more of them
_B = _T + r"\]"
_A = _T + r"\["

# Secret-assignment rules run on the lower-cased text (same length, so positions carry over).
# The key names (_KEY_NAMES) are in redact_checks.py, which also reads them.
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

# A secret key and its separator (=, :, =>, :=, a blank, "is") before a run of non-blanks (no placeholder): the
# run is that key's value. A match of another key inside it ("password: pW=X", "--password a:PW=X") is part of the
# value, taken whole from group "pre" (redact.py), so that no part of it ("pW=") is left behind when the outer
# key's own rule, which comes later, can no longer see it. A blank alone separates a value only after a command's
# option (--password pW=X): "auth token for CI = X" is one key's value, not auth's.
_NESTED_IN = re.compile(
    rf"(?:{_KEY_NAMES})(?:[ _.-]?(?:key|value))?+\\?[\"']?[ \t]*+"
    r"(?:=>|:=|=|:|(?<=[ \t])(?:is|was|ist|est|es|é)(?:[ \t]+now)?[ \t]*:?|(?P<blank>(?<=[ \t])))[ \t]*+"
    r"(?P<pre>(?:[^\s\[]|\[(?!redacted:))*+)\Z"
)

# A YAML block scalar under a secret key: "password: |" (or >, >-, |+, |2) and the lines indented under it.
_BLOCK = (
    r"(?m)^(?P<ind>[ \t]*+)(?:-[ \t]++)?[\"']?[\w.-]{0,64}?" + _KEY + r": [ \t]*+[|>](?:[1-9][+-]?|[+-][1-9]?)?"
    r"[ \t]*+(?:#[^\r\n]*+)?\r?\n(?:[ \t]*+\r?\n)*?(?P=ind)[ \t]++"
    r"(?P<s>\S[^\r\n]*+(?:(?:\r?\n[ \t]*+)*?\r?\n(?P=ind)[ \t]++\S[^\r\n]*+)*+)"
)
# Words about a key before its separator: "(prod)", "for the weather service", "für das NAS", "de la box".
_ABOUT = (r"(?:for|of|on|to|at|in|from|für|vom|von|zum|zur|des|du|de|pour|del|para|do|da|voor|van)[ \t]+"
          r"(?:[^\n.:;,!?=()<>{}\[\]|]|\.(?=\w)){1,40}?")  # a dot only inside a name: newsapi.org
_QUALIFIER = rf"(?:[ \t]*\([^()\n]{{1,40}}\)(?:[ \t]+{_ABOUT})?|[ \t]+{_ABOUT})"
_IS = r"(?:(?:is|was)(?:[ \t]+now)?|ist|lautet|war|est|es|é|era)"
_WORD = r"[^\W_][\w'-]*+"
_CLAUSE = rf"(?=[ \t]*(?:[.,;:!?)\]}}\"'…]|[-–—](?:[ \t]|\Z)|\(|\r?\n|\Z)|[ \t]+{_CONJUNCTION})"


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
    _rule(  # a Telegram bot token: the bot's id, ":" and 35 characters starting with A (also in /bot<token>/ URLs)
        "telegram_bot_token",
        r"[0-9](?:(?<![\w\]][0-9])|(?<=/bot[0-9]))[0-9]{4,15}+:A[A-Za-z0-9_-]{34}(?![\w\[-])",
        (":a",),
        _mixed_case,
    ),
    _rule(  # an age identity (age-keygen); its public key age1... is public
        "age_secret_key",
        r"AGE-SECRET-KEY-(?<![\w\]-]AGE-SECRET-KEY-)(?:PQ-)?1[02-9AC-HJ-NP-Z]{58,}+(?![\w\[])",
        ("age-secret-key-",),
    ),
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
    _rule(  # 40 characters of base64 near "AWS" or an access key id: "Prod AWS: key AKIA... secret 9fK2..."
        "aws_secret_key",
        r"(?<![A-Za-z0-9/+\]])[A-Za-z0-9/+]{40}(?![A-Za-z0-9/+=\[])",
        ("aws", "akia", "asia"),
        _aws_secret,
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
    _rule("secret_assignment", _BLOCK, (": |", ": >"), _block_value, lower=True),
    _rule(  # my passphrase is correct horse battery staple; seed phrase: (12-24 words)
        "secret_assignment",
        rf"(?P<k>pass[ _-]?phrase|(?:seed|recovery)[ _-]?phrase)(?:{_QUALIFIER})?"
        rf"(?:[ \t]+{_IS}[ \t]*:?[ \t]+|[ \t]*(?::=|=>|->|→|=|:)[ \t]*)"
        rf"(?P<s>{_WORD}(?:[ \t]++(?!{_CONJUNCTION}){_WORD}){{1,23}}+){_CLAUSE}",
        ("phrase",),
        _phrase_value,
        lower=True,
    ),
    _rule(  # ADO.NET, Npgsql: a password with blanks, up to the next ";"
        "secret_assignment",
        r";[ \t]*+(?P<k>password|pwd)[ \t]*+=(?P<s>[^;\r\n\"'=]{1,256}+)(?=;)",
        ("pass", "pw"),
        _literal,
        lower=True,
    ),
    _rule("secret_assignment", r"[?&;]sig=(?P<s>[A-Za-z0-9%+/=]{20,256}+)", ("sig=",), _mixed_case),  # Azure SAS
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
    _rule(  # the password (for the wifi) is X; api key for the weather service: X; token -> X; client secret 9fK2...
        "secret_assignment",
        rf"(?P<k>{_KEY_NAMES}(?:[ _.-]?(?:key|value))?)(?P<q>{_QUALIFIER})?"
        rf"(?:(?P<is>[ \t]+{_IS}[ \t]*:?[ \t]+)|[ \t]*(?:->|→|=>)[ \t]*|[ \t]+[-–—][ \t]+"
        r"|(?(q)(?P<eq>[ \t]*(?::=|=|:)[ \t]*)"  # ":" and "=" after words about the key (else their own rules)
        r"|(?P<bare>[ \t]++(?=[a-z0-9][a-z0-9+/=_-]{15,255}+(?![\w+/=\[-])))))"  # api key 3f9a...: no separator
        r"(?:\"(?P<s2>[^\"\r\n]{1,256}+)\"|'(?P<s3>[^'\r\n]{1,256}+)'|“(?P<s4>[^”\r\n]{1,256}+)”"
        r"|(?P<s>[^\s\"'`(\[{<“]\S{4,511}+))",
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
