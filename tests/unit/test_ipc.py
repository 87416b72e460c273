"""The engine socket in one process: a real MemoryService (fake embedder) served to real clients."""

from __future__ import annotations

import ast
import inspect
import json
import os
import stat
import threading
from multiprocessing import AuthenticationError
from multiprocessing.connection import Client
from pathlib import Path

import keyring
import keyring.backends.fail
import keyring.core
import pytest

from desktop_memory.core.errors import InvalidInput, KeyringUnavailable, ModelUnavailable, NotFound
from desktop_memory.core.query import Filters, parse_date
from desktop_memory.ipc import address
from desktop_memory.ipc.client import HostGone, RemoteService, connect, via_host
from desktop_memory.ipc.codec import RemoteBug
from desktop_memory.ipc.server import IpcServer


@pytest.fixture(autouse=True)
def _token_keyring(ring):
    """The engine token lives in the OS keyring: an in-process one here (unit tests)."""
    return ring


@pytest.fixture
def host(fake_service, data_dir: Path):
    with IpcServer(fake_service, data_dir) as server:
        yield server


@pytest.fixture
def remote(host, data_dir: Path):
    service = connect(data_dir)
    assert service is not None
    with service:
        yield service


def test_remote_methods_return_the_same_plain_data_as_the_service(fake_service, remote: RemoteService):
    added = remote.add("Decision: the beta ships on March 3rd", source="cli", tags=["Work"], title="Beta")
    assert added.status == "added" and added.memory.tags == ["work"] and added.memory.source == "cli"
    assert remote.add("Decision: the beta ships on March 3rd").status == "duplicate"
    secret = remote.add("deploy key AKIAIOSFODNN7EXAMPLE for staging")
    assert secret.redactions == {"aws_access_key": 1} and "AKIA" not in secret.memory.content
    other = remote.add("Pasta recipe: boil spaghetti nine minutes", source="manual").memory

    hits = remote.search("when does the beta ship", limit=5)
    assert hits[0].memory.id == added.memory.id and hits[0].score > 0
    assert [h.memory.id for h in hits] == [h.memory.id for h in fake_service.search("when does the beta ship",
                                                                                     limit=5)]
    filtered = remote.search("beta pasta", filters=Filters(sources=("manual",), after=parse_date("2000-01-01")))
    assert [h.memory.id for h in filtered] == [other.id]

    ctx = remote.context("beta release", budget=300)
    assert "March 3rd" in ctx.text and ctx.budget == 300 and added.memory.id in ctx.included
    assert remote.context(ids=[other.id[:8]]).included == [other.id]

    assert remote.get(added.memory.id[:6]).title == "Beta"
    assert remote.set_pinned(added.memory.id, True).pinned
    assert remote.tag(added.memory.id, add=["release"], remove=["work"]).tags == ["release"]
    assert remote.edit(other.id, title="Pasta").title == "Pasta"
    assert remote.set_forgotten(other.id, True).forgotten
    assert other.id not in [h.memory.id for h in remote.search("spaghetti")]
    assert remote.set_forgotten(other.id, False).forgotten is False

    records = list(remote.export_records())
    assert records == list(fake_service.export_records()) and len(records) == 3
    assert "".join(remote.export_markdown()).startswith("# desktop-memory export")
    assert remote.retention(older_than_days=0, dry_run=True)  # all but the pinned one would go
    assert remote.purge([other.id]) == 1
    assert remote.stats()["memories"] == 2 and remote.stats()["pinned"] == 1
    assert remote.doctor()["ok"] is True


def test_import_in_chunks_keeps_line_numbers_and_reports_progress(remote: RemoteService, monkeypatch):
    monkeypatch.setattr("desktop_memory.ipc.client.IMPORT_BATCH", 3)
    lines = [json.dumps({"content": f"note number {i} about topic {i * 7}"}) for i in range(7)]
    lines.insert(4, "{broken")
    lines.insert(6, "")
    seen: list[int] = []
    report = remote.import_records([line.encode() for line in lines], progress=lambda r: seen.append(r.added))
    assert report.added == 7 and report.errors == [(5, report.errors[0][1])]
    assert "not valid JSON" in report.errors[0][1]
    assert seen == [3, 5, 7]  # chunks of three lines: 3 good; 2 good + 1 bad; blank + 2 good


def test_domain_errors_cross_the_socket_with_their_class(remote: RemoteService):
    with pytest.raises(NotFound, match="no memory"):
        remote.get("does-not-exist")
    with pytest.raises(InvalidInput):
        remote.add("   ")
    with pytest.raises(InvalidInput, match="budget"):
        remote.context("anything", budget=10)


