"""Passages of long memories (core/passages.py): the split, the choice of the best one, context built from them."""

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from desktop_memory.core.context import build_context
from desktop_memory.core.models import Memory, Passage
from desktop_memory.core.passages import LONG_CHARS, PASSAGE_TOKENS, cost, order, split, trim

FILLER = ("The quarterly planning meeting covered hiring, the office move and the budget for the new laptops. "
          "Everyone agreed the timeline was tight but workable. ")
ANSWER = "The spare key to the bike shed is taped under the third drawer of the green cabinet."


def _check(text: str, limit: int = PASSAGE_TOKENS) -> list[Passage]:
    ps = split(text, limit)
    for a, b in zip(ps, ps[1:], strict=False):
        assert a.end <= b.start  # in order, no overlap
    for p in ps:
        piece = p.of_text(text)
        assert piece == piece.strip() and piece  # trimmed, never empty
        assert cost(piece) <= limit or len(piece) == 1
    covered = "".join(p.of_text(text) for p in ps)
    assert re.sub(r"\s", "", covered) == re.sub(r"\s", "", text)  # every non-space character, once
    return ps


def test_a_text_that_fits_is_one_passage_and_a_blank_one_none():
    assert split("a short note") == [Passage(0, 12)]
    assert split("x" * LONG_CHARS) == [Passage(0, LONG_CHARS)]
    assert split(" \n\t ") == []


def test_long_prose_is_cut_at_paragraphs_and_sentences():
    text = "\n\n".join(FILLER * 2 for _ in range(8)) + "\n\n" + ANSWER
    ps = _check(text)
    assert len(ps) > 3
    assert any(p.of_text(text).endswith(ANSWER) for p in ps)  # the last sentence is not cut in the middle
    for p in ps[:-1]:
        assert p.of_text(text)[-1] in ".!?"  # sentences stay whole


def test_a_fenced_code_block_stays_whole_when_it_fits_and_is_cut_at_lines_when_not():
    code = "```python\n" + "\n".join(f"value_{i} = compute({i})" for i in range(12)) + "\n```"
    text = FILLER * 4 + "\n\n" + code + "\n\n" + FILLER * 4
    ps = _check(text)
    assert any(code in p.of_text(text) for p in ps)
    big = "```\n" + "\n".join(f"line_{i} = {i} * factor + offset" for i in range(300)) + "\n```"
    ps = _check(FILLER + "\n\n" + big)
    assert all(p.of_text(FILLER + "\n\n" + big).endswith(("```", "offset")) for p in ps[1:])  # cut at line ends


def test_cjk_without_spaces_and_crlf_are_cut():
    _check("中文没有空格的句子" * 300)
    assert len(_check("东京的天气很好" * 200)) > 1
    _check(("line one of a windows file\r\n" * 40 + "\r\n") * 5)
    _check("x" * 10_000)  # one unbreakable word: hard cuts


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=3000), st.integers(8, 200))
def test_any_text_is_covered_in_order_within_the_limit(text, limit):
    _check(text, limit)


@settings(max_examples=150, deadline=None)
@given(st.lists(st.sampled_from([FILLER, ANSWER, "\n\n", "```\ncode line\n```", "\r\n", "日本語の文。", " ", "é"]),
                max_size=120), st.integers(16, 160))
def test_structured_texts_are_covered_in_order_within_the_limit(parts, limit):
    _check("".join(parts), limit)


def test_the_best_passage_combines_cosine_and_the_query_words_it_holds():
    text = FILLER * 3 + "\n\n" + ANSWER + "\n\n" + FILLER * 3
    ps = split(text, 64)
    answering = next(p for p in ps if ANSWER in p.of_text(text))
    words = ["spare", "key", "bike", "shed"]
    # same cosine everywhere: the words decide
    assert order(text, [(p, 0.3) for p in ps], words, 2.0)[0] == answering
    # no words in common: the cosine decides
    scored = [(p, 0.5 if p == ps[0] else 0.2) for p in ps]
    assert order(text, scored, ["zebra"], 2.0)[0] == ps[0]
    # a slightly lower cosine with every query word beats a higher one with none
    scored = [(p, 0.35 if p == answering else 0.45) for p in ps]
    assert order(text, scored, words, 2.0)[0] == answering


