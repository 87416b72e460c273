"""The Claude.ai export reader (issue 32): conversations.json, bare or in the zip Anthropic emails.

Exports are built here the way Claude.ai writes them: an array of conversations, each with `chat_messages`
whose `content` holds text, thinking, tool_use and tool_result blocks, attachments with extracted text,
`parent_message_uuid` branches, and a `text` field that carries placeholders where blocks were left out.
"""

from __future__ import annotations

import json
import re
import tempfile
import tracemalloc
import zipfile
from pathlib import Path

import ijson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from desktop_memory.core.text import utf8_safe
from desktop_memory.imports import Item, Problem, _shared, claude

ROOT = "00000000-0000-4000-8000-000000000000"
PLACEHOLDER = "\n\n```\nThis block is not supported on your current device yet.\n```\n\n"


def msg(uuid, sender, text="", *, blocks=None, at="2025-03-01T10:00:00.000000Z", parent=None, attachments=(),
        files=()):
    m = {"uuid": uuid, "text": text, "content": blocks if blocks is not None else [{"type": "text", "text": text}],
         "sender": sender, "created_at": at, "updated_at": at, "attachments": list(attachments),
         "files": [{"file_uuid": f"f-{n}", "file_name": n} for n in files]}
    if parent is not None:
        m["parent_message_uuid"] = parent
    return m


def conv(uuid, name, messages, *, at="2025-03-01T09:59:00.000000Z"):
    return {"uuid": uuid, "name": name, "summary": "", "created_at": at, "updated_at": at,
            "account": {"uuid": "acc-1"}, "chat_messages": messages}


THINKING = {"type": "thinking", "thinking": "SECRET-THOUGHT the user wants temples",
            "summaries": [{"summary": "Thinking about temples"}]}
TOOL_USE = {"type": "tool_use", "name": "web_search", "input": {"query": "TOOL-QUERY kyoto"}, "id": "toolu_1"}
TOOL_RESULT = {"type": "tool_result", "name": "web_search", "content": [{"type": "text", "text": "TOOL-RESULT page"}],
               "tool_use_id": "toolu_1", "is_error": False}
LONG_ATTACHMENT = "Zeile über Steuern.\n" * 10_000  # ~200 KB of extracted text


def kyoto():
    """Linear, with parent pointers; the answer's text blocks surround thinking and tool blocks."""
    return conv("c-kyoto", "Trip to Kyoto 京都", [
        msg("h1", "human", "Which temples should I see in Kyoto? 🏯", at="2025-03-01T10:00:00Z", parent=ROOT),
        msg("a1", "assistant", "Junk" + PLACEHOLDER + "junk", at="2025-03-01T10:00:20Z", parent="h1", blocks=[
            THINKING, {"type": "text", "text": "Let me search."}, TOOL_USE, TOOL_RESULT,
            {"type": "text", "text": "See Kinkaku-ji (金閣寺) and Fushimi Inari."}]),
        msg("h2", "human", "And where do I eat?", at="2025-03-01T10:05:00+00:00", parent="a1"),
        msg("a2", "assistant", "Nishiki Market.", at="2025-03-01T10:05:09+00:00", parent="h2"),
    ])


def steuer():
    """No name (the title comes from the first prompt), German, an attachment with a lot of text, an image."""
    return conv("c-steuer", "", [
        msg("h1", "human", "Bitte fasse meine Steuerunterlagen zusammen, danke schön", at="2025-04-02T08:00:00Z",
            attachments=[{"file_name": "steuer_2024.txt", "file_type": "txt", "file_size": len(LONG_ATTACHMENT),
                          "extracted_content": LONG_ATTACHMENT}],
            files=["beleg.png"]),
        msg("a1", "assistant", "Die Unterlagen zeigen Einnahmen von 42.000 € 💶.", at="2025-04-02T08:00:30Z"),
    ], at="2025-04-02T07:59:00Z")


