"""Real browsers for the browser companion's tests (issue 34): Debian's chromium and firefox-esr, headless,
with the unpacked extension from `<repo>/extension`, against local fixture pages served over HTTPS.

- `FixtureServer`: HTTPS on 127.0.0.1 (a free port) with a certificate made here for the AI sites' host names;
  the Host header picks `tests/browser/fixtures/<site>/` and any path serves its `index.html` (or the file of
  that name beside it). `OTHER_SITE` (example.org) is a plain article page for selection/page captures.
- `Chromium`: the site names mapped to the server with `--host-resolver-rules`, driven over the DevTools
  protocol (CDP) through a websocket.
- `Firefox`: the site names reach the server through a small CONNECT proxy (`ConnectProxy`), driven over
  WebDriver BiDi (built into Firefox); the extension installed as a temporary add-on.
- `register_host`: the native messaging host manifest each browser reads (one place: the integrator can switch it
  to `desktop-memory setup-browser`).

Pages are driven with `Tab.evaluate(js)` (an expression, awaited, its JSON value returned) and `Tab.wait_for`.
Nothing here leaves the machine: the browsers are told no other host name than the fixture sites'.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import hashlib
import ipaddress
import itertools
import json
import mimetypes
import os
import posixpath
import shutil
import signal
import socket
import socketserver
import ssl
import stat
import subprocess
import sys
import threading
import time
import urllib.parse
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from websockets.sync.client import ClientConnection, connect

REPO = Path(__file__).resolve().parents[2]
# the extension and its fixture pages; the variables point a test run at another checkout's (while developing)
EXTENSION = Path(os.environ.get("DESKTOP_MEMORY_TEST_EXTENSION", REPO / "extension"))
FIXTURES = Path(os.environ.get("DESKTOP_MEMORY_TEST_FIXTURES", Path(__file__).parent / "fixtures"))
OTHER_SITE_DIR = Path(__file__).parent / "other_site"

HOST_NAME = "org.desktop_memory.companion"
FIREFOX_ID = "companion@desktop-memory.org"
FIREFOX_UUID = "5b0c8f51-3d4e-4f2a-9a57-8c1d2e3f4a5b"  # the add-on's moz-extension:// host (a pref pins it)

AI_SITES = ("chatgpt.com", "claude.ai", "gemini.google.com")
ALIASES = {"chat.openai.com": "chatgpt.com"}  # served with the same fixture
OTHER_SITE = "example.org"
HOSTS = (*AI_SITES, *ALIASES, OTHER_SITE)

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
FIREFOX = shutil.which("firefox-esr") or "/usr/bin/firefox-esr"
STARTUP_S = 30.0


def missing(binary: str) -> bool:
    return not os.access(binary, os.X_OK)


def wait_until(check: Callable[[], Any], timeout: float, what: str, interval: float = 0.1) -> Any:
    """`check()`'s first true value within `timeout` seconds, else AssertionError naming `what`."""
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout:g} s waiting for {what}")
        time.sleep(interval)


# -- the HTTPS fixture server ------------------------------------------------------------------------------------


