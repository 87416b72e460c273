"""The capture rules as a table: the built-in rules (on or off) and the person's own (ignore, redact, tag).

Each rule matches by regular expressions on the copied text, the app and the window title (every one
given must match); see core/capture.py. The table says what each rule catches in plain words ("Skip
everything copied from KeePass, 1Password, Bitwarden and 6 more"); the patterns themselves are in its
tooltip and in the columns "Show the patterns" opens. Reading the table validates every rule, so a broken
one is named before anything is saved.
"""

from __future__ import annotations

import re
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QAbstractItemView,
    QCheckBox,
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

COLUMNS = ("On", "Name", "Action", "What it catches", "Text matches", "App matches", "Window matches", "Tag")
FIELDS = ("name", None, None, "content", "app", "window", "tag")  # columns 1.. (Action: a combo box; words)
WORDS = 3  # the column that says it in plain words
PATTERNS = (4, 5, 6)  # the regular expressions: shown on request ("advanced")

# What a text pattern catches, found by trying it on examples of each kind (and never on plain prose)
KINDS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("a one-time code", ("482913", "123 456", "0042")),
    ("a password prompt", ("Password:", "[sudo] password for ana:", "Passphrase:")),
    ("a card number", ("4111 1111 1111 1111", "4111-1111-1111-1111", "5500000000000004")),
    ("an email address", ("jane.doe@example.com",)),
    ("a web address", ("https://example.com/path?q=1", "www.example.org")),
    ("an IBAN", ("DE89 3704 0044 0532 0130 00", "GB29NWBK60161331926819")),
    ("a phone number", ("+1 415 555 0134", "(415) 555-0134")),
    ("an API key or token", ("ghp_16C7e42F292c6912E7710c838347Ae178B4a", "sk-proj-4fZq0e9XbT7uVnW2yR8sLk3m",
                             "AKIAIOSFODNN7EXAMPLE")),
)
PROSE = ("We agreed to move the launch to Thursday; Ana books the room.\nBring the printed agenda.",)
KNOWN_APPS = {"keepass": "KeePass", "keepassxc": "KeePassXC", "1password": "1Password", "bitwarden": "Bitwarden",
              "lastpass": "LastPass", "enpass": "Enpass", "dashlane": "Dashlane", "keeper": "Keeper",
              "proton pass": "Proton Pass", "seahorse": "Seahorse", "slack": "Slack"}
ACTION_WORDS = {"ignore": "Skip", "redact": "Hide", "tag": "Tag"}


def _words(pattern: str) -> list[str] | None:
    """The words of a pattern that is only words or a list of them ("keepass|1password", "\\binvoice\\b",
    "proton ?pass"); None for anything richer."""
    plain = re.sub(r"\\b|\\A|\\Z|\^|\$", "", pattern).replace("(?:", "").replace(")", "")
    plain = plain.replace(" ?", " ").replace("\\ ", " ").replace("\\.", ".").replace("\\-", "-")
    parts = [p.strip() for p in plain.split("|")]
    if parts and all(re.fullmatch(r"[\w][\w .-]*", p) for p in parts):
        return parts
    return None


def _listed(names: list[str], most: int = 3) -> str:
    shown = names[:most]
    more = len(names) - len(shown)
    if more:
        return ", ".join(shown) + f" and {more} more"
    return shown[0] if len(shown) == 1 else ", ".join(shown[:-1]) + " or " + shown[-1]


def text_words(pattern: str) -> str:
    """What a text pattern catches, in words: "text that looks like a card number", "the word “invoice”"."""
    words = _words(pattern)
    if words is not None:
        quoted = [f"“{w}”" for w in words]
        return ("the word " if "\\b" in pattern and len(words) == 1 else "text containing ") + _listed(quoted, 4)
    try:
        compiled = re.compile(pattern, re.IGNORECASE | re.MULTILINE)
    except re.error:
        return "text matching a pattern that is not valid"
    if any(compiled.search(p) for p in PROSE):
        return "text matching a broad pattern (it catches ordinary sentences too)"
    kinds = [kind for kind, samples in KINDS if any(compiled.search(s) for s in samples)]
    if len(kinds) == 1 or len(kinds) == 2:
        whole = pattern.startswith(("\\A", "^")) and pattern.endswith(("\\Z", "$"))
        return ("text that is only " if whole else "text that looks like ") + " or ".join(kinds)
    return "text of a particular shape (see the pattern)"


