"""The OS keyring against a real Secret Service: gnome-keyring on a private D-Bus session.

`secret_service()` starts a fresh session bus and a fresh, unlocked gnome-keyring in a temp folder (a
reused keyring with another password would open an invisible prompt and hang), points this process at
it, and stops both afterwards. The encryption and backup tests use it too.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

PASSWORD = "throw-away keyring password"
BUS_CONFIG = """<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>session</type>
  <listen>{listen}</listen>
  <auth>EXTERNAL</auth>
  <policy context="default">
    <allow send_destination="*" eavesdrop="true"/>
    <allow eavesdrop="true"/>
    <allow own="*"/>
  </policy>
</busconfig>
"""
_ENV_KEYS = ("DBUS_SESSION_BUS_ADDRESS", "XDG_DATA_HOME", "XDG_RUNTIME_DIR", "XDG_CONFIG_HOME", "XDG_CACHE_HOME")


def _reset_keyring_backend() -> None:
    import keyring.backend
    import keyring.core

    with contextlib.suppress(KeyError):  # KeyError: nothing cached yet
        keyring.backend.get_all_keyring.reset()  # keyring caches which backends were viable at first use
    keyring.core.init_backend()  # choose the backend again for the current environment


@contextmanager
def secret_service(home: Path, *, timeout_s: float = 30.0) -> Iterator[dict[str, str]]:
    """A private session bus with an unlocked gnome-keyring; yields the environment that reaches them."""
    env = {**os.environ}
    for name in ("data", "runtime", "config", "cache"):
        (home / name).mkdir(parents=True, exist_ok=True)
        (home / name).chmod(0o700)
    env.update(XDG_DATA_HOME=str(home / "data"), XDG_RUNTIME_DIR=str(home / "runtime"),
               XDG_CONFIG_HOME=str(home / "config"), XDG_CACHE_HOME=str(home / "cache"))
    # a bus without service activation: nothing but our gnome-keyring can answer as the Secret Service
    # (the stock session config would start a second, locked one when we ask too early)
    (home / "bus.conf").write_text(BUS_CONFIG.format(listen=f"unix:dir={home / 'runtime'}"))
    bus = subprocess.Popen(["dbus-daemon", f"--config-file={home / 'bus.conf'}", "--nofork", "--print-address=1"],
                           stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=env)
    daemon: subprocess.Popen[str] | None = None
    saved = {k: os.environ.get(k) for k in _ENV_KEYS}
    try:
        assert bus.stdout is not None
        env["DBUS_SESSION_BUS_ADDRESS"] = bus.stdout.readline().strip()
        log = open(home / "keyring.log", "w")  # noqa: SIM115 - closed with the daemon below
        daemon = subprocess.Popen(["gnome-keyring-daemon", "--foreground", "--unlock", "--components=secrets"],
                                  stdin=subprocess.PIPE, stdout=log, stderr=log, text=True, env=env)
        log.close()
        assert daemon.stdin is not None
        daemon.stdin.write(PASSWORD)
        daemon.stdin.close()
        os.environ.update({k: env[k] for k in _ENV_KEYS})
        _wait_for_secret_service(timeout_s, daemon, home / "keyring.log")
        _reset_keyring_backend()
        yield env
    finally:
        for proc in (daemon, bus):
            if proc is not None and proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
                try:
                    proc.wait(5)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait()
        if bus.stdout is not None:
            bus.stdout.close()
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
        _reset_keyring_backend()


def _wait_for_secret_service(timeout_s: float, daemon: subprocess.Popen[str], log: Path) -> None:
    import secretstorage
    from jeepney.bus_messages import message_bus
    from jeepney.io.blocking import open_dbus_connection

    deadline = time.monotonic() + timeout_s
    with open_dbus_connection(bus="SESSION") as bus:  # wait for the name without asking the service itself
        while not bus.send_and_get_reply(message_bus.NameHasOwner("org.freedesktop.secrets")).body[0]:
            if daemon.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"gnome-keyring did not come up: {log.read_text()[-500:]}")
            time.sleep(0.05)
    while True:
        if daemon.poll() is not None:
            raise RuntimeError(f"gnome-keyring-daemon exited ({daemon.returncode}): {log.read_text()[-500:]}")
        try:
            connection = secretstorage.dbus_init()
            try:
                collection = secretstorage.get_default_collection(connection)
                if not collection.is_locked():
                    return
            finally:
                connection.close()
        except secretstorage.exceptions.SecretStorageException:
            pass
        if time.monotonic() > deadline:
            raise RuntimeError(f"gnome-keyring did not come up on the private session bus: {log.read_text()[-500:]}")
        time.sleep(0.1)


@pytest.fixture
def keyring_home(tmp_path: Path) -> Iterator[dict[str, str]]:
    with secret_service(tmp_path / "keyring") as env:
        yield env


def test_secrets_round_trip_through_the_secret_service_and_no_file_holds_them(keyring_home, tmp_path):
    from desktop_memory.engine import keys

    assert keys.check() == "keyring.backends.SecretService.Keyring"
    secret = "sk-test-" + os.urandom(12).hex()
    assert keys.get_secret("api-key:test") is None
    keys.set_secret("api-key:test", secret)
    assert keys.get_secret("api-key:test") == secret
    for path in tmp_path.rglob("*"):  # gnome-keyring writes the keyring file encrypted with its password
        if path.is_file():
            assert secret.encode() not in path.read_bytes(), path
    assert keys.delete_secret("api-key:test") is True
    assert keys.get_secret("api-key:test") is None
    assert keys.delete_secret("api-key:test") is False


def test_database_keys_are_created_once_and_validated(keyring_home):
    from desktop_memory.core.errors import WrongKey
    from desktop_memory.engine import keys

    key = keys.database_key("abc123", create=True)
    assert len(key) == 64 and int(key, 16) >= 0
    assert keys.database_key("abc123") == key  # the same key comes back; nothing new is made
    with pytest.raises(WrongKey, match="not in your OS keyring"):
        keys.database_key("never-made")
    keys.set_secret(keys.DATABASE_KEY_PREFIX + "odd", "not a key")
    with pytest.raises(WrongKey, match="not a desktop-memory database key"):
        keys.database_key("odd")


def test_a_locked_keyring_is_a_clear_error_not_a_hanging_prompt(keyring_home):
    import secretstorage

    from desktop_memory.core.errors import KeyringUnavailable
    from desktop_memory.engine import keys

    keys.set_secret("api-key:test", "value-before-lock")
    connection = secretstorage.dbus_init()
    try:
        secretstorage.get_default_collection(connection).lock()
    finally:
        connection.close()
    started = time.monotonic()
    with pytest.raises(KeyringUnavailable, match="keyring is locked"):
        keys.get_secret("api-key:test")
    with pytest.raises(KeyringUnavailable, match="keyring is locked"):
        keys.set_secret("api-key:other", "x")
    assert time.monotonic() - started < 5


def test_without_a_secret_service_the_error_says_what_to_do(tmp_path, monkeypatch):
    from desktop_memory.core.errors import KeyringUnavailable
    from desktop_memory.engine import keys

    monkeypatch.setenv("DBUS_SESSION_BUS_ADDRESS", f"unix:path={tmp_path}/no-bus-here")
    _reset_keyring_backend()
    try:
        with pytest.raises(KeyringUnavailable, match="no usable OS keyring.*DESKTOP_MEMORY_ENCRYPTION=off"):
            keys.get_secret("anything")
    finally:
        monkeypatch.undo()
        _reset_keyring_backend()
