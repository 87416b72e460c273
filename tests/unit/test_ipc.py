"""The engine socket in one process: a real MemoryService (fake embedder) served to real clients."""

from __future__ import annotations

import ast
import inspect
import json
import os
import re
import stat
import sys
import threading
from collections.abc import Iterator
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
from desktop_memory.ipc.client import HostGone, RemoteService, connect
from desktop_memory.ipc.codec import RemoteBug
from desktop_memory.ipc.server import IpcServer
from desktop_memory.service import MemoryService
from tests.fakes import FakeEmbedder, MemorySecrets


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
    assert remote.stats().memories == 2 and remote.stats().pinned == 1
    assert remote.doctor().ok is True


def test_import_in_chunks_keeps_line_numbers_and_reports_progress(remote: RemoteService, monkeypatch):
    monkeypatch.setattr("desktop_memory.ipc.client.IMPORT_BATCH", 3)  # chunks of three lines
    monkeypatch.setattr("desktop_memory.service.importing.IMPORT_BATCH", 3)  # the host's batches of three records
    lines = [json.dumps({"content": f"note number {i} about topic {i * 7}"}) for i in range(10)]
    lines.insert(4, "{broken")
    lines.insert(6, "")
    seen: list[int] = []
    report = remote.import_records([line.encode() for line in lines], progress=lambda r: seen.append(r.added))
    assert report.added == 10 and report.errors == [(5, report.errors[0][1])]
    assert "not valid JSON" in report.errors[0][1]
    # a batch is acknowledged once committed: while the host reads and embeds the next one
    assert seen == sorted(seen) and seen[0] < 10 and seen[-1] == 10


def test_an_import_through_the_app_that_fills_the_disk_counts_from_the_start_of_the_file(fake_service, remote,
                                                                                          monkeypatch):
    import re

    from desktop_memory.core.errors import StorageError

    monkeypatch.setattr("desktop_memory.service.importing.IMPORT_BATCH", 4)
    monkeypatch.setattr("desktop_memory.ipc.client.IMPORT_BATCH", 3)  # chunks and batches do not line up
    lines = [json.dumps({"content": f"ledger entry {i}: paid invoice {1000 + i} " + "detail " * 300})
             for i in range(40)]
    remote.import_records(lines[:4])
    pages = fake_service.store.scalar("PRAGMA page_count")
    fake_service.store.db.execute(f"PRAGMA max_page_count={pages + 40}")
    acknowledged: list[int] = []
    with pytest.raises(StorageError) as info:
        remote.import_records(lines[4:], progress=lambda r: acknowledged.append(r.stored))
    message = str(info.value)
    found = re.search(r"disk is full.*; ([\d,]+) record\(s\) were stored, nothing after line ([\d,]+) was imported$",
                      message)
    assert found and "\n" not in message, message
    stored, last = (int(g.replace(",", "")) for g in found.groups())
    assert acknowledged and stored >= acknowledged[-1] > 0 and last >= acknowledged[-1]
    fake_service.store.db.execute("PRAGMA max_page_count=1000000000")
    kept = {m.content for m in fake_service.store.iter_all()}
    assert all(json.loads(x)["content"].strip() in kept for x in lines[4 : 4 + last])  # every line it counted
    assert json.loads(lines[4 + last])["content"].strip() not in kept  # and nothing after
    assert remote.add("after freeing space").status == "added"  # the connection still serves


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
        assert len(token_file.read_bytes()) == 64
        if os.name == "posix":  # Windows: the file inherits the data folder's ACL (the user's profile)
            assert stat.S_IMODE(token_file.stat().st_mode) == 0o600
        remote = connect(data_dir)
        assert remote is not None and remote.ping()["pid"] == os.getpid()
        remote.close()
    assert not address.token_path(data_dir).exists()


def test_each_start_has_a_new_token(fake_service, data_dir: Path):
    with IpcServer(fake_service, data_dir):
        first = address.load_token(data_dir)
    with IpcServer(fake_service, data_dir):
        assert address.load_token(data_dir) != first


