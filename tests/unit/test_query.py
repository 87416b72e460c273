import apsw
from hypothesis import given, settings
from hypothesis import strategies as st

from desktop_memory.core.query import MAX_TERMS, Filters, fts_or, parse, terms


def fts_match(text: str) -> str | None:
    """The MATCH expression the store builds from typed text (store_search: `fts_or` of the prefix terms)."""
    return fts_or(terms(text, limit=MAX_TERMS, prefix_last=True)) or None


def _fts_db() -> apsw.Connection:
    db = apsw.Connection(":memory:")
    db.execute("CREATE VIRTUAL TABLE t USING fts5(body, tokenize='porter unicode61')")
    db.execute("INSERT INTO t VALUES ('the release ships on march third'), ('NEAR AND OR NOT * ?')")
    return db


DB = _fts_db()


def run_match(text: str) -> list:
    expr = fts_match(text)
    if expr is None:
        return []
    return DB.execute("SELECT rowid FROM t WHERE t MATCH ? ORDER BY rank", (expr,)).fetchall()


def test_operators_and_punctuation_are_plain_words():
    for q in ['"unbalanced', "what?", "release AND", "NEAR(a b)", "ship*", "-release", "a:b", "(((", "^x"]:
        run_match(q)  # never raises
    assert run_match("release AND") == [(1,)]


def test_stop_words_are_dropped_unless_nothing_else_is_left():
    assert terms("when does the release ship?") == ["release", "ship"]
    assert terms("who is it") == ["who", "is", "it"]


def test_huge_pastes_are_capped():
    expr = fts_match(" ".join(f"word{i}" for i in range(10_000)))
    assert expr is not None and expr.count(" OR ") == 47


def test_unicode_and_emoji_queries_work():
    assert run_match("Zürich café 🎉 東京") == []
    assert fts_match("🎉🎉") is None


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=300))
def test_any_text_is_a_valid_query(text):
    run_match(text)


def test_filter_words_become_filters_and_leave_the_text():
    q = parse("deploy notes source:clipboard app:Firefox #Work after:2026-01-01 before:2026-02-01 is:pinned")
    assert q.text == "deploy notes"
    f = q.filters
    assert f.sources == ("clipboard",) and f.apps == ("firefox",) and f.tags == ("work",)
    assert f.after.isoformat().startswith("2026-01-01") and f.before.isoformat().startswith("2026-02-01")
    assert f.pinned_only and f.active


def test_unknown_or_bad_filter_words_stay_as_text():
    q = parse("time: 10:30 after:yesterday")
    assert q.text == "time: 10:30 after:yesterday"
    assert q.filters == Filters()


def test_filters_merge():
    merged = Filters(sources=("cli",)).merged(Filters(tags=("x",), pinned_only=True))
    assert merged.sources == ("cli",) and merged.tags == ("x",) and merged.pinned_only


def _prefix_db() -> apsw.Connection:
    db = apsw.Connection(":memory:")
    db.execute("CREATE VIRTUAL TABLE t USING fts5(body, tokenize='porter unicode61')")
    for body in ("Built in 1870, the lighthouse guided ships", "Lunch with Ana Gonzalez", "Zürich café opens",
                 "the running club meets", "a happy lighthouse keeper"):
        db.execute("INSERT INTO t VALUES (?)", (body,))
    return db


PREFIX_DB = _prefix_db()


def prefix_rows(text: str) -> list[int]:
    expr = fts_match(text)
    return [] if expr is None else [r[0] for r in PREFIX_DB.execute("SELECT rowid FROM t WHERE t MATCH ?", (expr,))]


def test_the_last_word_being_typed_matches_as_a_prefix():
    assert fts_match("lighthou") == '"lighthou"*'
    assert fts_match("old lighthou") == '"old" OR "lighthou"*'
    assert fts_match("Gonz") == '"gonz"*'
    assert prefix_rows("lighthou") == [1, 5] and prefix_rows("lighthous") == [1, 5]
    assert prefix_rows("Gonz") == [2] and prefix_rows("ana gonza") == [2]
    assert prefix_rows("Zür") == [3] and prefix_rows("happ") == [5]


def test_a_finished_word_is_matched_as_it_is():
    assert fts_match("lighthouse?") == '"lighthouse"'
    assert fts_match("lighthou ") == '"lighthou"'
    assert fts_match("When did Caroline go to the support group?") == '"caroline" OR "go" OR "support" OR "group"'
    assert prefix_rows("lighthou.") == []


def test_short_and_stop_word_endings_are_not_prefixes():
    assert fts_match("a") == '"a"' and fts_match("go") == '"go"' and fts_match("notes g") == '"notes" OR "g"'
    assert fts_match("release the") == '"release"'  # a stop word is dropped, the word before it is finished
    assert fts_match("ship*") == '"ship"*'  # an explicit star asks for a prefix too
    assert fts_match("***") is None and fts_match("") is None


def test_prefix_terms_are_marked_and_quoted_safely():
    assert terms("old lighthou") == ["old", "lighthou"]  # plain terms are unchanged
    assert terms("old lighthou", prefix_last=True) == ["old", "lighthou*"]
    assert terms("lighthou lighthou", prefix_last=True) == ["lighthou*"]
    assert terms("lighthou light", prefix_last=True) == ["lighthou", "light*"]
    assert fts_or(['we"ird*', "plain"]) == '"we""ird"* OR "plain"'
    assert fts_match(" ".join(f"word{i}" for i in range(100))).endswith('"word47"')  # the cut word is not the last


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=60))
def test_any_text_being_typed_is_a_valid_prefix_query(text):
    prefix_rows(text)
    prefix_rows(text + "a")


def test_a_prefix_that_is_already_a_known_word_is_matched_whole():
    from desktop_memory.core.query import settle_prefix

    known = {"owed", "light"}.__contains__
    assert settle_prefix(["late", "owed*"], known) == ["late", "owed"]  # porter would make it "ow"*
    assert settle_prefix(["old", "lighthou*"], known) == ["old", "lighthou*"]
    assert settle_prefix(["light*", "x"], known) == ["light", "x"]
    assert settle_prefix([], known) == [] and settle_prefix(["a", "b"], known) == ["a", "b"]


def test_an_inflected_last_word_is_finished_not_a_prefix():
    # FTS5 stems a prefix before matching it: "owed"* would become "ow"* (own, owner, ...)
    assert fts_match("the late payment owed") == '"late" OR "payment" OR "owed"'
    assert fts_match("notes I was writing") == '"notes" OR "writing"'
    assert fts_match("Gonz") == '"gonz"*' and fts_match("lighthous") == '"lighthous"*'
