"""Opening and closing the search panel's preview, and keeping it on the memory under the cursor."""

from __future__ import annotations

from collections.abc import Callable

from ..core.models import Memory, Passage
from .bridge import EngineBridge
from .preview import PreviewPane
from .result_list import ResultList


class PreviewControl:
    """Shows the current result in the preview pane (then its earlier versions, from the engine).

    `relayout` runs after the pane opens or closes (the panel resizes and its footer hints change)."""

    def __init__(self, pane: PreviewPane, results: ResultList, bridge: EngineBridge,
                 notice: Callable[[str], None], relayout: Callable[[], None]) -> None:
        self.pane, self.results, self.bridge = pane, results, bridge
        self.notice, self.relayout = notice, relayout
        pane.closed.connect(self.close)
        results.selectionModel().currentChanged.connect(lambda *_: self.refresh())

    @property
    def is_open(self) -> bool:
        return self.pane.isVisible()

    def open(self) -> None:
        if (m := self.results.current_memory()) is not None:
            self.show(m, self.results.current_passage())
            self.pane.show()
            self.relayout()

    def toggle(self) -> None:
        if self.pane.isVisible():
            self.pane.hide()
            self.relayout()
        else:
            self.open()

    def close(self) -> None:
        self.pane.hide()
        self.relayout()

    def refresh(self) -> None:
        """An open preview follows the cursor (and shows a changed memory again)."""
        if self.pane.isVisible() and (m := self.results.current_memory()):
            self.show(m, self.results.current_passage())

    def show(self, m: Memory, passage: Passage | None = None) -> None:
        """Show a memory in the preview (a long one at the passage that matched), then its earlier versions once
        the engine has them."""
        self.pane.show_memory(m, passage)
        mid = m.id
        self.bridge.submit(lambda s: s.versions(mid), lambda vs: self.pane.show_versions(mid, vs),
                           self.notice, lane="versions")
