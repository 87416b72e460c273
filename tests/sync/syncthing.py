"""Two (or more) real Syncthing instances on this machine's loopback, for the sync tests (issue 35).

Each `Syncthing` runs Debian's `syncthing serve` with its own home (keys, config, database) under the test's
tmp_path, HOME and the XDG folders pointed there too, so no run touches ~/.config/syncthing. Nothing leaves
the machine: global and local discovery, relays, NAT/UPnP, STUN, usage and crash reporting and upgrades are
off; the sync protocol listens on tcp://127.0.0.<n>:<port> (a different loopback address per instance) and
the REST API (tests only) on 127.0.0.1:<port> with a random API key.

    with Syncthing(tmp_path / "st-a", tmp_path / "a", "a") as a, Syncthing(tmp_path / "st-b", tmp_path / "b", "b") as b:
        pair(a, b, "dm")
        (a.folder / "x.txt").write_bytes(b"hello")
        wait_for(lambda: (b.folder / "x.txt").exists(), 30, "x.txt on b")

`settle(a, b, folder_id)` is a barrier (both rescan, then wait until each has everything the other has);
`make_conflict(...)` makes Syncthing itself write a `*.sync-conflict-<date>-<time>-<device>.*` copy.
Syncthing puts a `.stfolder` marker dir in each folder and `.syncthing.<name>.tmp` files while it pulls.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import os
import re
import secrets
import shutil
import signal
import socket
import subprocess
import time
import urllib.error
import urllib.parse
import urllib.request
import xml.etree.ElementTree as ET
from collections.abc import Callable, Iterator
from pathlib import Path
from types import TracebackType
from typing import Any

SYNCTHING = shutil.which("syncthing")

# Syncthing's conflict copies: name.sync-conflict-20240101-120000-ABCDEFG.ext (the device's short ID)
CONFLICT_RE = re.compile(r"\.sync-conflict-\d{8}-\d{6}-[A-Z0-9]{7}(\.|$)")

# loopback addresses handed to instances in turn (127.0.0.2, 127.0.0.3, ...); Linux routes all of 127/8 to lo
_loopback = itertools.cycle(range(2, 255))

START_TIMEOUT_S = 30.0
REQUEST_TIMEOUT_S = 15.0


class SyncthingError(RuntimeError):
    pass


def free_port(host: str) -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((host, 0))
        return int(s.getsockname()[1])


def wait_for(predicate: Callable[[], bool], timeout: float, what: str = "the condition",
             interval: float = 0.1) -> None:
    """Poll `predicate` until it is true; AssertionError naming `what` after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        if predicate():
            return
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout:g} s waiting for {what}")
        time.sleep(interval)


def _set(options: ET.Element, tag: str, value: str) -> None:
    element = options.find(tag)
    if element is None:
        element = ET.SubElement(options, tag)
    element.text = value


# everything that could reach beyond this machine, off; reconnects fast so a pair connects in a second
_OPTIONS = {
    "globalAnnounceEnabled": "false",
    "localAnnounceEnabled": "false",
    "relaysEnabled": "false",
    "natEnabled": "false",
    "stunKeepaliveStartS": "0",  # 0: no STUN
    "announceLANAddresses": "false",
    "urAccepted": "-1",
    "crashReportingEnabled": "false",
    "autoUpgradeIntervalH": "0",
    "startBrowser": "false",
    "reconnectionIntervalS": "1",
    "setLowPriority": "false",
}


