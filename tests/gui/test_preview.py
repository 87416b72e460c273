"""The preview pane (Shift+Space in the search panel) reads like a page made for people: a title, when, where
from, the text with its lines, tags and entities as chips; ids, importance and raw metadata only behind a
collapsed "Details" disclosure. It never grows wider with long lines, and every text is readable (≥ 4.5:1) in
light and dark palettes."""

from __future__ import annotations

import datetime as dt
import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QFontInfo, QPalette, QTextDocument
from PySide6.QtWidgets import QAbstractButton, QApplication, QLabel, QListWidget, QPlainTextEdit, QWidget

from desktop_memory.core.models import LATEST, Memory, Passage, Version

UUID = "3f2b8c1e-9a4d-4e6f-8b21-0c5d7e9fa123"
WINDOW = "Invoice 2025-03 (Acme GmbH).pdf — Mozilla Firefox"
URL = "https://billing.example.com/invoices/2025-03?account=4471"
CODE = ('def release_notes(tag: str) -> str:\n'
        '    """The changelog entries since the last release tag.\n\n    One line per commit."""\n'
        "    return run(['git', 'log', f'{tag}..HEAD', '--oneline'])\n")


def yesterday_at(hour: int, minute: int) -> float:
    day = dt.date.today() - dt.timedelta(days=1)
    return dt.datetime.combine(day, dt.time(hour, minute)).timestamp()


def invoice(**fields) -> Memory:  # type: ignore[no-untyped-def]
    base = dict(
        id=UUID, content="Invoice 2025-03 from Acme GmbH\nTotal: 1,240.00 EUR\nDue: 31 March 2025\nPay to DE44 5001",
        source="clipboard", source_app="firefox", title="Acme invoice for March", tags=["billing", "work"],
        entities=[{"text": "Acme GmbH", "type": "organisation"}, {"text": "31 March 2025", "type": "datetime"}],
        importance=0.58, created_at=yesterday_at(14, 2), updated_at=yesterday_at(14, 2), content_hash="inv",
        metadata={"window": WINDOW, "url": URL}, summary="Invoice 2025-03 from Acme GmbH", enrichment_state="done")
    base.update(fields)
    return Memory(**base)  # type: ignore[arg-type]


def plain(label: QLabel) -> str:
    if label.textFormat() == Qt.TextFormat.PlainText or "<" not in label.text():
        return label.text()
    doc = QTextDocument()
    doc.setHtml(label.text())
    return doc.toPlainText()


def visible_texts(pane: QWidget) -> list[str]:
    """Every text a person can see in the pane now (labels, buttons, the text box, list items)."""
    out = []
    for w in pane.findChildren(QWidget):
        if not w.isVisible():
            continue
        if isinstance(w, QLabel):
            out.append(plain(w).replace("\u200b", ""))
        elif isinstance(w, QAbstractButton):
            out.append(w.text())
        elif isinstance(w, QPlainTextEdit):
            out.append(w.toPlainText())
        elif isinstance(w, QListWidget):
            out.extend(w.item(i).text() for i in range(w.count()))
    return out


def visible(pane: QWidget) -> str:
    return "\n".join(visible_texts(pane))


def chips(pane: QWidget) -> list[str]:
    from desktop_memory.qt.preview_widgets import Chip

    return [c.text() for c in pane.findChildren(Chip) if c.isVisible()]


@pytest.fixture
def pane(qtbot):  # type: ignore[no-untyped-def]
    from desktop_memory.qt.preview import PreviewPane

    p = PreviewPane()
    qtbot.addWidget(p)
    p.resize(440, 560)
    p.show()
    return p


def test_the_preview_shows_title_when_where_and_chips_not_ids_or_raw_metadata(pane) -> None:
    m = invoice()
    pane.show_memory(m)
    seen = visible(pane)
    assert "Acme invoice for March" in seen  # the title
    day = dt.date.today() - dt.timedelta(days=1)
    assert "Yesterday 14:02" in seen and f"{day.day} {day.strftime('%b %Y')}" in seen  # relative and absolute
    assert "Firefox" in seen and "Clipboard" in seen  # where from: source and app
    assert WINDOW in seen or WINDOW[:30] in seen  # the window it was copied in
    assert "billing.example.com/invoices" in seen  # the page, as a link-like line
    assert {"#billing", "#work", "Acme GmbH"} <= set(chips(pane))
    for hidden in (UUID, "Importance", "0.58", '{"', '"window"', "enrichment"):
        assert hidden not in seen, f"{hidden!r} shown outside the details"
    assert pane.editor.toPlainText() == m.content and pane.editor.document().blockCount() == 4  # lines kept


