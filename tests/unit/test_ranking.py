import time

from hypothesis import given, settings
from hypothesis import strategies as st

from desktop_memory.core.models import Hit, Memory
from desktop_memory.core.ranking import RankingParams, collapse_near_duplicates, fuse

NOW = time.time()


def mem(i: str, content: str = "x", **kw) -> Memory:
    kw.setdefault("created_at", NOW - 86400)
    return Memory(id=i, content=content, **kw)


def test_both_channels_beat_one():
    """`a` is second in each channel alone (b wins on words, c on meaning) and first when both count."""
    memories = {i: mem(i) for i in "abcd"}
    keyword = {"b": 6.0, "a": 5.0}
    semantic = {"c": 0.9, "a": 0.8, "b": 0.1, "d": 0.1}
    assert [h.memory.id for h in fuse(keyword, {}, memories, now=NOW)][:2] == ["b", "a"]
    assert [h.memory.id for h in fuse({}, semantic, memories, now=NOW)][:2] == ["c", "a"]
    hits = fuse(keyword, semantic, memories, now=NOW)
    assert [h.memory.id for h in hits][:1] == ["a"] and {h.memory.id for h in hits[1:3]} == {"b", "c"}
    best = hits[0].explain
    assert best["keyword"] > 0 and best["semantic"] > 0  # both channels gave a its score
    assert best["final"] > max(h.score for h in hits[1:])


def test_personal_signals_are_mild_tie_breakers():
    memories = {"a": mem("a"), "b": mem("b", pinned=True, importance=1.0)}
    hits = fuse({"a": 5.0, "b": 4.0}, {"a": 0.9, "b": 0.6}, memories, now=NOW)
    assert hits[0].memory.id == "a"  # a clearly better match is not overturned by a pin
    tie = fuse({"a": 5.0, "b": 5.0}, {"a": 0.9, "b": 0.9}, memories, now=NOW)
    assert tie[0].memory.id == "b"


def test_recency_breaks_ties():
    memories = {"old": mem("old", created_at=NOW - 400 * 86400), "new": mem("new", created_at=NOW - 3600)}
    hits = fuse({"old": 3.0, "new": 3.0}, {"old": 0.5, "new": 0.5}, memories, now=NOW)
    assert [h.memory.id for h in hits] == ["new", "old"]


def test_near_duplicate_hits_collapse_into_the_better_one():
    hits = [Hit(mem("a", "the release ships on march 3"), 1.0), Hit(mem("b", "The release ships on March 3!"), 0.9),
            Hit(mem("c", "something else entirely"), 0.5)]
    kept = collapse_near_duplicates(hits, RankingParams().collapse_jaccard)
    assert [h.memory.id for h in kept] == ["a", "c"]
    assert kept[0].explain["collapsed"] == ["b"]
    assert [m.id for m in kept[0].similar] == ["b"]  # attached, not dropped


def test_a_family_collapses_to_its_best_member_with_every_other_member_attached():
    from dataclasses import replace

    from desktop_memory.core.ranking import collapse_families, first_slots

    fam = [replace(mem(i, f"invoice {i}"), family_id="f1") for i in ("f1", "f2", "f3")]
    hits = [Hit(fam[1], 1.0), Hit(mem("x", "other"), 0.9), Hit(fam[0], 0.8)]
    assert [h.memory.id for h in first_slots(hits + [Hit(mem("y", "more"), 0.1)], 2)] == ["f2", "x", "f1"]
    kept = collapse_families(hits, {"f1": fam})
    assert [h.memory.id for h in kept] == ["f2", "x"]
    assert [m.id for m in kept[0].similar] == ["f1", "f3"]  # the matching member first, then the rest


def test_neighbours_of_a_strong_hit_share_part_of_its_score():
    from desktop_memory.core.ranking import spread_to_neighbours

    hits = [Hit(mem("q", "what did you paint?"), 1.0, {}), Hit(mem("x", "unrelated"), 0.5, {})]
    extra = {"a": mem("a", "a sunset over the lake")}
    ranked = spread_to_neighbours(hits, {"q": ["a"]}, extra, 0.75)
    assert [h.memory.id for h in ranked] == ["q", "a", "x"]
    assert ranked[1].score == 0.75 and ranked[1].explain["neighbour_of"] == "q"
    weak = spread_to_neighbours([Hit(mem("q"), 0.4, {}), Hit(mem("x"), 0.5, {})], {"q": ["x"]}, {}, 0.75)
    assert [h.score for h in weak] == [0.5, 0.4]  # never lowers a score


