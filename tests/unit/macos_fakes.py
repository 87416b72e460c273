"""Fakes of the pyobjc modules the macOS backends import (AppKit, Quartz, ApplicationServices).

macOS cannot run here. `FakeMac` holds the state of a pretend Mac (the general pasteboard with its
change count, running apps and the one in front, the Accessibility grant, the windows list) and
`install(monkeypatch)` puts modules built on it into sys.modules, so the backends' lazy imports get
them. Posted key events act like macOS would: Cmd+C makes the app in front copy its selection onto the
pasteboard (`selection`), Cmd+V is recorded as a paste into the app in front.
"""

from __future__ import annotations

import sys
import types
from dataclasses import dataclass, field
from typing import Any

TEXT = "public.utf8-plain-text"
COMMAND_FLAG = 0x100000  # kCGEventFlagMaskCommand


class FakeData(bytes):
    """NSData stands in as bytes (pyobjc's NSData converts with bytes() the same way)."""


class FakeItem:
    """NSPasteboardItem: data by type, in the order set."""

    def __init__(self, data: dict[str, bytes] | None = None) -> None:
        self.data: dict[str, bytes] = dict(data or {})

    @classmethod
    def alloc(cls) -> FakeItem:
        return cls()

    def init(self) -> FakeItem:
        return self

    def types(self) -> list[str]:
        return list(self.data)

    def dataForType_(self, name: str) -> FakeData | None:  # noqa: N802 - pyobjc's names
        return FakeData(self.data[name]) if name in self.data else None

    def setData_forType_(self, data: Any, name: str) -> bool:  # noqa: N802
        self.data[name] = bytes(data)
        return True


class FakePasteboard:
    """NSPasteboard.generalPasteboard(): items, types declared the old way, and the change count."""

    def __init__(self) -> None:
        self.count = 1000
        self.items: list[FakeItem] = []
        self.declared: list[str] = []  # `declareTypes:` types that are on no item
        self.reads = 0
        self.pending: tuple[dict[str, bytes], int] | None = None  # items an app writes after some more reads

    def copy(self, *items: dict[str, bytes], declared: tuple[str, ...] = ()) -> None:
        """What an app does on a copy: clear (the count moves), then write its items."""
        self.clearContents()
        self.items = [FakeItem(i) for i in items]
        self.declared = list(declared)

    def changeCount(self) -> int:  # noqa: N802
        return self.count

    def write_later(self, item: dict[str, bytes], reads: int) -> None:
        """An app that clears the pasteboard now (the count moves) and writes `item` `reads` reads later."""
        self.clearContents()
        self.pending = (item, reads)

    def _tick(self) -> None:
        if self.pending is not None:
            item, left = self.pending
            self.pending = (item, left - 1) if left > 1 else None
            if left <= 1:
                self.items = [FakeItem(item)]

    def types(self) -> list[str]:
        self._tick()
        return [*self.declared, *(t for i in self.items for t in i.types())]

    def pasteboardItems(self) -> list[FakeItem]:  # noqa: N802
        self._tick()
        return list(self.items)

    def dataForType_(self, name: str) -> FakeData | None:  # noqa: N802
        self.reads += 1
        if name in self.declared:
            return FakeData(b"")
        for item in self.items:
            if name in item.data:
                return item.dataForType_(name)
        return None

    def stringForType_(self, name: str) -> str | None:  # noqa: N802
        data = self.dataForType_(name)
        return None if data is None else data.decode("utf-8")

    def clearContents(self) -> int:  # noqa: N802
        self.count += 1
        self.items, self.declared = [], []
        return self.count

    def writeObjects_(self, items: list[FakeItem]) -> bool:  # noqa: N802
        self.items = [FakeItem(i.data) for i in items]
        return True


@dataclass
class FakeApp:
    """NSRunningApplication."""

    mac: FakeMac
    pid: int
    name: str
    terminated: bool = False
    comes_forward: bool = True

    def processIdentifier(self) -> int:  # noqa: N802
        return self.pid

    def localizedName(self) -> str:  # noqa: N802
        return self.name

    def isTerminated(self) -> bool:  # noqa: N802
        return self.terminated

    def activateWithOptions_(self, options: int) -> bool:  # noqa: N802
        self.mac.activations.append((self.pid, options))
        if self.comes_forward:
            self.mac.front = self.pid
        return True


