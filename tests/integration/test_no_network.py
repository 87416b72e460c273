"""Nothing leaves the machine: capture, search, context and enrichment with the network refused.

The work runs in a fresh process (so every import happens under the watch) on an encrypted data folder
with the real model, Chroma, llama.cpp and the keyring (reached over a local D-Bus socket, which is
allowed). Two watchers: a Python audit hook refuses and records every internet connection and name
lookup, and strace records every connect() the process and its threads make, native code included.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import textwrap

import pytest

from desktop_memory.engine import encryption
from tests.integration.test_keyring_session import secret_service

WORKLOAD = textwrap.dedent(r"""
    import json, socket, sys, time
    attempts = []

    def is_inet(sock):
        return getattr(sock, "family", None) in (socket.AF_INET, socket.AF_INET6)

    def refuse(event, args):
        if event in ("socket.connect", "socket.sendto", "socket.sendmsg") and is_inet(args[0]):
            attempts.append([event, repr(args[1:])[:200]])
            raise ConnectionRefusedError("the network is blocked by the test")
        if event in ("socket.getaddrinfo", "socket.gethostbyname", "socket.gethostbyname_ex",
                     "socket.gethostbyaddr", "socket.getnameinfo"):
            attempts.append([event, repr(args)[:200]])
            raise socket.gaierror("name lookups are blocked by the test")

    sys.addaudithook(refuse)
    from pathlib import Path
    from desktop_memory.service import MemoryService

    out = {}
    with MemoryService(Path(sys.argv[1])) as service:
        out["added"] = service.add("Decision: the beta ships on March 3rd; Priya owns the release notes.",
                                   source="clipboard", source_app="firefox").status
        lines = [json.dumps({"content": t}) for t in (
            "The staging database password rotates every first Monday",
            "Maya lands at Terminal 2 at 18:40 and prefers the window seat",
            "Lentil soup: simmer 25 minutes with cumin and finish with lemon")]
        out["imported"] = service.import_records(lines).added
        out["search"] = service.search("when does the beta ship?", limit=1)[0].memory.content
        out["semantic"] = service.search("when does Maya arrive", limit=1)[0].memory.content
        out["context"] = service.context("beta release", budget=200).text
        report = service.enrich(10)
        out["enriched"] = report.processed
        out["with_model"] = report.with_model
        out["model_error"] = report.model_error
        out["summaries"] = service.store.scalar("SELECT count(*) FROM memories WHERE enriched_at IS NOT NULL")
        out["doctor_ok"] = service.doctor().ok
        out["encryption"] = service.doctor().encryption
    time.sleep(3)  # room for background senders (ONNX Runtime's telemetry uploader fired seconds after start)
    out["attempts"] = attempts
    print("RESULT " + json.dumps(out))
""")


@pytest.fixture(scope="module")
def keyring_env(tmp_path_factory):
    with secret_service(tmp_path_factory.mktemp("keyring")) as env:
        yield env


def test_capture_search_context_and_enrichment_make_no_network_attempt(keyring_env, tmp_path):
    env = {k: v for k, v in keyring_env.items()
           if k not in (encryption.ENV, "HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE", "ANONYMIZED_TELEMETRY")}
    trace = tmp_path / "connect.trace"
    script = tmp_path / "workload.py"
    script.write_text(WORKLOAD)
    proc = subprocess.run(
        ["strace", "-f", "--seccomp-bpf", "-qq", "-e", "signal=none", "-e", "trace=connect,sendto,sendmsg",
         "-o", str(trace), sys.executable, str(script), str(tmp_path / "data")],
        capture_output=True, text=True, env=env, timeout=900, cwd=os.getcwd())
    assert proc.returncode == 0, proc.stderr[-3000:]
    result = json.loads(proc.stdout.split("RESULT ", 1)[1])
    assert result["attempts"] == []  # no Python-level connection or name lookup was even tried
    syscalls = trace.read_text()
    inet = [line for line in syscalls.splitlines() if re.search(r"AF_INET6?\b", line)]
    assert inet == []  # nor by native code (torch, Chroma's Rust core, llama.cpp)
    assert "AF_UNIX" in syscalls  # the watcher works: the keyring was reached over the local D-Bus socket
    assert result["added"] == "added" and result["imported"] == 3
    assert "March 3rd" in result["search"] and "Terminal 2" in result["semantic"]
    assert "Priya" in result["context"]
    assert result["enriched"] == 4 and result["summaries"] == 4, result
    assert result["with_model"] >= 1 and result["model_error"] == "", result
    assert result["doctor_ok"] and result["encryption"].startswith("on (chacha20")