def app_words(pattern: str) -> str:
    words = _words(pattern)
    if words is None:
        return "apps matching a pattern"
    return _listed([KNOWN_APPS.get(w.lower(), w) for w in words])


def window_words(pattern: str) -> str:
    words = _words(pattern)
    if words is None:
        return "windows with titles matching a pattern"
    return "windows whose title has " + _listed([f"“{w}”" for w in words])


def describe(rule: CaptureRule) -> str:
    """The rule in one plain sentence: "Skip everything copied from KeePassXC", "Hide text that looks like a
    card number", "Tag text containing “invoice” as finance"."""
    what = text_words(rule.content) if rule.content else "everything"
    where = [f"from {app_words(rule.app)}"] if rule.app else []
    if rule.window:
        where.append(f"in {window_words(rule.window)}")
    if not (rule.content or rule.app or rule.window):
        return "Nothing yet: give a text, app or window pattern"
    sentence = f"{ACTION_WORDS.get(rule.action, rule.action)} {what}"
    if where:
        sentence += " copied " + " ".join(where)
    if rule.action == "tag":
        sentence += f" as “{rule.tag}”"
    return sentence


def patterns_tip(rule: CaptureRule) -> str:
    """The raw patterns, for the tooltip."""
    return "\n".join(f"{label}: {p}" for label, p in (("Text", rule.content), ("App", rule.app),
                                                      ("Window", rule.window)) if p) or "no pattern yet"


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
        self.table.itemChanged.connect(self._changed)
        self.advanced = QCheckBox("Show the pa&tterns (regular expressions)")
        self.advanced.toggled.connect(self._show_patterns)
        self._show_patterns(False)
        add = QPushButton("Add &rule")
        add.clicked.connect(self._add_new)
        self.remove = QPushButton("Remo&ve rule")
        self.remove.clicked.connect(self._remove_selected)
        buttons = QHBoxLayout()
        buttons.addWidget(add)
        buttons.addWidget(self.remove)
        buttons.addStretch(1)
        buttons.addWidget(self.advanced)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.table)
        layout.addLayout(buttons)

    def _show_patterns(self, on: bool) -> None:
        for col in PATTERNS:
            self.table.setColumnHidden(col, not on)

    def _add_new(self) -> None:
        """A new rule is written as patterns: they show, and the first one is ready to type into."""
        self.add_rule(CaptureRule("my rule", content=""))
        self.advanced.setChecked(True)
        self.table.editItem(self._cell(self.table.rowCount() - 1, PATTERNS[0]))

    def _rule_at(self, row: int) -> CaptureRule | str:
        """The row as a rule (for its words), or what is wrong with it while it is not one."""
        values: dict[str, str] = {}
        for col, name in enumerate(FIELDS, start=1):
            item = self.table.item(row, col)
            if name is not None:
                values[name] = item.text().strip() if item is not None else ""
        combo = self.table.cellWidget(row, 2)
        action = combo.currentText() if isinstance(combo, QComboBox) else "ignore"
        try:
            return CaptureRule(values["name"], action, values["content"], values["app"], values["window"],
                               values["tag"])
        except (TypeError, ValueError) as exc:
            return str(exc)

    def _changed(self, item: QTableWidgetItem) -> None:
        if item.column() != WORDS:
            self._say(item.row())

    def _say(self, row: int) -> None:
        """Fill the row's plain words (and their tooltip) from its patterns."""
        words = self.table.item(row, WORDS)
        if words is None:
            return
        rule = self._rule_at(row)
        text = describe(rule) if isinstance(rule, CaptureRule) else "Not a rule yet: " + rule.split(": ", 1)[-1]
        tip = patterns_tip(rule) if isinstance(rule, CaptureRule) else rule
        self.table.blockSignals(True)
        words.setText(text)
        words.setToolTip(tip)
        self.table.blockSignals(False)

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
        action.currentTextChanged.connect(lambda _t, it=on: self._say(it.row()))
        self.table.setCellWidget(row, 2, action)
        self.table.blockSignals(True)
        words = QTableWidgetItem()
        words.setFlags(Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable)  # said, not edited
        self.table.setItem(row, WORDS, words)
        for col, name in enumerate(FIELDS, start=1):
            if name is None:
                continue
            item = QTableWidgetItem(str(getattr(rule, name)))
            if built_in:
                item.setFlags(Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable)
                item.setToolTip("a built-in rule: switch it off with its checkbox")
            self.table.setItem(row, col, item)
        self.table.blockSignals(False)
        self._say(row)

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