def make_certificate(folder: Path, hosts: tuple[str, ...] = HOSTS) -> tuple[Path, Path]:
    """A self-signed certificate for `hosts` (and 127.0.0.1): (certificate file, key file), both PEM."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "desktop-memory browser tests")])
    now = dt.datetime.now(dt.UTC)
    alt = [x509.DNSName(h) for h in hosts] + [x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - dt.timedelta(days=1)).not_valid_after(now + dt.timedelta(days=7))
            .add_extension(x509.SubjectAlternativeName(alt), critical=False)
            .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
            .sign(key, hashes.SHA256()))
    folder.mkdir(parents=True, exist_ok=True)
    cert_file, key_file = folder / "cert.pem", folder / "key.pem"
    cert_file.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_file.write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                           serialization.NoEncryption()))
    key_file.chmod(0o600)
    return cert_file, key_file


FIXTURE_FOLDERS = {"chatgpt.com": "chatgpt", "claude.ai": "claude", "gemini.google.com": "gemini"}


def site_folder(host: str) -> Path | None:
    """The folder served for `host` (tests/browser/fixtures/<name>/, README.md there), None: not a test site."""
    host = ALIASES.get(host, host)
    if host == OTHER_SITE:
        return OTHER_SITE_DIR
    if host in FIXTURE_FOLDERS:
        return FIXTURES / FIXTURE_FOLDERS[host]
    return None


class _FixtureHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def do_GET(self) -> None:  # noqa: N802 (http.server's name)
        self._serve(body=True)

    def do_HEAD(self) -> None:  # noqa: N802
        self._serve(body=False)

    def _serve(self, *, body: bool) -> None:
        host = (self.headers.get("Host") or "").split(":")[0].lower()
        folder = site_folder(host)
        if folder is None or not (folder / "index.html").is_file():
            self._send(404, b"no fixture for this host\n", "text/plain", body)
            return
        name = posixpath.basename(urllib.parse.urlsplit(self.path).path)
        page = folder / name if name and (folder / name).is_file() else folder / "index.html"
        if name == "fixture.js" and not (folder / name).is_file():  # the pages' shared driver
            page = folder.parent / name
        kind = mimetypes.guess_type(page.name)[0] or "application/octet-stream"
        if kind.startswith("text/") or kind.endswith("javascript"):
            kind += "; charset=utf-8"
        self._send(200, page.read_bytes(), kind, body)

    def _send(self, code: int, data: bytes, kind: str, body: bool) -> None:
        self.send_response(code)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(data)))
        self.send_header("Cache-Control", "no-store")
        self.end_headers()
        if body:
            self.wfile.write(data)

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 (the base class's name)
        pass  # quiet: pytest shows what the tests assert


class FixtureServer:
    """The fixture sites over HTTPS on 127.0.0.1:<port>, with `ConnectProxy` in front for Firefox."""

    def __init__(self, folder: Path) -> None:
        self.cert, self.key = make_certificate(folder)
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(self.cert, self.key)
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), _FixtureHandler)
        self.httpd.daemon_threads = True
        # the handshake happens in each request's thread (a stalled client never stops the others)
        self.httpd.socket = context.wrap_socket(self.httpd.socket, server_side=True, do_handshake_on_connect=False)
        self.port = self.httpd.server_address[1]
        self.proxy = ConnectProxy(self.port)
        self._threads = [threading.Thread(target=self.httpd.serve_forever, daemon=True),
                         threading.Thread(target=self.proxy.serve_forever, daemon=True)]
        for t in self._threads:
            t.start()

    def url(self, site: str, path: str = "/") -> str:
        return f"https://{site}{path}"

    def close(self) -> None:
        self.httpd.shutdown()
        self.proxy.shutdown()
        self.httpd.server_close()
        self.proxy.server_close()


class _ConnectHandler(socketserver.BaseRequestHandler):
    server: ConnectProxy

    def handle(self) -> None:
        head = b""
        while b"\r\n\r\n" not in head:
            chunk = self.request.recv(4096)
            if not chunk or len(head) > 16384:
                return
            head += chunk
        line = head.split(b"\r\n", 1)[0].decode("latin-1").split()
        host = line[1].rsplit(":", 1)[0].lower() if len(line) == 3 and line[0] == "CONNECT" else ""
        if site_folder(host) is None:  # only the fixture sites: nothing else leaves the test
            self.request.sendall(b"HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\n\r\n")
            return
        upstream = socket.create_connection(("127.0.0.1", self.server.target_port))
        self.request.sendall(b"HTTP/1.1 200 Connection Established\r\n\r\n")
        rest = head.split(b"\r\n\r\n", 1)[1]
        if rest:
            upstream.sendall(rest)
        pump = threading.Thread(target=_pipe, args=(upstream, self.request), daemon=True)
        pump.start()
        _pipe(self.request, upstream)
        pump.join(5)
        upstream.close()


def _pipe(source: socket.socket, target: socket.socket) -> None:
    try:
        while data := source.recv(65536):
            target.sendall(data)
    except OSError:
        pass  # either side closed: the tunnel ends
    with contextlib.suppress(OSError):  # already closed
        target.shutdown(socket.SHUT_WR)


class ConnectProxy(socketserver.ThreadingTCPServer):
    """An HTTP CONNECT proxy on 127.0.0.1 that tunnels the fixture sites' names to the fixture server."""

    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, target_port: int) -> None:
        self.target_port = target_port
        super().__init__(("127.0.0.1", 0), _ConnectHandler)
        self.port = self.server_address[1]


# -- the native messaging host ----------------------------------------------------------------------------------


