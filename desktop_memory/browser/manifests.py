"""Native messaging host manifests: where each browser looks for ours, what they say, and `setup-browser --check`.

A browser starts a native host only when a manifest named after it says where the program is and which
extensions may talk to it: a JSON file in a per-browser folder (Linux, macOS) or, on Windows, the JSON anywhere
and a registry value under HKCU naming it. Ours names the `desktop-memory` executable itself; it recognises the
browser's arguments and runs the host (cli/browser_commands.py).
"""

from __future__ import annotations

import contextlib
import io
import json
import logging
import os
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .. import paths
from ..core.errors import DesktopMemoryError, InvalidInput, StorageError, error_line
from . import framing

log = logging.getLogger(__name__)

HOST_NAME = "org.desktop_memory.companion"
# the Chromium extension's id, fixed by the "key" in extension/manifest.json (a copy of extension/EXTENSION_ID;
# tests/unit/test_browser_manifests.py checks they agree)
CHROMIUM_ID = "meedcakikngijbgdgojfglooajkdbhbi"
FIREFOX_ID = "companion@desktop-memory.org"
DESCRIPTION = "desktop-memory: the browser companion's way to your private memory"
MANIFEST_MODE = 0o644  # the browser reads it (as the same user; nothing secret in it)
CHECK_TIMEOUT_S = 90.0  # a first start may start the engine (its lock wait, a migration)


@dataclass(frozen=True)
class Browser:
    key: str
    name: str
    family: str  # "chromium" or "firefox"
    linux: str  # folder of the manifests, under the home folder
    macos: str
    windows: str  # registry key under HKEY_CURRENT_USER (the host's name below it)
    profile_linux: str  # a folder that exists when the browser was used (to find the installed ones)
    profile_macos: str
    profile_windows: str  # under %LOCALAPPDATA% (Firefox: %APPDATA%)


_MAC = "Library/Application Support"
BROWSERS: dict[str, Browser] = {b.key: b for b in (
    Browser("chrome", "Chrome", "chromium", ".config/google-chrome/NativeMessagingHosts",
            f"{_MAC}/Google/Chrome/NativeMessagingHosts", r"Software\Google\Chrome\NativeMessagingHosts",
            ".config/google-chrome", f"{_MAC}/Google/Chrome", "Google/Chrome/User Data"),
    Browser("chromium", "Chromium", "chromium", ".config/chromium/NativeMessagingHosts",
            f"{_MAC}/Chromium/NativeMessagingHosts", r"Software\Chromium\NativeMessagingHosts",
            ".config/chromium", f"{_MAC}/Chromium", "Chromium/User Data"),
    Browser("edge", "Edge", "chromium", ".config/microsoft-edge/NativeMessagingHosts",
            f"{_MAC}/Microsoft Edge/NativeMessagingHosts", r"Software\Microsoft\Edge\NativeMessagingHosts",
            ".config/microsoft-edge", f"{_MAC}/Microsoft Edge", "Microsoft/Edge/User Data"),
    Browser("brave", "Brave", "chromium", ".config/BraveSoftware/Brave-Browser/NativeMessagingHosts",
            f"{_MAC}/BraveSoftware/Brave-Browser/NativeMessagingHosts",
            r"Software\BraveSoftware\Brave-Browser\NativeMessagingHosts",
            ".config/BraveSoftware/Brave-Browser", f"{_MAC}/BraveSoftware/Brave-Browser",
            "BraveSoftware/Brave-Browser/User Data"),
    Browser("firefox", "Firefox", "firefox", ".mozilla/native-messaging-hosts",
            f"{_MAC}/Mozilla/NativeMessagingHosts", r"Software\Mozilla\NativeMessagingHosts",
            ".mozilla", f"{_MAC}/Firefox", "Mozilla/Firefox"),
)}
NAMES = tuple(BROWSERS)


@dataclass(frozen=True)
class System:
    """Where things are: the platform and the folders (given in tests; this computer's by default)."""

    platform: str
    home: Path
    config: Path  # Windows: where the JSON files go (%LOCALAPPDATA%\desktop-memory-browser)
    local_appdata: Path | None = None
    appdata: Path | None = None

    @classmethod
    def here(cls) -> System:
        from platformdirs import user_config_dir

        env = os.environ
        # not the app's own folder: on Windows that is the data folder (%LOCALAPPDATA%\desktop-memory), the engine's
        return cls(sys.platform, Path.home(), Path(user_config_dir(paths.APP_NAME + "-browser", appauthor=False)),
                   Path(env["LOCALAPPDATA"]) if env.get("LOCALAPPDATA") else None,
                   Path(env["APPDATA"]) if env.get("APPDATA") else None)

    @property
    def windows(self) -> bool:
        return self.platform == "win32"


