"""The search panel's footer hints: the keys that do something for the selection now."""

from __future__ import annotations

import html

from PySide6.QtGui import QPalette

from ..core.models import Memory
from .result_row import secondary


def hint_keys(chosen: list[Memory], preview_open: bool, can_undo: bool, *, paste: bool = False
              ) -> list[tuple[str, str]]:
    """(key, what it does) pairs: paste or copy, pin or unpin, forget or restore, preview open or not."""
    keys: list[tuple[str, str]] = []
    verb = "paste" if paste else "copy"  # paste: into the window the search was opened over (paste_flow.py)
    if chosen:
        keys = [("↵", f"{verb} context"), ("Ctrl+↵", f"{verb} text"),
                *([] if preview_open else [("Shift+Space", "preview")]),
                ("Ctrl+P", "unpin" if all(m.pinned for m in chosen) else "pin"),
                ("Del", "restore" if all(m.forgotten for m in chosen) else "forget")]
    if can_undo:
        keys.append(("Ctrl+Z", "undo forget"))
    if not chosen or preview_open:
        keys.append(("Esc", "close preview" if preview_open else "hide"))
    return keys


def hints_html(keys: list[tuple[str, str]], pal: QPalette) -> str:
    """Key caps in the text colour on the base colour, their meaning in the secondary colour."""
    text, dim = pal.color(QPalette.ColorRole.Text).name(), secondary(pal).name()
    cap = pal.color(QPalette.ColorRole.Base).name()
    return "&nbsp;&nbsp;".join(
        f"<span style='color:{text}; background:{cap}'>&nbsp;{html.escape(k)}&nbsp;</span>"
        f"<span style='color:{dim}'>&nbsp;{html.escape(v)}</span>" for k, v in keys)