def browser_env(home: Path, data_dir: Path, **extra: str) -> dict[str, str]:
    """The browser's environment, which it hands down to the native host: a temporary HOME, the test's data
    folder, no encryption (as tests/conftest.py), no model download."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("DESKTOP_MEMORY_", "XDG_CONFIG", "XDG_DATA",
                                                                    "XDG_CACHE"))}
    env.update(HOME=str(home), XDG_CONFIG_HOME=str(home / ".config"), XDG_CACHE_HOME=str(home / ".cache"),
               XDG_DATA_HOME=str(home / ".local" / "share"), DESKTOP_MEMORY_HOME=str(data_dir),
               DESKTOP_MEMORY_ENCRYPTION="off", DESKTOP_MEMORY_SERVICE_IDLE_S="5", HF_HUB_OFFLINE="1",
               TRANSFORMERS_VERBOSITY="error", HF_HUB_DISABLE_PROGRESS_BARS="1", ANONYMIZED_TELEMETRY="False",
               PYTHONPATH=str(REPO))
    env.update(extra)
    return env


def stand_in_host(folder: Path, log: Path) -> Path:
    """A tiny native host for the harness's own tests: answers `capture` with "added", anything else like
    `hello`, and appends each request to `log` (one JSON a line). Not the product's host."""
    folder.mkdir(parents=True, exist_ok=True)
    script = folder / "stand-in-host"
    script.write_text(f"""#!{sys.executable}
import json, struct, sys
inp, out = sys.stdin.buffer, sys.stdout.buffer
while True:
    head = inp.read(4)
    if len(head) < 4:
        sys.exit(0)
    body = inp.read(struct.unpack("=I", head)[0])
    request = json.loads(body)
    with open({str(log)!r}, "a") as fh:
        fh.write(json.dumps({{"request": request, "argv": sys.argv[1:]}}) + "\\n")
    if request.get("type") == "capture":
        reply = {{"status": "added", "message": "Remembered (stand-in)", "memory_id": None}}
    else:
        reply = {{"version": "stand-in", "engine": "offline", "paused": False}}
    reply = json.dumps({{"id": request.get("id"), "ok": True, **reply}}).encode()
    out.write(struct.pack("=I", len(reply)) + reply)
    out.flush()
""")
    script.chmod(0o700)
    return script


def setup_browser(browser: str, env: dict[str, str], *more: str) -> str:
    """`desktop-memory setup-browser --browser BROWSER` as a person runs it, in the browser's HOME: the manifest
    in that HOME's per-user folder (Chromium's profile is `~/.config/chromium`, where it reads it), `path` the
    venv's `desktop-memory` (this checkout through the browser's PYTHONPATH); its output."""
    done = subprocess.run([sys.executable, "-m", "desktop_memory", "setup-browser", "--browser", browser, *more],
                          env=env, capture_output=True, text=True, timeout=180, check=False)
    assert done.returncode == 0, f"setup-browser {' '.join(more)}: {done.stdout}{done.stderr}"
    return done.stdout


def register_host(browser: str, *, home: Path, user_data_dir: Path | None, executable: Path,
                  chromium_id: str | None = None) -> list[Path]:
    """Write a stand-in host's manifest where `browser` ("chromium" | "firefox") reads it (the harness's own
    smoke tests); the files written. The real host is registered by `setup_browser`."""
    if browser == "chromium":
        assert user_data_dir is not None and chromium_id
        manifest = {"name": HOST_NAME, "description": "desktop-memory companion (tests)", "path": str(executable),
                    "type": "stdio", "allowed_origins": [f"chrome-extension://{chromium_id}/"]}
        folders = [user_data_dir / "NativeMessagingHosts"]
    else:
        manifest = {"name": HOST_NAME, "description": "desktop-memory companion (tests)", "path": str(executable),
                    "type": "stdio", "allowed_extensions": [FIREFOX_ID]}
        # ~/.mozilla, and the XDG folder newer Firefox releases use when ~/.mozilla does not exist
        folders = [home / ".mozilla" / "native-messaging-hosts",
                   home / ".config" / "mozilla" / "native-messaging-hosts"]
    written = []
    for folder in folders:
        folder.mkdir(parents=True, exist_ok=True)
        target = folder / f"{HOST_NAME}.json"
        target.write_text(json.dumps(manifest, indent=2))
        written.append(target)
    return written