def branches():
    """h1 answered twice (a1 then the regenerated a1b); after a1b the person asked h2, then edited it into h2b.
    The latest leaf is a2b: the path is h1 -> a1b -> h2b -> a2b."""
    return conv("c-branch", "Branches", [
        msg("h1", "human", "Name a colour", at="2025-05-01T12:00:00Z", parent=ROOT),
        msg("a1", "assistant", "Blue.", at="2025-05-01T12:00:05Z", parent="h1"),
        msg("a1b", "assistant", "Green.", at="2025-05-01T12:01:00Z", parent="h1"),
        msg("h2", "human", "Why that one?", at="2025-05-01T12:02:00Z", parent="a1b"),
        msg("a2", "assistant", "It is calm.", at="2025-05-01T12:02:05Z", parent="h2"),
        msg("h2b", "human", "Why green, really?", at="2025-05-01T12:03:00Z", parent="a1b"),
        msg("a2b", "assistant", "It is the colour of leaves.", at="2025-05-01T12:03:05Z", parent="h2b"),
    ])


def tools_only():
    """The answer is only tool calls: the exchange has no answer."""
    return conv("c-tools", "Tools only", [
        msg("h1", "human", "Run the analysis", at="2025-06-01T09:00:00Z"),
        msg("a1", "assistant", PLACEHOLDER, at="2025-06-01T09:00:09Z", blocks=[THINKING, TOOL_USE, TOOL_RESULT]),
    ])


def export():
    return [kyoto(), steuer(), branches(), tools_only(), conv("c-empty", "Never used", [])]


def write(path: Path, data) -> Path:
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def items_of(path: Path) -> list[Item]:
    out = list(claude.read(path))
    assert all(isinstance(x, Item) for x in out), [x for x in out if isinstance(x, Problem)]
    return out


@pytest.fixture
def export_file(tmp_path):
    return write(tmp_path / "conversations.json", export())


def test_every_exchange_in_order_with_its_content(export_file):
    items = items_of(export_file)
    assert [i.external_id for i in items] == [
        "claude:c-kyoto:h1", "claude:c-kyoto:h2", "claude:c-steuer:h1", "claude:c-branch:h1", "claude:c-branch:h2b",
        "claude:c-tools:h1"]
    first, second = items[0], items[1]
    assert first.content == ("You: Which temples should I see in Kyoto? 🏯\n\n"
                             "Claude: Let me search.\n\nSee Kinkaku-ji (金閣寺) and Fushimi Inari.")
    assert second.content == "You: And where do I eat?\n\nClaude: Nishiki Market."
    assert first.title == second.title == "Trip to Kyoto 京都"
    assert first.source_app == "Claude"
    assert first.source_url == "https://claude.ai/chat/c-kyoto"
    assert first.session == second.session == "claude:c-kyoto"
    assert first.created_at == 1740823200.0  # 2025-03-01T10:00:00Z
    assert second.created_at == 1740823500.0  # an offset (+00:00) reads the same
    assert first.metadata["conversation_uuid"] == "c-kyoto"


def test_thinking_tool_blocks_and_placeholders_never_reach_the_content(export_file):
    for item in items_of(export_file):
        text = item.content + json.dumps(item.versions)
        for leaked in ("SECRET-THOUGHT", "TOOL-QUERY", "TOOL-RESULT", "not supported on your current device", "Junk"):
            assert leaked not in text, item.external_id


def test_an_answer_of_only_tools_is_no_answer(export_file):
    tools = [i for i in items_of(export_file) if i.session == "claude:c-tools"]
    assert [i.content for i in tools] == ["You: Run the analysis"]


def test_attachments_text_is_in_the_prompt_under_its_name_and_shortened(export_file):
    (item,) = [i for i in items_of(export_file) if i.session == "claude:c-steuer"]
    assert item.content.startswith("You: Bitte fasse meine Steuerunterlagen zusammen, danke schön\n\n"
                                   "[steuer_2024.txt]\nZeile über Steuern.\n")
    assert "Claude: Die Unterlagen zeigen Einnahmen von 42.000 € 💶." in item.content
    assert "[beleg.png]" in item.content
    assert len(item.content) < len(LONG_ATTACHMENT) // 2  # shortened
    assert "shortened" in item.content and "200,000" in item.content  # and says so, with the full length
    assert item.metadata["attachments"] == ["steuer_2024.txt", "beleg.png"]