@pytest.mark.skipif(sys.platform == "win32", reason="a socket file left by a crash: named pipes leave no file")
def test_a_stale_socket_and_token_count_as_no_host(fake_service, data_dir: Path):
    where = Path(address.socket_address(data_dir))
    where.write_text("left by a crash")
    address.store_token(data_dir)
    assert connect(data_dir) is None
    with IpcServer(fake_service, data_dir) as server:  # a new host replaces both
        assert server.address == str(where)
        remote = connect(data_dir)
        assert remote is not None and remote.stats().memories == 0
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


@pytest.mark.skipif(sys.platform == "win32", reason="Unix socket paths only: Windows uses named pipes")
def test_a_long_data_folder_path_gets_a_short_private_socket(tmp_path: Path, monkeypatch):
    monkeypatch.delenv("XDG_RUNTIME_DIR", raising=False)
    deep = tmp_path / ("x" * 60) / ("y" * 60)
    where = address.socket_address(deep)
    assert len(where) <= address.MAX_UNIX_PATH and where.endswith(".sock")
    assert stat.S_IMODE(Path(where).parent.stat().st_mode) == 0o700
    assert address.socket_address(deep) == where != address.socket_address(deep / "z")


def _handlers():
    import desktop_memory.cli.main  # noqa: F401 - registers every command
    from desktop_memory.cli import commands

    return commands.HANDLERS


def _service_calls(fn) -> set[str]:
    tree = ast.parse(inspect.getsource(fn))
    return {n.attr for n in ast.walk(tree)
            if isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name) and n.value.id == "service"}


def test_every_command_only_uses_what_the_socket_offers():
    from desktop_memory.service.protocol import operations

    declared = {*operations(), "folder"}
    for name, fn in _handlers().items():
        assert _service_calls(fn) <= declared, (name, _service_calls(fn) - declared)


def test_a_command_has_the_folder_to_itself_exactly_when_it_calls_an_operation_declared_alone():
    from desktop_memory.cli import commands
    from desktop_memory.service.protocol import operations

    ops = operations()
    for name, fn in _handlers().items():
        alone = {used for used in _service_calls(fn) if used in ops and ops[used].alone}
        assert (name in commands.ALONE) == bool(alone), (name, alone)
    assert {"backup", "encryption", "enrich"} == commands.ALONE
    with pytest.raises(ValueError, match="not declared alone"):
        commands.handler("search-alone", alone_for=("search",))


def test_enrichment_status_and_model_go_through_the_app(fake_service, remote: RemoteService, tmp_path: Path,
                                                        monkeypatch):
    assert remote.enrichment_status() == fake_service.enrichment_status()
    monkeypatch.chdir(tmp_path)  # a relative model path is the CLI's, not the app's
    with pytest.raises(ModelUnavailable, match=re.escape(str(tmp_path / "missing.gguf"))):
        remote.set_enrichment_model("missing.gguf")


def test_the_gui_jobs_calls_settings_erase_and_enrichment_go_over_the_socket(fake_service, remote: RemoteService,
                                                                               data_dir: Path):
    settings = remote.settings
    assert settings == fake_service.settings
    settings.capture_ignore_apps = ["keepassxc"]
    assert remote.save_settings(settings).capture_ignore_apps == ["keepassxc"]
    assert fake_service.settings.capture_ignore_apps == ["keepassxc"]
    assert json.loads((data_dir / "settings.json").read_text())["capture_ignore_apps"] == ["keepassxc"]
    with pytest.raises(InvalidInput, match="must be an object"):
        remote._call("save_settings", new=[1])
    reset = remote._call("save_settings", new={"context_budget": "lots", "unknown": 1})  # like a bad file
    assert reset["context_budget"] == fake_service.settings.context_budget == 1500
    remote.add("one memory")
    remote.add("and another one")
    assert remote.erase_everything() == 2 and remote.stats().memories == 0
    assert remote.stop_enrichment() is None and remote.enrichment_status().queued == 0


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