class Syncthing:
    """One Syncthing instance; a context manager (stopped on exit, also when the test fails)."""

    def __init__(self, home: Path, folder: Path, name: str, listen_host: str | None = None) -> None:
        if SYNCTHING is None:
            raise SyncthingError("syncthing is not installed (bash scripts/dev.sh setup installs it)")
        self.home = Path(home)
        self.folder = Path(folder)
        self.name = name
        self.listen_host = listen_host or f"127.0.0.{next(_loopback)}"
        self.gui_port = 0
        self.sync_port = 0
        self.api_key = secrets.token_urlsafe(24)
        self.device_id = ""
        self.proc: subprocess.Popen[bytes] | None = None
        self._log: Any = None
        self.log_path = self.home / "syncthing.log"

    # -- lifecycle ---------------------------------------------------------------------------------------
    def __enter__(self) -> Syncthing:
        try:
            self.start()
        except BaseException:
            self.stop()
            raise
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.stop()

    @property
    def pid(self) -> int | None:
        """The process started (Syncthing 1.19's monitor; the syncthing doing the work is its child)."""
        return self.proc.pid if self.proc is not None else None

    def pids(self) -> list[int]:
        """Every live process of this instance: its process group (started as a new session)."""
        if self.pid is None:
            return []
        return [pid for pid, pgrp, state in _processes() if pgrp == self.pid and state != "Z"]

    @property
    def address(self) -> str:
        """The sync protocol address another device dials."""
        return f"tcp://{self.listen_host}:{self.sync_port}"

    def env(self) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith("ST")}
        env.update(STNODEFAULTFOLDER="1", STNOUPGRADE="1", STNORESTART="1", HOME=str(self.home),
                   XDG_CONFIG_HOME=str(self.home / "xdg-config"), XDG_DATA_HOME=str(self.home / "xdg-data"),
                   XDG_STATE_HOME=str(self.home / "xdg-state"), XDG_CACHE_HOME=str(self.home / "xdg-cache"))
        return env

    def write_config(self) -> None:
        """Keys and a default config from `syncthing generate`, then every outward-facing option turned off."""
        assert SYNCTHING is not None
        self.home.mkdir(parents=True, exist_ok=True, mode=0o700)
        config = self.home / "config.xml"
        if not config.exists():
            subprocess.run([SYNCTHING, "generate", f"--home={self.home}", "--no-default-folder"], env=self.env(),
                           check=True, capture_output=True, timeout=START_TIMEOUT_S)
        tree = ET.parse(config)
        root = tree.getroot()
        gui = root.find("gui")
        options = root.find("options")
        if gui is None or options is None:
            raise SyncthingError(f"unexpected config from syncthing generate: {config}")
        gui.set("enabled", "true")
        gui.set("tls", "false")
        self.gui_port = free_port("127.0.0.1")
        self.sync_port = free_port(self.listen_host)
        _set(gui, "address", f"127.0.0.1:{self.gui_port}")
        _set(gui, "apikey", self.api_key)
        for listen in options.findall("listenAddress"):
            options.remove(listen)
        _set(options, "listenAddress", self.address)
        for tag, value in _OPTIONS.items():
            _set(options, tag, value)
        for device in root.findall("device"):  # this device: its name
            device.set("name", self.name)
        tree.write(config)
        config.chmod(0o600)

    def start(self) -> None:
        assert SYNCTHING is not None
        self.folder.mkdir(parents=True, exist_ok=True)
        self.write_config()
        self._log = open(self.log_path, "ab")  # noqa: SIM115 (closed in stop())
        self.proc = subprocess.Popen(
            [SYNCTHING, "serve", "--no-browser", "--no-restart", "--no-upgrade", f"--home={self.home}",
             "--logflags=3"],
            env=self.env(), stdin=subprocess.DEVNULL, stdout=self._log, stderr=subprocess.STDOUT,
            start_new_session=True)  # its own process group: stop() can kill whatever it started
        deadline = time.monotonic() + START_TIMEOUT_S
        while True:
            if self.proc.poll() is not None:
                raise SyncthingError(f"syncthing {self.name} exited ({self.proc.returncode}):\n{self.log_tail()}")
            try:
                self.device_id = self.get("/rest/system/status")["myID"]
                break
            except (OSError, SyncthingError) as e:
                if time.monotonic() > deadline:
                    raise SyncthingError(f"syncthing {self.name}'s REST API did not answer:\n{self.log_tail()}") from e
                time.sleep(0.1)

    def stop(self) -> None:
        """Graceful shutdown through REST, then SIGTERM, then SIGKILL of its whole process group."""
        proc = self.proc
        if proc is not None:
            if proc.poll() is None:
                with contextlib.suppress(OSError, SyncthingError):
                    self.post("/rest/system/shutdown", timeout=5)
                try:
                    proc.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    self._signal_group(proc, signal.SIGTERM)
                    try:
                        proc.wait(timeout=5)
                    except subprocess.TimeoutExpired:
                        self._signal_group(proc, signal.SIGKILL)
                        proc.wait(timeout=10)
            self._signal_group(proc, signal.SIGKILL)  # anything it left in its group
        if self._log is not None:
            self._log.close()
            self._log = None

    @staticmethod
    def _signal_group(proc: subprocess.Popen[bytes], sig: int) -> None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, sig)

    def log_tail(self, lines: int = 30) -> str:
        try:
            return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return "(no log)"

    # -- REST ----------------------------------------------------------------------------------------------
    def request(self, method: str, path: str, params: dict[str, str] | None = None, body: Any = None,
                timeout: float = REQUEST_TIMEOUT_S) -> Any:
        url = f"http://127.0.0.1:{self.gui_port}{path}"
        if params:
            url += "?" + urllib.parse.urlencode(params)
        data = json.dumps(body).encode() if body is not None else None
        req = urllib.request.Request(url, data=data, method=method, headers={"X-API-Key": self.api_key})
        if data is not None:
            req.add_header("Content-Type", "application/json")
        try:
            with urllib.request.urlopen(req, timeout=timeout) as response:
                raw = response.read()
        except urllib.error.HTTPError as e:
            raise SyncthingError(f"{method} {path} on {self.name}: HTTP {e.code} {e.read()[:300]!r}") from e
        return json.loads(raw) if raw.strip() else None

    def get(self, path: str, **params: str) -> Any:
        return self.request("GET", path, params)

    def post(self, path: str, body: Any = None, timeout: float = REQUEST_TIMEOUT_S, **params: str) -> Any:
        return self.request("POST", path, params, body, timeout=timeout)

    def patch(self, path: str, body: Any) -> Any:
        return self.request("PATCH", path, None, body)

    # -- configuration -------------------------------------------------------------------------------------
    def add_device(self, other: Syncthing, dial: bool = True) -> None:
        """Know `other` by its device ID (no introducer, no auto-accept); with `dial`, at its explicit loopback
        address, else "dynamic" (with discovery off: never dialed, `other` dials in)."""
        self.post("/rest/config/devices", {
            "deviceID": other.device_id, "name": other.name, "addresses": [other.address] if dial else ["dynamic"],
            "introducer": False, "autoAcceptFolders": False, "paused": False})

    def share_folder(self, folder_id: str, peers: list[Syncthing], rescan_s: int = 2, watcher_delay_s: int = 1,
                     **settings: Any) -> None:
        """This instance's `folder` as `folder_id` (sendreceive), shared with `peers`."""
        folder = self.get("/rest/config/defaults/folder")
        folder.update(id=folder_id, label=folder_id, path=str(self.folder), type="sendreceive",
                      rescanIntervalS=rescan_s, fsWatcherEnabled=True, fsWatcherDelayS=watcher_delay_s, paused=False,
                      devices=[{"deviceID": d.device_id} for d in [self, *peers]])
        folder.update(settings)
        self.post("/rest/config/folders", folder)

    def pause_device(self, other: Syncthing) -> None:
        self.patch(f"/rest/config/devices/{other.device_id}", {"paused": True})

    def resume_device(self, other: Syncthing) -> None:
        self.patch(f"/rest/config/devices/{other.device_id}", {"paused": False})

    def pause_folder(self, folder_id: str) -> None:
        self.patch(f"/rest/config/folders/{folder_id}", {"paused": True})

    def resume_folder(self, folder_id: str) -> None:
        self.patch(f"/rest/config/folders/{folder_id}", {"paused": False})

    # -- state -----------------------------------------------------------------------------------------------
    def connected(self, other: Syncthing) -> bool:
        conn = self.get("/rest/system/connections")["connections"].get(other.device_id)
        return bool(conn and conn.get("connected"))

    def db_status(self, folder_id: str) -> dict[str, Any]:
        status: dict[str, Any] = self.get("/rest/db/status", folder=folder_id)
        return status

    def completion(self, folder_id: str, other: Syncthing) -> dict[str, Any]:
        """How far `other` has what this instance has (as `other` last reported it)."""
        completion: dict[str, Any] = self.get("/rest/db/completion", folder=folder_id, device=other.device_id)
        return completion

    def scan(self, folder_id: str) -> None:
        """Rescan now; returns when the scan is done."""
        self.post("/rest/db/scan", timeout=60, folder=folder_id)

    def peers(self, folder_id: str) -> list[str]:
        folder = self.get(f"/rest/config/folders/{folder_id}")
        return [d["deviceID"] for d in folder["devices"] if d["deviceID"] != self.device_id]

    def is_idle(self, folder_id: str) -> bool:
        """Idle with nothing left to pull, and every peer of the folder up to date with this instance."""
        status = self.db_status(folder_id)
        if status.get("state") != "idle" or status.get("needTotalItems", 0) != 0:
            return False
        for device_id in self.peers(folder_id):
            completion = self.get("/rest/db/completion", folder=folder_id, device=device_id)
            if completion.get("completion") != 100 or completion.get("needItems", 0) != 0:
                return False
        return True

    def wait_idle(self, folder_id: str, timeout: float = 30) -> None:
        wait_for(lambda: self.is_idle(folder_id), timeout, f"{self.name}'s folder {folder_id} to be idle and in sync")

    def wait_connected(self, other: Syncthing, timeout: float = 30) -> None:
        wait_for(lambda: self.connected(other), timeout, f"{self.name} to connect to {other.name}")

    def listening(self) -> list[str]:
        """Local addresses (host:port) this instance's process listens on, TCP and UDP, from `ss`."""
        ss = shutil.which("ss")
        if ss is None or not self.pids():
            raise SyncthingError("cannot list listening sockets: ss (iproute2) missing or not started")
        out = subprocess.run([ss, "-H", "-l", "-n", "-p", "-t", "-u"], capture_output=True, text=True,
                             check=True, timeout=10).stdout
        markers = [f"pid={pid}," for pid in self.pids()]
        return [line.split()[4] for line in out.splitlines() if any(m in line for m in markers)]