def chromium_id(extension: Path = EXTENSION) -> str:
    """The extension's Chromium id from the manifest's "key" (sha256 of the DER, first 32 hex digits a-p)."""
    import base64

    key = json.loads((extension / "manifest.json").read_text())["key"]
    digest = hashlib.sha256(base64.b64decode(key)).hexdigest()[:32]
    return "".join(chr(ord("a") + int(c, 16)) for c in digest)


def _sh(text: str) -> str:
    import shlex

    return shlex.quote(text)


# -- a tab, whichever protocol drives it --------------------------------------------------------------------------


class Tab:
    """One page: `goto`, `evaluate` (an expression or a promise; its JSON value), `wait_for`."""

    def evaluate(self, expression: str, timeout: float = 15.0) -> Any:
        raise NotImplementedError

    def goto(self, url: str, timeout: float = 20.0) -> None:
        raise NotImplementedError

    def close(self) -> None:
        raise NotImplementedError

    def type(self, text: str) -> None:
        """Real key events into the focused element, a key down and up per character; "\n" is Enter."""
        raise NotImplementedError

    def screenshot(self, target: Path) -> Path:
        """The page as a PNG file (docs/screenshots)."""
        raise NotImplementedError

    def wait_for(self, expression: str, timeout: float = 15.0, what: str = "") -> Any:
        return wait_until(lambda: self.evaluate(expression), timeout, what or expression)

    def loaded(self, url: str, timeout: float) -> None:
        want = urllib.parse.urlsplit(url)
        self.wait_for(f"location.host === {json.dumps(want.netloc)} && document.readyState === 'complete'",
                      timeout, f"{url} to load")

    @staticmethod
    def _wrap(expression: str) -> str:
        # any value: awaited, then carried as JSON text (both protocols return strings alike)
        return f"(async () => JSON.stringify(await ({expression}) ?? null))()"


class _Socket:
    """A JSON-over-websocket client: numbered commands, their answers matched by id, events kept."""

    def __init__(self, url: str) -> None:
        self._stack = contextlib.ExitStack()  # websockets wants connect() as a context manager
        self.ws: ClientConnection = self._stack.enter_context(connect(url, max_size=None, open_timeout=STARTUP_S))
        self.failure: Exception | None = None
        self._ids = itertools.count(1)
        self._answers: dict[int, dict[str, Any]] = {}
        self._cond = threading.Condition()
        self.events: list[dict[str, Any]] = []
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        try:
            for raw in self.ws:
                message = json.loads(raw)
                with self._cond:
                    if "id" in message and message.get("type", "") != "event":
                        self._answers[message["id"]] = message
                    else:
                        self.events.append(message)
                    self._cond.notify_all()
        except Exception as error:  # noqa: BLE001 (the browser went away: the waiting commands say why)
            self.failure = error

    def call(self, message: dict[str, Any], timeout: float) -> dict[str, Any]:
        number = next(self._ids)
        self.ws.send(json.dumps({"id": number, **message}))
        with self._cond:
            if not self._cond.wait_for(lambda: number in self._answers, timeout):
                why = f" (the connection ended: {self.failure!r})" if self.failure else ""
                raise AssertionError(f"no answer to {message.get('method')} within {timeout:g} s{why}")
            return self._answers.pop(number)

    def close(self) -> None:
        self._stack.close()


class Browser:
    name = ""
    process: subprocess.Popen[bytes]
    log: Any

    def new_tab(self, url: str = "about:blank", *, private: bool = False) -> Tab:
        raise NotImplementedError

    def popup_url(self) -> str:
        raise NotImplementedError

    def grant_active_tab(self, url: str) -> None:
        """Give the extension `activeTab` on the tab showing `url`, as a person's click on its toolbar button or
        menu does (neither protocol can click the browser's own menus)."""
        raise NotImplementedError

    def in_background(self, expression: str, timeout: float = 15.0) -> Any:
        """Evaluate `expression` with `bg` the extension's background script's global object."""
        raise NotImplementedError

    def close(self) -> None:
        raise NotImplementedError

    @contextlib.contextmanager
    def _cleanup_on_error(self) -> Iterator[None]:
        try:
            yield
        except BaseException:
            self._stop()
            self.log.close()
            raise

    def _stop(self) -> None:
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait(10)


# -- Chromium over CDP ---------------------------------------------------------------------------------------------


