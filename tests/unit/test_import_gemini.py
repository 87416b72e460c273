"""The Gemini reader (issue 32): Google Takeout's "My Activity" for Gemini Apps, bare or in the Takeout zip.

Records are built the way Takeout writes them: newest first, "Prompted <prompt>" titles, the answer as HTML in
`safeHtmlItem`, activity that is not a prompt ("Used Gemini Apps", feedback) between them, and in newer exports
the conversation's link in `details`.
"""

from __future__ import annotations

import datetime as dt
import html
import json
import tempfile
import tracemalloc
import zipfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from desktop_memory.imports import Item, Problem, gemini

START = dt.datetime(2024, 1, 1, tzinfo=dt.UTC)
CONVERSATION = "https://gemini.google.com/app/abc123def"


def record(title, time, answers=None, **extra):
    r = {"header": "Gemini Apps", "title": title, "time": time, "products": ["Gemini Apps"],
         "activityControls": ["Gemini Apps Activity"]}
    if answers is not None:
        r["safeHtmlItem"] = [{"html": a} for a in answers]
    r.update(extra)
    return r


CODE_HTML = ('<p>Here is a function:</p><pre><code class="language-python">def add(a, b):\n    return a + b\n'
             '</code></pre><ul><li>It is <strong>short</strong>.</li><li>It works &amp; is tested.</li></ul>')
CODE_TEXT = ("Here is a function:\n\n```python\ndef add(a, b):\n    return a + b\n```\n\n"
             "- It is short.\n- It works & is tested.")
RAMEN_HTML = ("<p>おすすめは次の通りです：</p><ol><li><p>一蘭</p></li><li>天下一品<ul><li>こってり</li></ul></li></ol>"
              "<p>どうぞ&nbsp;お楽しみに 🍜</p>")
RAMEN_TEXT = "おすすめは次の通りです：\n\n1. 一蘭\n2. 天下一品\n  - こってり\n\nどうぞ お楽しみに 🍜"
TOKIO_HTML = ("<p>In Tokio ist es jetzt 18:10 Uhr.<br>Schönen Abend!</p><table><tr><th>Stadt</th><th>Zeit</th></tr>"
              "<tr><td>Tokio</td><td>18:10</td></tr></table><script>alert(1)</script><style>p{color:red}</style>")
TOKIO_TEXT = "In Tokio ist es jetzt 18:10 Uhr.\nSchönen Abend!\n\nStadt | Zeit\nTokio | 18:10"
LONG_ANSWER = "<p>" + "Entities such as &lt;b&gt; are escaped. " * 1500 + "</p>"


def export():
    """Newest first, as Takeout writes it."""
    link = [{"name": CONVERSATION, "url": CONVERSATION}]
    return [
        record("Prompted Wie spät ist es in Tokio? 🗼", "2025-06-02T09:10:00.500Z", [TOKIO_HTML], details=link),
        record("Gave feedback: Good response", "2025-06-02T09:05:00.000Z"),
        record("Prompted 東京でおすすめのラーメン屋は？", "2025-06-02T09:00:00.000Z", [RAMEN_HTML], details=link),
        record("Used Gemini Apps", "2025-06-02T08:59:00.000Z"),
        record("Prompted Write a Python function that adds two numbers", "2025-06-01T18:00:00.250Z",
               [CODE_HTML, "<p>Another draft.</p>"]),
        record("Selected preferred draft", "2025-06-01T17:59:00.000Z"),
        record("Prompted Explain <b>HTML</b> & entities", "2025-06-01T17:45:00Z", [LONG_ANSWER],
               attachedFiles=["report.pdf"], imageFile="image_89b1bd-1e9873211d1a6157.png",
               subtitles=[{"name": "Attached 1 file."}, {"name": "-  image_89b1bd.png"}]),
        record("Prompted ", "2025-05-20T08:00:00Z", ["<p>A cat on a sofa.</p>"], imageFile="photo.png"),
        record("Created Gemini Canvas titled Plan", "2025-05-19T08:00:00Z", ["<p>canvas</p>"]),
        {"header": "Search", "title": "Searched for weather", "time": "2025-05-19T07:00:00Z", "products": ["Search"]},
    ]


def write(path: Path, data) -> Path:
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def items_of(path: Path) -> list[Item]:
    out = list(gemini.read(path))
    assert all(isinstance(x, Item) for x in out), [x for x in out if isinstance(x, Problem)]
    return out


