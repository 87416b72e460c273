"""Partial words find memories while typing: the last word of a query also matches as a prefix (CLI, real engine)."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.integration
CLI = [sys.executable, "-m", "desktop_memory"]

NOTES = [
    "Built in 1870, the lighthouse at Point Reyes guided ships through the fog for a century.",
    "Meeting with Ana Gonzalez on Thursday: budget review for the Q3 marketing plan.",
    "def parse_config(path):\n    with open(path) as f:\n        return json.load(f)",
    "https://docs.python.org/3/library/sqlite3.html",
    "Remember to buy oat milk, eggs and coffee beans on the way home.",
    "The quarterly report is due on Friday; send the draft to the finance team first.",
    "Flight to Lisbon departs 07:40 from terminal 2, seat 14C.",
    "Dentist appointment moved to the 14th at 3 pm.",
    "Standup notes: the release is blocked on the signing certificate.",
    "Recipe: roast the peppers, blend with garlic, olive oil and walnuts.",
    "Book recommendation from Sam: The Left Hand of Darkness.",
    "Password manager export finished; the old vault was deleted.",
]


def run(data: Path, *args: str, stdin: str | None = None) -> str:
    proc = subprocess.run([*CLI, "--data-dir", str(data), *args], input=stdin, capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


@pytest.fixture(scope="module")
def data(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("prefix")
    src = folder / "notes.jsonl"
    src.write_text("".join(json.dumps({"content": n, "source": "manual"}) + "\n" for n in NOTES))
    run(folder / "data", "import", str(src))
    return folder / "data"


@pytest.mark.parametrize(("typed", "wanted"), [
    ("lighthou", "lighthouse"), ("lighthous", "lighthouse"), ("Gonz", "Gonzalez"), ("ana gonza", "Gonzalez"),
    ("walnu", "walnuts"), ("Lisb", "Lisbon"),
])
def test_a_partly_typed_last_word_finds_the_memory_first(data, typed, wanted):
    hits = json.loads(run(data, "search", typed, "--json"))
    assert hits and wanted in hits[0]["content"], [h["content"][:40] for h in hits]


def test_every_state_of_a_query_while_typing_finds_something(data):
    word = "lighthouse"
    lines = "".join(word[:n] + "\n" for n in range(3, len(word) + 1))
    out = run(data, "search", "-", "--json", stdin=lines).splitlines()
    assert len(out) == len(word) - 2
    for line in out:
        hits = json.loads(line)
        assert hits and "lighthouse" in hits[0]["content"]
