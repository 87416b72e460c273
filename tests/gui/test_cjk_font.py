"""Chinese memories show as text, not boxes: the fonts the app draws with reach a CJK font through Qt's fallback.

A machine without one (Linux without fonts-wqy-microhei or Noto CJK) fails here; scripts/dev.sh installs it and
installers/linux/install.sh tells the person the one command. Windows and macOS ship CJK fonts."""

from __future__ import annotations

from PySide6.QtGui import QFont, QFontDatabase, QTextLayout
from PySide6.QtWidgets import QApplication

from desktop_memory.engine.settings import Settings

MEMORY = "周五下午三点和李经理开会，讨论第三季度的预算和新办公室的搬迁计划。记得带上合同复印件。"


def _missing_glyphs(text: str, font: QFont) -> list[str]:
    """The characters of `text` that would be drawn as boxes in `font` (after Qt's font fallback, as painted)."""
    layout = QTextLayout(text, font)
    layout.beginLayout()
    line = layout.createLine()
    while line.isValid():
        line.setLineWidth(10_000)
        line = layout.createLine()
    layout.endLayout()
    missing: list[str] = []
    for index, char in enumerate(text):
        glyphs = [g for run in layout.glyphRuns(index, 1) for g in run.glyphIndexes()]
        if not glyphs or 0 in glyphs:  # glyph 0 is .notdef: the box
            missing.append(char)
    return missing

def test_a_chinese_memory_is_drawn_with_real_glyphs(qtbot, bridge, engine) -> None:
    from desktop_memory.qt.search_window import SearchWindow

    stored = engine(bridge, lambda s: s.add(MEMORY)).memory
    families = QFontDatabase.families(QFontDatabase.WritingSystem.SimplifiedChinese)
    assert families, "no font for Chinese is installed: install fonts-wqy-microhei (bash scripts/dev.sh setup)"
    window = SearchWindow(bridge, Settings(), "Ctrl+Alt+M")
    qtbot.addWidget(window)
    fonts = {"the app": QApplication.font(), "the search window": window.font(),
             "bold titles": QFont(window.font().family(), window.font().pointSize(), QFont.Weight.Bold)}
    for where, font in fonts.items():
        missing = _missing_glyphs(stored.content, font)
        assert not missing, f"{where} draws {''.join(missing)!r} as boxes (fonts for Chinese: {families[:3]})"
