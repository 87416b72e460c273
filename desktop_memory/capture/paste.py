"""Paste where you came from: which OS backend sends the paste chord to the window that was in front.

Each backend is a module with the same two functions (see the OS modules):

    foreground() -> int | None              the window in front now (X11 window id, Windows HWND, macOS pid)
    paste_into(target) -> str | None       bring it forward and paste; None when sent, else a one-line problem

X11 (Qt's xcb platform outside a Wayland session): `paste_x11` (XTest). Windows: `paste_windows`
(SetForegroundWindow + SendInput). macOS: `paste_macos` (CGEvent, needs Accessibility). A backend module that
is missing or cannot be imported counts as "not available". Wayland lets no client send keys to another
one, so there the context is only copied and the person pastes it; so too with no display (offscreen).
No Qt here: the tray app passes Qt's platform name (`QGuiApplication.platformName()`).
"""

from __future__ import annotations

import logging
import os
import sys
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from types import ModuleType
from typing import Protocol

log = logging.getLogger(__name__)

WAYLAND_NOTE = "Wayland: the context is copied; paste it with Ctrl+V"
NO_DISPLAY_NOTE = "pasting into another window is not available here: the context is copied; paste it yourself"


class PasteBackend(Protocol):
    """What each OS module provides (module-level functions)."""

    def foreground(self) -> int | None: ...

    def paste_into(self, target: int | None) -> str | None: ...


@dataclass(frozen=True)
class PasteSupport:
    """The backend for this session, or None with `note`: why the context is only copied."""

    session: str  # "x11", "wayland", "windows", "macos" or "none"
    backend: PasteBackend | None
    note: str = ""

    @property
    def available(self) -> bool:
        return self.backend is not None

    @property
    def paste_keys(self) -> str:
        """The chord a person uses to paste here (for notices)."""
        return "Cmd+V" if self.session == "macos" else "Ctrl+V"

    def target(self, own: Collection[int] = ()) -> int | None:
        """The window to paste into later: the one in front now, unless it is one of ours (`own`: our window
        ids; on macOS, where the backend names apps by pid, our process id) or the backend cannot tell."""
        if self.backend is None:
            return None
        try:
            found = self.backend.foreground()
        except Exception:  # noqa: BLE001 - an OS call failing here must never stop the search window opening
            log.debug("cannot read the window in front", exc_info=True)
            return None
        if found is None or found in own or (self.session == "macos" and found == os.getpid()):
            return None
        return found


def session(qt_platform: str | None = None, *, platform: str | None = None,
            environ: Mapping[str, str] | None = None) -> str:
    """'x11', 'wayland', 'windows', 'macos' or 'none'. A Wayland session is Wayland even when Qt runs on
    XWayland (xcb): the window the person came from is then a Wayland window no X client can reach."""
    env = os.environ if environ is None else environ
    platform = sys.platform if platform is None else platform
    if platform.startswith("win"):
        return "windows" if qt_platform in (None, "windows", "direct2d") else "none"
    if platform == "darwin":
        return "macos" if qt_platform in (None, "cocoa") else "none"
    if env.get("WAYLAND_DISPLAY") or env.get("XDG_SESSION_TYPE") == "wayland":
        return "wayland" if qt_platform in (None, "xcb", "wayland", "wayland-egl") else "none"
    if not env.get("DISPLAY"):
        return "none"
    return "x11" if qt_platform in (None, "xcb") else "none"


def _load(where: str) -> ModuleType | None:
    """The backend module, imported by name in code (so PyInstaller bundles it); None when missing or broken."""
    try:
        if where == "x11":
            from . import paste_x11 as module
        elif where == "windows":
            from . import paste_windows as module  # type: ignore[no-redef]
        elif where == "macos":
            from . import paste_macos as module  # type: ignore[no-redef]
        else:
            return None
    except Exception as exc:  # noqa: BLE001 - a missing or broken backend module: clipboard only
        log.info("paste backend for %s not available: %s", where, exc)
        return None
    return module


def support(qt_platform: str | None = None, *, platform: str | None = None,
            environ: Mapping[str, str] | None = None) -> PasteSupport:
    """The paste backend for this session (see `session`), or None with the reason."""
    where = session(qt_platform, platform=platform, environ=environ)
    if where == "wayland":
        return PasteSupport(where, None, WAYLAND_NOTE)
    if where == "none":
        return PasteSupport(where, None, NO_DISPLAY_NOTE)
    module = _load(where)
    if module is None or not callable(getattr(module, "foreground", None)) \
            or not callable(getattr(module, "paste_into", None)):
        return PasteSupport(where, None, "pasting into another window is not available on this system yet: "
                                         "the context is copied; paste it yourself")
    return PasteSupport(where, module)