def test_details_open_on_click_and_from_the_keyboard_and_show_the_ids(qtbot, pane) -> None:
    m = invoice()
    pane.show_memory(m)
    button = pane.details_button
    assert button.isVisible() and "Details" in button.text() and not pane.details.isVisible()
    assert button.focusPolicy() & Qt.FocusPolicy.TabFocus, "not reachable with Tab"
    qtbot.mouseClick(button, Qt.MouseButton.LeftButton)
    assert pane.details.isVisible()
    seen = visible(pane)
    assert UUID in seen and "Importance" in seen and "0.58" in seen and "window" in seen
    assert button.arrowType() == Qt.ArrowType.DownArrow
    button.setFocus()
    qtbot.keyClick(button, Qt.Key.Key_Space)
    assert not pane.details.isVisible() and UUID not in visible(pane)
    assert button.arrowType() == Qt.ArrowType.RightArrow
    qtbot.keyClick(button, Qt.Key.Key_Space)
    assert pane.details.isVisible() and UUID in visible(pane)
    pane.activateWindow()
    qtbot.waitUntil(pane.isActiveWindow)
    pane.editor.setFocus()
    qtbot.keyClick(pane.editor, Qt.Key.Key_D, Qt.KeyboardModifier.AltModifier)  # from the text: Alt+D
    assert not pane.details.isVisible() and pane.editor.toPlainText() == m.content
    qtbot.keyClick(pane.editor, Qt.Key.Key_D, Qt.KeyboardModifier.AltModifier)
    assert pane.details.isVisible()
    pane.show_memory(invoice(id="another-id", content="Something else entirely"))
    assert pane.details.isVisible(), "the disclosure stays as the person left it while moving in the results"
    assert "another-id" in visible(pane) and UUID not in visible(pane)


def test_details_collapsed_by_default_and_escape_on_the_button_closes_the_preview(qtbot, pane) -> None:
    pane.show_memory(invoice())
    closed: list[bool] = []
    pane.closed.connect(lambda: closed.append(True))
    pane.details_button.setFocus()
    qtbot.keyClick(pane.details_button, Qt.Key.Key_Escape)
    assert closed == [True]


def test_a_code_memory_shows_its_lines_in_monospace_and_no_flattened_code_as_summary(pane) -> None:
    m = invoice(id="code", content=CODE, title="", summary=CODE.strip(), tags=["release"], entities=[],
                metadata={"window": "notes.py - VS Code"}, source_app="code")
    pane.show_memory(m)
    seen = visible(pane)
    flat = " ".join(CODE.split())
    assert flat[:40] not in seen, "the code flattened into one line"
    assert pane.editor.toPlainText() == CODE and "\n    return run(" in pane.editor.toPlainText()
    assert QFontInfo(pane.editor.font()).fixedPitch()
    assert pane.editor.lineWrapMode() == QPlainTextEdit.LineWrapMode.NoWrap  # the indentation stays readable
    assert "The changelog entries since the last release tag." in seen  # the docstring's first line, at most
    assert not any("One line per commit" in t for t in visible_texts(pane) if t != CODE), "only its first line"
    no_doc = "import os\nfor name in os.listdir('.'):\n    print(name)\n"
    pane.show_memory(invoice(id="code2", content=no_doc, title="", summary=no_doc.strip(), entities=[]))
    texts = [t for t in visible_texts(pane) if t != no_doc]
    assert not any("os.listdir" in t for t in texts), texts


def test_a_summary_that_is_only_the_texts_opening_is_not_shown_a_real_one_is(pane) -> None:
    text = ("We met with the vendor about the renewal. The price goes up by 4 percent next year. "
            "Support hours stay the same.\n") * 6
    pane.show_memory(invoice(id="s1", content=text, title="", summary=" ".join(text.split())[:200]))
    assert sum(t.count("We met with the vendor") for t in visible_texts(pane) if t != text) <= 1  # title at most
    pane.show_memory(invoice(id="s2", content=text, title="", summary="The renewal price goes up by 4 percent."))
    assert "The renewal price goes up by 4 percent." in visible(pane)


def test_a_long_text_opens_at_the_passage_that_matched_selected(pane) -> None:
    deep = "The staging database password rotation happens every second Tuesday at 09:00 UTC."
    text = "Release planning notes\n" + "We went through the roadmap items one by one.\n" * 500 + deep + "\nEnd"
    start = text.index(deep)
    pane.show_memory(invoice(id="long", content=text, title=""), Passage(start, start + len(deep)))
    assert pane.editor.textCursor().selectedText() == deep
    assert pane.editor.verticalScrollBar().value() > 0, "the passage was selected but not scrolled to"