@pytest.fixture
def export_file(tmp_path):
    return write(tmp_path / "MyActivity.json", export())


def by_prompt(items, prompt):
    (item,) = [i for i in items if i.content.startswith(f"You: {prompt}")]
    return item


def test_every_prompt_becomes_one_exchange_oldest_first_within_a_session(export_file):
    items = items_of(export_file)
    assert [i.content.split("\n")[0] for i in items] == [
        "You: 東京でおすすめのラーメン屋は？", "You: Wie spät ist es in Tokio? 🗼",
        "You: Explain <b>HTML</b> & entities", "You: Write a Python function that adds two numbers",
        "You: [photo.png]"]
    assert all(i.source_app == "Gemini" for i in items)


def test_the_answer_html_becomes_readable_text(export_file):
    items = items_of(export_file)
    assert by_prompt(items, "Write a Python").content == (
        f"You: Write a Python function that adds two numbers\n\nGemini: {CODE_TEXT}")
    assert by_prompt(items, "東京").content == f"You: 東京でおすすめのラーメン屋は？\n\nGemini: {RAMEN_TEXT}"
    assert by_prompt(items, "Wie spät").content == f"You: Wie spät ist es in Tokio? 🗼\n\nGemini: {TOKIO_TEXT}"
    long = by_prompt(items, "Explain").content
    assert "Entities such as <b> are escaped." in long and "&lt;" not in long and "<p>" not in long


def test_more_answers_than_one_are_versions(export_file):
    item = by_prompt(items_of(export_file), "Write a Python")
    assert item.versions == [{"content": "You: Write a Python function that adds two numbers\n\nGemini: Another draft.",
                              "created_at": "2025-06-01T18:00:00.250Z"}]


def test_attachments_are_named_in_the_prompt_and_the_metadata(export_file):
    items = items_of(export_file)
    item = by_prompt(items, "Explain")
    assert item.content.startswith("You: Explain <b>HTML</b> & entities\n\n[report.pdf]\n\n"
                                   "[image_89b1bd-1e9873211d1a6157.png]\n\nGemini: ")
    assert item.metadata["attachments"] == ["report.pdf", "image_89b1bd-1e9873211d1a6157.png"]
    assert by_prompt(items, "[photo.png]").content == "You: [photo.png]\n\nGemini: A cat on a sofa."


def test_fields_sessions_and_links(export_file):
    ramen, tokio, explain, code, photo = items_of(export_file)
    assert ramen.session == tokio.session == "gemini:abc123def"  # the conversation's link names it
    assert ramen.source_url == tokio.source_url == CONVERSATION
    assert explain.session == code.session == "gemini:2025-06-01T17:45:00Z"  # 15 minutes apart: one session
    assert photo.session == "gemini:2025-05-20T08:00:00Z"
    assert explain.source_url == photo.source_url == ""
    assert code.created_at == 1748800800.25
    assert code.title == "Write a Python function that adds two numbers"
    assert ramen.title == "東京でおすすめのラーメン屋は？"
    assert code.external_id.startswith("gemini:2025-06-01T18:00:00.250Z:")
    assert len({i.external_id for i in (ramen, tokio, explain, code, photo)}) == 5


def test_records_more_than_half_an_hour_apart_start_a_new_session(tmp_path):
    records = [record(f"Prompted q{k}", f"2025-01-01T{10 + k // 2}:{(k % 2) * 29:02d}:00Z", ["<p>a</p>"])
               for k in range(4)]  # 10:00, 10:29, 11:00, 11:29: gaps 29, 31, 29 minutes
    items = items_of(write(tmp_path / "MyActivity.json", records[::-1]))
    assert [i.session for i in items] == ["gemini:2025-01-01T11:00:00Z"] * 2 + ["gemini:2025-01-01T10:00:00Z"] * 2


def test_a_session_too_long_to_hold_is_split(tmp_path, monkeypatch):
    monkeypatch.setattr(gemini, "SESSION_MAX", 3)
    records = [record(f"Prompted q{k}", f"2025-01-01T10:{k:02d}:00Z", ["<p>a</p>"]) for k in range(7)]
    items = items_of(write(tmp_path / "MyActivity.json", records[::-1]))
    assert sorted(i.content for i in items) == sorted(f"You: q{k}\n\nGemini: a" for k in range(7))
    assert len({i.session for i in items}) == 3


