"""The browser companion's native side (issue 34): the native messaging host the extension talks to
(`host.py`, frames in `framing.py`), the encrypted spool it keeps captures in while the engine cannot start
(`spool.py`), and the host manifests `desktop-memory setup-browser` writes for each browser (`manifests.py`).
No Qt, no engine import at start: the browser starts the host on demand and waits for it."""