def manifest_path(browser: Browser, system: System) -> Path:
    """Where our manifest for `browser` is written (on Windows, where the registry value points)."""
    if system.windows:
        return system.config / "NativeMessagingHosts" / browser.key / f"{HOST_NAME}.json"
    folder = browser.macos if system.platform == "darwin" else browser.linux
    return system.home / folder / f"{HOST_NAME}.json"


def registry_key(browser: Browser) -> str:
    return f"{browser.windows}\\{HOST_NAME}"


def installed(system: System) -> list[str]:
    """The browsers that have been used on this computer (their profile folder exists)."""
    found = []
    for b in BROWSERS.values():
        if system.windows:
            base = system.appdata if b.family == "firefox" else system.local_appdata
            where = base / b.profile_windows if base is not None else None
        else:
            where = system.home / (b.profile_macos if system.platform == "darwin" else b.profile_linux)
        if where is not None and where.is_dir():
            found.append(b.key)
    return found


def executable() -> Path:
    """The `desktop-memory` program a browser starts: the frozen app itself, else the console script of this
    Python (beside it in a venv's bin/Scripts), else the one on PATH."""
    if getattr(sys, "frozen", False):
        return Path(sys.executable)
    name = "desktop-memory.exe" if sys.platform == "win32" else "desktop-memory"
    beside = Path(sys.executable).parent / name
    if beside.is_file():
        return beside
    found = shutil.which("desktop-memory")
    if found:
        return Path(found).resolve()
    raise InvalidInput("cannot find the desktop-memory program to register (install desktop-memory so that "
                       "the `desktop-memory` command exists, then run setup-browser again)")


def manifest(browser: Browser, exe: Path, extension_ids: tuple[str, ...] = ()) -> dict[str, Any]:
    data: dict[str, Any] = {"name": HOST_NAME, "description": DESCRIPTION, "path": str(exe), "type": "stdio"}
    if browser.family == "firefox":
        data["allowed_extensions"] = [FIREFOX_ID]
    else:
        ids = dict.fromkeys((CHROMIUM_ID, *extension_ids))
        data["allowed_origins"] = [f"chrome-extension://{i}/" for i in ids]
    return data


def write_json(target: Path, data: dict[str, Any]) -> None:
    """Every manifest is written this way: pretty JSON, UTF-8, 0644, through a scratch file renamed into place."""
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
        try:
            with os.fdopen(fd, "wb") as fh:
                fh.write((json.dumps(data, indent=2, ensure_ascii=False) + "\n").encode("utf-8"))
                fh.flush()
                os.fsync(fh.fileno())
            os.chmod(tmp, MANIFEST_MODE)
            os.replace(tmp, target)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise
    except OSError as exc:
        raise StorageError(f"cannot write {paths.shown(target)}: {exc.strerror or exc}") from exc


# -- the Windows registry (winreg is imported there only) ----------------------------------------------
def _set_registry(browser: Browser, target: Path | None) -> None:
    """Point the browser's HKCU key at `target`, or (None) delete the key."""
    if sys.platform != "win32":  # (winreg has these names on Windows only, for mypy too)
        raise OSError("the registry is on Windows only")
    import winreg

    key = registry_key(browser)
    if target is None:
        with contextlib.suppress(FileNotFoundError):
            winreg.DeleteKey(winreg.HKEY_CURRENT_USER, key)
        return
    with winreg.CreateKeyEx(winreg.HKEY_CURRENT_USER, key, 0, winreg.KEY_SET_VALUE) as handle:
        winreg.SetValueEx(handle, "", 0, winreg.REG_SZ, str(target))


def _registered_path(browser: Browser) -> Path | None:
    if sys.platform != "win32":  # (winreg has these names on Windows only, for mypy too)
        raise OSError("the registry is on Windows only")
    import winreg

    try:
        with winreg.OpenKey(winreg.HKEY_CURRENT_USER, registry_key(browser), 0, winreg.KEY_QUERY_VALUE) as handle:
            value, _ = winreg.QueryValueEx(handle, "")
    except FileNotFoundError:
        return None
    return Path(value) if isinstance(value, str) and value else None


# -- setup-browser --------------------------------------------------------------------------------------
def install(keys: list[str], system: System, exe: Path, extension_ids: tuple[str, ...] = ()) -> list[str]:
    """Write (and on Windows register) the manifest for each browser; one line per browser for the person."""
    lines = []
    for key in keys:
        browser = BROWSERS[key]
        target = manifest_path(browser, system)
        write_json(target, manifest(browser, exe, extension_ids))
        if system.windows:
            try:
                _set_registry(browser, target)
            except OSError as exc:
                raise StorageError(f"cannot register the host for {browser.name} in the registry: "
                                   f"{exc.strerror or exc}") from exc
            lines.append(f"{browser.name}: wrote {target} and registered it (HKCU\\{registry_key(browser)})")
        else:
            lines.append(f"{browser.name}: wrote {target}")
    return lines


