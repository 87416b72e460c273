"""I/O and heavy dependencies (SQLite, Chroma, models); no Qt."""