def test_a_conversation_without_a_name_takes_the_first_words_of_its_first_prompt(export_file):
    (item,) = [i for i in items_of(export_file) if i.session == "claude:c-steuer"]
    assert item.title.startswith("Bitte fasse meine Steuerunterlagen")
    assert len(item.title) <= 60 and "\n" not in item.title


def test_branches_follow_the_latest_and_keep_the_alternatives_as_versions(export_file):
    first, second = [i for i in items_of(export_file) if i.session == "claude:c-branch"]
    assert first.content == "You: Name a colour\n\nClaude: Green."
    assert first.versions == [{"content": "You: Name a colour\n\nClaude: Blue.", "created_at": "2025-05-01T12:00:05Z"}]
    assert second.content == "You: Why green, really?\n\nClaude: It is the colour of leaves."
    assert second.versions == [{"content": "You: Why that one?\n\nClaude: It is calm.",
                                "created_at": "2025-05-01T12:02:00Z"}]


def test_messages_without_parent_links_follow_their_times(tmp_path):
    c = kyoto()
    for m in c["chat_messages"]:
        del m["parent_message_uuid"]
    c["chat_messages"].reverse()
    assert [i.external_id for i in items_of(write(tmp_path / "c.json", [c]))] == [
        "claude:c-kyoto:h1", "claude:c-kyoto:h2"]


def test_the_conversation_names_current_leaf_when_it_has_one(tmp_path):
    c = branches()
    c["current_leaf_message_uuid"] = "a2"  # the person went back to the first edit
    (first, second) = items_of(write(tmp_path / "conversations.json", [c]))
    assert second.content == "You: Why that one?\n\nClaude: It is calm."
    assert [v["content"] for v in second.versions] == ["You: Why green, really?\n\nClaude: It is the colour of leaves."]


def test_external_ids_are_stable_across_reads_and_a_newer_export(tmp_path, export_file):
    before = {i.external_id: i.content for i in items_of(export_file)}
    assert {i.external_id: i.content for i in items_of(export_file)} == before
    newer = export()
    newer[0]["chat_messages"] += [msg("h3", "human", "Thanks!", at="2025-03-02T10:00:00Z", parent="a2"),
                                  msg("a3", "assistant", "Enjoy Kyoto.", at="2025-03-02T10:00:03Z", parent="h3")]
    newer[0]["updated_at"] = "2025-03-02T10:00:03Z"
    newer.insert(0, conv("c-new", "Newer", [msg("h1", "human", "New question", at="2025-07-01T10:00:00Z")]))
    newer.reverse()  # a newer export may list conversations in another order
    after = {i.external_id: i.content for i in items_of(write(tmp_path / "newer.json", newer))}
    assert {k: after[k] for k in before} == before
    assert set(after) - set(before) == {"claude:c-kyoto:h3", "claude:c-new:h1"}


def test_the_zip_as_delivered_with_a_subfolder(tmp_path):
    path = tmp_path / "data-2025-07-01-10-00-00.zip"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("data-2025-07-01-10-00-00/users.json", json.dumps([{"uuid": "acc-1", "full_name": "A"}]))
        z.writestr("data-2025-07-01-10-00-00/projects.json", "[]")
        z.writestr("data-2025-07-01-10-00-00/conversations.json", json.dumps(export()))
    assert claude.sniff(path)
    assert [i.external_id for i in items_of(path)] == [i.external_id for i in items_of(write(tmp_path / "c.json",
                                                                                            export()))]


def test_a_byte_order_mark_and_white_space_before_the_array_are_fine(tmp_path):
    path = tmp_path / "conversations.json"
    path.write_bytes(b"\xef\xbb\xbf \n" + json.dumps([kyoto()]).encode())
    assert len(items_of(path)) == 2


