"""Domain errors: each carries a one-line message meant for the person, not a traceback."""


class DesktopMemoryError(Exception):
    """Base of every error the front ends show as a plain message."""


class InvalidInput(DesktopMemoryError):
    """The person gave something we cannot store or understand."""


class NotFound(DesktopMemoryError):
    """No memory with that id (or id prefix)."""


class StorageError(DesktopMemoryError):
    """The data folder cannot be opened, is damaged, or is in use."""


class DataDirLocked(StorageError):
    """Another desktop-memory process owns the data folder."""


class StorageFailure(StorageError):
    """A full disk, a read-only folder, a damaged database: advice for the person (engine/failures.py),
    plus, maybe, how far the work got."""

    def __init__(self, advice: str, detail: str = "") -> None:
        super().__init__(advice + (f"; {detail}" if detail else ""))
        self.advice = advice


class DiskFull(StorageFailure):
    """Nothing more can be written until space is freed."""


class ModelUnavailable(DesktopMemoryError):
    """A model file or package is missing or cannot be loaded."""


class KeyringUnavailable(DesktopMemoryError):
    """No usable OS keyring (none installed, locked, or not answering); nothing falls back to a file."""


class WrongKey(StorageError):
    """The encryption key is missing from the keyring or does not open the database; no data was touched."""


class BackupInvalid(InvalidInput):
    """A backup file is damaged, needs another passphrase, or comes from a newer desktop-memory."""


class CaptureUnavailable(DesktopMemoryError):
    """The OS refused what a capture or paste needs (a permission not granted, input blocked); says what to do."""


def error_line(exc: BaseException) -> str:
    """What a person reads about a failure, on one line: a domain error's own message; anything else is a bug,
    named by its type and the start of its text (every front end says it this way)."""
    if isinstance(exc, DesktopMemoryError):
        return " ".join(str(exc).split())
    return f"unexpected error: {type(exc).__name__}: {' '.join(str(exc).split())[:200]}"
