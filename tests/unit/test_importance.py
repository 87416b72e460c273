"""Deterministic importance signals and the blend with a model's score."""

from desktop_memory.core.extract import extract
from desktop_memory.core.importance import PINNED_FLOOR, blend, signals


def score(text: str, **kw) -> float:
    return signals(text, extract(text), **kw).score


def test_decisions_and_todos_rank_above_chatter():
    chatter = score("haha yes that was a fun evening, see you around")
    decision = score("Decision: we ship the beta on March 3rd; Priya owns the release notes.")
    todo = score("TODO: remember to renew the passport before the trip")
    assert decision > chatter and todo > chatter


def test_pinned_and_repeats_raise_importance():
    text = "the wifi password for the cabin is on the fridge"
    assert score(text, pinned=True) >= PINNED_FLOOR
    assert score(text, repeats=3) > score(text)


def test_scores_stay_in_range_for_extremes():
    for text in ["", "x", "?" * 50_000, "TODO decided deadline must " * 1000]:
        imp = signals(text)
        assert 0.0 <= imp.score <= 1.0


def test_signals_explain_the_score():
    imp = signals("Decision: ship it. TODO: write the notes?", extract("Decision: ship it."))
    assert {"decision", "todo", "question"} <= set(imp.signals)


def test_blend_is_mostly_deterministic():
    det = signals("Decision: we ship on Monday")
    assert blend(det, None) == det.score
    assert abs(blend(det, 1.0) - det.score) <= 0.25
    assert blend(det, float("nan")) == det.score
    assert blend(det, 0.0, pinned=True) >= PINNED_FLOOR
