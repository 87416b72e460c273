"""keys.py with keyring backends registered through keyring's own interface (no Secret Service needed)."""

from __future__ import annotations

import importlib.util
import threading
import tomllib
from pathlib import Path

import keyring
import keyring.backend
import keyring.backends.fail
import keyring.backends.null
import pytest

from desktop_memory.core.errors import KeyringUnavailable, WrongKey
from desktop_memory.engine import encryption, keys
from tests.fakes import MemoryKeyring


class HangingKeyring(MemoryKeyring):
    """A keyring stuck on an unlock prompt nobody can see."""

    def __init__(self) -> None:
        super().__init__()
        self.release = threading.Event()

    def get_password(self, service: str, username: str) -> str | None:
        self.release.wait(30)
        return None


@pytest.fixture
def use_keyring():
    before = keyring.get_keyring()

    def install(backend: keyring.backend.KeyringBackend) -> keyring.backend.KeyringBackend:
        keyring.set_keyring(backend)
        return backend

    yield install
    keyring.set_keyring(before)


def test_secrets_round_trip_under_the_app_service_name(use_keyring):
    ring = use_keyring(MemoryKeyring())
    keys.set_secret("api-key:example", "s3cret")
    assert keys.get_secret("api-key:example") == "s3cret"
    assert ring.items == {("desktop-memory", "api-key:example"): "s3cret"}
    assert keys.delete_secret("api-key:example") and not keys.delete_secret("api-key:example")
    with pytest.raises(ValueError):
        keys.set_secret("api-key:example", "")


@pytest.mark.parametrize("backend", [keyring.backends.fail.Keyring, keyring.backends.null.Keyring])
def test_no_keyring_or_a_null_keyring_is_refused_with_advice(use_keyring, backend, monkeypatch):
    use_keyring(backend())
    # the engine looks for a keyring again once (a keyring daemon may start after us); none appears here
    monkeypatch.setattr(keyring.core, "init_backend", lambda *a: None)
    with pytest.raises(KeyringUnavailable, match="no usable OS keyring.*DESKTOP_MEMORY_ENCRYPTION=off"):
        keys.get_secret("x")
    with pytest.raises(KeyringUnavailable):
        keys.set_secret("x", "y")


def test_a_plain_file_keyring_is_refused(use_keyring):
    plaintext = type("PlaintextKeyring", (MemoryKeyring,), {"__module__": "keyrings.alt.file"})
    use_keyring(plaintext())
    with pytest.raises(KeyringUnavailable, match="keyrings.alt.file.PlaintextKeyring"):
        keys.get_secret("x")


def test_a_keyring_that_does_not_answer_times_out_with_a_message(use_keyring, monkeypatch):
    ring = use_keyring(HangingKeyring())
    monkeypatch.setattr(keys, "TIMEOUT_S", 0.2)
    try:
        with pytest.raises(KeyringUnavailable, match="did not answer within"):
            keys.get_secret("x")
    finally:
        ring.release.set()


class ItemNotFoundException(Exception):  # secretstorage's, as GNOME Keyring raises it while rewriting its file
    pass


class FlickeringKeyring(MemoryKeyring):
    """A Secret Service that answers a search with an item it no longer serves, `misses` times."""

    def __init__(self, misses: int) -> None:
        super().__init__()
        self.misses = misses

    def get_password(self, service: str, username: str) -> str | None:
        if self.misses:
            self.misses -= 1
            raise ItemNotFoundException("Item does not exist!")
        return super().get_password(service, username)


def test_a_keyring_item_that_flickers_away_is_read_again(use_keyring):
    ring = use_keyring(FlickeringKeyring(misses=2))
    ring.set_password("desktop-memory", "x", "kept")
    assert keys.get_secret("x") == "kept"
    use_keyring(FlickeringKeyring(misses=5))
    with pytest.raises(ItemNotFoundException):  # not forever: a keyring that keeps failing is an error
        keys.get_secret("x")


def test_database_keys_are_random_256_bit_hex_and_checked(use_keyring):
    ring = use_keyring(MemoryKeyring())
    a = keys.database_key("one", create=True)
    b = keys.database_key("two", create=True)
    assert a != b and len(a) == 64 and bytes.fromhex(a)
    assert keys.database_key("one") == a
    with pytest.raises(WrongKey, match="not in your OS keyring"):
        keys.database_key("three")
    ring.items[("desktop-memory", "database-key:bad")] = "ZZ" * 32
    with pytest.raises(WrongKey, match="not a desktop-memory database key"):
        keys.database_key("bad")


def test_encryption_follows_the_keyring_a_new_folder_is_encrypted(use_keyring, tmp_path, monkeypatch):
    use_keyring(MemoryKeyring())
    monkeypatch.delenv(encryption.ENV, raising=False)
    db = tmp_path / "memories.sqlite3"
    key = encryption.prepare(tmp_path, db)
    assert key is not None and encryption.State.load(tmp_path).key_id
    conn = encryption.connect(db, hexkey=key)
    conn.execute("CREATE TABLE t(x)")
    conn.close()
    assert not encryption.is_plain(db)
    assert encryption.prepare(tmp_path, db) == key
    assert encryption.describe(tmp_path, db).startswith("on (chacha20")


def test_the_plain_choice_needs_no_keyring(use_keyring, tmp_path, monkeypatch):
    use_keyring(keyring.backends.fail.Keyring())
    monkeypatch.setattr(keyring.core, "init_backend", lambda *a: None)
    monkeypatch.setenv(encryption.ENV, "off")
    assert encryption.prepare(tmp_path, tmp_path / "memories.sqlite3") is None
    monkeypatch.delenv(encryption.ENV)
    with pytest.raises(KeyringUnavailable):
        encryption.prepare(tmp_path, tmp_path / "memories.sqlite3")
    encryption.choose(tmp_path, encrypted=False)
    assert encryption.prepare(tmp_path, tmp_path / "memories.sqlite3") is None
    assert "chosen for this data folder" in encryption.describe(tmp_path, tmp_path / "memories.sqlite3")


def test_no_plain_file_keyring_is_installed_or_depended_on():
    assert importlib.util.find_spec("keyrings") is None or importlib.util.find_spec("keyrings.alt") is None
    project = tomllib.loads((Path(__file__).parents[2] / "pyproject.toml").read_text())["project"]
    deps = " ".join(project["dependencies"] + sum(project.get("optional-dependencies", {}).values(), []))
    assert "keyrings.alt" not in deps and "keyrings-alt" not in deps
    assert "keyring" in deps and "apsw-sqlite3mc" in deps