def test_lone_surrogates_never_reach_an_item(tmp_path):
    c = kyoto()
    c["name"] = "cut \ud83d emoji"
    c["chat_messages"][0]["content"][0]["text"] = "half \udc00 a pair"
    items = items_of(write(tmp_path / "c.json", [c]))  # json.dumps writes them as \ud83d escapes
    assert len(items) == 2
    for item in items:
        (item.content + item.title).encode("utf-8")  # valid UTF-8: the halves became a replacement character
    assert items[0].content.startswith("You: half ")


class Trickle:
    """A stream that gives a few bytes a read, whatever was asked: escapes fall across every boundary."""

    def __init__(self, data: bytes, step: int) -> None:
        self.data, self.step, self.pos = data, step, 0

    def read(self, size=-1):
        out = self.data[self.pos:self.pos + self.step]
        self.pos += len(out)
        return out


@pytest.mark.parametrize("step", [1, 2, 3, 5, 11, 12, 13, 64])
def test_lone_surrogate_escapes_and_bad_bytes_become_replacement_characters_across_chunks(step):
    raw = (b'\xef\xbb\xbf ["a\\udc00b", "\\ud83d\\ude00", "x\\\\udc00y", "\\ud800\\ud800", "caf\xc3\xa9", '
           b'"bad \xff byte", "\\u00e9\\n\\\\", "end\\ud83d"]')
    values = list(ijson.items(_shared.json_array(Trickle(raw, step), "values"), "item"))
    assert values == ["a\ufffdb", "😀", "x\\udc00y", "\ufffd\ufffd", "café", "bad \ufffd byte", "é\n\\", "end\ufffd"]


def test_numbers_too_big_for_a_machine_word_do_not_stop_the_reading(tmp_path):
    path = tmp_path / "conversations.json"
    good = json.dumps(kyoto())
    path.write_text(f'[{good[:-1]}, "n": [9223372036854775808, -1e999, 1e400]}}, {json.dumps(steuer())}]')
    assert [i.external_id for i in items_of(path)] == ["claude:c-kyoto:h1", "claude:c-kyoto:h2", "claude:c-steuer:h1"]


MALFORMED = [
    ("a string", "conversation 2"),
    (["a", "list"], "conversation 2"),
    ({"uuid": "c-x", "name": "No messages"}, "No messages"),
    ({"uuid": "c-x", "name": "Wrong type", "chat_messages": {"0": {}}}, "Wrong type"),
    ({"uuid": 7, "name": "Number id", "chat_messages": []}, "Number id"),
    ({"uuid": "c-x", "name": "Bad date", "created_at": "yesterday", "chat_messages": []}, "Bad date"),
    (conv("c-x", "Bad message date", [msg("h1", "human", "x", at="2025-13-45T99:00:00Z")]), "Bad message date"),
    (conv("c-x", "No sender", [{"uuid": "h1", "text": "hi", "content": [], "created_at": None}]), "No sender"),
    (conv("c-x", "Message a number", [5]), "Message a number"),
    (conv("c-x", "Content a string", [dict(msg("h1", "human", "x"), content="x")]), "Content a string"),
    (conv("c-x", "Text a number", [dict(msg("h1", "human", "x"), content=[{"type": "text", "text": 3}])]),
     "Text a number"),
    (conv("c-x", "Attachments wrong", [dict(msg("h1", "human", "x"), attachments="a.txt")]), "Attachments wrong"),
    (conv("c-x", "Human without id", [dict(msg("h1", "human", "x"), uuid=None)]), "Human without id"),
    ({"uuid": "c-x", "name": ["a list"], "chat_messages": []}, "conversation 2"),
    ({"uuid": "c-x", "name": "Huge time", "created_at": 10**30, "chat_messages": []}, "Huge time"),
]


@pytest.mark.parametrize(("bad", "where"), MALFORMED, ids=[w for _, w in MALFORMED])
def test_a_malformed_conversation_is_one_problem_and_the_others_come_out(tmp_path, bad, where):
    out = list(claude.read(write(tmp_path / "c.json", [kyoto(), bad, steuer()])))
    problems = [x for x in out if isinstance(x, Problem)]
    assert len(problems) == 1
    assert where in problems[0].where
    assert "\n" not in problems[0].message and problems[0].message
    assert [x.external_id for x in out if isinstance(x, Item)] == [
        "claude:c-kyoto:h1", "claude:c-kyoto:h2", "claude:c-steuer:h1"]