def _processes() -> Iterator[tuple[int, int, str]]:
    """(pid, process group, state) of every process in /proc."""
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:  # ended meanwhile
                continue
            yield int(entry.name), int(fields[2]), fields[0]


def processes_using(path: Path) -> list[int]:
    """Pids of live processes whose command line names `path` (a syncthing left behind shows up here)."""
    needle = str(path).encode()
    pids = []
    for pid, _pgrp, state in _processes():
        try:
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
        except OSError:  # ended meanwhile, or not ours to read
            continue
        if needle in cmdline and state != "Z":
            pids.append(pid)
    return sorted(pids)


def pair(a: Syncthing, b: Syncthing, folder_id: str, timeout: float = 30, **folder_settings: Any) -> None:
    """Each device added to the other, `folder_id` shared between them (each its own path); waits until they
    are connected and the folder is idle on both.

    Only a dials (b's address explicit on a, a "dynamic" on b): Syncthing dials from its listening port, so two
    instances dialing each other at the same moment (at pairing, after a pause) make one TCP connection by
    simultaneous open in which both sides start TLS as the client, and it hangs until the 20 s Hello timeout."""
    a.add_device(b)
    b.add_device(a, dial=False)
    a.share_folder(folder_id, [b], **folder_settings)
    b.share_folder(folder_id, [a], **folder_settings)
    a.wait_connected(b, timeout)
    b.wait_connected(a, timeout)
    settle(a, b, folder_id, timeout)


