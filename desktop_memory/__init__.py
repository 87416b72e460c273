"""desktop-memory: a private, offline AI memory for your desktop."""

__version__ = "0.1.0"