# -- the surface, declared once (issue 17) ----------------------------------------------------------
def _params(fn) -> list[tuple[str, object, object, object]]:
    """(name, kind, default, type) of each parameter but `self`, with the types resolved (marks dropped)."""
    import typing

    from desktop_memory.service import protocol

    # the client's methods carry the protocol's annotations as written (strings): read in the protocol's names
    names = vars(protocol) if fn.__module__ == "desktop_memory.ipc.client" else inspect.unwrap(fn).__globals__

    def resolved(annotation: object) -> object:
        if annotation is inspect.Parameter.empty:
            return None
        hint = eval(annotation, names, protocol._LATE_NAMES) if isinstance(annotation, str) else annotation  # noqa: S307
        return hint.__origin__ if typing.get_origin(hint) is typing.Annotated else hint

    return [(p.name, p.kind, p.default, resolved(p.annotation))
            for p in list(inspect.signature(fn).parameters.values())[1:]]


def test_memory_service_implements_the_protocol_with_the_same_signatures(fake_service):
    from desktop_memory.service import MemoryService
    from desktop_memory.service.protocol import MemoryOperations, operations

    for name, op in operations().items():
        if op.component is None:  # the service's own: its settings
            assert name in vars(MemoryService), name
            continue
        part, method = op.component
        done_by = getattr(getattr(fake_service, part), method)
        assert _params(type(getattr(fake_service, part)).__dict__[method]) == _params(op.function), name
        assert callable(done_by)
    assert isinstance(fake_service, MemoryOperations)


def test_dispatch_and_client_are_generated_from_the_protocol():
    from desktop_memory.ipc.server import CALLS
    from desktop_memory.service.protocol import MemoryOperations, operations

    assert set(CALLS) == {"ping", *operations()}
    assert issubclass(RemoteService, MemoryOperations)
    overridden = {name for name in operations() if name in vars(RemoteService)}
    assert overridden == {"import_records"}  # streamed in chunks; every other operation is one call
    assert _params(RemoteService.import_records) == _params(operations()["import_records"].function)


class _Spy:
    """The real service, recording what each call received and returned (iterators as lists)."""

    def __init__(self, service) -> None:
        self._service, self.calls = service, []

    def __getattr__(self, name):
        import collections.abc

        value = getattr(self._service, name)
        if name == "settings":
            self.calls.append((name, (), {}, value))
            return value
        if not callable(value):
            return value

        def call(*args, **kwargs):
            if name == "import_records":  # streamed: the service reads the lines as they arrive
                seen: list = []
                result = value((seen.append(line) or line for line in args[0]), **kwargs)
                self.calls.append((name, (seen,), {k: v for k, v in kwargs.items() if k != "progress"}, result))
                return result
            result = value(*args, **kwargs)
            if isinstance(result, collections.abc.Iterator):
                result = list(result)
                self.calls.append((name, args, kwargs, result))
                return iter(result)
            self.calls.append((name, args, kwargs, result))
            return result

        return call