class ChromiumTab(Tab):
    def __init__(self, cdp: _Socket, target: str, session: str) -> None:
        self.cdp, self.target, self.session = cdp, target, session

    def send(self, method: str, params: dict[str, Any] | None = None, timeout: float = 15.0) -> dict[str, Any]:
        answer = self.cdp.call({"method": method, "params": params or {}, "sessionId": self.session}, timeout)
        if "error" in answer:
            raise AssertionError(f"{method}: {answer['error']}")
        return answer["result"]

    def evaluate(self, expression: str, timeout: float = 15.0) -> Any:
        result = self.send("Runtime.evaluate", {"expression": self._wrap(expression), "awaitPromise": True,
                                                "returnByValue": True, "userGesture": True}, timeout)
        if "exceptionDetails" in result:
            details = result["exceptionDetails"]
            raise AssertionError(f"page error: {details.get('exception', {}).get('description') or details}")
        return json.loads(result["result"]["value"])

    def goto(self, url: str, timeout: float = 20.0) -> None:
        answer = self.send("Page.navigate", {"url": url}, timeout)
        if answer.get("errorText"):
            raise AssertionError(f"{url}: {answer['errorText']}")
        self.loaded(url, timeout)

    def screenshot(self, target: Path) -> Path:
        import base64

        target.write_bytes(base64.b64decode(self.send("Page.captureScreenshot", {"format": "png"})["data"]))
        return target

    def type(self, text: str) -> None:
        for char in text:
            key = {"key": "Enter", "code": "Enter", "windowsVirtualKeyCode": 13} if char == "\n" else {"key": char}
            self.send("Input.dispatchKeyEvent", {"type": "keyDown", "text": "\r" if char == "\n" else char, **key})
            self.send("Input.dispatchKeyEvent", {"type": "keyUp", **key})

    def close(self) -> None:
        self.cdp.call({"method": "Target.closeTarget", "params": {"targetId": self.target}}, 10)


