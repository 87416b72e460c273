"""The filter chips under the query: one per filter in it (click removes it), and a few to add."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable

from PySide6.QtWidgets import QHBoxLayout, QToolButton

from . import display


def render_chips(chips: QHBoxLayout, text: Callable[[], str], set_query: Callable[[str], None]) -> None:
    """Replace the chips in `chips` with those for the query `text()`; a click calls `set_query` with the query
    as it is then, that filter removed or added."""
    while (item := chips.takeAt(0)) is not None:
        if item.widget():
            item.widget().deleteLater()
    active = display.filter_tokens(text())
    for token in active:
        chip = QToolButton(text=f"{token}  ✕", toolTip=f"Remove the filter {token}")
        chip.setAutoRaise(False)
        chip.clicked.connect(lambda _=False, t=token: set_query(display.without_token(text(), t)))
        chips.addWidget(chip)
    week = (dt.date.today() - dt.timedelta(days=7)).isoformat()
    for label, token in (("Pinned", "is:pinned"), ("Clipboard", "source:clipboard"),
                         ("Last 7 days", f"after:{week}")):
        if token not in active:
            chip = QToolButton(text=f"+ {label}", toolTip=f"Add the filter {token}")
            chip.setAutoRaise(True)
            chip.clicked.connect(lambda _=False, t=token: set_query(f"{text().rstrip()} {t} ".lstrip()))
            chips.addWidget(chip)
    chips.addStretch(1)
