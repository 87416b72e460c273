"""What people (and bad luck) type, paste and save: the values every fuzz test draws from."""

from __future__ import annotations

import json

from hypothesis import strategies as st

# values that broke, or could break, some part of the product once
NASTY = [
    "", " ", "-", "--", "-n", "--json", ".", "..", "/", "~", "~/", "../..", "./x", "0", "-1", "1", "4", "50", "51",
    "10000", "1e309", "-1e309", "nan", "NaN", "inf", "-inf", "0.5", "1.5", "9" * 40, "0x10", "true", "null", "[]",
    "{}", "0001-01-01T00:00:00+14:00", "9999-12-31T23:59:59-14:00", "1969-12-31", "1970-01-01T00:00:00Z",
    "2026-13-45", "2026-02-30", "today", "yesterday", "last week", "x" * 5000, "é" * 300, "👍" * 100,
    "日本語のテキストと中文", "Привет, мир", "مرحبا بالعالم", "\u202eevil", "a\nb\r\nc", "\t", "\udcff", "\udc80abc",
    "\ud83d", "\ude00x", "AKIAIOSFODNN7EXAMPLE", "password: hunter2", "'; DROP TABLE memories; --", "%s%n%x",
    "source:clipboard", "#tag", "is:pinned", "after:0001-01-01", "before:9999-12-31", "app:", "*", '"', "NEAR(a b)",
    "a OR b AND NOT c", "^", "col:x", "memories.sqlite3", "settings.json", "\\\\?\\C:\\", "CON", "nul",
]
NASTY_ARGV = [s for s in NASTY if "\x00" not in s]  # an OS never passes NUL in an argument

any_text = st.text(max_size=80)  # every code point Hypothesis knows, lone surrogates included
argv_text = st.one_of(st.sampled_from(NASTY_ARGV), any_text.filter(lambda s: "\x00" not in s))
words = st.lists(st.sampled_from(["meeting", "Priya", "release", "Denver", "Тимур", "北京", "🙂", "def f(x):",
                                  "return", "x ** 2", "notes", "lake", "sunrise", "beta", "v2.3.1", "café"]),
                 min_size=1, max_size=12).map(" ".join)

json_scalars = st.one_of(st.none(), st.booleans(), st.integers(), st.integers(min_value=-(2**70), max_value=2**70),
                         st.floats(allow_nan=True, allow_infinity=True), st.sampled_from(NASTY), any_text)
json_values = st.recursive(json_scalars, lambda inner: st.one_of(
    st.lists(inner, max_size=4), st.dictionaries(st.one_of(st.sampled_from(NASTY), any_text), inner, max_size=4)),
    max_leaves=12)


def dumps(value: object) -> str:
    """JSON as another program may write it: NaN and Infinity included, lone surrogates escaped."""
    return json.dumps(value, ensure_ascii=True, allow_nan=True)


junk_lines = st.one_of(
    st.binary(max_size=200),  # anything at all, invalid UTF-8 included
    st.sampled_from([b"", b"{", b"{broken", b"[1, 2]", b'"just a string"', b"null", b"\xef\xbb\xbf{}", b"\x00" * 10,
                     b'{"content": "\\ud83d cut emoji"}', b'{"content": 5}', b'{"content": ""}',
                     b'{"content": "x", "created_at": "0001-01-01T00:00:00+14:00"}',
                     b'{"content": "y", "metadata": {"a": NaN}}', b'{"content": "z", "tags": [1, 2]}']),
    json_values.map(lambda v: dumps(v).encode()),
)