@dataclass
class FakeMac:
    """The pretend Mac the fake modules answer from."""

    board: FakePasteboard = field(default_factory=FakePasteboard)
    apps: dict[int, FakeApp] = field(default_factory=dict)
    front: int | None = None
    trusted: bool = True
    prompts: int = 0
    checks: int = 0
    selection: dict[str, bytes] | None = None  # what Cmd+C copies in the app in front (None: nothing selected)
    late_reads: int = 0  # the app in front writes its copy only after this many pasteboard reads
    posted: list[tuple[int, bool, int]] = field(default_factory=list)  # (key code, down, flags)
    pastes: list[tuple[int | None, str | None]] = field(default_factory=list)  # (app pid, pasteboard text)
    activations: list[tuple[int, int]] = field(default_factory=list)
    windows: list[dict[str, Any]] = field(default_factory=list)

    def app(self, pid: int, name: str) -> FakeApp:
        self.apps[pid] = FakeApp(self, pid, name)
        return self.apps[pid]

    def post(self, event: dict[str, Any]) -> None:
        """macOS receiving a posted key event (only a trusted process's events arrive)."""
        self.posted.append((event["key"], event["down"], event["flags"]))
        if not self.trusted or event["down"] or event["flags"] != COMMAND_FLAG:
            return
        if event["key"] == 0x08 and self.selection is not None:  # Cmd+C with something selected
            if self.late_reads:
                self.board.write_later(self.selection, self.late_reads)
            else:
                self.board.copy(self.selection)
        elif event["key"] == 0x09:  # Cmd+V
            self.pastes.append((self.front, self.board.stringForType_(TEXT)))

    def modules(self) -> dict[str, types.ModuleType]:
        mac = self
        appkit = types.ModuleType("AppKit")
        appkit.NSPasteboardTypeString = TEXT
        appkit.NSApplicationActivateIgnoringOtherApps = 1 << 1
        appkit.NSPasteboardItem = FakeItem
        appkit.NSPasteboard = types.SimpleNamespace(generalPasteboard=lambda: mac.board)
        workspace = types.SimpleNamespace(frontmostApplication=lambda: mac.apps.get(mac.front))
        appkit.NSWorkspace = types.SimpleNamespace(sharedWorkspace=lambda: workspace)
        appkit.NSRunningApplication = types.SimpleNamespace(
            runningApplicationWithProcessIdentifier_=lambda pid: mac.apps.get(pid))

        quartz = types.ModuleType("Quartz")
        quartz.kCGEventSourceStateCombinedSessionState = 0
        quartz.kCGEventFlagMaskCommand = COMMAND_FLAG
        quartz.kCGHIDEventTap = 0
        quartz.CGEventSourceCreate = lambda state: ("source", state)
        quartz.CGEventCreateKeyboardEvent = lambda source, key, down: {"key": key, "down": down, "flags": 0}
        quartz.CGEventSetFlags = lambda event, flags: event.__setitem__("flags", flags)
        quartz.CGEventPost = lambda tap, event: mac.post(event)
        quartz.kCGWindowListOptionOnScreenOnly, quartz.kCGWindowListExcludeDesktopElements = 1, 16
        quartz.kCGNullWindowID = 0
        quartz.CGWindowListCopyWindowInfo = lambda options, relative: list(mac.windows)

        ax = types.ModuleType("ApplicationServices")
        ax.kAXTrustedCheckOptionPrompt = "AXTrustedCheckOptionPrompt"

        def trusted_with_options(options: dict[str, bool]) -> bool:
            mac.prompts += bool(options.get("AXTrustedCheckOptionPrompt"))
            mac.checks += 1
            return mac.trusted

        def trusted() -> bool:
            mac.checks += 1
            return mac.trusted

        ax.AXIsProcessTrustedWithOptions = trusted_with_options
        ax.AXIsProcessTrusted = trusted
        return {"AppKit": appkit, "Quartz": quartz, "ApplicationServices": ax}

    def install(self, monkeypatch: Any) -> FakeMac:
        for name, module in self.modules().items():
            monkeypatch.setitem(sys.modules, name, module)
        from desktop_memory.capture import input_macos

        monkeypatch.setattr(input_macos, "_asked", type(input_macos._asked)())  # a fresh run: not asked yet
        return self