def _examples(service) -> dict[str, object]:
    """An argument for each parameter name the protocol uses (a new name needs an example here)."""
    import datetime as dt

    from desktop_memory.core.capture import Snapshot
    from desktop_memory.core.web import WebCapture

    first = service.add("Decision: the beta ships on March 3rd", source="cli", tags=["work"]).memory
    line = json.dumps({"content": "The Lisbon hotel is on Rua Augusta", "versions": [
        {"content": "The Lisbon hotel is near", "created_at": "2026-01-01T10:00:00", "replaced_at": "2026-01-02"}]})
    service.import_records([line])
    second = service.search("Lisbon hotel", limit=1)[0].memory
    made = service.folder.parent / "made.backup"
    service.create_backup(made, None)
    shared = service.folder.parent / "shared"  # sync: this machine and another in a set, keys in memory
    shared.mkdir(exist_ok=True)
    service.sync.secrets = MemorySecrets()
    service.sync_setup(shared, name="this")
    with MemoryService(service.folder.parent / "other", embedder=FakeEmbedder()) as other:
        other.sync.secrets = service.sync.secrets
        other.sync_setup(shared, phrase=service.sync_phrase(), name="other")
    service.sync_now()
    return {
        "content": "A new note: the standup moved to 9:15", "source": "manual",
        "snapshot": Snapshot("The offsite is in Lisbon on May 12th", {"text/x-probe": b"\x00\xff"}, app="Slack"),
        "item": WebCapture("exchange", site="claude.ai", app="Claude", url="https://claude.ai/chat/c1", title="Trip",
                           conversation="c1", turn="turn-0", prompt="Where to stay in Lisbon?",
                           answer="Alfama or Baixa, near the tram 28.", at=1_700_000_000.5, browser="Firefox"),
        "until": 4_102_444_800.0,
        "lines": [json.dumps({"content": "imported over the socket"}), "{broken", ""],
        "query": "beta", "limit": 5, "expand": True, "budget": 300, "fmt": "markdown", "ids": [second.id],
        "filters": Filters(sources=("cli", "import"), after=dt.datetime(2000, 1, 1, tzinfo=dt.UTC)),
        "memory_id": first.id, "seq": service.versions(second.id)[0].seq,
        "pinned": True, "forgotten": False, "add": ["release", "Q1"], "remove": ["work"], "title": "Beta date",
        "older_than_days": 3650.0, "dry_run": True, "include_forgotten": True, "new": service.settings,
        "path": None, "_second": second.id,
        "target": service.folder.parent / "new.backup", "passphrase": None, "overwrite": True,
        "verify_backup.source": made, "restore_backup.source": made, "encrypted": False,
        "name": "all-MiniLM-L6-v2",  # set_embedding_model: the one in use (no re-embedding)
        "folder": shared, "phrase": None, "sync_setup.name": "this", "machine": "other",
    }


def _args_for(op, examples: dict[str, object]) -> dict[str, object]:
    kwargs = {}
    for p in op.signature.parameters.values():
        if p.kind is inspect.Parameter.VAR_KEYWORD:
            kwargs.update({"tags": ["Work"], "importance": 0.7})  # **fields
        elif (key := f"{op.name}.{p.name}") in examples:  # a name with another meaning in this operation
            kwargs[p.name] = examples[key]
        elif p.name in examples and examples[p.name] is not None or p.default is inspect.Parameter.empty:
            assert p.name in examples, f"no example argument for {op.name}({p.name}=...)"
            kwargs[p.name] = examples[p.name]
    if op.name == "restore_version":
        kwargs["memory_id"] = examples["_second"]
    return kwargs


def _comparable(value):
    import dataclasses

    return dataclasses.asdict(value) if dataclasses.is_dataclass(value) else value


def works_over_the_socket(name: str, spy: _Spy, remote: RemoteService, examples: dict[str, object]) -> None:
    """Call `name` through the client: the service receives the same arguments and the client returns the
    same result (every argument and result type crosses the socket intact)."""
    from desktop_memory.service.protocol import operations

    op = operations()[name]
    kwargs = _args_for(op, examples)
    spy.calls.clear()
    got = getattr(remote, name) if op.is_property else getattr(remote, name)(**kwargs)
    if isinstance(got, Iterator):
        got = list(got)
    assert [c[0] for c in spy.calls] == [name], spy.calls
    _, args, received, returned = spy.calls[0]
    if name == "import_records":
        args, received = (), {"lines": args[0]}
    assert args == () and {k: _comparable(v) for k, v in received.items()} == {
        k: _comparable(v) for k, v in kwargs.items()}
    assert _comparable(got) == _comparable(returned) and type(got) is type(returned)


@pytest.fixture
def spied(fake_service, data_dir: Path):
    spy = _Spy(fake_service)
    examples = _examples(fake_service)
    with IpcServer(spy, data_dir) as server:
        remote = connect(data_dir)
        assert remote is not None
        with remote:
            yield spy, remote, examples, server


def _op_names() -> list[str]:
    from desktop_memory.service.protocol import operations

    return list(operations())


@pytest.mark.parametrize("name", _op_names())
def test_every_protocol_operation_works_over_the_socket(spied, name: str):
    spy, remote, examples, _ = spied
    works_over_the_socket(name, spy, remote, examples)