def settle(a: Syncthing, b: Syncthing, folder_id: str, timeout: float = 30) -> None:
    """A barrier: both rescan now, then wait until each is idle with the other up to date."""
    a.scan(folder_id)
    b.scan(folder_id)
    wait_for(lambda: a.is_idle(folder_id) and b.is_idle(folder_id), timeout,
             f"{a.name} and {b.name} to be in sync on {folder_id}")


def conflict_copies(folder: Path) -> list[Path]:
    """Syncthing's conflict copies anywhere under `folder`."""
    return sorted(p for p in folder.rglob("*") if CONFLICT_RE.search(p.name))


@contextlib.contextmanager
def disconnected(a: Syncthing, b: Syncthing) -> Iterator[None]:
    """Inside: a and b do not talk to each other (each pauses the other), each folder still scans."""
    a.pause_device(b)
    b.pause_device(a)
    try:
        wait_for(lambda: not a.connected(b) and not b.connected(a), 30, f"{a.name} and {b.name} to disconnect")
        yield
    finally:
        a.resume_device(b)
        b.resume_device(a)
    a.wait_connected(b)
    b.wait_connected(a)


def make_conflict(a: Syncthing, b: Syncthing, folder_id: str, relpath: str, data_a: bytes, data_b: bytes,
                  timeout: float = 45) -> Path:
    """Make Syncthing write a real conflict copy: `relpath` written with different contents on each side while
    they are disconnected (each side scans its own version), then reconnected. a's version is the older one, so
    Syncthing keeps b's under `relpath` and renames a's to `<name>.sync-conflict-<date>-<time>-<device>.<ext>`
    on both sides (1.19 puts the short ID of the device whose version won, b, in the name). Returns the conflict
    copy's path in a's folder once both folders hold the same two files."""
    target_a, target_b = a.folder / relpath, b.folder / relpath
    before = set(conflict_copies(a.folder))
    with disconnected(a, b):
        for target, data in ((target_a, data_a), (target_b, data_b)):
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data)
        old = time.time() - 120
        os.utime(target_a, (old, old))  # the older modification time loses the conflict
        a.scan(folder_id)
        b.scan(folder_id)

    def resolved() -> bool:
        try:
            return _resolved()
        except OSError:  # a file renamed or replaced while looked at
            return False

    def _resolved() -> bool:
        new_a = set(conflict_copies(a.folder)) - before
        if len(new_a) != 1 or not target_a.exists() or not target_b.exists():
            return False
        (copy_a,) = new_a
        copy_b = b.folder / copy_a.relative_to(a.folder)
        return (target_a.read_bytes() == target_b.read_bytes() == data_b and copy_b.exists()
                and copy_a.read_bytes() == copy_b.read_bytes() == data_a)

    wait_for(resolved, timeout, f"a conflict copy of {relpath} on {a.name} and {b.name}")
    (copy,) = set(conflict_copies(a.folder)) - before
    return copy
