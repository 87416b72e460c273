"""One reading of a hotkey combo for every backend (X11, Windows, macOS, the Wayland portal)."""

from __future__ import annotations

import contextlib

import pytest
from hypothesis import given
from hypothesis import strategies as st

from desktop_memory.capture import hotkeys_macos, portal_protocol
from desktop_memory.capture.hotkeys_x11 import HotkeyError, parse


def test_qt_s_plus_key_is_read_by_every_backend() -> None:
    """Qt writes Ctrl and the plus key as "Ctrl++"; X11 (and Windows, which uses its reading) took it for no key."""
    assert parse("Ctrl++") == (["ControlMask"], "+")
    assert parse(" Ctrl + Alt + M ") == (["ControlMask", "Mod1Mask"], "m")
    assert portal_protocol.to_trigger("Ctrl++") == "CTRL+plus"


@pytest.mark.parametrize("bad", [None, 5, ["Ctrl", "M"], "", "M", "Ctrl+", "Ctrl++M", "Ctrl+ +M", "Hyper+M"])
def test_a_bad_combo_is_one_hotkey_error_on_every_backend(bad: object) -> None:
    for read in (parse, hotkeys_macos.parse, portal_protocol.to_trigger):
        with pytest.raises(HotkeyError):
            read(bad)  # type: ignore[arg-type]


@given(st.text(max_size=20))
def test_any_text_is_read_or_refused_never_crashes(text: str) -> None:
    for read in (parse, portal_protocol.to_trigger):
        with contextlib.suppress(HotkeyError):
            read(text)
