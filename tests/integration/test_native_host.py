"""`desktop-memory native-host` as the browser runs it: a subprocess on a real data folder (its engine service
started on demand, the real model), spoken to in native messaging frames: hello, search, context, oversized and
malformed frames, then the end of stdin (exit 0). Also started with Chromium's and Firefox's own arguments."""

from __future__ import annotations

import json
import os
import struct
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from desktop_memory import __version__
from desktop_memory.browser import spool
from desktop_memory.browser.manifests import CHROMIUM_ID, FIREFOX_ID
from desktop_memory.ipc.service_start import stop_service

pytestmark = pytest.mark.integration
CLI = [sys.executable, "-m", "desktop_memory"]
LIMIT = 1_048_576


def frame(body: bytes) -> bytes:
    return struct.pack("=I", len(body)) + body


def msg(obj: Any) -> bytes:
    return frame(json.dumps(obj).encode())


class NativeHost:
    """The host process, fed one frame at a time (as a browser does) and read back frame by frame."""

    def __init__(self, folder: Path, *args: str, **more_env: str) -> None:
        env = {**os.environ, "DESKTOP_MEMORY_HOME": str(folder), **more_env}
        self.proc = subprocess.Popen([*CLI, *(args or ("native-host",))], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)

    def send(self, data: bytes) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(data)
        self.proc.stdin.flush()

    def reply(self) -> dict[str, Any]:
        assert self.proc.stdout is not None
        head = self.proc.stdout.read(4)
        assert len(head) == 4, self.proc.stderr.read().decode() if self.proc.poll() is not None else "no reply"
        (n,) = struct.unpack("=I", head)
        return json.loads(self.proc.stdout.read(n))

    def ask(self, obj: Any) -> dict[str, Any]:
        self.send(msg(obj))
        return self.reply()

    def end(self, tail: bytes = b"") -> tuple[int, str]:
        """Close stdin (after `tail`, a cut frame maybe): the host's exit code and stderr."""
        out, err = self.proc.communicate(tail, timeout=120)
        assert out == b""  # nothing more written after the last answer
        return self.proc.returncode, err.decode()


@pytest.fixture
def folder(tmp_path: Path):
    data = tmp_path / "data"
    subprocess.run([*CLI, "--data-dir", str(data), "add", "--title", "Kettle",
                    "The electric kettle in the office boils water in ninety seconds"],
                   check=True, capture_output=True, timeout=300)
    yield data
    stop_service(data)


def test_hello_search_context_and_bad_frames_then_a_clean_end(folder: Path):
    host = NativeHost(folder)
    try:
        assert host.ask({"id": 1, "type": "hello"}) == {"id": 1, "ok": True, "version": __version__,
                                                          "engine": "ready", "paused": False}
        found = host.ask({"id": "s", "type": "search", "query": "how fast does the kettle boil", "limit": 3})
        assert found["ok"] and found["id"] == "s"
        hit = found["hits"][0]
        assert hit["title"] == "Kettle" and "ninety seconds" in hit["snippet"] and hit["when"].startswith("20")
        assert set(hit) == {"id", "title", "snippet", "when", "source", "source_app", "url", "weak"}
        context = host.ask({"id": 2, "type": "context", "ids": [hit["id"]], "query": None})
        assert context["ok"] and "ninety seconds" in context["text"]

        host.send(frame(b"{" + b" " * LIMIT + b'"secret": 1}'))  # over the limit: skipped, the stream in step
        assert host.reply() == {"id": None, "ok": False, "error": f"message too large ({LIMIT + 13} bytes; the limit "
                                "is 1 MB)"}
        host.send(frame(b'{"id": 3, "type": "hello", "note": "hunter2'))  # not JSON
        assert host.reply()["error"].startswith("the message is not JSON")
        host.send(frame(b"[1]") + frame(b"") + frame(b'{"x": "\xff"}'))
        assert [host.reply()["ok"] for _ in range(3)] == [False, False, False]
        assert host.ask({"id": 4, "type": "search", "query": "kettle", "limit": 500})["ok"] is False
        assert host.ask({"id": 5, "type": "status"})["engine"] == "ready"  # still up, still in step
        code, err = host.end(struct.pack("=I", 40) + b'{"id": 6, "ty')  # cut inside a frame: the browser left
    finally:
        if host.proc.poll() is None:
            host.proc.kill()
    assert code == 0
    assert "hunter2" not in err and "secret" not in err and "Traceback" not in err
    assert err.count("refused a message") == 5  # one line per refused frame