def test_an_import_shows_the_file_it_came_from(pane) -> None:
    m = invoice(id="imp", source="import", source_app="Obsidian", metadata={"path": "Projects/Beta/retro.md",
                                                                          "links": ["Release"]})
    pane.show_memory(m)
    seen = visible(pane)
    assert "Import" in seen and "Obsidian" in seen and "Projects/Beta/retro.md" in seen
    assert "links" not in seen


def test_the_pane_does_not_get_wider_with_long_lines(qtbot, pane) -> None:
    pane.show_memory(Memory(id="a", content="Buy milk", created_at=time.time(), content_hash="a", tags=["home"],
                            metadata={"window": "Notes"}))
    pane.show_versions("a", [Version(seq=1, content="Buy", created_at=time.time(), content_hash="v",
                                     replaced_at=time.time())])
    qtbot.mouseClick(pane.details_button, Qt.MouseButton.LeftButton)  # the same parts shown, with short lines
    QApplication.processEvents()
    hint, least = pane.sizeHint().width(), pane.minimumSizeHint().width()
    assert hint <= 400 and least <= 400
    huge = "https://example.com/" + "a" * 800
    m = invoice(id="b", content="x" * 3000 + "\n" + huge, title="T" * 300,
                tags=["t" * 64, *(f"tag{i}" for i in range(30))], source_url=huge, source_app="A" * 200,
                metadata={"window": "W" * 500, "url": huge, "note": "n" * 900, "path": "p/" * 300},
                entities=[{"text": "E" * 200, "type": "person"}] * 3, summary="s " * 300)
    pane.show_memory(m)
    pane.show_versions("b", [Version(seq=1, content="v" * 900, created_at=time.time(), content_hash="v",
                                     replaced_at=time.time())])
    QApplication.processEvents()
    assert pane.sizeHint().width() <= hint and pane.minimumSizeHint().width() <= least
    pane.show_memory(invoice(id="c", content=CODE * 3 + "    x = '" + "y" * 900 + "'\n", title=""))
    QApplication.processEvents()
    assert pane.sizeHint().width() <= hint and pane.minimumSizeHint().width() <= least


def test_with_everything_open_the_pane_fits_the_panel_and_clips_no_text(qtbot, pane) -> None:
    """The panel gives the preview about 440 x 470 pixels: a long memory with versions and its details open still
    shows every part whole, one below the other, with room for the text."""
    from desktop_memory.qt.preview_widgets import WrapLabel

    pane.resize(440, 470)
    huge = "https://example.com/" + "a" * 800
    m = invoice(id="b", content="x " * 3000, title="Quarterly planning notes " * 12,
                tags=[f"topic-{i}" for i in range(30)], source_app="A" * 200,
                entities=[{"text": f"Entity number {i}", "type": "person"} for i in range(20)],
                metadata={"window": "W" * 500, "url": huge, "path": "p/" * 300},
                summary="x " * 300)
    pane.show_memory(m)
    pane.show_versions("b", [Version(seq=i, content="v " * 90, created_at=time.time(), content_hash=f"v{i}",
                                     replaced_at=time.time()) for i in range(5)])
    qtbot.mouseClick(pane.details_button, Qt.MouseButton.LeftButton)
    QApplication.processEvents()
    parts = [w for w in (pane.title, pane.when, pane.source, pane.window_line, pane.url_line, pane.file_line,
                         pane.summary,
                         pane.editor, pane.chips, pane.details_button, pane.details_area, pane.versions_row,
                         pane.hint) if w.isVisible()]
    bottom = 0
    for w in parts:
        g = w.geometry()
        assert pane.rect().contains(g), (w.accessibleName(), g)
        assert g.top() >= bottom, (w.accessibleName(), "overlaps the part above")
        bottom = g.bottom()
        if isinstance(w, WrapLabel):
            assert g.height() >= w.heightForWidth(g.width()), (w.accessibleName(), "its text is cut off")
    assert pane.editor.height() >= 60