def test_an_operation_missing_from_the_dispatch_or_the_client_fails_that_check(spied, monkeypatch):
    from desktop_memory.ipc import server

    spy, remote, examples, _ = spied
    monkeypatch.delitem(server.CALLS, "versions")
    with pytest.raises(InvalidInput, match="unknown method 'versions'"):
        works_over_the_socket("versions", spy, remote, examples)
    from desktop_memory.service.lifecycle import Lifecycle  # the client has every operation: it inherits them

    monkeypatch.delattr(Lifecycle, "stats")  # the component the declaration names lost its method
    with pytest.raises(Exception, match="stats"):
        works_over_the_socket("stats", spy, remote, examples)


def test_wrong_argument_types_are_refused_with_one_line(remote: RemoteService):
    with pytest.raises(InvalidInput, match="bad request parameters: limit must be a number"):
        remote._call("search", query="beta", limit="ten")
    with pytest.raises(InvalidInput, match="unknown field 'colour'"):
        remote._call("search", query="beta", filters={"colour": "red"})
    with pytest.raises(InvalidInput, match="unknown parameter 'colour'"):
        remote._call("get", memory_id="x", colour="red")
    with pytest.raises(InvalidInput, match="snapshot"):
        remote._call("capture", snapshot={"text": 5})


def test_the_codec_works_out_each_hint_once_and_still_takes_unhashable_marks():
    """Hints are analysed once (a cache keyed by the hint); one that cannot be a key is analysed each time."""
    from typing import Annotated

    from desktop_memory.core.models import Hit, Memory
    from desktop_memory.ipc import codec

    memories = [Memory(id=f"m{i}", content=f"note {i}", created_at=1.0, updated_at=2.0, content_hash=f"h{i}",
                       tags=["a"], metadata={"k": [1, 2]}) for i in range(3)]
    hits = [Hit(memories[0], 0.5, {"keyword": 0.1}, similar=memories[1:])]
    codec._parts_cached.cache_clear(), codec._decoder.cache_clear(), codec._encoder.cache_clear()
    assert codec.from_json(codec.to_json(hits, list[Hit]), list[Hit]) == hits
    assert codec._parts_cached.cache_info().hits > 0
    odd = Annotated[int, ["an unhashable mark"]]
    assert codec.to_json(3, odd) == 3 and codec.from_json(3, odd) == 3


def test_a_wrong_typed_field_deep_in_a_page_is_refused_with_one_line():
    """The per-hint decoders still check every field: a look-alike's wrong-typed field, a tag that is not
    text, a bool where a number goes and null where a value is required are each refused in one line."""
    from desktop_memory.core.models import Hit, Memory
    from desktop_memory.ipc import codec

    page = [Hit(Memory(id=f"m{i}", content="note", tags=["a"]), 0.5, {"keyword": 0.1},
                similar=[Memory(id=f"s{i}", content="note too")]) for i in range(3)]
    good = codec.to_json(page, list[Hit])
    assert codec.from_json(good, list[Hit], strict=False) == page
    for path, bad, message in [(("similar", 0, "importance"), "high", "importance must be a number"),
                               (("memory", "tags"), ["a", 3], "tags must be str"),
                               (("score",), True, "score must be a number"),
                               (("memory", "content"), None, "content must not be null"),
                               (("memory",), "m0", "memory must be an object")]:
        data = codec.loads(codec.dumps(good))
        spot = data[2]
        for key in path[:-1]:
            spot = spot[key]
        spot[path[-1]] = bad
        with pytest.raises(codec.WrongShape, match=f"^{message}$"):
            codec.from_json(data, list[Hit], strict=False)


