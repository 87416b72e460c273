"""Headlines grounded in the text: invented numbers, names and words fall back to the first line."""

from __future__ import annotations

import re

from hypothesis import assume, given
from hypothesis import strategies as st

from desktop_memory.core.headline import DANGLING, cut, first_line, grounded, headline

RAPID = "Rapid copy number 200: the clipboard watcher must keep up with bursts of copies"
ROTATE = ("To rotate the staging database password run: make rotate-db ENV=staging\n"
          "Ask Priya before touching production.")
NOTES = [
    "Decision: the beta ships on March 3rd; Priya owns the release notes and the changelog.",
    "Meeting with Joana Gonzalez at 9:30 on Monday about the Q3 budget (1,200 EUR left).",
    "The lighthouse at Cape Point was built in 1860 and moved in 1919 after ships kept running aground.",
    "def retry(fn, attempts=3):\n    for n in range(attempts):\n        try: return fn()\n        except OSError: pass",
    "https://example.org/docs/v2/install - install guide for version 2.4.1",
]


def test_the_titles_the_issue_saw_are_refused() -> None:
    assert not grounded("Rapid copy number 201", RAPID)
    assert headline(RAPID, "Rapid copy number 201") == RAPID  # the first line, whole (it fits)
    assert not grounded("The production database password rotation is a 10", ROTATE)
    assert headline(ROTATE, "The production database password rotation is a 10").startswith("To rotate the staging")


def test_grounded_titles_and_summaries_are_kept() -> None:
    assert headline(RAPID, "Rapid copy number 200") == "Rapid copy number 200"
    assert headline(NOTES[0], "Beta ships March 3rd") == "Beta ships March 3rd"
    assert headline(NOTES[1], "Budget meeting with Joana at 9:30") == "Budget meeting with Joana at 9:30"
    assert headline(NOTES[1], "Meeting with Joana at 10:30") == first_line(NOTES[1])  # a changed time
    assert headline(NOTES[1], "Meeting with Joanna Gonzales") == first_line(NOTES[1])  # a changed name
    assert headline(NOTES[2], "Lighthouse history", "The lighthouse was built in 1860") == \
        "The lighthouse was built in 1860"  # an invented title word ("history"), a grounded summary
    assert headline(NOTES[2], summary="The lighthouse was built in 1861") == first_line(NOTES[2])
    assert headline(NOTES[4], "Install guide version 2.4.1") == "Install guide version 2.4.1"
    assert headline(NOTES[4], "Install guide version 2.4.2") == first_line(NOTES[4])
    assert headline("", "anything") == "(empty)" and headline("   \n  ") == "(empty)"


def test_a_title_cut_off_mid_phrase_is_not_a_headline() -> None:
    retro = "Retro notes: the release slipped a week because the installer signing certificate expired."
    assert not grounded("Retro notes: the release slipped a week because of", retro + " Because of it")
    assert not grounded("Retro notes: the release slipped a week because", retro)
    assert grounded("Release slipped a week", retro)
    assert grounded("Meeting with Joana at 9:30", NOTES[1])  # a number after the small word: complete
    assert headline(retro, "the release slipped because the") == retro


def test_the_fallback_line_is_cut_at_a_word_boundary() -> None:
    line = first_line(NOTES[2], 40)
    assert line.endswith("…") and len(line) <= 40
    assert NOTES[2].startswith(line[:-1]) and NOTES[2][len(line) - 1] == " "  # no word cut in half
    assert cut("a" * 200, 10) == "a" * 9 + "…"  # one long word: cut where it must


_words = st.sampled_from(sorted({w for n in NOTES for w in re.findall(r"[A-Za-z]+", n)}))


@given(st.sampled_from(NOTES), st.data())
def test_words_taken_from_the_text_are_grounded(note: str, data) -> None:
    words = re.findall(r"[^\W\d_]+|\d+(?:[.,:/-]\d+)*", note)
    picked = data.draw(st.lists(st.sampled_from(words), min_size=1, max_size=8))
    assume(picked[-1].lower() not in DANGLING)
    assert grounded(" ".join(picked), note)


@given(st.sampled_from([n for n in NOTES if re.search(r"\d", n)]), st.data(), st.integers(1, 9))
def test_a_changed_number_is_refused(note: str, data, delta: int) -> None:
    numbers = re.findall(r"\d+", note)
    n = data.draw(st.sampled_from(numbers))
    changed = str(int(n) + delta)
    assume(changed not in re.findall(r"\d+", note))
    words = re.findall(r"[^\W\d_]+", note)
    title = " ".join([*data.draw(st.lists(st.sampled_from(words), min_size=1, max_size=4)), changed])
    assert not grounded(title, note)
    assert headline(note, title) == first_line(note)


@given(st.sampled_from(NOTES), st.sampled_from(["Lisbon", "Fernando", "kubernetes", "invoice", "Tuesday"]))
def test_a_word_the_text_does_not_have_is_refused(note: str, invented: str) -> None:
    assume(invented.lower() not in note.lower())
    title = " ".join(re.findall(r"[A-Za-z]+", note)[:3] + [invented])
    assert not grounded(title, note)


@given(st.text(max_size=300), st.text(max_size=80), st.text(max_size=200), st.integers(2, 200))
def test_any_input_gives_a_short_line_and_never_raises(content: str, title: str, summary: str, width: int) -> None:
    out = headline(content, title, summary, width)
    assert out and "\n" not in out and len(out) <= max(width, len("(empty)"))
    if out not in ("(empty)",) and not grounded(title, content) and not grounded(summary, content):
        assert out == first_line(content, width)


def test_the_search_window_shows_a_grounded_headline() -> None:
    from desktop_memory.core.models import Memory
    from desktop_memory.qt import display

    invented = Memory("m1", RAPID, title="Rapid copy number 201", summary="Copy number 201 of the watcher test")
    assert display.title_of(invented) == first_line(RAPID) and display.summary_of(invented) == ""
    good = Memory("m2", NOTES[0], title="Beta ships March 3rd", summary="The beta ships on March 3rd.")
    assert display.title_of(good) == "Beta ships March 3rd" and display.summary_of(good) == good.summary


def test_enrichment_stores_only_grounded_titles() -> None:
    from desktop_memory.core.enrich import combine

    assert combine(RAPID, {"title": "Rapid copy number 201"}, model_id="m").title == ""
    assert combine(ROTATE, {"title": "Staging database password rotation"}, model_id="m").title == ""
    assert combine(RAPID, {"title": "Rapid copy number 200"}, model_id="m").title == "Rapid copy number 200"