def test_questions_about_time_are_recognised():
    from desktop_memory.core.ranking import is_time_question

    for q in ("When did Caroline go to the support group?", "when is the dentist", "In what year did Mel start?",
              "Which month was the trip?", "How long ago did she move?", "what date is the release"):
        assert is_time_question(q), q
    for q in ("What did Melanie paint?", "whenever notes", "Where is the lighthouse?", "", "time tracking app"):
        assert not is_time_question(q), q


def test_a_memory_mentions_time_in_its_words_or_its_enrichment():
    from desktop_memory.core.ranking import mentions_time

    for text in ("I went to a support group yesterday.", "We moved there 3 years ago", "See you next week!",
                 "Flight on 14/07 at 7:40", "It was back in 2019", "On Friday we hiked", "trip in August",
                 "the 5th of June"):
        assert mentions_time(mem("a", text)), text
    for text in ("I love painting sunsets.", "The lighthouse is old", "may I ask something", "", "agonizing"):
        assert not mentions_time(mem("a", text)), text
    dated = mem("a", "the launch party", entities=[{"text": "the day after launch", "type": "datetime"}])
    assert mentions_time(dated)
    assert not mentions_time(mem("a", "x", entities=[{"text": "Ana", "type": "person"}, "junk", None]))


def test_a_time_question_lifts_the_hits_that_say_when():
    from desktop_memory.core.ranking import lift_time_mentions

    plain, dated = mem("p", "Caroline: the support group was so inspiring"), mem("d", "Caroline: I went yesterday")
    hits = [Hit(plain, 1.0, {}), Hit(dated, 0.9, {})]
    lifted = lift_time_mentions(hits, 0.2)
    assert [h.memory.id for h in lifted] == ["d", "p"] and lifted[0].explain["time_mention"] is True
    assert abs(lifted[0].score - 1.08) < 1e-9 and lifted[1].score == 1.0
    assert [h.memory.id for h in lift_time_mentions([Hit(plain, 1.0, {}), Hit(dated, 0.5, {})], 0.2)] == ["p", "d"]
    assert lift_time_mentions([], 0.2) == []


def test_a_time_question_does_not_lift_a_dated_memory_about_something_else():
    """Only a dated hit holding some of the question's words is lifted (the turn that holds the event); a
    note that dates something else stays below the undated note the question is about."""
    from desktop_memory.core.query import terms
    from desktop_memory.core.ranking import lift_time_mentions

    question = terms("when was the car at the mechanic", prefix_last=True)
    about = mem("a", "took the car to the mechanic, new brake pads")
    other = mem("o", "Call with Nina on September 9th about the quarterly plan")
    on_topic = mem("t", "the car was at the mechanic on Tuesday")
    lifted = lift_time_mentions([Hit(about, 1.0, {}), Hit(other, 0.9, {}), Hit(on_topic, 0.8, {})], 0.4, question)
    assert [h.memory.id for h in lifted] == ["t", "a", "o"]
    assert "time_mention" not in lifted[2].explain
    # without the question's words (a caller that has none): every dated hit is lifted
    assert [h.memory.id for h in lift_time_mentions([Hit(about, 1.0, {}), Hit(other, 0.9, {})], 0.4)] == ["o", "a"]


def _collapse_reference(hits, threshold):
    """Every hit against every kept one, best first (the plain definition)."""
    kept = []
    for hit in hits:
        words = set(hit.memory.content.lower().split())
        if not any((u := len(words | w)) and len(words & w) / u >= threshold for _, w in kept):
            kept.append((hit, words))
    return [h.memory.id for h, _ in kept]


@settings(max_examples=200, deadline=None)
@given(st.lists(st.lists(st.sampled_from(["ab", "cd", "ef", "gh", "ij", "kl"]), max_size=6), max_size=25),
       st.sampled_from([0.0, 0.3, 0.5, 0.9, 1.0, 1.01]))
def test_near_duplicate_collapse_compares_only_compatible_sizes_with_the_same_result(texts, threshold):
    hits = [Hit(mem(str(i), " ".join(t)), 1.0 - i / 100) for i, t in enumerate(texts)]
    expected = _collapse_reference(hits, threshold)
    assert [h.memory.id for h in collapse_near_duplicates(hits, threshold)] == expected


