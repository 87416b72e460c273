"""The CLI as a person (or a script) runs it: real subprocesses, real models, temporary folders."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.integration
CLI = [sys.executable, "-m", "desktop_memory"]


def run(data: Path, *args: str, stdin: str | bytes | None = None, check: bool = True, env=None):
    proc = subprocess.run(
        [*CLI, "--data-dir", str(data), *args], input=stdin.encode() if isinstance(stdin, str) else stdin,
        capture_output=True, timeout=300, env=env,
    )
    if check and proc.returncode != 0:
        raise AssertionError(f"exit {proc.returncode}: {proc.stderr.decode()}")
    return proc


def one_line_error(proc) -> str:
    err = proc.stderr.decode().strip()
    assert proc.returncode != 0
    assert "Traceback" not in err and len(err.splitlines()) == 1, err
    return err


def test_contract_import_search_export_round_trip(tmp_path):
    records = [
        {"content": "Melanie: I painted a sunrise over the lake last week.", "created_at": "2023-05-08T13:56:00",
         "source": "chat", "metadata": {"dia_id": "D1:1"}},
        {"content": "Caroline: I went to a support group for transgender people yesterday.",
         "created_at": "2023-05-08T13:56:00", "source": "chat", "metadata": {"dia_id": "D1:2"}, "tags": ["group"]},
        {"content": "Caroline: My sister is moving to Denver in July.", "created_at": "2023-06-01T09:00:00+02:00",
         "pinned": True, "title": "Sister", "metadata": {"dia_id": "D2:1", "nested": {"a": [1, 2.5, None]}}},
    ]
    src = tmp_path / "in.jsonl"
    src.write_text("".join(json.dumps(r) + "\n" for r in records) + "{broken\n")
    data = tmp_path / "a"
    proc = run(data, "import", str(src))
    assert "line 4: skipped" in proc.stderr.decode()
    out = run(data, "search", "-", "--limit", "2", "--json",
              stdin="What did Melanie paint?\nwhere is the sister moving\n\n").stdout.decode().splitlines()
    assert len(out) == 3
    first, second, empty = (json.loads(line) for line in out)
    assert first[0]["metadata"] == {"dia_id": "D1:1"}
    assert second[0]["metadata"]["dia_id"] == "D2:1" and empty == []
    for key in ("id", "content", "summary", "score", "created_at", "source", "tags", "pinned", "metadata"):
        assert key in first[0]
    exported = run(data, "export").stdout.decode()
    other = tmp_path / "b"
    run(other, "import", "-", stdin=exported)
    assert run(other, "export").stdout.decode() == exported
    md = run(data, "export", "--format", "markdown").stdout.decode()
    assert md.startswith("# desktop-memory export") and "## Sister" in md


def test_add_show_pin_forget_restore_purge_and_context(tmp_path):
    data = tmp_path / "d"
    text = "Restart nginx with sudo systemctl reload nginx"
    added = json.loads(run(data, "add", "--json", "--tag", "ops", text).stdout)
    mid = added["id"]
    assert added["status"] == "added"
    run(data, "add", stdin="Piped text: the standup is at 9:15")
    shown = json.loads(run(data, "show", mid[:8], "--json").stdout)
    assert shown["tags"] == ["ops"] and shown["content"].startswith("Restart nginx")
    run(data, "pin", mid)
    run(data, "forget", mid)
    assert mid not in run(data, "search", "nginx", "--json").stdout.decode()
    run(data, "restore", mid)
    ctx = run(data, "context", "reload nginx", "--budget", "300").stdout.decode()
    assert ctx.startswith("Context from my personal notes") and "systemctl reload nginx" in ctx
    stats = json.loads(run(data, "stats", "--json").stdout)
    assert stats["memories"] == 2 and stats["pinned"] == 1
    one_line_error(run(data, "purge", mid, check=False, stdin=""))  # no --yes and no terminal: refused
    run(data, "purge", mid, "--yes")
    assert "no memory with id" in one_line_error(run(data, "show", mid, check=False))
    assert json.loads(run(data, "doctor", "--json").stdout)["ok"] is True


@pytest.mark.parametrize("args, stdin, message", [
    (("add", ""), None, "empty"),
    (("add",), b"\n\t  \n", "empty"),
    (("add",), b"x" * 1_100_000, "too large"),
    (("import", "/nonexistent/file.jsonl"), None, "no such file"),
    (("show", "nope"), None, "no memory"),
    (("search", "x", "--after", "yesterday"), None, "--after"),
    (("context",), None, "give a query"),
])
def test_bad_input_gives_one_clear_line_and_nonzero_exit(tmp_path, args, stdin, message):
    assert message in one_line_error(run(tmp_path / "d", *args, stdin=stdin, check=False))


def test_binary_and_broken_utf8_input_is_stored_safely(tmp_path):
    data = tmp_path / "d"
    out = json.loads(run(data, "add", "--json", stdin=b"caf\xc3\xa9 \xff\xfe\x00 binary\x01\x02 tail").stdout)
    shown = json.loads(run(data, "show", out["id"], "--json").stdout)
    assert shown["content"] == "café \ufffd\ufffd binary tail"


def test_odd_queries_work_from_the_command_line(tmp_path):
    data = tmp_path / "d"
    run(data, "add", "plain memory about NEAR and AND operators")
    queries = ['"unbalanced', "what?", "a AND", "NEAR(x y)", "pre*", "-not", "🙂 emoji", "x" * 10_000]
    out = run(data, "search", "-", "--json", stdin="\n".join(queries) + "\n").stdout.decode().splitlines()
    assert len(out) == len(queries)


def test_a_second_writer_gets_a_clear_message(tmp_path, monkeypatch):
    """Without the service (DESKTOP_MEMORY_SERVICE=off) a command waits for a process holding the folder."""
    monkeypatch.setenv("DESKTOP_MEMORY_SERVICE", "off")
    data = tmp_path / "d"
    run(data, "add", "first")
    holder = subprocess.Popen(
        [sys.executable, "-c", "import sys, time; from pathlib import Path;"
         "from desktop_memory.service import MemoryService;"
         "s = MemoryService(Path(sys.argv[1])); print('ready', flush=True); time.sleep(60)", str(data)],
        stdout=subprocess.PIPE,
    )
    try:
        assert holder.stdout.readline().strip() == b"ready"
        proc = run(data, "add", "second", check=False)  # waits its turn (30 s for this holder), then gives up
        lines = proc.stderr.decode().strip().splitlines()
        assert proc.returncode == 1 and "Traceback" not in proc.stderr.decode()
        assert len(lines) == 2 and lines[0].startswith("desktop-memory: waiting for another desktop-memory process")
        assert "in use by another desktop-memory process" in lines[1]
    finally:
        holder.kill()
        holder.wait()
        holder.stdout.close()
    run(data, "add", "second")  # the lock dies with its process


def test_a_corrupt_database_is_reported_not_overwritten(tmp_path):
    data = tmp_path / "d"
    data.mkdir()
    junk = b"garbage" * 2000
    (data / "memories.sqlite3").write_bytes(junk)
    assert "not a desktop-memory database" in one_line_error(run(data, "stats", check=False))
    assert (data / "memories.sqlite3").read_bytes() == junk


def test_env_variable_chooses_the_data_folder(tmp_path):
    env = {**os.environ, "DESKTOP_MEMORY_HOME": str(tmp_path / "home")}
    proc = subprocess.run([*CLI, "add", "via env"], capture_output=True, env=env, timeout=300)
    assert proc.returncode == 0 and (tmp_path / "home" / "memories.sqlite3").exists()
