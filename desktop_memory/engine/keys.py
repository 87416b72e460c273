"""Every secret the app holds lives in the OS keyring (through `keyring`), never in a file.

When no usable keyring exists (no Secret Service, a locked collection, a plain-file backend such as
`keyrings.alt`, or a keyring that does not answer) a `KeyringUnavailable` error says so; nothing falls
back silently to another store.
"""

from __future__ import annotations

import contextlib
import secrets
import threading
import time
from collections.abc import Callable
from typing import Any, TypeVar

from ..core.errors import KeyringUnavailable, WrongKey
from . import session_env

SERVICE = "desktop-memory"
TIMEOUT_S = 15.0
DATABASE_KEY_PREFIX = "database-key:"
_REFUSED_MODULES = ("keyring.backends.fail", "keyring.backends.null", "keyrings.alt")

T = TypeVar("T")
_PLAIN = "or, to keep a data folder unencrypted by choice, set DESKTOP_MEMORY_ENCRYPTION=off"
_HELP = ("start and unlock your desktop's keyring (GNOME Keyring, KWallet, macOS Keychain, Windows Credential "
         f"Manager); {_PLAIN}")


def _backends(backend: Any) -> list[Any]:
    return list(getattr(backend, "backends", None) or [backend])


def _usable_backend() -> Any:
    """The keyring backend, refused when it is missing, a plain file, or a locked Secret Service."""
    import keyring.backend
    import keyring.core

    backend = keyring.get_keyring()
    if type(backend).__module__ == "keyring.backends.fail":  # none at first use (e.g. login race): look again
        with contextlib.suppress(KeyError):  # KeyError: nothing cached yet
            keyring.backend.get_all_keyring.reset()
        keyring.core.init_backend()
        backend = keyring.get_keyring()
    found = _backends(backend)
    names = [f"{type(b).__module__}.{type(b).__name__}" for b in found]
    if not found or any(n.startswith(_REFUSED_MODULES) for n in names):
        why = session_env.missing_bus_reason() if all(n.startswith("keyring.backends.fail") for n in names) else None
        raise KeyringUnavailable(f"no usable OS keyring ({why or 'found ' + (', '.join(names) or 'none')}): {_HELP}")
    for b in found:
        if type(b).__module__ == "keyring.backends.SecretService":
            _check_secret_service_unlocked()
    return backend


def _check_secret_service_unlocked() -> None:
    """Refuse a locked collection up front: unlocking would open a password prompt and wait on it."""
    import secretstorage

    try:
        connection = secretstorage.dbus_init()
        try:
            collection = secretstorage.get_default_collection(connection)
            locked = collection.is_locked()
        finally:
            connection.close()
    except secretstorage.exceptions.SecretStorageException as exc:
        raise KeyringUnavailable(f"the Secret Service keyring cannot be used ({exc}): {_HELP}") from None
    if locked:
        raise KeyringUnavailable("your OS keyring is locked: unlock it (log in to your desktop, or open your "
                                 f"passwords app) and try again; {_PLAIN}")


def _timed(fn: Callable[[], T], what: str) -> T:
    """Run one keyring call with a time limit: a keyring waiting on an invisible prompt must not hang us."""
    import keyring.errors

    box: dict[str, Any] = {}

    def run() -> None:
        try:
            box["value"] = fn()
        except BaseException as exc:  # noqa: BLE001 - handed back to the calling thread below
            box["error"] = exc

    worker = threading.Thread(target=run, name="keyring", daemon=True)
    worker.start()
    worker.join(TIMEOUT_S)
    if worker.is_alive():
        raise KeyringUnavailable(f"the OS keyring did not answer within {TIMEOUT_S:.0f} s while {what} "
                                 "(is it waiting for an unlock prompt?)")
    error = box.get("error")
    if isinstance(error, KeyringUnavailable):
        raise error
    if isinstance(error, keyring.errors.NoKeyringError):
        why = session_env.missing_bus_reason()
        raise KeyringUnavailable(f"no usable OS keyring{f' ({why})' if why else ''}: {_HELP}") from None
    if isinstance(error, keyring.errors.KeyringLocked):
        raise KeyringUnavailable(f"your keyring is locked: unlock it and try again ({what})") from None
    if isinstance(error, keyring.errors.KeyringError):
        raise KeyringUnavailable(f"the OS keyring failed while {what}: {error}") from None
    if error is not None:
        raise error
    return box.get("value")  # type: ignore[return-value]


def check() -> str:
    """The name of the keyring in use; raises `KeyringUnavailable` when there is none usable."""
    backend = _timed(_usable_backend, "checking the keyring")
    return ", ".join(f"{type(b).__module__}.{type(b).__name__}" for b in _backends(backend))


def get_secret(name: str) -> str | None:
    """A secret stored under this name (e.g. 'api-key:openai'), or None.

    GNOME Keyring now and then answers a search with an item path it no longer serves ("No such interface
    org.freedesktop.Secret.Item", secretstorage's ItemNotFoundException) while it rewrites its file: asked again a
    moment later it answers. Three tries, then the error stands."""
    for attempt in range(3):
        try:
            return _timed(lambda: _usable_backend().get_password(SERVICE, name), f"reading {name!r}")
        except Exception as exc:
            if type(exc).__name__ != "ItemNotFoundException" or attempt == 2:
                raise
            time.sleep(0.2 * (attempt + 1))
    raise AssertionError("unreachable")


def set_secret(name: str, value: str) -> None:
    """Store a secret under this name, replacing any earlier value."""
    if not value:
        raise ValueError("an empty secret cannot be stored")
    _timed(lambda: _usable_backend().set_password(SERVICE, name, value), f"storing {name!r}")


def delete_secret(name: str) -> bool:
    """Remove a secret; False when there was none."""
    import keyring.errors

    def delete() -> bool:
        try:
            _usable_backend().delete_password(SERVICE, name)
        except keyring.errors.PasswordDeleteError:
            return False
        return True

    return _timed(delete, f"deleting {name!r}")


def new_key_id() -> str:
    return secrets.token_hex(8)


def database_key(key_id: str, *, create: bool = False) -> str:
    """The database key (64 hex digits) stored under this id; created when asked and missing."""
    name = DATABASE_KEY_PREFIX + key_id
    key = get_secret(name)
    if key is None and create:
        set_secret(name, secrets.token_hex(32))
        key = get_secret(name)
        if key is None:
            raise KeyringUnavailable("the OS keyring accepted the database key but did not give it back")
    if key is None:
        raise WrongKey(f"the key of this encrypted database ({SERVICE} / {name}) is not in your OS keyring: "
                       "use the keyring it was created with, or restore a backup; nothing was changed")
    if len(key) != 64 or any(c not in "0123456789abcdef" for c in key):
        raise WrongKey(f"the keyring entry {SERVICE} / {name} is not a desktop-memory database key; "
                       "nothing was changed")
    return key
