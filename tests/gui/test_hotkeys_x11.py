"""X11 global hotkeys against the real X server of scripts/with-desktop.sh (xdotool presses the keys)."""

from __future__ import annotations

import os
import shutil
import subprocess
import threading

import pytest

from desktop_memory.capture.hotkeys_x11 import HotkeyError, X11Hotkeys, parse

IN_DESKTOP = bool(os.environ.get("DESKTOP_MEMORY_DESKTOP_SESSION")) and bool(os.environ.get("DISPLAY"))


def test_combos_are_parsed_as_qt_writes_them():
    assert parse("Ctrl+Alt+M") == (["ControlMask", "Mod1Mask"], "m")
    assert parse("Meta+Shift+F5") == (["Mod4Mask", "ShiftMask"], "F5")
    assert parse("Ctrl+Alt+Space") == (["ControlMask", "Mod1Mask"], "space")
    for bad in ("M", "", "Hyper+M"):
        with pytest.raises(HotkeyError):
            parse(bad)


@pytest.mark.skipif(not IN_DESKTOP, reason="needs the X server of scripts/with-desktop.sh")
def test_a_pressed_combo_reaches_the_receiver_and_a_taken_one_is_reported():
    assert shutil.which("xdotool")
    got: list[str] = []
    pressed = threading.Event()

    def receive(action: str) -> None:
        got.append(action)
        pressed.set()

    first = X11Hotkeys(receive)
    second = X11Hotkeys(lambda _a: None)
    try:
        assert first.bind({"search": "Ctrl+Alt+J", "bad": "Ctrl+Alt+NoSuchKey"}) == {
            "bad": "'Ctrl+Alt+NoSuchKey': no such key on this keyboard"}
        assert second.bind({"search": "Ctrl+Alt+J"}) == {"search": "Ctrl+Alt+J is already taken by another program"}
        subprocess.run(["xdotool", "key", "ctrl+alt+j"], check=True, timeout=30)
        assert pressed.wait(10) and got == ["search"]
        first.bind({})  # released: another program may take it now
        assert second.bind({"search": "Ctrl+Alt+J"}) == {}
    finally:
        first.close()
        second.close()