def test_memories_two_steps_away_share_a_smaller_part():
    from desktop_memory.core.ranking import spread_to_neighbours, two_steps

    near = {"q": ["a", "b"]}
    of_near = {"a": ["x", "q"], "b": ["q", "c"]}
    assert two_steps(near, of_near) == {"q": ["x", "c"]}
    assert two_steps({"q": ["a"]}, {"a": ["q", "a", "b"]}) == {"q": ["b"]}  # never itself or a near one
    assert two_steps({}, of_near) == {}
    memories = {i: mem(i) for i in "qabxcz"}
    hits = [Hit(memories["q"], 1.0, {}), Hit(memories["z"], 0.5, {})]
    extra = {i: memories[i] for i in "abxc"}
    out = spread_to_neighbours(hits, near, extra, 0.75, far=two_steps(near, of_near), far_weight=0.6)
    scores = {h.memory.id: round(h.score, 6) for h in out}
    assert scores == {"q": 1.0, "a": 0.75, "b": 0.75, "x": 0.6, "c": 0.6, "z": 0.5}
    assert [h.memory.id for h in out][:3] == ["q", "a", "b"] or [h.memory.id for h in out][:3] == ["q", "b", "a"]
    plain = spread_to_neighbours([Hit(memories["q"], 1.0, {})], near, extra, 0.75)
    assert {h.memory.id for h in plain} == {"q", "a", "b"}  # no far ones unless asked


def test_the_word_caches_never_keep_a_long_copy_alive():
    """A search over big copies must not pin them in memory: only texts of a usual size are cached."""
    from desktop_memory.core import ranking

    ranking._words_cached.cache_clear()
    ranking._says_when_cached.cache_clear()
    big = "the lighthouse keeper wrote on 3 March " * 2_000  # ~80 KB
    assert "lighthouse" in ranking._words(big) and ranking._says_when(big)
    assert ranking._words_cached.cache_info().currsize == 0 and ranking._says_when_cached.cache_info().currsize == 0
    small = "the lighthouse keeper wrote on 3 March"
    assert ranking._words(small) == ranking._words(small) and ranking._says_when(small)
    assert ranking._words_cached.cache_info().hits == 1


def test_the_word_cache_holds_a_few_megabytes_at_most():
    """Searches over thousands of distinct notes must not grow the engine by the words of each (issue 17's
    paired runs: +4-6 MB of engine RSS at 10k came from 2,048 cached word sets)."""
    import random
    import tracemalloc

    from desktop_memory.core import ranking

    rng = random.Random(7)
    vocab = [f"w{n}ord{n % 97}" for n in range(4000)]
    texts = [" ".join(rng.choices(vocab, k=35)) for _ in range(3000)]  # ~300-character notes, all distinct
    ranking._words_cached.cache_clear()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        for t in texts:
            ranking._words(t)
        held = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
        ranking._words_cached.cache_clear()
    assert held < 3_000_000, f"the word cache holds {held / 1e6:.1f} MB"


def test_a_short_turn_is_read_with_the_turn_before_it():
    """A reply that says little on its own ("Yes, last Saturday!") takes part of the cosine of the question
    it answers, so it outranks a note that is vaguely close by meaning; a session's first memory keeps its own."""
    from desktop_memory.core.ranking import in_context

    semantic = {"reply": 0.30, "vague": 0.40, "first": 0.50}
    previous = {"reply": 0.90}  # the turn before the reply matches the query well; "first" has none
    mixed = in_context(semantic, previous, 0.5)
    assert mixed["reply"] == (0.30 + 0.5 * 0.90) / 1.5 and mixed["first"] == 0.50 and mixed["vague"] == 0.40
    assert in_context(semantic, previous, 0.0) == semantic
    memories = {i: mem(i) for i in semantic}
    ranked = [h.memory.id for h in fuse({}, mixed, memories, now=NOW)]
    assert ranked.index("reply") < ranked.index("vague")
    assert [h.memory.id for h in fuse({}, semantic, memories, now=NOW)][-1] == "reply"  # without the context


@given(own=st.dictionaries(st.sampled_from("abcdefgh"), st.floats(-1, 1), min_size=1),
       before=st.dictionaries(st.sampled_from("abcdefgh"), st.floats(-1, 1)),
       weight=st.floats(0, 2))
