"""The capture rules as a table: the built-in rules (on or off) and the person's own (ignore, redact, tag).

Each rule matches by regular expressions on the copied text, the app and the window title (every one
given must match); see core/capture.py. Reading the table validates every rule, so a broken one is
named before anything is saved.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QHBoxLayout,
    QHeaderView,
    QPushButton,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from ..core.capture import ACTIONS, DEFAULT_RULES, CaptureRule

COLUMNS = ("On", "Name", "Action", "Text matches", "App matches", "Window matches", "Tag")
FIELDS = ("name", None, "content", "app", "window", "tag")  # columns 1.. (Action is a combo box)


class RulesEditor(QWidget):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.table = QTableWidget(0, len(COLUMNS))
        self.table.setHorizontalHeaderLabels(COLUMNS)
        self.table.setAccessibleName("Capture rules")
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.verticalHeader().setVisible(False)
        self.table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        self.table.horizontalHeader().setStretchLastSection(True)
        self.table.setMinimumHeight(150)
        add = QPushButton("Add &rule")
        add.clicked.connect(lambda: self.add_rule(CaptureRule("my rule", content="")))
        self.remove = QPushButton("Remo&ve rule")
        self.remove.clicked.connect(self._remove_selected)
        buttons = QHBoxLayout()
        buttons.addWidget(add)
        buttons.addWidget(self.remove)
        buttons.addStretch(1)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.table)
        layout.addLayout(buttons)

    # -- filling ----------------------------------------------------------------------------------
    def load(self, rules: list[dict[str, Any]], disabled_defaults: list[str]) -> None:
        self.table.setRowCount(0)
        for rule in DEFAULT_RULES:
            self._add_row(rule, built_in=True, enabled=rule.name not in disabled_defaults)
        for raw in rules:
            try:
                self.add_rule(CaptureRule.from_dict(raw))
            except (TypeError, ValueError):  # a hand-edited broken rule: show what can be shown
                self.add_rule(CaptureRule("broken rule", content=".^"), enabled=False)

    def add_rule(self, rule: CaptureRule, *, enabled: bool = True) -> None:
        self._add_row(rule, built_in=False, enabled=enabled and rule.enabled)

    def _add_row(self, rule: CaptureRule, *, built_in: bool, enabled: bool) -> None:
        row = self.table.rowCount()
        self.table.insertRow(row)
        on = QTableWidgetItem()
        on.setFlags(Qt.ItemFlag.ItemIsUserCheckable | Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable)
        on.setCheckState(Qt.CheckState.Checked if enabled else Qt.CheckState.Unchecked)
        on.setData(Qt.ItemDataRole.UserRole, built_in)
        self.table.setItem(row, 0, on)
        action = QComboBox()
        action.addItems(list(ACTIONS))
        action.setCurrentText(rule.action)
        action.setEnabled(not built_in)
        self.table.setCellWidget(row, 2, action)
        for col, name in enumerate(FIELDS, start=1):
            if name is None:
                continue
            item = QTableWidgetItem(str(getattr(rule, name)))
            if built_in:
                item.setFlags(Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable)
                item.setToolTip("a built-in rule: switch it off with its checkbox")
            self.table.setItem(row, col, item)

    def _cell(self, row: int, col: int) -> QTableWidgetItem:
        """A cell's item: _add_row gives every column but the action's (a combo box) one."""
        item = self.table.item(row, col)
        assert item is not None
        return item

    def _remove_selected(self) -> None:
        for row in sorted({i.row() for i in self.table.selectedIndexes()}, reverse=True):
            if not self._cell(row, 0).data(Qt.ItemDataRole.UserRole):
                self.table.removeRow(row)

    # -- reading ----------------------------------------------------------------------------------
    def read(self) -> tuple[list[dict[str, Any]], list[str]]:
        """(the person's rules as data, names of built-in rules switched off); ValueError names a bad rule."""
        rules: list[dict[str, Any]] = []
        disabled: list[str] = []
        for row in range(self.table.rowCount()):
            on = self._cell(row, 0).checkState() == Qt.CheckState.Checked
            values = {name: self._cell(row, col).text().strip()
                      for col, name in enumerate(FIELDS, start=1) if name is not None}
            if self._cell(row, 0).data(Qt.ItemDataRole.UserRole):
                if not on:
                    disabled.append(values["name"])
                continue
            combo = self.table.cellWidget(row, 2)
            assert isinstance(combo, QComboBox)
            rule = CaptureRule(**values, action=combo.currentText(), enabled=on)  # validates the patterns
            if not (rule.content or rule.app or rule.window):
                raise ValueError(f"rule {rule.name!r}: give a text, app or window pattern")
            rules.append(rule.to_dict())
        return rules, disabled