def test_the_codec_builds_one_decoder_and_encoder_per_hint():
    """A page's values are coded by functions built once per hint (the socket's search page was ~0.45 ms
    slower to decode than base 8d3a21e's hand-written code when every value re-dispatched on its hint)."""
    from desktop_memory.core.models import Hit, Memory
    from desktop_memory.ipc import codec

    page = [Hit(Memory(id="m", content="note"), 0.5)]
    codec.from_json(codec.to_json(page, list[Hit]), list[Hit])
    decoders, encoders = codec._decoder.cache_info().currsize, codec._encoder.cache_info().currsize
    codec.from_json(codec.to_json(page * 5, list[Hit]), list[Hit])
    assert (codec._decoder.cache_info().currsize, codec._encoder.cache_info().currsize) == (decoders, encoders)


def test_the_typed_reports_cross_the_socket_whole_and_print_the_json_they_always_did():
    """Every optional part of the folder, backup, embedding-model and enrichment reports survives the codec
    (a result is decoded leniently, as the client does), and `to_dict` leaves out only what is None."""
    from desktop_memory.ipc import codec
    from desktop_memory.service import reports as r
    from desktop_memory.service.protocol import operations

    repaired = r.IndexStatus("rebuilding", "being rebuilt", cause="was damaged", reason="bad page", vectors=9,
                             embedded=2, at=1.5, moved_to="vectors.damaged-1", done=4)
    model = r.EnrichmentModel("(default)", name="m.gguf", path="/m.gguf", bytes=10, usable=False, error="crashed",
                              crashes=r.ModelCrashes(3, "SIGSEGV"), loaded=False)
    values = {
        "index_status": repaired,
        "doctor": r.DoctorReport("/d", 9, "on", True, True, True, "ok", r.VectorRepairs(1, 2, 3, 4),
                                 r.IndexStatus("ok", "", last_repair={"cause": "was missing", "vectors": 3}),
                                 True, True, "ok"),
        "create_backup": r.BackupInfo(format=1, app_version="0.9", schema_version=9, created_at="2026-01-01T00:00:00",
                                      memories=3, embedding_model="minilm", memory_digest="abc", file="/b",
                                      encrypted=True, bytes=4096),
        "restore_backup": r.RestoreReport(format=1, memories=3, memory_digest="abc", file="/b", encrypted=False,
                                          restored=3, vectors_reused=2, vectors_embedded=1, previous_database=None),
        "enrichment_status": r.EnrichmentStatus(1, 0, 2, 3, None, True, "", 2, 2048, 120, model),
        "embedding_model_status": r.EmbeddingModelStatus("a", "b", "re-embedding", 1, 2, "Re-embedding",
                                                         [r.EmbeddingModelInfo("a", "pa", "A", True, True)]),
        "verify_enrichment_model": r.ModelCheck("m", "/m", 10, 0.5, 1.25, r.EnrichmentSample(
            "Title", "", 0.5, [{"text": "Priya", "type": "person"}], "m")),
        "enrichment_changes": r.QueueState(3, 1, 0, "stopped"),
    }
    for name, value in values.items():
        hint = operations()[name].returns
        data = json.loads(json.dumps(codec.to_json(value, hint)))
        assert codec.from_json(data, hint, strict=False) == value, name
    assert list(repaired.to_dict()) == ["cause", "reason", "vectors", "embedded", "state", "at", "moved_to", "done",
                                        "message"]
    assert r.IndexStatus("ok", "").to_dict() == {"state": "ok", "message": ""}
    assert list(values["doctor"].to_dict())[-2:] == ["ok", "local_model"]
    assert values["doctor"].to_dict()["vector_index"] == {"state": "ok", "message": "",
                                                          "last_repair": {"cause": "was missing", "vectors": 3}}
    assert r.EnrichmentModel("(default)", usable=False, error="missing").to_dict() == {
        "configured": "(default)", "usable": False, "error": "missing"}
    older = r.BackupInfo(format=1, memories=3, memory_digest="abc", file="/b", encrypted=False)  # no created_at...
    assert list(older.to_dict()) == ["format", "memories", "memory_digest", "file", "encrypted"]
    assert list(values["restore_backup"].to_dict()) == ["format", "memories", "memory_digest", "file", "encrypted",
                                                        "restored", "vectors_reused", "vectors_embedded",
                                                        "previous_database"]