def test_external_ids_are_stable_across_reads_and_a_newer_export(tmp_path, export_file):
    before = {i.external_id: (i.content, i.session) for i in items_of(export_file)}
    assert {i.external_id: (i.content, i.session) for i in items_of(export_file)} == before
    newer = [record("Prompted Und in Berlin?", "2025-06-02T09:12:00Z", ["<p>11:12</p>"]),
             record("Prompted A new day", "2025-07-01T10:00:00Z", ["<p>Hello</p>"])][::-1] + export()
    after = {i.external_id: (i.content, i.session) for i in items_of(write(tmp_path / "newer.json", newer))}
    assert {k: after[k] for k in before} == before
    assert len(after) == len(before) + 2


def test_the_takeout_zip_with_other_products_and_a_localized_path(tmp_path):
    path = tmp_path / "takeout-20250701T100000Z-001.zip"
    localized = [dict(r, header="Gemini-Apps") if r.get("header") == "Gemini Apps" else r for r in export()]
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("Takeout/archive_browser.html", "<html></html>")
        z.writestr("Takeout/Meine Aktivitäten/Suche/MeineAktivitäten.json", json.dumps(
            [{"header": "Suche", "title": "Gesucht nach Wetter", "time": "2025-01-01T00:00:00Z"}]))
        z.writestr("Takeout/Gemini/gems.json", json.dumps([{"name": "My gem"}]))
        z.writestr("Takeout/Meine Aktivitäten/Gemini-Apps/MeineAktivitäten.json", json.dumps(localized))
    assert gemini.sniff(path)
    assert [i.content for i in items_of(path)] == [i.content for i in items_of(write(tmp_path / "a.json", export()))]


def test_a_takeout_with_the_activity_as_html_says_to_export_json(tmp_path):
    path = tmp_path / "takeout.zip"
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("Takeout/My Activity/Gemini Apps/MyActivity.html", "<html><body>Gemini Apps</body></html>")
    assert gemini.sniff(path)
    (problem,) = list(gemini.read(path))
    assert isinstance(problem, Problem) and "JSON" in problem.message and "\n" not in problem.message


MALFORMED = [
    ("a string", "record 2"),
    ([1, 2], "record 2"),
    ({"header": "Gemini Apps", "time": "2025-01-01T00:00:00Z", "safeHtmlItem": [{"html": "<p>x</p>"}]}, "record 2"),
    (record(5, "2025-01-01T00:00:00Z", ["<p>x</p>"]), "record 2"),
    (record("Prompted x", None, ["<p>x</p>"]), "record 2"),
    (record("Prompted x", "last tuesday", ["<p>x</p>"]), "record 2"),
    (record("Prompted x", 1735689600, ["<p>x</p>"]), "record 2"),
    (dict(record("Prompted x", "2025-01-01T00:00:00Z"), safeHtmlItem="<p>x</p>"), "record 2"),
    (dict(record("Prompted x", "2025-01-01T00:00:00Z"), safeHtmlItem=[7]), "record 2"),
    (dict(record("Prompted x", "2025-01-01T00:00:00Z"), safeHtmlItem=[{"html": 7}]), "record 2"),
    (dict(record("Prompted x", "2025-01-01T00:00:00Z"), details="x"), "record 2"),
    (dict(record("Prompted x", "2025-01-01T00:00:00Z"), header=["Gemini Apps"]), "record 2"),
    (record("Prompted x", 10**30, ["<p>x</p>"]), "record 2"),
]


@pytest.mark.parametrize(("bad", "where"), MALFORMED, ids=range(len(MALFORMED)))
def test_a_malformed_record_is_one_problem_and_the_others_come_out(tmp_path, bad, where):
    good = [record("Prompted one", "2025-03-01T10:00:00Z", ["<p>1</p>"]),
            record("Prompted two", "2025-03-01T12:00:00Z", ["<p>2</p>"])]
    out = list(gemini.read(write(tmp_path / "MyActivity.json", [good[1], bad, good[0]])))
    problems = [x for x in out if isinstance(x, Problem)]
    assert len(problems) == 1 and problems[0].where == where
    assert problems[0].message and "\n" not in problems[0].message
    assert sorted(x.content for x in out if isinstance(x, Item)) == ["You: one\n\nGemini: 1", "You: two\n\nGemini: 2"]