class Chromium(Browser):
    """Debian's chromium, new headless, a temporary profile, the extension unpacked; driven over CDP."""

    name = "Chromium"

    def __init__(self, root: Path, server: FixtureServer, data_dir: Path, *, host: Path | None = None,
                 extension: Path = EXTENSION) -> None:
        self.root, self.extension = root, extension
        self.home = root / "home"
        self.profile = self.home / ".config" / "chromium"  # Chromium's own per-user folder in this HOME
        self.profile.mkdir(parents=True)
        self.env = browser_env(self.home, data_dir)
        self.extension_id = chromium_id(extension)
        if host is None:
            setup_browser("chromium", self.env)
        else:
            register_host("chromium", home=self.home, user_data_dir=self.profile, chromium_id=self.extension_id,
                          executable=host)
        rules = ", ".join(f"MAP {h} 127.0.0.1:{server.port}" for h in HOSTS)
        args = [CHROMIUM, "--headless", "--no-sandbox", "--no-first-run", "--no-default-browser-check",
                f"--user-data-dir={self.profile}", "--remote-debugging-port=0", f"--load-extension={extension}",
                f"--disable-extensions-except={extension}", f"--host-resolver-rules={rules}",
                "--ignore-certificate-errors", "--disable-background-networking", "--disable-sync",
                "--disable-component-update", "--disable-domain-reliability", "--metrics-recording-only",
                "--password-store=basic", "--use-mock-keychain", "--disable-gpu",
                # tabs in the background keep their timers (the fixtures stream answers with setTimeout)
                "--disable-background-timer-throttling", "--disable-renderer-backgrounding",
                "--disable-backgrounding-occluded-windows",
                # the DevTools protocol's Extensions domain (grant_active_tab: Extensions.triggerAction)
                "--enable-unsafe-extension-debugging", "about:blank"]
        self.log = (root / "chromium.log").open("wb")
        self.process = subprocess.Popen(args, env=self.env, stdout=self.log, stderr=subprocess.STDOUT,
                                        start_new_session=True)
        with self._cleanup_on_error():
            self._connect()

    def _connect(self) -> None:
        port_file = self.profile / "DevToolsActivePort"
        wait_until(lambda: port_file.is_file() and len(port_file.read_text().split()) >= 2 or self._died(),
                   STARTUP_S, "chromium's DevTools port")
        port, path = port_file.read_text().split()[:2]
        self.cdp = _Socket(f"ws://127.0.0.1:{port}{path}")
        self.worker_url = wait_until(self._worker, STARTUP_S, "the extension's service worker")

    def _died(self) -> bool:
        if self.process.poll() is not None:
            raise AssertionError(f"chromium exited ({self.process.returncode}): see {self.root / 'chromium.log'}")
        return False

    def send(self, method: str, params: dict[str, Any] | None = None, timeout: float = 15.0) -> dict[str, Any]:
        answer = self.cdp.call({"method": method, "params": params or {}}, timeout)
        if "error" in answer:
            raise AssertionError(f"{method}: {answer['error']}")
        return answer["result"]

    def targets(self) -> list[dict[str, Any]]:
        return self.send("Target.getTargets")["targetInfos"]

    def _worker(self) -> str | None:
        prefix = f"chrome-extension://{self.extension_id}/"
        for t in self.targets():
            if t["type"] == "service_worker" and t["url"].startswith(prefix):
                return str(t["url"])
        return None

    def attach(self, target: str) -> ChromiumTab:
        session = self.send("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        return ChromiumTab(self.cdp, target, session)

    def new_tab(self, url: str = "about:blank", *, private: bool = False) -> Tab:
        params: dict[str, Any] = {"url": "about:blank", "newWindow": True}  # a window each, as for Firefox
        if private:  # an off-the-record profile, like an incognito window
            params["browserContextId"] = self.send("Target.createBrowserContext")["browserContextId"]
        tab = self.attach(self.send("Target.createTarget", params)["targetId"])
        if url != "about:blank":
            tab.goto(url)
        return tab

    def background(self) -> ChromiumTab:
        """The extension's service worker, to evaluate in."""
        for t in self.targets():
            if t["type"] == "service_worker" and t["url"] == self.worker_url:
                return self.attach(t["targetId"])
        raise AssertionError("the extension's service worker is gone")

    def popup_url(self) -> str:
        return f"chrome-extension://{self.extension_id}/popup.html"

    def grant_active_tab(self, url: str) -> None:
        # the toolbar button's click (the popup opens, then is closed): Chromium grants activeTab on that tab
        tabs = self.send("Target.getTargets", {"filter": [{"type": "tab"}]})["targetInfos"]
        target = next((t["targetId"] for t in tabs if t["url"] == url), None)
        assert target is not None, f"no tab shows {url}"
        before = {t["targetId"] for t in self.targets()}
        self.send("Extensions.triggerAction", {"id": self.extension_id, "targetId": target})
        popup = wait_until(lambda: next((t["targetId"] for t in self.targets() if t["targetId"] not in before
                                         and t["url"].startswith(self.popup_url())), None),
                           STARTUP_S, "the popup the toolbar button opens")
        self.cdp.call({"method": "Target.closeTarget", "params": {"targetId": popup}}, 10)

    def in_background(self, expression: str, timeout: float = 15.0) -> Any:
        return self.background().evaluate(f"((bg) => ({expression}))(globalThis)", timeout)

    def close(self) -> None:
        with contextlib.suppress(AssertionError):  # already gone or not answering: stopped below
            self.send("Browser.close", timeout=5)
        self.cdp.close()
        self._stop()
        self.log.close()


# -- Firefox over WebDriver BiDi ---------------------------------------------------------------------------------


FIREFOX_PREFS: dict[str, Any] = {
    "browser.shell.checkDefaultBrowser": False,
    "browser.startup.homepage_override.mstone": "ignore",
    "browser.aboutwelcome.enabled": False,
    "datareporting.policy.dataSubmissionEnabled": False,
    "toolkit.telemetry.reportingpolicy.firstRun": False,
    "app.normandy.enabled": False,
    "app.update.auto": False,
    "extensions.update.enabled": False,
    "extensions.getAddons.cache.enabled": False,
    "browser.safebrowsing.malware.enabled": False,
    "browser.safebrowsing.phishing.enabled": False,
    "browser.safebrowsing.downloads.enabled": False,
    "services.settings.server": "data:,#remote-settings-dummy/v1",
    "messaging-system.rsexperimentloader.enabled": False,
    "network.connectivity-service.enabled": False,
    "network.captive-portal-service.enabled": False,
    "browser.region.network.url": "",
    "network.proxy.type": 1,
    "network.proxy.no_proxies_on": "",
    "network.proxy.share_proxy_settings": False,
    "extensions.webextensions.uuids": json.dumps({FIREFOX_ID: FIREFOX_UUID}),
    # tabs in the background keep their timers (the fixtures stream answers with setTimeout)
    "dom.min_background_timeout_value": 4,
    "dom.timeout.enable_budget_timer_throttling": False,
    "dom.timeout.throttling_delay": 0,
}


class FirefoxTab(Tab):
    def __init__(self, browser: Firefox, context: str) -> None:
        self.browser, self.context = browser, context

    def evaluate(self, expression: str, timeout: float = 15.0) -> Any:
        result = self.browser.send("script.evaluate", {"expression": self._wrap(expression), "awaitPromise": True,
                                                       "target": {"context": self.context},
                                                       "userActivation": True}, timeout)
        if result.get("type") == "exception":
            details = result.get("exceptionDetails", {})
            raise AssertionError(f"page error: {details.get('text') or details}")
        return json.loads(result["result"]["value"])

    def goto(self, url: str, timeout: float = 20.0) -> None:
        self.browser.send("browsingContext.navigate", {"context": self.context, "url": url, "wait": "complete"},
                          timeout)
        self.loaded(url, timeout)

    def screenshot(self, target: Path) -> Path:
        import base64

        shot = self.browser.send("browsingContext.captureScreenshot", {"context": self.context})
        target.write_bytes(base64.b64decode(shot["data"]))
        return target

    def type(self, text: str) -> None:
        keys = [{"type": kind, "value": "\ue007" if char == "\n" else char}
                for char in text for kind in ("keyDown", "keyUp")]
        self.browser.send("input.performActions", {"context": self.context,
                                                   "actions": [{"type": "key", "id": "keyboard", "actions": keys}]})
        self.browser.send("input.releaseActions", {"context": self.context})

    def close(self) -> None:
        self.browser.send("browsingContext.close", {"context": self.context})


class Firefox(Browser):
    """Debian's firefox-esr, headless, a temporary profile and HOME; the extension a temporary add-on; the
    sites reached through the harness's CONNECT proxy; driven over WebDriver BiDi."""

    name = "Firefox"

    def __init__(self, root: Path, server: FixtureServer, data_dir: Path, *, host: Path | None = None,
                 extension: Path = EXTENSION) -> None:
        self.root = root
        self.home, self.profile = root / "home", root / "home" / "firefox-profile"
        self.profile.mkdir(parents=True)
        self.env = browser_env(self.home, data_dir, MOZ_CRASHREPORTER_DISABLE="1")
        if host is None:
            setup_browser("firefox", self.env)
        else:
            register_host("firefox", home=self.home, user_data_dir=None, executable=host)
        prefs = {**FIREFOX_PREFS, "network.proxy.ssl": "127.0.0.1", "network.proxy.ssl_port": server.proxy.port,
                 "network.proxy.http": "127.0.0.1", "network.proxy.http_port": server.proxy.port}
        (self.profile / "user.js").write_text(
            "".join(f"user_pref({json.dumps(k)}, {json.dumps(v)});\n" for k, v in prefs.items()))
        args = [FIREFOX, "--headless", "--no-remote",
                # chrome-scope scripts: opening the extension's pages and private windows (BiDi refuses both)
                "--remote-allow-system-access", "--profile", str(self.profile), "--remote-debugging-port",
                "0", "about:blank"]
        self.log = (root / "firefox.log").open("wb")
        self.process = subprocess.Popen(args, env=self.env, stdout=self.log, stderr=subprocess.STDOUT,
                                        start_new_session=True)
        with self._cleanup_on_error():
            self._connect(extension)

    def _connect(self, extension: Path) -> None:
        port_file = self.profile / "WebDriverBiDiServer.json"
        wait_until(lambda: self._port(port_file) or self._died(), STARTUP_S, "firefox's WebDriver BiDi port")
        self.bidi = _Socket(f"ws://127.0.0.1:{self._port(port_file)}/session")
        self.send("session.new", {"capabilities": {"alwaysMatch": {"acceptInsecureCerts": True}}}, STARTUP_S)
        self.extension_id = self.send("webExtension.install",
                                      {"extensionData": {"type": "path", "path": str(extension)}})["extension"]

    @staticmethod
    def _port(port_file: Path) -> int | None:
        try:
            return int(json.loads(port_file.read_text())["ws_port"])
        except (OSError, ValueError, KeyError):
            return None

    def _died(self) -> bool:
        if self.process.poll() is not None:
            raise AssertionError(f"firefox exited ({self.process.returncode}): see {self.root / 'firefox.log'}")
        return False

    def send(self, method: str, params: dict[str, Any] | None = None, timeout: float = 15.0) -> dict[str, Any]:
        answer = self.bidi.call({"method": method, "params": params or {}}, timeout)
        if answer.get("type") == "error":
            raise AssertionError(f"{method}: {answer.get('error')}: {answer.get('message')}")
        return answer["result"]

    def new_tab(self, url: str = "about:blank", *, private: bool = False) -> Tab:
        if private or not url.startswith(("https:", "http:", "about:")):
            return self._trusted_tab(url, private=private)
        # a window each: a page in a background tab has its timers slowed down, as the person's would
        tab = FirefoxTab(self, self.send("browsingContext.create", {"type": "window"})["context"])
        if url != "about:blank":
            tab.goto(url)
        return tab

    def contexts(self) -> list[dict[str, Any]]:
        return self.send("browsingContext.getTree", {"maxDepth": 0})["contexts"]

    def chrome_evaluate(self, expression: str, timeout: float = 15.0) -> Any:
        """Evaluate in the browser window's chrome (privileged) scope."""
        window = self.send("browsingContext.getTree", {"moz:scope": "chrome", "maxDepth": 0})["contexts"][0]
        return FirefoxTab(self, window["context"]).evaluate(expression, timeout)

    def _trusted_tab(self, url: str, *, private: bool) -> Tab:
        """A tab opened by the browser itself: the extension's own pages (BiDi refuses to navigate a tab to
        moz-extension://) and private windows (BiDi cannot open one)."""
        before = {c["context"] for c in self.contexts()}
        where = "window" if private else "tab"
        self.chrome_evaluate(f"(() => {{ openTrustedLinkIn({json.dumps(url)}, {json.dumps(where)}, "
                             f"{{private: {json.dumps(private)}, inBackground: false}}); return true; }})()")
        context = wait_until(lambda: next((c["context"] for c in self.contexts()
                                           if c["context"] not in before and c["url"] == url), None),
                             STARTUP_S, f"a tab with {url}")
        tab = FirefoxTab(self, context)
        tab.loaded(url, STARTUP_S)
        return tab

    def popup_url(self) -> str:
        return f"moz-extension://{FIREFOX_UUID}/popup.html"

    def grant_active_tab(self, url: str) -> None:
        # what Firefox's menus and toolbar button do on a click (ext-menus.js: tabManager.addActiveTabPermission)
        self.chrome_evaluate(f"""(() => {{
            const extension = WebExtensionPolicy.getByID({json.dumps(FIREFOX_ID)}).extension;
            for (const win of Services.wm.getEnumerator("navigator:browser")) {{
                for (const tab of win.gBrowser.tabs) {{
                    if (tab.linkedBrowser.currentURI.spec === {json.dumps(url)}) {{
                        extension.tabManager.addActiveTabPermission(tab);
                        return true;
                    }}
                }}
            }}
            throw new Error("no tab shows " + {json.dumps(url)});
        }})()""")

    def in_background(self, expression: str, timeout: float = 15.0) -> Any:
        # the background page (an event page in Firefox), reached from an extension page
        page = self.new_tab(self.popup_url())
        try:
            return page.evaluate(f"browser.runtime.getBackgroundPage().then((bg) => ({expression}))", timeout)
        finally:
            page.close()

    def close(self) -> None:
        with contextlib.suppress(AssertionError):  # already gone or not answering: stopped below
            self.send("browser.close", timeout=5)
        self.bidi.close()
        self._stop()
        self.log.close()


def launch(kind: str, root: Path, server: FixtureServer, data_dir: Path, *, host: Path | None = None) -> Browser:
    """A started browser ("chromium" | "firefox") under `root` (a fresh folder)."""
    root.mkdir(parents=True, exist_ok=True)
    return (Chromium if kind == "chromium" else Firefox)(root, server, data_dir, host=host)


def binary(kind: str) -> str:
    return CHROMIUM if kind == "chromium" else FIREFOX


def private_folder(path: Path) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    path.chmod(stat.S_IRWXU)
    return path


def iter_lines(path: Path) -> Iterator[dict[str, Any]]:
    if path.is_file():
        for line in path.read_text().splitlines():
            if line.strip():
                yield json.loads(line)