@pytest.mark.parametrize("data", [b"", b"not json at all", b"{\"uuid\": \"x\"}", b"42", b"\xff\xfe\x00garbage"])
def test_a_file_that_is_not_an_array_of_conversations_is_one_problem(tmp_path, data):
    path = tmp_path / "conversations.json"
    path.write_bytes(data)
    out = list(claude.read(path))
    assert len(out) == 1 and isinstance(out[0], Problem)
    assert "\n" not in out[0].message


def test_a_file_cut_short_gives_what_came_before_and_one_problem(tmp_path):
    data = json.dumps([kyoto(), steuer(), branches()]).encode()
    path = tmp_path / "conversations.json"
    path.write_bytes(data[: len(data) - 300])
    out = list(claude.read(path))
    assert [x.external_id for x in out[:-1]] == ["claude:c-kyoto:h1", "claude:c-kyoto:h2", "claude:c-steuer:h1"]
    assert isinstance(out[-1], Problem) and "\n" not in out[-1].message


def test_a_damaged_zip_or_one_without_conversations_is_one_problem(tmp_path):
    good = tmp_path / "good.zip"
    with zipfile.ZipFile(good, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("conversations.json", json.dumps([kyoto(), steuer()] * 50))
    damaged = tmp_path / "damaged.zip"
    raw = bytearray(good.read_bytes())
    raw[200:400] = b"\x00" * 200  # the compressed data
    damaged.write_bytes(bytes(raw))
    cut = tmp_path / "cut.zip"
    cut.write_bytes(good.read_bytes()[:-40])  # the central directory's end
    empty = tmp_path / "empty.zip"
    with zipfile.ZipFile(empty, "w") as z:
        z.writestr("users.json", "[]")
    for path in (damaged, cut, empty):
        out = list(claude.read(path))
        problems = [x for x in out if isinstance(x, Problem)]
        assert len(problems) == 1, path.name
        assert "\n" not in problems[0].message


def test_sniff_takes_claude_exports_and_nothing_else(tmp_path, export_file):
    assert claude.sniff(export_file)
    chatgpt = write(tmp_path / "chatgpt.json", [{"title": "x", "create_time": 1.0, "mapping": {}, "current_node": "n",
                                                 "conversation_id": "c"}])
    chatgpt_zip = tmp_path / "chatgpt.zip"
    with zipfile.ZipFile(chatgpt_zip, "w") as z:
        z.writestr("conversations.json", chatgpt.read_text())
        z.writestr("user.json", "{}")
    gemini = write(tmp_path / "MyActivity.json", [{"header": "Gemini Apps", "title": "Prompted hi",
                                                   "time": "2025-01-01T00:00:00Z"}])
    text = tmp_path / "notes.json"
    text.write_text("hello")
    for path in (chatgpt, chatgpt_zip, gemini, text, tmp_path / "missing.json", tmp_path):
        assert not claude.sniff(path), path.name


def test_reading_writes_nothing(tmp_path, export_file):
    before = sorted(p.name for p in tmp_path.iterdir())
    list(claude.read(export_file))
    assert sorted(p.name for p in tmp_path.iterdir()) == before


# Hypothesis: good conversations mixed with malformed records, in any order.

PAIR = re.compile("[\ud800-\udbff][\udc00-\udfff]")  # two halves side by side: JSON reads them as one character
TEXT = st.text(min_size=1, max_size=40).filter(lambda s: s.strip() and not PAIR.search(s))  # lone halves included
JUNK = st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=10),
                    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner,
                                                                                max_size=3), max_leaves=8)