def test_numbers_too_big_for_a_machine_word_do_not_stop_the_reading(tmp_path):
    path = tmp_path / "MyActivity.json"
    first = json.dumps(record("Prompted one", "2025-03-01T12:00:00Z", ["<p>1</p>"]))
    second = json.dumps(record("Prompted two", "2025-03-01T10:00:00Z", ["<p>2</p>"]))
    path.write_text(f'[{first[:-1]}, "n": [9223372036854775808, -1e999, 1e400]}}, {second}]')
    assert [i.content for i in items_of(path)] == ["You: one\n\nGemini: 1", "You: two\n\nGemini: 2"]


def test_activity_that_is_no_prompt_is_skipped_silently(tmp_path):
    records = [record("Used Gemini Apps", "2025-01-01T10:00:00Z"),
               record("Gave feedback: Bad response", "2025-01-01T10:01:00Z"),
               record("Selected preferred draft", "2025-01-01T10:02:00Z"),
               record("Created Gemini Canvas titled Plan", "2025-01-01T10:03:00Z", ["<p>canvas</p>"]),
               record("Prompted ", "2025-01-01T10:04:00Z"),
               {"header": "Search", "title": "Searched for x", "time": "2025-01-01T10:05:00Z", "products": ["Search"]}]
    assert list(gemini.read(write(tmp_path / "MyActivity.json", records))) == []


def test_a_localized_title_is_kept_whole_when_it_has_an_answer(tmp_path):
    records = [record("Eingegebener Prompt: Was ist ein Käsekuchen?", "2025-01-01T10:00:00Z", ["<p>Ein Kuchen.</p>"]),
               record("Gemini-Apps verwendet", "2025-01-01T10:01:00Z")]
    (item,) = items_of(write(tmp_path / "MeineAktivitäten.json", records))
    assert item.content == "You: Eingegebener Prompt: Was ist ein Käsekuchen?\n\nGemini: Ein Kuchen."


@pytest.mark.parametrize("data", [b"", b"<html>My Activity</html>", b'{"header": "Gemini Apps"}', b"3"])
def test_a_file_that_is_not_an_array_of_records_is_one_problem(tmp_path, data):
    path = tmp_path / "MyActivity.json"
    path.write_bytes(data)
    out = list(gemini.read(path))
    assert len(out) == 1 and isinstance(out[0], Problem) and "\n" not in out[0].message


def test_a_file_cut_short_gives_what_came_before_and_one_problem(tmp_path):
    data = json.dumps(export()).encode()
    path = tmp_path / "MyActivity.json"
    path.write_bytes(data[: data.index(b"Created Gemini Canvas")])
    out = list(gemini.read(path))
    assert len([x for x in out if isinstance(x, Item)]) == 5
    assert isinstance(out[-1], Problem) and "\n" not in out[-1].message


def test_a_damaged_zip_is_one_problem(tmp_path):
    path = tmp_path / "takeout.zip"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("Takeout/My Activity/Gemini Apps/MyActivity.json", json.dumps(export() * 30))
    path.write_bytes(path.read_bytes()[:-30])
    out = list(gemini.read(path))
    assert len(out) == 1 and isinstance(out[0], Problem)


def test_sniff_takes_gemini_activity_and_nothing_else(tmp_path, export_file):
    assert gemini.sniff(export_file)
    products_only = write(tmp_path / "a.json", [{"header": "Gemini-Apps", "title": "x", "products": ["Gemini Apps"]}])
    assert gemini.sniff(products_only)
    search = write(tmp_path / "MyActivity2.json", [{"header": "Search", "title": "Searched for gemini",
                                                   "products": ["Search"]}])
    claude_export = write(tmp_path / "conversations.json", [{"uuid": "u", "name": "Gemini Apps", "chat_messages": []}])
    chatgpt = write(tmp_path / "chatgpt.json", [{"title": "Gemini Apps", "mapping": {}, "current_node": "x"}])
    other_zip = tmp_path / "other.zip"
    with zipfile.ZipFile(other_zip, "w") as z:
        z.writestr("Takeout/My Activity/Search/MyActivity.json", search.read_text())
    for path in (search, claude_export, chatgpt, other_zip, tmp_path / "missing.json", tmp_path):
        assert not gemini.sniff(path), path.name