def register_on_start(system: System | None = None, exe: Path | None = None) -> list[str]:
    """The app's own registration where no installer step can do it (macOS: a disk image is only copied): the
    manifest for each browser used on this computer that has none yet, pointing to this app. Never raises: a
    problem is one line in the log (`setup-browser` says it to the person). The lines of what was written."""
    try:
        system = system or System.here()
        keys = [k for k in installed(system) if registered(BROWSERS[k], system) is None]
        return install(keys, system, exe or executable()) if keys else []
    except (OSError, DesktopMemoryError) as exc:
        log.warning("the browser companion's host could not be registered: %s", error_line(exc))
        return []


def remove(keys: list[str], system: System) -> list[str]:
    lines = []
    for key in keys:
        browser = BROWSERS[key]
        target = manifest_path(browser, system)
        if system.windows:
            with contextlib.suppress(OSError):
                _set_registry(browser, None)
        try:
            target.unlink()
            lines.append(f"{browser.name}: removed {target}")
        except FileNotFoundError:
            lines.append(f"{browser.name}: was not set up")
        except OSError as exc:
            raise StorageError(f"cannot remove {paths.shown(target)}: {exc.strerror or exc}") from exc
    return lines


def registered(browser: Browser, system: System) -> Path | None:
    """The manifest the browser would read for our host, when there is one."""
    if system.windows:
        return _registered_path(browser)
    target = manifest_path(browser, system)
    return target if target.exists() else None


# -- setup-browser --check: start the host as the browser would -----------------------------------------
class CheckFailed(Exception):
    """What is wrong, and how to fix it (one line)."""


def browser_argv(browser: Browser, exe: str, manifest_file: Path) -> list[str]:
    if browser.family == "firefox":
        return [exe, str(manifest_file), FIREFOX_ID]
    return [exe, f"chrome-extension://{CHROMIUM_ID}/"]


def check(browser: Browser, system: System, timeout_s: float = CHECK_TIMEOUT_S) -> str:
    """One line: "ready (...)"; raises CheckFailed with what is wrong and what to do."""
    again = f"run `desktop-memory setup-browser --browser {browser.key}`"
    where = registered(browser, system)
    if where is None:
        raise CheckFailed(f"not set up; {again}")
    try:
        data = json.loads(where.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        raise CheckFailed(f"the host manifest {where} cannot be read; {again}") from None
    exe = data.get("path") if isinstance(data, dict) else None
    if not isinstance(exe, str) or data.get("name") != HOST_NAME or data.get("type") != "stdio":
        raise CheckFailed(f"the host manifest {where} is not ours or is damaged; {again}")
    allowed = data.get("allowed_extensions" if browser.family == "firefox" else "allowed_origins")
    wanted = FIREFOX_ID if browser.family == "firefox" else f"chrome-extension://{CHROMIUM_ID}/"
    if not isinstance(allowed, list) or wanted not in allowed:
        raise CheckFailed(f"the host manifest {where} does not allow the desktop-memory extension; {again}")
    if not os.path.isfile(exe):
        raise CheckFailed(f"the program it names does not exist ({exe}); {again}")
    if not os.access(exe, os.X_OK):
        raise CheckFailed(f"the program it names is not executable ({exe}); {again}")
    reply = _hello(browser_argv(browser, exe, where), timeout_s)
    engine = reply.get("engine")
    said = "engine ready" if engine == "ready" else "engine offline: captures are kept until it can start"
    return f"ready (desktop-memory {reply.get('version', '?')}, {said})"


def _hello(argv: list[str], timeout_s: float) -> dict[str, Any]:
    with tempfile.TemporaryFile() as err:
        try:
            proc = subprocess.run(argv, input=framing.encode({"id": "check", "type": "hello"}), stdout=subprocess.PIPE,
                                  stderr=err, timeout=timeout_s, check=False)
        except subprocess.TimeoutExpired:
            raise CheckFailed(f"the host did not answer within {timeout_s:.0f} s") from None
        except OSError as exc:
            raise CheckFailed(f"the host cannot be started: {exc.strerror or exc}") from None
        err.seek(0)
        lines = [line.strip() for line in err.read().decode("utf-8", "replace").splitlines() if line.strip()]
    try:
        body = framing.read_frame(io.BytesIO(proc.stdout))
        reply = framing.decode(body) if body is not None else None
    except ValueError:
        reply = None
    if reply is None or reply.get("ok") is not True:
        said = lines[-1][:300] if lines else f"exit code {proc.returncode}"
        raise CheckFailed(f"the host started but did not answer hello ({said})")
    return reply
