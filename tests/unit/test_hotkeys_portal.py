"""The portal backend's pure parts: Qt's combos ("Ctrl+Alt+M") as XDG shortcut triggers ("CTRL+ALT+m")."""

from __future__ import annotations

import string

import pytest
from hypothesis import given
from hypothesis import strategies as st

from desktop_memory.capture.hotkeys_x11 import HotkeyError
from desktop_memory.capture.portal_protocol import request_path, to_combo, to_trigger


@pytest.mark.parametrize(("combo", "trigger"), [
    ("Ctrl+Alt+M", "CTRL+ALT+m"),
    ("ctrl+alt+m", "CTRL+ALT+m"),
    ("Ctrl+Alt+C", "CTRL+ALT+c"),
    ("Ctrl+Alt+Shift+C", "CTRL+ALT+SHIFT+c"),
    ("Meta+Shift+F5", "LOGO+SHIFT+F5"),
    ("Super+Space", "LOGO+space"),
    ("Ctrl+Alt+Space", "CTRL+ALT+space"),
    ("Control+Return", "CTRL+Return"),
    ("Ctrl+Enter", "CTRL+Return"),
    ("Ctrl+Esc", "CTRL+Escape"),
    ("Ctrl+Del", "CTRL+Delete"),
    ("Alt+PgUp", "ALT+Page_Up"),
    ("Alt+PgDown", "ALT+Page_Down"),
    ("Ctrl+Alt+1", "CTRL+ALT+1"),
    ("Ctrl+,", "CTRL+comma"),
    ("Ctrl+.", "CTRL+period"),
    ("Ctrl+/", "CTRL+slash"),
    ("Ctrl++", "CTRL+plus"),
    ("Ctrl+Alt+Left", "CTRL+ALT+Left"),
    (" Ctrl + Alt + M ", "CTRL+ALT+m"),
])
def test_qt_combos_become_xdg_triggers(combo: str, trigger: str) -> None:
    assert to_trigger(combo) == trigger


@pytest.mark.parametrize("bad", ["M", "", "   ", "Hyper+M", "Ctrl+", "Ctrl+Alt", "Ctrl+NoSuchKey!", "Ctrl+M+K",
                                 "Ctrl+é", "Ctrl+\n", 42, None])
def test_nonsense_is_a_hotkey_error_that_names_it(bad) -> None:
    with pytest.raises(HotkeyError) as err:
        to_trigger(bad)
    assert "\n" not in str(err.value)


MODS = st.lists(st.sampled_from(["Ctrl", "Alt", "Shift", "Meta"]), min_size=1, max_size=4, unique=True)
KEYS = st.sampled_from(list(string.ascii_letters + string.digits) + [f"F{n}" for n in range(1, 25)]
                       + ["Space", "Tab", "Home", "End", "Up", "Down", "Ins", "Backspace"])


@given(MODS, KEYS)
def test_every_combo_the_settings_window_writes_is_a_valid_trigger(mods: list[str], key: str) -> None:
    trigger = to_trigger("+".join([*mods, key]))
    *tmods, tkey = trigger.split("+")
    assert tmods == [{"Ctrl": "CTRL", "Alt": "ALT", "Shift": "SHIFT", "Meta": "LOGO"}[m] for m in mods]
    assert tkey and all(c.isalnum() or c == "_" for c in tkey)  # the spec: keysym names, [A-Za-z0-9_]
    if len(key) == 1:
        assert tkey == key.lower()


@given(st.text(max_size=40))
def test_any_text_gives_a_trigger_or_a_hotkey_error(text: str) -> None:
    try:
        trigger = to_trigger(text)
    except HotkeyError:
        return
    assert "+" in trigger and all(c.isalnum() or c in "_+" for c in trigger)


def test_request_paths_follow_the_portal_rule() -> None:
    assert request_path(":1.42", "dm1") == "/org/freedesktop/portal/desktop/request/1_42/dm1"


@pytest.mark.parametrize(("trigger", "combo"), [
    ("CTRL+ALT+m", "Ctrl+Alt+M"),
    ("CTRL+ALT+SHIFT+c", "Ctrl+Alt+Shift+C"),
    ("LOGO+space", "Meta+Space"),
    ("CTRL+Page_Down", "Ctrl+PgDown"),
    ("CTRL+comma", "Ctrl+,"),
    ("CTRL+plus", "Ctrl++"),
    ("ALT+F5", "Alt+F5"),
    ("Meta+Shift+K", "Meta+Shift+K"),  # KDE describes triggers the Qt way already
    (" Ctrl+Alt+M ", "Ctrl+Alt+M"),
    ("Shift+Ctrl+Alt+C", "Shift+Ctrl+Alt+C"),
    ("<Control><Alt>m", "<Control><Alt>m"),  # another desktop's own label: shown as it is
    ("", ""),
    (None, ""),
    (42, ""),
])
def test_the_desktops_triggers_are_shown_the_way_the_app_writes_combos(trigger, combo: str) -> None:
    assert to_combo(trigger) == combo


@given(MODS, KEYS)
def test_a_combo_sent_as_a_trigger_comes_back_as_the_same_combo(mods: list[str], key: str) -> None:
    combo = "+".join([*mods, key])
    assert to_combo(to_trigger(combo)).lower() == combo.lower()  # letters come back upper case, as Qt writes them