@st.composite
def good_conversation(draw, n):
    prompts = draw(st.lists(TEXT, min_size=1, max_size=3))
    messages = []
    for k, prompt in enumerate(prompts):
        messages.append(msg(f"h{k}", "human", prompt, at=f"2025-01-0{k + 1}T10:00:00Z"))
        messages.append(msg(f"a{k}", "assistant", "", at=f"2025-01-0{k + 1}T10:00:09Z",
                            blocks=[THINKING, {"type": "text", "text": draw(TEXT)}]))
    return conv(f"good-{n}", draw(st.sampled_from(["", "Name"])), messages)


@st.composite
def malformed(draw):
    kind = draw(st.integers(0, 5))
    if kind == 0:
        return draw(JUNK.filter(lambda v: not isinstance(v, dict)))
    if kind == 1:
        return {"uuid": "bad", "name": draw(TEXT)}  # no chat_messages
    if kind == 2:
        return conv("bad", "x", draw(JUNK.filter(lambda v: not isinstance(v, list) and v is not None)))
    if kind == 3:
        bad_date = draw(st.sampled_from(["yesterday", "", "0000", "2025-02-30T00:00:00Z", "3000-01-01T00:00:00Z", 7]))
        return conv("bad", "x", [msg("h", "human", "x", at=bad_date)])
    if kind == 4:
        return conv("bad", "x", [{"uuid": "h", "text": "x", "sender": draw(JUNK.filter(lambda v: not isinstance(
            v, str)))}])
    return conv("bad", "x", [dict(msg("h", "human", "x"), content=draw(JUNK.filter(lambda v: not isinstance(
        v, list) and v is not None)))])


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_random_malformed_records_never_stop_the_good_ones(data):
    goods = [data.draw(good_conversation(n)) for n in range(data.draw(st.integers(1, 4)))]
    bads = data.draw(st.lists(malformed(), max_size=4))
    records = goods + bads
    order = data.draw(st.permutations(range(len(records))))
    with tempfile.TemporaryDirectory() as tmp:
        out = list(claude.read(write(Path(tmp) / "conversations.json", [records[i] for i in order])))
    found = {x.external_id: x.content for x in out if isinstance(x, Item)}
    for good in goods:
        for m in good["chat_messages"]:
            if m["sender"] == "human":
                assert found[f"claude:{good['uuid']}:{m['uuid']}"].startswith(f"You: {utf8_safe(m['text'].strip())}")
    problems = [x for x in out if isinstance(x, Problem)]
    assert len(problems) == len(bads)
    assert all("\n" not in p.where + p.message for p in problems)


def test_a_large_export_is_read_in_bounded_memory(tmp_path):
    path = tmp_path / "conversations.json"
    answer = "A long answer about the weather in Hamburg and Tokyo 東京. " * 40
    with path.open("w", encoding="utf-8") as f:
        f.write("[")
        for n in range(600):
            f.write(("," if n else "") + json.dumps(conv(f"c{n}", f"Conversation {n}", [
                msg(f"h{k}", "human", f"Question {k} of {n}?", at="2025-01-01T10:00:00Z") if k % 2 == 0 else
                msg(f"a{k}", "assistant", answer, at="2025-01-01T10:00:05Z") for k in range(6)])))
        f.write("]")
    size = path.stat().st_size
    assert size > 8_000_000
    tracemalloc.start()
    try:
        count = sum(1 for _ in claude.read(path))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert count == 600 * 3
    assert peak < size / 10, f"peak {peak:,} bytes for a {size:,} byte export"


@pytest.mark.parametrize("bad", [float("nan"), float("inf"), -float("inf")])
def test_nan_or_infinity_in_one_conversation_loses_only_that_one(tmp_path, bad):
    broken = kyoto()
    broken["updated_at"] = bad
    path = tmp_path / "conversations.json"
    path.write_text(json.dumps([steuer(), broken, branches()]))  # NaN, Infinity: what json.dumps writes
    out = list(claude.read(path))
    assert [x.external_id for x in out if isinstance(x, Item)] == [
        "claude:c-steuer:h1", "claude:c-branch:h1", "claude:c-branch:h2b"]
    assert [x.message for x in out if isinstance(x, Problem)][0].startswith("its updated_at")