def test_trim_keeps_the_sentence_with_the_query_words():
    text = FILLER * 6 + ANSWER + " " + FILLER * 6
    whole = Passage(0, len(text))
    cut = trim(text, whole, ["spare", "key", "bike", "shed"], 60)
    assert ANSWER in cut.of_text(text) and cost(cut.of_text(text)) <= 60
    assert trim(text, whole, [], 10_000) == whole


def _mem(content: str, i: int = 1, title: str = "") -> Memory:
    return Memory(id=f"id{i}", content=content, title=title, created_at=1_700_000_000 + i)


def test_context_shows_the_matching_passage_with_title_and_date_not_the_opening():
    text = "\n\n".join(FILLER * 2 for _ in range(20)) + "\n\n" + ANSWER + "\n\n" + FILLER * 4
    m = _mem(text, title="Office notes")
    ps = split(text)
    best = next(p for p in ps if ANSWER in p.of_text(text))
    ctx = build_context([m], query="where is the bike shed key", budget=300,
                        passages={m.id: [(p, 0.8 if p == best else 0.2) for p in ps]})
    assert ANSWER in ctx.text and "Office notes" in ctx.text and "2023-11-14" in ctx.text
    assert "…" in ctx.text and ctx.tokens <= 300 and ctx.truncated == [m.id]
    without = build_context([m], query="where is the bike shed key", budget=300)
    assert ANSWER not in without.text  # today's behaviour: the opening


def test_context_gives_several_hits_their_best_passage_before_more_of_the_first():
    texts = [("\n\n".join(FILLER * 2 for _ in range(10)) + f"\n\nFact number {i}: " + ANSWER) for i in range(3)]
    mems = [_mem(t, i) for i, t in enumerate(texts)]
    passages = {}
    for m in mems:
        ps = split(m.content)
        passages[m.id] = [(p, 0.6 if p == ps[-1] else 0.3) for p in ps]
    ctx = build_context(mems, query="bike shed key", budget=300, passages=passages)
    assert all(f"Fact number {i}" in ctx.text for i in range(2)) and ctx.tokens <= 300
    ids = build_context(mems, budget=300)  # context --ids: no passages, the openings as before
    assert "Fact number" not in ids.text


def test_the_migrations_threshold_is_long_chars(tmp_path):
    """m006's triggers cannot import LONG_CHARS: every length in them, and what they queue, agree with it."""
    from pathlib import Path

    import desktop_memory.engine as engine
    from desktop_memory.engine.store import Store

    sql = (Path(engine.__file__).parent / "migrations" / "m006_passages.sql").read_text(encoding="utf-8")
    found = [int(n) for n in re.findall(r"length\([\w.]+\)\s*>\s*(\d+)", sql)]
    assert len(found) == 3 and set(found) == {LONG_CHARS}
    store = Store(tmp_path / "db")
    try:
        with store.transaction():
            for n, size in enumerate((LONG_CHARS, LONG_CHARS + 1)):
                store.insert(Memory(id=f"m{n}", content="x" * size, created_at=n, updated_at=n, content_hash=f"h{n}"))
        assert store.passages.queued(10) == ["m1"]  # the trigger: longer than LONG_CHARS only
        with store.transaction():
            store.passages.put("m1", [])
            store.passages.drop_all()
        assert store.passages.queued(10) == ["m1"]  # drop_all: the same threshold
    finally:
        store.close()


def test_a_long_memory_ranked_first_gets_its_best_line_before_short_ones_below_it():
    text = "\n".join(f"Line {k}: " + FILLER for k in range(30)) + "\n" + ANSWER + "\n" + FILLER
    long = _mem(text, 1, title="Chat")
    shorts = [_mem(f"Short note {k}: " + FILLER, 10 + k) for k in range(8)]  # together more than the budget
    scored = [(p, 0.7 if ANSWER in p.of_text(text) else 0.3) for p in split(text)]
    ctx = build_context([long, *shorts], query="where is the bike shed key", budget=300, passages={long.id: scored})
    assert ANSWER in ctx.text and ctx.tokens <= 300 and ctx.included[0] == long.id and ctx.left_out
    lines_only = build_context([long], query="where is the bike shed key", budget=120, passages={long.id: scored})
    assert ANSWER in lines_only.text and "Line 0:" not in lines_only.text  # its best line, not its opening