def test_bad_requests_are_refused_without_hurting_the_server(host: IpcServer, remote: RemoteService, data_dir):
    assert "unknown method" in str(pytest.raises(InvalidInput, remote._call, "store").value)
    with pytest.raises(InvalidInput, match="bad request"):
        remote._call("get")  # no id
    conn = Client(host.address, family=address.family(), authkey=address.load_token(data_dir))
    conn.send_bytes(b"\xff not json")
    assert json.loads(conn.recv_bytes())["error"]["kind"] == "InvalidInput"
    conn.send_bytes(b'{"method": "get", "params": []}')
    assert json.loads(conn.recv_bytes())["error"]["kind"] == "InvalidInput"
    conn.close()
    assert remote.ping()["pid"] == os.getpid()


def test_a_client_without_the_token_is_refused(host: IpcServer, data_dir: Path):
    with pytest.raises(AuthenticationError):
        Client(host.address, family=address.family(), authkey=b"0" * 64)
    sneaky = Client(host.address, family=address.family())  # no token: skip the handshake, just ask
    sneaky.send_bytes(b'{"method": "export_records", "params": {}}')
    replies = []
    with pytest.raises((EOFError, ConnectionResetError)):
        while True:
            replies.append(sneaky.recv_bytes())
    assert replies and not any(b"result" in r for r in replies)  # a challenge, a failure notice, then closed
    sneaky.close()
    remote = connect(data_dir)  # the host still serves its own user
    assert remote is not None and remote.ping()["data_dir"] == str(data_dir)
    remote.close()


def test_the_token_lives_in_the_keyring_and_the_socket_is_private(fake_service, data_dir: Path, ring):
    server = IpcServer(fake_service, data_dir)
    server.start()
    (name, token), = ((u, p) for (s, u), p in ring.items.items() if s == "desktop-memory")
    assert name.startswith("engine-token:") and len(token) == 64
    assert not address.token_path(data_dir).exists()  # no file holds it
    assert token.encode() not in b"".join(f.read_bytes() for f in data_dir.rglob("*") if f.is_file())
    assert stat.S_IMODE(os.stat(server.address).st_mode) & 0o077 == 0
    server.close()
    assert not ring.items and not Path(server.address).exists()
    assert connect(data_dir) is None
    server.close()  # twice is fine


def test_without_a_keyring_the_token_goes_to_a_private_file_only_for_a_plain_folder(fake_service, data_dir: Path,
                                                                                    monkeypatch):
    keyring.set_keyring(keyring.backends.fail.Keyring())
    monkeypatch.setattr(keyring.core, "init_backend", lambda *a: None)  # and none appears later
    monkeypatch.setenv("DESKTOP_MEMORY_ENCRYPTION", "on")
    with pytest.raises(KeyringUnavailable, match="keyring"):
        IpcServer(fake_service, data_dir).start()
    assert not address.token_path(data_dir).exists()
    monkeypatch.setenv("DESKTOP_MEMORY_ENCRYPTION", "off")  # the person runs this folder without a keyring
    with IpcServer(fake_service, data_dir):
        token_file = address.token_path(data_dir)
        assert stat.S_IMODE(token_file.stat().st_mode) == 0o600 and len(token_file.read_bytes()) == 64
        remote = connect(data_dir)
        assert remote is not None and remote.ping()["pid"] == os.getpid()
        remote.close()
    assert not address.token_path(data_dir).exists()


def test_each_start_has_a_new_token(fake_service, data_dir: Path):
    with IpcServer(fake_service, data_dir):
        first = address.load_token(data_dir)
    with IpcServer(fake_service, data_dir):
        assert address.load_token(data_dir) != first


def test_a_stale_socket_and_token_count_as_no_host(fake_service, data_dir: Path):
    where = Path(address.socket_address(data_dir))
    where.write_text("left by a crash")
    address.store_token(data_dir)
    assert connect(data_dir) is None
    with IpcServer(fake_service, data_dir) as server:  # a new host replaces both
        assert server.address == str(where)
        remote = connect(data_dir)
        assert remote is not None and remote.stats()["memories"] == 0
        remote.close()


def test_requests_run_through_the_hosts_runner(fake_service, data_dir: Path):
    threads: list[str] = []

    def run(fn):
        threads.append(threading.current_thread().name)
        return fn()

    with IpcServer(fake_service, data_dir, run=run):
        remote = connect(data_dir)
        assert remote is not None
        remote.add("ran on the host's engine thread")
        remote.close()
    assert threads and all(name == "ipc-client" for name in threads)