def test_the_turn_before_never_takes_away_from_a_memory_s_own_match(own: dict[str, float],
                                                                     before: dict[str, float],
                                                                     weight: float) -> None:
    """Two unrelated notes copied one after the other share a session: the first must not drag the second's
    match down (bench/speed.py's fresh notes fell out of the top 10 of their own paraphrase, 25 -> 18 of 30)."""
    from desktop_memory.core.ranking import in_context

    mixed = in_context(own, before, weight)
    assert mixed.keys() == own.keys()
    assert all(mixed[m] >= own[m] for m in own)
    assert all(mixed[m] == own[m] for m in own if m not in before or before[m] < own[m])


def test_word_stems_meet_across_inflections():
    """The light stemmer maps a word's usual inflections to one stem, so "races" meets "race"."""
    from desktop_memory.core.ranking import stem

    assert stem("races") == stem("race") == stem("raced") == stem("racing")
    assert stem("painted") == stem("paints") == stem("paint")
    assert stem("hobbies") == stem("hobby")
    assert stem("go") == "go" and stem("is") == "is" and stem("") == ""


def coverage(query_terms, text):
    """The share of the query's distinct terms a text holds, as `lift_coverage` reads it."""
    from desktop_memory.core.ranking import _distinct, _held

    return _held(_distinct(query_terms), text)


def test_coverage_counts_distinct_query_terms_not_repeats():
    """A memory holding more of the query's distinct words covers more of it than one repeating a word."""
    terms = ["caroline", "charity", "race"]
    assert coverage(terms, "Caroline: I ran a charity race last week!") == 1.0
    assert coverage(terms, "race race race, races everywhere") == 1 / 3
    assert coverage(terms, "nothing in common") == 0.0
    assert coverage([], "anything") == 0.0
    assert coverage(["supp*"], "the support group") == 1.0  # a word still being typed matches as a prefix
    assert coverage(["CHARITY", "races"], "charities raced") == 1.0


def test_hits_covering_more_of_the_query_move_up():
    """The order of the top few: a hit holding every query word passes one that matched one rare word better."""
    from desktop_memory.core.ranking import lift_coverage

    one = Hit(mem("one", "Melanie: the LGBTQ parade was loud"), 1.0, {})
    every = Hit(mem("every", "Caroline: the LGBTQ support group helped me"), 0.8, {})
    terms = ["caroline", "lgbtq", "support", "group"]
    lifted = lift_coverage([one, every], terms, 1.0)
    assert [h.memory.id for h in lifted] == ["every", "one"]
    assert abs(lifted[0].score - 1.6) < 1e-9 and abs(lifted[1].score - 1.25) < 1e-9
    assert lifted[0].explain["coverage"] == 1.0
    assert [h.memory.id for h in lift_coverage([Hit(one.memory, 1.0, {}), Hit(every.memory, 0.8, {})], terms, 0.0)] \
        == ["one", "every"]
    assert lift_coverage([], terms, 1.0) == []


@settings(max_examples=100, deadline=None)
@given(st.lists(st.text(max_size=12), max_size=6), st.text(max_size=300))
def test_coverage_is_a_share_for_any_text(terms, text):
    assert 0.0 <= coverage(terms, text) <= 1.0


def _coverage_by_definition(query_terms, text):
    """The share of distinct query terms held, every term checked against every word (no shortcuts)."""
    from desktop_memory.core.ranking import _WORD, _forms

    wanted = {t.lower() for t in query_terms if t.strip("*")}
    words = set(_WORD.findall(text.lower()))
    held = [any(w.startswith(t.rstrip("*")) for w in words) if t.endswith("*") else bool(words & _forms(t))
            for t in wanted]
    return sum(held) / len(wanted) if wanted else 0.0


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(["supp*", "su*", "group", "Ca*", "İs*", "straße", "go", "x*", "*", "ran"])
                | st.text(max_size=8), max_size=6),
       st.text(alphabet=st.sampled_from(list("supgroİiısßtraeCc x*.-\n")), max_size=80))
def test_coverage_shortcuts_change_no_share(terms, text):
    """The per-query preparation and the substring check before a prefix scan give the plain definition's share."""
    assert coverage(terms, text) == _coverage_by_definition(terms, text)
