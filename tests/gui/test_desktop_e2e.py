"""End to end on a real X server with a tray host: the real app, engine, model, clipboard and keyboard.

Runs inside scripts/with-desktop.sh (as `bash scripts/dev.sh test` and CI do). It starts the app as a
process in a temporary home, waits on its log lines, and drives it the way a person would: a second
start, typing with xdotool, Enter, and reading the clipboard back from another process with xclip.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

IN_DESKTOP = bool(os.environ.get("DESKTOP_MEMORY_DESKTOP_SESSION"))
pytestmark = pytest.mark.skipif(not IN_DESKTOP, reason="needs the desktop session of scripts/with-desktop.sh")
WAIT_S = 240.0  # a fresh cache: the first start prepares the embedding model


class AppProcess:
    """The app as a child process; its stderr (the log) goes to a file we can wait on."""

    def __init__(self, home: Path, env: dict[str, str]) -> None:
        self.log_path = home / "app.log"
        self.env = env
        self._log = open(self.log_path, "w", encoding="utf-8")  # noqa: SIM115 - closed in stop()
        self.proc = subprocess.Popen([sys.executable, "-m", "desktop_memory", "app"], env=env,
                                     stdout=subprocess.DEVNULL, stderr=self._log)

    def log(self) -> str:
        return self.log_path.read_text(encoding="utf-8", errors="replace")

    def wait_for(self, pattern: str, count: int = 1, timeout: float = WAIT_S) -> re.Match[str]:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            found = list(re.finditer(pattern, self.log()))
            if len(found) >= count:
                return found[count - 1]
            if self.proc.poll() is not None:
                break
            time.sleep(0.05)
        raise AssertionError(f"no {pattern!r} (x{count}) in the app's log:\n{self.log()}")

    def count(self, pattern: str) -> int:
        return len(re.findall(pattern, self.log()))

    def stop(self) -> int:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        try:
            code = self.proc.wait(30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            code = self.proc.wait(10)
        self._log.close()
        return code


def run(*cmd: str, env: dict[str, str], timeout: float = 120, input: str | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=timeout, input=input)


@pytest.fixture
def desktop_env(tmp_path: Path) -> dict[str, str]:
    for tool in ("xdotool", "xclip"):
        assert shutil.which(tool), f"{tool} is missing (bash scripts/dev.sh setup installs it)"
    assert os.environ.get("DISPLAY"), "the desktop session has no DISPLAY"
    env = {k: v for k, v in os.environ.items() if k != "QT_QPA_PLATFORM"}  # the real X server, not offscreen
    env.update(DESKTOP_MEMORY_HOME=str(tmp_path / "data"), XDG_CONFIG_HOME=str(tmp_path / "config"),
               XDG_CACHE_HOME=str(tmp_path / "cache"), HF_HUB_OFFLINE="1", ANONYMIZED_TELEMETRY="False")
    return env


@pytest.fixture
def app(tmp_path: Path, desktop_env: dict[str, str]) -> Iterator[AppProcess]:
    proc = AppProcess(tmp_path, desktop_env)
    yield proc
    proc.stop()


def test_capture_search_and_copy_context_through_the_real_app(app: AppProcess, desktop_env: dict[str, str]) -> None:
    env = desktop_env
    app.wait_for(r"tray icon shown \(system tray available: True\)")
    app.wait_for(r"engine ready")
    app.wait_for(r"serving the engine on the local socket")
    app.wait_for(r"embedding model loaded")

    # the CLI reaches the engine through the running app (the app holds the data folder's lock)
    added = run(sys.executable, "-m", "desktop_memory", "add", "Pasta recipe: boil spaghetti 9 minutes", env=env)
    assert added.returncode == 0, added.stderr

    # capture: another app puts text on the clipboard; "Capture clipboard now" stores it
    secret_free = "The team offsite is in Lisbon on May 12th; Joana books the hotel."
    holder = subprocess.Popen(["xclip", "-quiet", "-selection", "clipboard"], stdin=subprocess.PIPE,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env, text=True)
    try:
        assert holder.stdin is not None
        holder.stdin.write(secret_free)
        holder.stdin.close()
        captured = run(sys.executable, "-c", "import sys; from pathlib import Path; "
                       "from desktop_memory.qt.single_instance import send_command, server_name; "
                       "sys.exit(0 if send_command(server_name(Path(sys.argv[1])), 'capture') else 1)",
                       env["DESKTOP_MEMORY_HOME"], env=env)
        assert captured.returncode == 0
        app.wait_for(r"capture finished: Saved")
    finally:
        holder.terminate()
        holder.wait(10)
    assert "Lisbon" not in app.log()  # captured text is never logged

    # a second start shows the running app's search window and exits
    second = run(sys.executable, "-m", "desktop_memory", "app", env=env)
    assert second.returncode == 0 and "already running" in second.stderr
    app.wait_for(r"search window shown")
    found = run("xdotool", "search", "--sync", "--onlyvisible", "--name", "desktop-memory search", env=env)
    window = found.stdout.split()[0]

    # type a query as a person would; wait for the results of the whole query (the log gives its length,
    # never its text), then Enter. With no window manager a keystroke can land before the focus does: then
    # the field is cleared and the query typed again.
    query = "lisbon offsite"
    for _attempt in range(3):
        assert run("xdotool", "windowfocus", "--sync", window, env=env).returncode == 0
        seen = app.count(rf"a query of {len(query)} characters")
        run("xdotool", "key", "ctrl+a", "BackSpace", env=env)
        run("xdotool", "type", "--delay", "30", query, env=env)
        try:
            hit = app.wait_for(rf"search finished: (\d+) results \(a query of {len(query)} characters\)",
                               count=seen + 1, timeout=30)
            break
        except AssertionError:
            continue
    else:
        raise AssertionError(f"the typed query never reached the search window:\n{app.log()}")
    assert int(hit.group(1)) >= 1
    run("xdotool", "key", "Return", env=env)
    app.wait_for(r"context copied: 1 memories, \d+ tokens")

    # another process reads the context back from the clipboard
    pasted = run("xclip", "-o", "-selection", "clipboard", env=env)
    assert pasted.returncode == 0
    assert pasted.stdout.startswith('Context from my personal notes about "lisbon offsite"')
    assert secret_free in pasted.stdout and "Pasta" not in pasted.stdout
    gone = run("xdotool", "search", "--onlyvisible", "--name", "desktop-memory search", env=env)
    assert gone.stdout.strip() == ""  # Enter hid the window

    # `toggle` shows it again; quitting is clean
    assert run(sys.executable, "-m", "desktop_memory", "toggle", env=env).returncode == 0
    app.wait_for(r"search window shown", count=2)
    assert app.stop() == 0
    assert "Traceback" not in app.log() and "quitting" in app.log()


OFFER_MARKED = """
import sys
from PySide6.QtCore import QByteArray, QMimeData, QTimer
from PySide6.QtWidgets import QApplication
app = QApplication([])
mime = QMimeData()
mime.setText(sys.argv[1])
mime.setData("x-kde-passwordManagerHint", QByteArray(b"secret"))
app.clipboard().setMimeData(mime)
print("offered", flush=True)
QTimer.singleShot(int(float(sys.argv[2]) * 1000), app.quit)
app.exec()
"""


def copy(text: str, env: dict[str, str]) -> subprocess.Popen:
    """Another app copies text (xclip keeps owning the clipboard until something else copies)."""
    holder = subprocess.Popen(["xclip", "-quiet", "-selection", "clipboard"], stdin=subprocess.PIPE,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env, text=True)
    assert holder.stdin is not None
    holder.stdin.write(text)
    holder.stdin.close()
    return holder


def test_the_clipboard_watcher_stores_copies_from_other_apps_and_honours_the_marker(
        app: AppProcess, desktop_env: dict[str, str]) -> None:
    env = desktop_env
    app.wait_for(r"clipboard watcher started")
    app.wait_for(r"embedding model loaded")
    holders = [copy("Quarterly numbers: revenue grew 12 percent in the northern region", env)]
    app.wait_for(r"capture finished: Saved")

    # a password manager's copy carries x-kde-passwordManagerHint=secret next to the text
    marked = subprocess.Popen([sys.executable, "-c", OFFER_MARKED, "hunter2 correct horse battery staple", "8"],
                              stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env, text=True)
    assert marked.stdout is not None and marked.stdout.readline().strip() == "offered"
    app.wait_for(r"capture finished: Skipped: password manager")
    marked.wait(30)
    marked.stdout.close()

    # a burst of copies settles into one memory (the last one)
    for n in range(1, 6):
        holders.append(copy(f"Burst draft {n}: the migration window is Sunday 02:00 UTC" + "!" * n, env))
        time.sleep(0.05)
    app.wait_for(r"capture finished: Saved", count=2)
    time.sleep(1.5)  # nothing else settles afterwards
    assert app.count(r"capture finished: ") == 3
    for h in holders:
        h.terminate()
        h.wait(10)

    exported = run(sys.executable, "-m", "desktop_memory", "export", env=env)
    assert exported.returncode == 0, exported.stderr
    contents = [json.loads(line)["content"] for line in exported.stdout.splitlines()]
    assert contents == ["Quarterly numbers: revenue grew 12 percent in the northern region",
                        "Burst draft 5: the migration window is Sunday 02:00 UTC!!!!!"]
    assert "hunter2" not in app.log() and "Quarterly" not in app.log()  # captured text is never logged

    # the global hotkeys: Ctrl+Alt+M opens the search window; Ctrl+Alt+Shift+C captures the selection
    app.wait_for(r"global hotkeys: X11 grabs")
    run("xdotool", "key", "ctrl+alt+m", env=env)
    app.wait_for(r"search window shown")
    selected = subprocess.Popen(["xclip", "-quiet", "-selection", "primary"], stdin=subprocess.PIPE,
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env, text=True)
    assert selected.stdin is not None
    selected.stdin.write("Selected, not copied: the retro is moved to Friday 15:00")
    selected.stdin.close()
    time.sleep(0.3)
    run("xdotool", "key", "ctrl+alt+shift+c", env=env)
    app.wait_for(r"capture finished: Saved", count=3)
    selected.terminate()
    selected.wait(10)
    found = run(sys.executable, "-m", "desktop_memory", "search", "retro moved to Friday", "--json", env=env)
    hits = json.loads(found.stdout)
    assert hits[0]["content"].startswith("Selected, not copied") and hits[0]["source"] == "hotkey"
    assert app.stop() == 0
    assert "Traceback" not in app.log()


def test_a_killed_engine_comes_back_and_copies_made_meanwhile_are_stored(
        app: AppProcess, desktop_env: dict[str, str]) -> None:
    env = desktop_env
    app.wait_for(r"clipboard watcher started")
    app.wait_for(r"embedding model loaded")
    host_pid = int(app.wait_for(r"serving the engine on the local socket \(pid (\d+)\)").group(1))
    holders = [copy("Before the kill: the plumber comes on Tuesday morning", env)]
    app.wait_for(r"capture finished: Saved")

    os.kill(host_pid, signal.SIGKILL)  # the engine host dies; the person goes on copying
    killed = time.monotonic()
    holders.append(copy("While the engine restarts: the library books are due on the 14th", env))
    app.wait_for(r"engine state: restarting", timeout=10)
    app.wait_for(r"engine state: ready", count=2, timeout=30)
    assert time.monotonic() - killed < 5.0
    app.wait_for(r"capture finished: Saved", count=2)
    holders.append(copy("After the restart: the car service is booked for Friday", env))
    app.wait_for(r"capture finished: Saved", count=3)
    for h in holders:
        h.terminate()
        h.wait(10)
    new_pid = int(app.wait_for(r"serving the engine on the local socket \(pid (\d+)\)", count=2).group(1))
    assert new_pid != host_pid
    assert app.stop() == 0

    exported = run(sys.executable, "-m", "desktop_memory", "export", env=env)  # the app is gone: the CLI alone
    assert exported.returncode == 0, exported.stderr
    contents = [json.loads(line)["content"] for line in exported.stdout.splitlines()]
    assert contents == ["Before the kill: the plumber comes on Tuesday morning",
                        "While the engine restarts: the library books are due on the 14th",
                        "After the restart: the car service is booked for Friday"]
    log = app.log()
    assert "Traceback" not in log and "plumber" not in log and "library books" not in log