@pytest.mark.parametrize("argv", [[f"chrome-extension://{CHROMIUM_ID}/", "--parent-window=0"],
                                  ["/somewhere/org.desktop_memory.companion.json", FIREFOX_ID]])
def test_started_with_a_browsers_own_arguments(folder: Path, argv: list[str]):
    host = NativeHost(folder, *argv)
    try:
        assert host.ask({"id": 1, "type": "hello"})["engine"] == "ready"
        code, _ = host.end()
    finally:
        if host.proc.poll() is None:
            host.proc.kill()
    assert code == 0


def test_a_capture_becomes_a_memory(folder: Path):
    capture = {"kind": "exchange", "site": "claude.ai", "app": "Claude", "url": "https://claude.ai/chat/k1",
               "title": "Tea", "conversation": "k1", "turn": "turn-1", "prompt": "How long to steep green tea?",
               "answer": "About two minutes at 80 degrees.", "at": None, "private": False, "browser": "Chromium"}
    host = NativeHost(folder)
    try:
        saved = host.ask({"id": 1, "type": "capture", "capture": capture})
        assert saved["ok"] and saved["status"] == "added" and saved["memory_id"]
        private = host.ask({"id": 2, "type": "capture", "capture": {**capture, "turn": "turn-2", "private": True}})
        assert private["ok"] and private["status"] == "skipped" and private["memory_id"] is None
        found = host.ask({"id": 3, "type": "search", "query": "green tea steeping time"})
        assert found["hits"][0]["id"] == saved["memory_id"]
        code, err = host.end()
    finally:
        if host.proc.poll() is None:
            host.proc.kill()
    assert code == 0 and "steep" not in err
    assert spool.pending(folder) == []


def test_with_no_engine_a_capture_is_kept_encrypted_and_stored_when_the_engine_runs(tmp_path: Path):
    """The folder held by another process (a restore, a CLI command): the host cannot open an engine, so the
    capture goes to the spool, sealed for the engine's key (nothing readable there); the next engine stores it."""
    from desktop_memory.core.web import WebCapture
    from desktop_memory.service import MemoryService
    from tests.fakes import FakeEmbedder

    folder = tmp_path / "data"
    capture = {"kind": "exchange", "site": "gemini.google.com", "app": "Gemini", "conversation": "g7",
               "turn": "turn-0", "url": "https://gemini.google.com/app/g7", "title": "Sourdough",
               "prompt": "Why did my sourdough not rise?", "answer": "The starter was too young: feed it twice."}
    with MemoryService(folder, embedder=FakeEmbedder()) as service:
        assert service.open_spool(create=True) == 0  # the key pair: public half in the folder, private in the keyring
        host = NativeHost(folder, DESKTOP_MEMORY_SERVICE="off")  # the folder is held: no engine for the host
        try:
            assert host.ask({"id": 1, "type": "hello"})["engine"] == "offline"
            kept = host.ask({"id": 2, "type": "capture", "capture": capture})
            assert kept["ok"] and kept["status"] == "spooled", kept
            private = host.ask({"id": 3, "type": "capture", "capture": {**capture, "turn": "t2", "private": True}})
            assert private["status"] == "skipped"  # a private window's text is not even spooled
            code, _ = host.end()
        finally:
            if host.proc.poll() is None:
                host.proc.kill()
        assert code == 0
    files = spool.pending(folder)
    assert len(files) == 1
    assert b"sourdough" not in files[0].read_bytes().lower() and b"starter" not in files[0].read_bytes()
    with MemoryService(folder, embedder=FakeEmbedder()) as service:
        assert service.open_spool() == 1
        stored = service.store.by_external_id("gemini:g7:turn-0")
        assert stored is not None
        assert stored.content == WebCapture.from_dict(capture).content()
        assert stored.source_url == "https://gemini.google.com/app/g7"
    assert spool.pending(folder) == []
