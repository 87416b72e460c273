"""The filter chips under the query: one per filter in it (click removes it), and a few to add."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable

from PySide6.QtWidgets import QHBoxLayout, QToolButton

from . import display

_SHOWN = "dm_chips"  # the chips a layout shows now (a Qt property): rebuilt only when they change


def chip_specs(query: str) -> list[tuple[str, str, bool]]:
    """(label, filter token, True to remove it / False to add it) for the chips of a query."""
    active = display.filter_tokens(query)
    specs = [(f"{token}  ✕", token, True) for token in active]
    week = (dt.date.today() - dt.timedelta(days=7)).isoformat()
    for label, token in (("Pinned", "is:pinned"), ("Clipboard", "source:clipboard"),
                         ("Last 7 days", f"after:{week}")):
        if token not in active:
            specs.append((f"+ {label}", token, False))
    return specs


def render_chips(chips: QHBoxLayout, text: Callable[[], str], set_query: Callable[[str], None]) -> None:
    """Show in `chips` the chips for the query `text()`; a click calls `set_query` with the query as it is then,
    that filter removed or added. Called on every keystroke: the buttons are only replaced when the filters
    change (creating, laying out and painting new buttons cost the GUI thread several ms each time)."""
    specs = chip_specs(text())
    key = "\n".join(f"{label}\t{int(remove)}" for label, _token, remove in specs)
    if chips.property(_SHOWN) == key:
        return
    chips.setProperty(_SHOWN, key)
    while (item := chips.takeAt(0)) is not None:
        if (widget := item.widget()) is not None:
            widget.deleteLater()
    for label, token, remove in specs:
        chip = QToolButton()
        chip.setText(label)
        if remove:
            chip.setToolTip(f"Remove the filter {token}")
            chip.setAutoRaise(False)
            chip.clicked.connect(lambda _=False, t=token: set_query(display.without_token(text(), t)))
        else:
            chip.setToolTip(f"Add the filter {token}")
            chip.setAutoRaise(True)
            chip.clicked.connect(lambda _=False, t=token: set_query(f"{text().rstrip()} {t} ".lstrip()))
        chips.addWidget(chip)
    chips.addStretch(1)
