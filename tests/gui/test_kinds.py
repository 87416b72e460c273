"""What kind of thing a memory is, from its text: realistic copies, prose that only looks a bit like code, any text."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from desktop_memory.core.models import Memory
from desktop_memory.qt.kinds import KINDS, kind_of
from tests.gui.realistic import REALISTIC


def kind(text: str) -> str:
    return kind_of(Memory(id="x", content=text))


def test_the_realistic_copies() -> None:
    assert [kind(r["content"]) for r in REALISTIC] == [
        "list", "code", "link", "email", "note", "chat", "list", "person", "code", "note", "note", "command"]


@pytest.mark.parametrize("text", [
    "Meet at 5; bring the slides;",
    "C++ has std::vector and std::map, which the course covers next week.",
    "The arrow => means 'implies' in the logic notes.",
    "Remember: return the library books by Friday",
    "if it rains: take the bus",
])
def test_prose_with_a_little_punctuation_is_not_code(text) -> None:
    assert kind(text) != "code"


@pytest.mark.parametrize(("text", "want"), [
    ("docker compose up -d --build", "command"),
    ("rsync -avz ./build/ deploy@10.0.4.17:/srv/www/", "command"),
    ("const total = items.reduce((a, b) => a + b, 0);\nconsole.log(total);", "code"),
    ("www.example.org/some/page", "link"),
    ("priya@example.com", "person"),
    ("", "note"),
])
def test_short_examples(text, want) -> None:
    assert kind(text) == want


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=2000))
def test_any_text_has_a_kind(text) -> None:
    assert kind(text) in KINDS


def test_every_kind_has_its_own_icon(qtbot) -> None:
    """Distinct glyphs, not one tile recoloured: the icons differ in shape (compared as alpha masks)."""
    from desktop_memory.qt.kinds import icon

    masks = {}
    for name in KINDS:
        image = icon(name, 28, 1.0, False).toImage()
        masks[name] = bytes(image.pixelColor(x, y).alpha() > 128 for y in range(28) for x in range(28))
    assert len(set(masks.values())) == len(KINDS)


def test_the_source_apps_own_icon_from_the_theme(qtbot, tmp_path, monkeypatch) -> None:
    """Where the icon theme has the app's icon it is a badge; an app the theme lacks has none."""
    import sys

    from PySide6.QtGui import QColor, QIcon, QPixmap

    from desktop_memory.qt import kinds

    monkeypatch.setattr(sys, "platform", "linux")
    theme = tmp_path / "icons" / "probe"
    (theme / "32x32" / "apps").mkdir(parents=True)
    (theme / "index.theme").write_text("[Icon Theme]\nName=probe\nDirectories=32x32/apps\n\n"
                                       "[32x32/apps]\nSize=32\nType=Fixed\n")
    pix = QPixmap(32, 32)
    pix.fill(QColor("#ff8800"))
    pix.save(str(theme / "32x32" / "apps" / "firefox.png"))
    paths, name = QIcon.themeSearchPaths(), QIcon.themeName()
    QIcon.setThemeSearchPaths([str(tmp_path / "icons")])
    QIcon.setThemeName("probe")
    try:
        got = kinds.badge("Firefox", 14, 1.0)
        assert got is not None and got.toImage().pixelColor(7, 7) == QColor("#ff8800")
        assert kinds.badge("no-such-app-here", 14, 1.0) is None
    finally:
        QIcon.setThemeSearchPaths(paths)
        QIcon.setThemeName(name)