def test_a_huge_memory_is_read_once_not_on_every_keystroke(qtbot, pane, monkeypatch) -> None:
    """With the preview open every keystroke's results show the current memory again: its title and summary are
    checked against its text (headline.grounded reads every word) once, on at most SCAN_CHARS of a 2 MB copy
    (4 s per keystroke before)."""
    from desktop_memory.core import headline
    from desktop_memory.qt import display
    from desktop_memory.qt.preview_text import SCAN_CHARS

    read: list[int] = []
    real = headline.grounded

    def watched(candidate: str, text: str) -> bool:
        read.append(len(text))
        return real(candidate, text)

    monkeypatch.setattr(headline, "grounded", watched)
    monkeypatch.setattr(display, "grounded", watched)
    text = "Release checklist\n" + "- check the staging deploy and the invoice export, step %d\n" * 30_000
    m = invoice(id="huge", content=text, title="Release checklist for staging",
                summary="Check the staging deploy and the invoice export")
    pane.show_memory(m)
    assert read and max(read) <= SCAN_CHARS
    read.clear()
    started = time.perf_counter()
    for _ in range(10):
        pane.show_memory(Memory(**{**m.__dict__}))
    assert not read and time.perf_counter() - started < 0.5


def luminance(c: QColor) -> float:
    def lin(v: float) -> float:
        return v / 12.92 if v <= 0.03928 else ((v + 0.055) / 1.055) ** 2.4

    return 0.2126 * lin(c.redF()) + 0.7152 * lin(c.greenF()) + 0.0722 * lin(c.blueF())


def contrast(a: QColor, b: QColor) -> float:
    la, lb = sorted((luminance(a), luminance(b)), reverse=True)
    return (la + 0.05) / (lb + 0.05)


def palettes() -> list[tuple[str, QPalette]]:
    from tests.gui.make_screenshots import dark_palette

    return [("light", QPalette(QApplication.palette())), ("dark", dark_palette())]


@pytest.mark.parametrize("theme", ["light", "dark"])
def test_every_text_is_readable_in_light_and_dark(qtbot, theme) -> None:
    from desktop_memory.qt.preview import PreviewPane
    from desktop_memory.qt.preview_widgets import Chip

    pal = dict(palettes())[theme]
    pane = PreviewPane()
    qtbot.addWidget(pane)
    pane.setPalette(pal)
    pane.resize(440, 600)
    pane.show()
    pane.show_memory(invoice())
    qtbot.mouseClick(pane.details_button, Qt.MouseButton.LeftButton)
    labels = [w for w in pane.findChildren(QLabel) if w.isVisible() and w.text()]
    assert any(isinstance(w, Chip) for w in labels)
    for w in labels:
        fg = w.palette().color(QPalette.ColorRole.WindowText)
        grounds = ([w.palette().color(QPalette.ColorRole.Window)] if isinstance(w, Chip)
                   else [pal.color(QPalette.ColorRole.Base), pal.color(QPalette.ColorRole.Window)])
        for ground in grounds:
            assert contrast(fg, ground) >= 4.5, (theme, plain(w)[:40], fg.name(), ground.name())
        if "<a " in w.text():
            link = w.palette().color(QPalette.ColorRole.Link)
            assert all(contrast(link, g) >= 4.5 for g in grounds), (theme, "link", link.name())


def test_when_reads_relative_and_absolute() -> None:
    from desktop_memory.qt.preview_text import when

    now = dt.datetime(2026, 3, 5, 16, 30).timestamp()
    at = dt.datetime(2026, 3, 4, 14, 2).timestamp()
    assert when(at, now) == ("Yesterday 14:02", "4 Mar 2026")
    assert when(dt.datetime(2026, 3, 5, 9, 15).timestamp(), now) == ("Today 09:15", "5 Mar 2026")
    assert when(now - 300, now)[0] == "5 min ago"
    old = dt.datetime(2025, 3, 3, 8, 0).timestamp()
    rel, absolute = when(old, now)
    assert absolute.startswith("3 Mar 2025") and "ago" in rel


@settings(max_examples=200, deadline=None)
@given(ts=st.floats(min_value=-1e12, max_value=LATEST * 2) | st.just(float("nan")),
       now=st.floats(min_value=0, max_value=LATEST - 1))
def test_when_never_fails_and_always_says_something(ts: float, now: float) -> None:
    from desktop_memory.qt.preview_text import when

    rel, absolute = when(ts, now)
    assert absolute and isinstance(rel, str)


@settings(max_examples=300, deadline=None)
@given(st.text(min_size=0, max_size=400))
def test_breakable_text_keeps_its_characters_and_has_no_long_unbroken_run(text: str) -> None:
    from desktop_memory.qt.preview_text import MAX_RUN, breakable

    out = breakable(text)
    assert out.replace("\u200b", "") == text.replace("\u200b", "")
    for run in out.replace("\u200b", " ").split():
        assert len(run) <= MAX_RUN
