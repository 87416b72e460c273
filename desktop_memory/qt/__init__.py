"""The desktop front end: the only package that imports PySide6 (tray app, search and settings windows)."""