@pytest.mark.parametrize(("markup", "text"), [
    ("<h2>Title</h2><p>Body &amp; more</p>", "## Title\n\nBody & more"),
    ("<p>a <code>x = 1</code> b</p>", "a `x = 1` b"),
    ("<blockquote><p>quoted</p></blockquote><hr><p>after</p>", "quoted\n\n---\n\nafter"),
    ("<p>   spaced    out\n text </p>", "spaced out text"),
    ("<div>unclosed <b>bold", "unclosed bold"),
    ("<p>a</p><![if !supportLists]><p>b</p><!-- note --><?php x ?>", "a\n\nb"),
    ("plain &#x1F600; &unknown; text", "plain 😀 &unknown; text"),
    ("<p>a</p><![bogus stuff]><p>b</p>", "a b"),
])
def test_html_to_text(markup, text):
    assert gemini.html_to_text(markup) == text


# Hypothesis: good records mixed with malformed ones, in any order.

WORDS = st.text(st.characters(whitelist_categories=("L", "N"), whitelist_characters="?!.,'-"), min_size=1,
                max_size=12)
SENTENCE = st.lists(WORDS, min_size=1, max_size=6).map(" ".join)
JUNK = st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=10),
                    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner,
                                                                                max_size=3), max_leaves=8)


@st.composite
def malformed(draw):
    kind = draw(st.integers(0, 3))
    if kind == 0:
        return draw(JUNK.filter(lambda v: not isinstance(v, dict)))
    if kind == 1:
        return record(draw(JUNK.filter(lambda v: not isinstance(v, str))), "2025-01-01T00:00:00Z", ["<p>x</p>"])
    if kind == 2:
        return record("Prompted x", draw(st.sampled_from(["", "soon", "2025-02-30T00:00:00Z", 5, None])), ["<p>x</p>"])
    return dict(record("Prompted x", "2025-01-01T00:00:00Z"), safeHtmlItem=draw(
        JUNK.filter(lambda v: v is not None and not (isinstance(v, list) and all(
            isinstance(e, dict) and isinstance(e.get("html"), (str, type(None))) for e in v)))))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_random_malformed_records_never_stop_the_good_ones(data):
    n = data.draw(st.integers(1, 6))
    minutes = sorted(data.draw(st.lists(st.integers(0, 60 * 24 * 30), min_size=n, max_size=n, unique=True)))
    goods = [(data.draw(SENTENCE), data.draw(SENTENCE), m) for m in minutes]
    records = [record(f"Prompted {p}", f"2025-01-{1 + m // 1440:02d}T{m % 1440 // 60:02d}:{m % 60:02d}:00Z",
                      [f"<p>{html.escape(a)}</p>"]) for p, a, m in goods]
    bads = data.draw(st.lists(malformed(), max_size=4))
    mixed = records + bads
    order = data.draw(st.permutations(range(len(mixed))))
    with tempfile.TemporaryDirectory() as tmp:
        out = list(gemini.read(write(Path(tmp) / "MyActivity.json", [mixed[i] for i in order])))
    contents = sorted(x.content for x in out if isinstance(x, Item))
    assert contents == sorted(f"You: {p}\n\nGemini: {a}" for p, a, _ in goods)
    problems = [x for x in out if isinstance(x, Problem)]
    assert len(problems) == len(bads)
    assert all("\n" not in p.where + p.message for p in problems)


def test_a_large_export_is_read_in_bounded_memory(tmp_path):
    path = tmp_path / "MyActivity.json"
    answer = "<p>" + "A long answer about the weather in Hamburg and Tokyo 東京. " * 50 + "</p><ul><li>one</li></ul>"
    with path.open("w", encoding="utf-8") as f:
        f.write("[")
        for n in range(3000):
            # newest first, 20 minutes apart and 2 hours after every tenth: sessions of ten records
            minutes = (3000 - n) * 20 + (3000 - n) // 10 * 100
            time = (START + dt.timedelta(minutes=minutes)).strftime("%Y-%m-%dT%H:%M:%SZ")
            f.write(("," if n else "") + json.dumps(record(f"Prompted question {n}?", time, [answer])))
        f.write("]")
    size = path.stat().st_size
    assert size > 8_000_000
    tracemalloc.start()
    try:
        count = sum(1 for _ in gemini.read(path))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert count == 3000
    assert peak < size / 10, f"peak {peak:,} bytes for a {size:,} byte export"
