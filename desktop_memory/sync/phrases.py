"""The recovery phrase: a set's key as 24 words (BIP-39's English list, through `mnemonic`), with its checksum.

Another machine joins the set with it; typed back by a person, it may come in any case, with extra spaces, line
breaks, commas, hyphens or numbers ("1. word"). A mistake is one clear line, never a wrong key.
"""

from __future__ import annotations

import re
from functools import cache

from ..core.errors import InvalidInput

WORDS = 24


@cache
def _mnemonic():  # noqa: ANN202 - mnemonic.Mnemonic (imported here: a CLI command that never syncs skips it)
    from mnemonic import Mnemonic

    return Mnemonic("english")


def to_phrase(key: bytes) -> str:
    if len(key) != 32:
        raise ValueError("a sync key is 32 bytes")
    return str(_mnemonic().to_mnemonic(key))


def words_of(text: str) -> list[str]:
    return [w for w in re.split(r"[^a-z]+", text.lower()) if w]


def from_phrase(text: str) -> bytes:
    """The key a phrase holds; InvalidInput (one line) for anything else."""
    words = words_of(text if isinstance(text, str) else "")
    if len(words) != WORDS:
        raise InvalidInput(f"a recovery phrase has {WORDS} words; this one has {len(words)}")
    known = set(_mnemonic().wordlist)
    for i, w in enumerate(words, 1):
        if w not in known:
            raise InvalidInput(f"word {i} of the recovery phrase ({w!r}) is not one of its words: check its spelling")
    phrase = " ".join(words)
    if not _mnemonic().check(phrase):
        raise InvalidInput("the recovery phrase has a mistake (its check does not match): compare each word again")
    return bytes(_mnemonic().to_entropy(phrase))