def test_a_bug_in_the_host_is_reported_as_one(fake_service, data_dir: Path, monkeypatch):
    monkeypatch.setattr(fake_service, "stats", lambda: 1 / 0)
    with IpcServer(fake_service, data_dir):
        remote = connect(data_dir)
        assert remote is not None
        with pytest.raises(RemoteBug, match="ZeroDivisionError"):
            remote.stats()
        assert remote.ping()["pid"] == os.getpid()  # the connection survives
        remote.close()


def test_losing_the_host_is_a_clear_error(fake_service, data_dir: Path):
    server = IpcServer(fake_service, data_dir)
    server.start()
    remote = connect(data_dir)
    assert remote is not None
    server.close()
    with pytest.raises(HostGone, match="lost the connection"):
        remote.stats()
    remote.close()


def test_via_host_prefers_the_host_and_falls_back_to_local(host, data_dir: Path, tmp_path: Path):
    assert via_host(data_dir, lambda r: ("host", r.ping()["pid"]), lambda: ("local", 0)) == ("host", os.getpid())
    assert via_host(tmp_path / "other", lambda r: "host", lambda: "local") == "local"


def test_a_long_data_folder_path_gets_a_short_private_socket(tmp_path: Path, monkeypatch):
    monkeypatch.delenv("XDG_RUNTIME_DIR", raising=False)
    deep = tmp_path / ("x" * 60) / ("y" * 60)
    where = address.socket_address(deep)
    assert len(where) <= address.MAX_UNIX_PATH and where.endswith(".sock")
    assert stat.S_IMODE(Path(where).parent.stat().st_mode) == 0o700
    assert address.socket_address(deep) == where != address.socket_address(deep / "z")


def test_every_command_routed_through_the_app_only_uses_what_the_socket_offers():
    from desktop_memory.cli import commands
    from desktop_memory.cli.main import HOST_COMMANDS

    used: set[str] = set()
    for name in HOST_COMMANDS:
        tree = ast.parse(inspect.getsource(commands.HANDLERS[name]))
        used |= {n.attr for n in ast.walk(tree)
                 if isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name) and n.value.id == "service"}
    assert used and all(hasattr(RemoteService, attr) for attr in used), used - set(dir(RemoteService))


def test_enrichment_status_and_model_go_through_the_app(fake_service, remote: RemoteService, tmp_path: Path,
                                                        monkeypatch):
    assert remote.enrichment_status().keys() == fake_service.enrichment_status().keys()
    monkeypatch.chdir(tmp_path)  # a relative model path is the CLI's, not the app's
    with pytest.raises(ModelUnavailable, match=str(tmp_path / "missing.gguf")):
        remote.set_enrichment_model("missing.gguf")


def test_the_gui_jobs_calls_settings_erase_and_enrichment_go_over_the_socket(fake_service, remote: RemoteService,
                                                                               data_dir: Path):
    settings = remote.settings
    assert settings == fake_service.settings
    settings.capture_ignore_apps = ["keepassxc"]
    assert remote.save_settings(settings).capture_ignore_apps == ["keepassxc"]
    assert fake_service.settings.capture_ignore_apps == ["keepassxc"]
    assert json.loads((data_dir / "settings.json").read_text())["capture_ignore_apps"] == ["keepassxc"]
    with pytest.raises(InvalidInput, match="settings must be an object"):
        remote._call("save_settings", settings=[1])
    reset = remote._call("save_settings", settings={"context_budget": "lots", "unknown": 1})  # like a bad file
    assert reset["context_budget"] == fake_service.settings.context_budget == 1500
    remote.add("one memory")
    remote.add("and another one")
    assert remote.erase_everything() == 2 and remote.stats()["memories"] == 0
    assert remote.stop_enrichment() is None and remote.enrichment_status()["queued"] == 0


def test_the_host_command_line_from_source_and_frozen(monkeypatch, tmp_path: Path):
    from desktop_memory.cli.main import build_parser
    from desktop_memory.ipc.spawn import command

    source = command(tmp_path, enrich=False)
    assert source[1:3] == ["-m", "desktop_memory"] and source[-2:] == ["engine-host", "--no-enrichment"]
    args = build_parser().parse_args(source[3:])
    assert args.command == "engine-host" and args.no_enrichment and args.data_dir == str(tmp_path)
    monkeypatch.setattr("sys.frozen", True, raising=False)
    frozen = command(tmp_path, debug=True)
    assert frozen[1:] == ["--data-dir", str(tmp_path), "--debug", "engine-host"]
    assert "engine-host" not in build_parser().format_help()  # hidden
