"""Good and weak matches (issue 33 item 6), on the pure ranking steps (core/ranking.py)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from desktop_memory.core.models import Hit, Memory
from desktop_memory.core.query import terms
from desktop_memory.core.ranking import RankingParams, fuse, ideal_bm25, mark_weak, rarity_weights

WORDS = ["penicillin", "allergy", "must", "car", "parking", "moved", "never", "give", "doctor", "ticket"]


def _hit(i: int, text: str, cosine: float) -> Hit:
    return Hit(Memory(id=f"m{i}", content=text, created_at=1e9 + i), 1.0 / (i + 1), {"semantic_cosine": cosine})


@given(st.lists(st.tuples(st.lists(st.sampled_from(WORDS), max_size=6), st.floats(-0.2, 1.0)), max_size=20),
       st.lists(st.sampled_from(WORDS), min_size=1, max_size=4),
       st.dictionaries(st.sampled_from(WORDS), st.integers(0, 50)))
@settings(max_examples=200)
def test_no_good_hit_after_a_weak_one_and_each_flag_follows_its_evidence(found, query_words, frequencies):
    params = RankingParams()
    query = terms(" ".join(query_words))
    hits = [_hit(i, " ".join(words), cos) for i, (words, cos) in enumerate(found)]
    ranked = mark_weak(hits, query, rarity_weights(query, frequencies, 60), params)
    assert sorted(h.memory.id for h in ranked) == sorted(h.memory.id for h in hits)  # nothing dropped
    flags = [h.weak for h in ranked]
    assert flags == sorted(flags)  # every good hit before every weak one
    order = {h.memory.id: i for i, h in enumerate(hits)}
    for part in (False, True):  # the order within each part is the ranking's
        ids = [order[h.memory.id] for h in ranked if h.weak is part]
        assert ids == sorted(ids)
    for h in ranked:
        close = h.explain["semantic_cosine"] >= params.weak_cosine
        assert h.weak == (not close and h.explain["lexical"] < params.weak_coverage)
        if set(query) <= set(h.memory.content.split()):  # holds every word of the query: never weak
            assert not h.weak


def test_a_word_in_most_memories_weighs_less_than_a_rare_one():
    weights = rarity_weights(["must", "penicillin"], {"must": 900, "penicillin": 2}, 1000)
    assert weights["penicillin"] > 5 * weights["must"]
    hits = mark_weak([_hit(0, "the car must be moved", 0.03)], ["must", "penicillin"], weights)
    assert hits[0].weak  # one common word of two, far in meaning


def test_a_typed_prefix_weighs_as_the_other_words():
    weights = rarity_weights(["allergy", "penic*"], {"allergy": 3}, 100)
    assert weights["penic*"] == weights["allergy"]
    assert not mark_weak([_hit(0, "penicillin", 0.1)], ["allergy", "penic*"], weights)[0].weak


def test_a_lone_keyword_of_a_longer_question_is_not_read_as_a_perfect_keyword_match():
    # the question's other words are in no memory: the one keyword match holds a third of what it asks
    frequencies = {"medication": 0, "must": 1, "prescribed": 0}
    rows = {"parking": Memory("parking", "the car must be moved", created_at=1e9),
            "allergy": Memory("allergy", "allergic to penicillin", created_at=1e9)}
    keyword = {"parking": 1.32}
    semantic = {"parking": 0.03, "allergy": 0.48}
    hits = fuse(keyword, semantic, rows, now=1e9, ideal=ideal_bm25(frequencies, 10))
    assert [h.memory.id for h in hits] == ["allergy", "parking"]
    assert hits[1].explain["keyword"] < 0.3
    old = fuse(keyword, semantic, rows, now=1e9, params=RankingParams(keyword_ideal=0.0),
               ideal=ideal_bm25(frequencies, 10))
    assert old[0].explain["keyword"] == 1.0  # read against the best keyword match alone, it was "perfect"


def test_a_keyword_match_holding_the_whole_question_keeps_its_full_weight():
    frequencies = {"penicillin": 1}
    ideal = ideal_bm25(frequencies, 10)
    rows = {"a": Memory("a", "penicillin", created_at=1e9)}
    hits = fuse({"a": ideal}, {"a": 0.5}, rows, now=1e9, ideal=ideal)
    assert hits[0].explain["keyword"] == 1.0


def test_weak_crosses_the_engine_socket():
    from desktop_memory.ipc import codec

    hits = [_hit(0, "penicillin", 0.6), _hit(1, "the car must be moved", 0.03)]
    hits[1].weak = True
    data = codec.to_json(hits, list[Hit])
    assert [h["weak"] for h in data] == [False, True]
    assert [h.weak for h in codec.from_json(data, list[Hit])] == [False, True]
    del data[1]["weak"]  # from a host that does not know it yet: a good match, as before
    assert codec.from_json(data, list[Hit], strict=False)[1].weak is False


def test_a_turn_lifted_by_a_good_match_next_to_it_shares_its_standing():
    good, reply, stray = _hit(0, "penicillin allergy", 0.6), _hit(1, "Yes, since I was a kid", 0.05), _hit(2, "ok", 0.0)
    reply.explain["neighbour_of"] = "m0"
    lone = _hit(3, "zzz", 0.1)
    stray.explain["neighbour_of"] = "m3"  # lifted by a weak hit: weak too
    ranked = mark_weak([good, lone, reply, stray], ["penicillin"], {"penicillin": 2.0})
    assert [(h.memory.id, h.weak) for h in ranked] == [("m0", False), ("m1", False), ("m3", True), ("m2", True)]


@given(st.dictionaries(st.text(min_size=1, max_size=8), st.integers(0, 10_000), min_size=1, max_size=6),
       st.integers(0, 10_000))
def test_word_counts_past_the_estimated_row_count_never_break_a_search(frequencies, total):
    """The store's row count is an estimate, refreshed after 1 % more rows: in a small store just written to, a
    word's document count can exceed it (seen: 'math domain error' on every search after six copies)."""
    assert ideal_bm25(frequencies, total) > 0
    weights = rarity_weights(list(frequencies), frequencies, total)
    assert all(w > 0 for w in weights.values())
