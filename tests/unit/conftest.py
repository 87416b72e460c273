"""Unit-test fixtures shared by several modules (fakes only: see tests/fakes.py)."""

from __future__ import annotations

import keyring
import pytest

from tests.fakes import MemoryKeyring


@pytest.fixture
def ring():
    """An in-process keyring installed through keyring's own interface; the previous one comes back after."""
    before = keyring.get_keyring()
    backend = MemoryKeyring()
    keyring.set_keyring(backend)
    yield backend
    keyring.set_keyring(before)
