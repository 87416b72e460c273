"""The ChatGPT export reader (issue 32): exports built here the way OpenAI's "Export data" writes them."""

from __future__ import annotations

import datetime as dt
import json
import math
import tempfile
import tracemalloc
import zipfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from desktop_memory.imports import Item, Problem, chatgpt

T0 = 1_700_000_000.0  # 2023-11-14T22:13:20Z
ROOT = "client-created-root"  # the root node's id in real exports (the same in every conversation)


class Conv:
    """One conversation of conversations.json, built message by message (each added under the last one, or
    under `parent`: a second child is a regenerated answer or an edited prompt)."""

    def __init__(self, cid: str | None = "c0ffee00-0000-4000-8000-000000000001", title: Any = "A chat",
                 create_time: Any = T0, system: bool = True):
        self.cid, self.title, self.create_time = cid, title, create_time
        self.mapping: dict[str, Any] = {ROOT: {"id": ROOT, "message": None, "parent": None, "children": []}}
        self.last, self.clock = ROOT, create_time if isinstance(create_time, float) else T0
        if system:  # every real conversation starts with an empty, hidden system message
            self.add("sys-" + (cid or "x"), "system", content("text", parts=[""]), hidden=True)

    def add(self, nid: str, role: str, body: dict[str, Any], *, parent: str | None = None, t: Any = "next",
            hidden: bool = False, recipient: str = "all", name: str | None = None, **meta: Any) -> str:
        parent = parent or self.last
        if t == "next":
            self.clock += 7.5
            t = self.clock
        metadata = {"is_visually_hidden_from_conversation": True} if hidden else {}
        metadata.update(meta)
        message = {"id": nid, "author": {"role": role, "name": name, "metadata": {}}, "create_time": t,
                   "update_time": None, "content": body, "status": "finished_successfully",
                   "end_turn": True if role == "assistant" else None, "weight": 1.0, "metadata": metadata,
                   "recipient": recipient, "channel": None}
        self.mapping[nid] = {"id": nid, "message": message, "parent": parent, "children": []}
        self.mapping[parent]["children"].append(nid)
        self.last = nid
        return nid

    def user(self, nid: str, text: str, **kw: Any) -> str:
        return self.add(nid, "user", content("text", parts=[text]), **kw)

    def assistant(self, nid: str, text: str, **kw: Any) -> str:
        kw.setdefault("model_slug", "gpt-4o")
        return self.add(nid, "assistant", content("text", parts=[text]), **kw)

    def export(self, current: str | None = None) -> dict[str, Any]:
        out = {"title": self.title, "create_time": self.create_time, "update_time": self.clock,
               "mapping": self.mapping, "moderation_results": [], "current_node": current or self.last,
               "plugin_ids": None, "conversation_template_id": None, "gizmo_id": None, "is_archived": False,
               "safe_urls": [], "default_model_slug": "gpt-4o"}
        if self.cid:
            out.update(conversation_id=self.cid, id=self.cid)
        return out


def content(kind: str, **fields: Any) -> dict[str, Any]:
    return {"content_type": kind, **fields}


def image_pointer() -> dict[str, Any]:
    return {"content_type": "image_asset_pointer", "asset_pointer": "file-service://file-Abc123", "size_bytes": 48029,
            "width": 1024, "height": 768, "fovea": None, "metadata": None}


def chat(cid: str, title: str, *pairs: tuple[str, str], create_time: Any = T0) -> Conv:
    """A plain conversation: each pair a prompt and its answer (node ids "<cid>-u<n>" and "<cid>-a<n>")."""
    conv = Conv(cid, title, create_time)
    for n, (prompt, answer) in enumerate(pairs):
        conv.user(f"{cid}-u{n}", prompt)
        if answer:
            conv.assistant(f"{cid}-a{n}", answer)
    return conv


def write(tmp: Path, conversations: list[Any], name: str = "conversations.json") -> Path:
    path = tmp / name
    path.write_text(json.dumps(conversations), encoding="utf-8")  # ASCII with \u escapes, as OpenAI writes it
    return path


def read(path: Path) -> tuple[list[Item], list[Problem]]:
    items, problems = [], []
    for out in chatgpt.read(path):
        (items if isinstance(out, Item) else problems).append(out)
        assert isinstance(out, (Item, Problem))
    return items, problems


def everything(item: Item) -> str:
    return "\n".join([item.content, *(v["content"] for v in item.versions)])


# --- the active branch, as exchanges


def test_each_exchange_is_one_item_in_order(tmp_path):
    conv = chat("c0ffee00-0000-4000-8000-000000000001", "Trip planning",
                ("Where should I go in May?", "Lisbon is lovely in May."),
                ("And in June?", "Try Copenhagen."))
    items, problems = read(write(tmp_path, [conv.export()]))
    assert problems == []
    assert [i.content for i in items] == [
        "You: Where should I go in May?\n\nChatGPT: Lisbon is lovely in May.",
        "You: And in June?\n\nChatGPT: Try Copenhagen.",
    ]
    first = items[0]
    assert first.title == "Trip planning" and first.source_app == "ChatGPT"
    assert first.session == "chatgpt:c0ffee00-0000-4000-8000-000000000001"
    assert first.external_id == "chatgpt:c0ffee00-0000-4000-8000-000000000001:c0ffee00-0000-4000-8000-000000000001-u0"
    assert first.source_url == "https://chatgpt.com/c/c0ffee00-0000-4000-8000-000000000001"
    assert first.created_at == conv.mapping["c0ffee00-0000-4000-8000-000000000001-u0"]["message"]["create_time"]
    assert first.metadata == {"conversation_id": "c0ffee00-0000-4000-8000-000000000001", "model": "gpt-4o"}
    assert first.versions == [] and items[1].created_at > first.created_at


def test_a_prompt_without_an_answer_is_kept_and_an_empty_conversation_gives_nothing(tmp_path):
    unanswered = chat("c1", "Cut off", ("Is anyone there?", ""))
    empty = Conv("c2", "New chat")
    bare = {"title": "Nothing", "create_time": T0, "update_time": T0, "mapping": {}, "current_node": None,
            "conversation_id": "c3", "id": "c3"}
    items, problems = read(write(tmp_path, [unanswered.export(), empty.export(), bare]))
    assert [i.content for i in items] == ["You: Is anyone there?"]
    assert problems == []


def test_an_answer_of_several_messages_is_joined_with_code_and_its_output(tmp_path):
    conv = Conv("c1", "Sum")
    conv.user("u", "Add 2 and 3 in Python")
    conv.assistant("a1", "Let me run it.")
    conv.add("a2", "assistant", content("code", language="unknown", text="print(2 + 3)"), recipient="python")
    conv.add("a3", "tool", content("execution_output", text="5"), name="python")
    conv.add("a4", "assistant", content("code", language="javascript", text="console.log(2 + 3)"))
    conv.assistant("a5", "The sum is 5.")
    items, _ = read(write(tmp_path, [conv.export()]))
    assert [i.content for i in items] == [
        "You: Add 2 and 3 in Python\n\nChatGPT: Let me run it.\n\n```python\nprint(2 + 3)\n```\n\n"
        "Output:\n```\n5\n```\n\n```javascript\nconsole.log(2 + 3)\n```\n\nThe sum is 5."]
    assert items[0].external_id == "chatgpt:c1:u"


def test_a_code_block_holding_backticks_gets_a_longer_fence(tmp_path):
    conv = Conv("c1", "Fences")
    conv.user("u", "Show a Markdown code block")
    conv.add("a", "assistant", content("code", language="markdown", text="```js\nx()\n```"))
    items, _ = read(write(tmp_path, [conv.export()]))
    assert items[0].content.endswith("ChatGPT: ````markdown\n```js\nx()\n```\n````")


def test_an_image_part_is_a_placeholder_and_its_text_is_kept(tmp_path):
    conv = Conv("c1", "Photo")
    conv.add("u", "user", content("multimodal_text", parts=[image_pointer(), "What bird is this?"]),
             attachments=[{"id": "file-Abc123", "name": "bird.jpg", "mime_type": "image/jpeg"},
                          {"id": "file-Def", "name": "notes.pdf", "mime_type": "application/pdf"}])
    conv.assistant("a", "A European robin.")
    items, _ = read(write(tmp_path, [conv.export()]))
    assert items[0].content == ("You: [image]\n\nWhat bird is this?\n\n[file: notes.pdf]\n\n"
                                "ChatGPT: A European robin.")


def test_a_canvas_document_and_a_voice_transcription_are_read(tmp_path):
    conv = Conv("c1", "Canvas and voice")
    conv.add("u", "user", content("multimodal_text", parts=[
        {"content_type": "audio_transcription", "text": "Write a limerick about a cat", "direction": "in"},
        {"content_type": "audio_asset_pointer", "asset_pointer": "sediment://file_1", "size_bytes": 1000}]))
    doc = {"name": "Cat limerick", "type": "document", "content": "There once was a cat from Peru"}
    conv.add("a1", "assistant", content("code", language="json", text=json.dumps(doc)),
             recipient="canmore.create_textdoc")
    conv.add("t1", "tool", content("text", parts=["Successfully created text document 'cat_limerick'"]),
             name="canmore.create_textdoc")
    code = {"name": "fib", "type": "code/python", "content": "def fib(n):\n    return n"}
    conv.add("a2", "assistant", content("code", language="json", text=json.dumps(code)),
             recipient="canmore.create_textdoc")
    conv.assistant("a3", "Done, it is in the canvas.")
    items, problems = read(write(tmp_path, [conv.export()]))
    assert problems == []
    assert items[0].content == ("You: Write a limerick about a cat\n\nChatGPT: Cat limerick\n\n"
                                "There once was a cat from Peru\n\nfib\n\n```python\ndef fib(n):\n    return n\n```"
                                "\n\nDone, it is in the canvas.")


def test_without_a_current_node_the_newest_branch_is_read(tmp_path):
    conv = Conv("c1", "No current")
    conv.user("u", "Pick a number")
    conv.assistant("a1", "Seven")
    conv.assistant("a2", "Three", parent="u")
    exported = conv.export()
    exported["current_node"] = None
    items, problems = read(write(tmp_path, [exported]))
    assert problems == [] and [i.content for i in items] == ["You: Pick a number\n\nChatGPT: Three"]
    assert [v["content"] for v in items[0].versions] == ["You: Pick a number\n\nChatGPT: Seven"]


def test_hidden_system_tool_and_reasoning_messages_are_left_out(tmp_path):
    conv = Conv("c1", "Hidden things")
    conv.add("ctx", "user", content("user_editable_context", user_profile="SECRET-PROFILE",
                                    user_instructions="SECRET-INSTRUCTIONS"), is_user_system_message=True)
    conv.add("mctx", "assistant", content("model_editable_context", model_set_context="SECRET-MEMORY"))
    conv.add("sys2", "system", content("text", parts=["SECRET-SYSTEM-PROMPT"]))
    conv.user("u", "What is the weather in Oslo?")
    conv.add("hid", "user", content("text", parts=["SECRET-HIDDEN-USER"]), hidden=True)
    conv.add("th", "assistant", content("thoughts", thoughts=[{"summary": "SECRET-THOUGHT",
                                                               "content": "SECRET-THOUGHT-BODY"}],
                                        source_analysis_msg_id="x"))
    conv.add("rr", "assistant", content("reasoning_recap", content="SECRET-RECAP: Thought for 4 seconds"))
    conv.add("call", "assistant", content("code", language="unknown", text='search("SECRET-QUERY")'),
             recipient="browser")
    conv.add("browse", "tool", content("tether_browsing_display", result="SECRET-RESULT", summary=""),
             name="browser")
    conv.add("quote", "tool", content("tether_quote", url="https://x", domain="x", text="SECRET-QUOTE",
                                      title="x"), name="browser")
    conv.add("web", "tool", content("text", parts=["SECRET-TOOL-TEXT"]), name="web.run")
    conv.add("bio", "assistant", content("text", parts=["SECRET-BIO: likes Oslo"]), recipient="bio")
    conv.add("ana", "assistant", content("text", parts=["SECRET-ANALYSIS"]))
    conv.mapping["ana"]["message"]["channel"] = "analysis"
    conv.assistant("a", "It is 12 °C and cloudy in Oslo.")
    items, problems = read(write(tmp_path, [conv.export()]))
    assert problems == []
    assert [i.content for i in items] == ["You: What is the weather in Oslo?\n\n"
                                          "ChatGPT: It is 12 °C and cloudy in Oslo."]
    assert "SECRET" not in everything(items[0])


def test_citation_markers_are_removed(tmp_path):
    conv = Conv("c1", "Sources")
    conv.user("u", "Who won the 2022 World Cup?")
    conv.assistant("a", "Argentina won the final on penalties. \ue200cite\ue202turn0search1\ue202turn0news3\ue201 "
                        "Messi scored twice【11†source】【4:0†L12-L20】.\n"
                        "\ue200i\ue202turn0image0\ue202turn0image2\ue201"
                        "The final was played in \ue200entity\ue202[\"city\", \"Lusail\", \"Qatar\"]\ue201.",
                   citations=[{"start_ix": 58, "end_ix": 70, "metadata": {"title": "x", "url": "https://x"}}],
                   content_references=[{"matched_text": "\ue200cite\ue202turn0search1\ue201", "alt": "(x)"}])
    items, _ = read(write(tmp_path, [conv.export()]))
    assert items[0].content == ("You: Who won the 2022 World Cup?\n\nChatGPT: Argentina won the final on penalties. "
                                "Messi scored twice.\nThe final was played in Lusail.")


def test_german_chinese_and_emoji_come_through_unchanged(tmp_path):
    conv = chat("c1", "Übersetzung 翻译 🌍",
                ("Wie sagt man „Grüß Gott“ auf Chinesisch? 🤔", "Man sagt „你好“ (nǐ hǎo) – schöne Grüße! 👋🏽"))
    items, _ = read(write(tmp_path, [conv.export()]))
    assert items[0].title == "Übersetzung 翻译 🌍"
    assert items[0].content == ("You: Wie sagt man „Grüß Gott“ auf Chinesisch? 🤔\n\n"
                                "ChatGPT: Man sagt „你好“ (nǐ hǎo) – schöne Grüße! 👋🏽")


def test_a_very_long_answer_is_kept_whole(tmp_path):
    answer = "\n\n".join(f"Paragraph {n}: " + "lorem ipsum dolor sit amet " * 40 for n in range(400)).strip()
    items, _ = read(write(tmp_path, [chat("c1", "Long", ("Write a lot", answer)).export()]))
    assert items[0].content == "You: Write a lot\n\nChatGPT: " + answer
    assert len(items[0].content) > 400_000


def test_null_times_give_no_time_and_no_problem(tmp_path):
    conv = Conv("c1", None, create_time=None)
    conv.user("u", "Hello", t=None)
    conv.assistant("a", "Hi!", t=None)
    timed = Conv("c2", "Timed", create_time=T0)
    timed.user("u2", "Hello again", t=None)
    items, problems = read(write(tmp_path, [conv.export(), timed.export()]))
    assert problems == []
    assert [(i.title, i.created_at) for i in items] == [("", None), ("Timed", T0)]


def test_a_conversation_without_an_id_still_has_stable_ids_but_no_address(tmp_path):
    conv = chat(None, "No id", ("Hi", "Hello"))
    items, _ = read(write(tmp_path, [conv.export()]))
    again, _ = read(write(tmp_path, [conv.export()]))
    assert items[0].source_url == "" and "conversation_id" not in items[0].metadata
    assert items[0].session.startswith("chatgpt:") and items[0].external_id.startswith(items[0].session + ":")
    assert [i.external_id for i in items] == [i.external_id for i in again]


# --- branches: a regenerated answer, an edited prompt


def test_a_regenerated_answer_is_a_version_of_the_exchange(tmp_path):
    conv = Conv("c1", "Poem")
    conv.user("u", "Write a haiku about rain")
    old = conv.assistant("a-old", "Rain on the tin roof")
    conv.assistant("a-new", "Soft rain, quiet streets", parent="u")
    items, _ = read(write(tmp_path, [conv.export()]))
    assert len(items) == 1
    assert items[0].content == "You: Write a haiku about rain\n\nChatGPT: Soft rain, quiet streets"
    created = dt.datetime.fromtimestamp(conv.mapping[old]["message"]["create_time"], dt.UTC).isoformat()
    assert items[0].versions == [{"content": "You: Write a haiku about rain\n\nChatGPT: Rain on the tin roof",
                                  "created_at": created}]


def test_an_edited_prompt_keeps_the_first_wording_and_its_answer_as_a_version(tmp_path):
    conv = Conv("c1", "Recipe")
    conv.user("u1", "I have eggs and spinach")
    a1 = conv.assistant("a1", "Make an omelette.")
    conv.user("u2-old", "Something without eggs?")
    conv.assistant("a2-old", "Spinach salad.")
    conv.user("u2-new", "Something vegan?", parent=a1)
    conv.assistant("a2-new", "Spinach curry with chickpeas.")
    conv.user("u3", "Thanks!")
    conv.assistant("a3", "Enjoy!")
    items, _ = read(write(tmp_path, [conv.export()]))
    assert [i.content for i in items] == [
        "You: I have eggs and spinach\n\nChatGPT: Make an omelette.",
        "You: Something vegan?\n\nChatGPT: Spinach curry with chickpeas.",
        "You: Thanks!\n\nChatGPT: Enjoy!",
    ]
    assert [v["content"] for v in items[1].versions] == ["You: Something without eggs?\n\nChatGPT: Spinach salad."]
    assert items[0].versions == items[2].versions == []
    assert items[1].external_id == "chatgpt:c1:u2-new"


def test_an_older_branch_chosen_as_current_is_read_and_the_newer_one_becomes_the_version(tmp_path):
    conv = Conv("c1", "Pick")
    conv.user("u", "Name a colour")
    first = conv.assistant("a1", "Blue")
    conv.assistant("a2", "Green", parent="u")
    items, _ = read(write(tmp_path, [conv.export(current=first)]))
    assert items[0].content == "You: Name a colour\n\nChatGPT: Blue"
    assert [v["content"] for v in items[0].versions] == ["You: Name a colour\n\nChatGPT: Green"]


def test_a_regenerated_answer_after_a_tool_call_keeps_the_shared_part(tmp_path):
    conv = Conv("c1", "Tools")
    conv.user("u", "Plot x squared")
    conv.add("code", "assistant", content("code", language="python", text="plot(x**2)"), recipient="python")
    out = conv.add("out", "tool", content("execution_output", text="<<ImageDisplayed>>"), name="python")
    conv.assistant("a-old", "Here is the parabola.")
    conv.assistant("a-new", "Done: a parabola.", parent=out)
    items, _ = read(write(tmp_path, [conv.export()]))
    shared = "You: Plot x squared\n\nChatGPT: ```python\nplot(x**2)\n```\n\nOutput:\n```\n<<ImageDisplayed>>\n```\n\n"
    assert items[0].content == shared + "Done: a parabola."
    assert [v["content"] for v in items[0].versions] == [shared + "Here is the parabola."]


# --- identities


def test_external_ids_are_stable_across_reads_and_a_newer_export(tmp_path):
    conv = chat("c1", "Growing", ("One", "1"), ("Two", "2"))
    old_path = write(tmp_path, [conv.export(), chat("c2", "Other", ("Hi", "Hello")).export()], "old.json")
    conv.assistant("c1-a1b", "Two, again", parent="c1-u1")  # regenerated later
    conv.user("c1-u2", "Three")
    conv.assistant("c1-a2", "3")
    new_path = write(tmp_path, [chat("c3", "New", ("New?", "Yes")).export(), conv.export(),
                                chat("c2", "Other (renamed)", ("Hi", "Hello")).export()], "new.json")
    first, second = read(old_path)[0], read(old_path)[0]
    assert [(i.external_id, i.content) for i in first] == [(i.external_id, i.content) for i in second]
    newer = {i.external_id: i for i in read(new_path)[0]}
    assert {i.external_id for i in first} < set(newer)
    assert set(newer) - {i.external_id for i in first} == {"chatgpt:c1:c1-u2", "chatgpt:c3:c3-u0"}
    assert newer["chatgpt:c1:c1-u1"].content == "You: Two\n\nChatGPT: Two, again"


# --- the export as delivered: a zip, a subfolder, split files


def zipped(tmp_path: Path, members: dict[str, str | bytes], name: str = "export.zip") -> Path:
    path = tmp_path / name
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        for member, data in members.items():
            zf.writestr(member, data)
    return path


def export_files(conversations: list[Any], folder: str = "") -> dict[str, str | bytes]:
    return {f"{folder}conversations.json": json.dumps(conversations), f"{folder}chat.html": "<html></html>",
            f"{folder}user.json": json.dumps({"id": "user-1", "email": "a@b.c"}),
            f"{folder}message_feedback.json": "[]", f"{folder}file-Abc123-bird.jpg": b"\xff\xd8\xff\xe0" + bytes(64)}


def test_a_zip_with_the_export_in_a_subfolder(tmp_path):
    conversations = [chat("c1", "Zipped", ("Hi", "Hello"), ("Bye", "Goodbye")).export()]
    path = zipped(tmp_path, export_files(conversations, "chatgpt-export-2025-01-31/"))
    assert chatgpt.sniff(path)
    items, problems = read(path)
    assert problems == [] and items == read(write(tmp_path, conversations))[0]


def test_a_zip_with_split_conversation_files_reads_them_in_order(tmp_path):
    members = export_files([])
    del members["conversations.json"]
    members["conversations-001.json"] = json.dumps([chat("c2", "Second", ("B", "b")).export()])
    members["conversations-000.json"] = json.dumps([chat("c1", "First", ("A", "a")).export()])
    path = zipped(tmp_path, members)
    assert chatgpt.sniff(path)
    assert [i.title for i in read(path)[0]] == ["First", "Second"]


# --- malformed input


def bad_conversations() -> list[tuple[str, Any]]:
    """(what the Problem must name, the conversation) for each way a conversation can be broken."""
    cycle = chat("cyc", "Cycle", ("A", "a"))
    cycle.mapping[ROOT]["parent"] = "cyc-a0"
    lost = chat("lost", "Lost", ("A", "a")).export(current="no-such-node")
    wrong_parts = Conv("parts", "Wrong parts")
    wrong_parts.add("wp-u", "user", content("text", parts=[42, None, ["x"]]))
    not_list = Conv("notlist", "Parts not a list")
    not_list.add("nl-u", "user", content("text", parts="just a string"))
    empty = Conv("empty", "Empty texts")
    empty.user("e-u", "   ")
    empty.assistant("e-a", "")
    return [
        ("conversation 2", "not a conversation"),
        ("conversation 4", ["a", "list"]),
        ("No mapping", {"title": "No mapping", "create_time": T0, "current_node": "x", "conversation_id": "nm"}),
        ("Mapping a list", {"title": "Mapping a list", "mapping": [1, 2], "current_node": None, "id": "ml"}),
        ("Cycle", cycle.export()),
        ("Lost", lost),
        ("Wrong parts", wrong_parts.export()),
        ("Parts not a list", not_list.export()),
        ("Empty texts", empty.export()),
    ]


def test_malformed_conversations_are_problems_and_the_good_ones_around_them_come_out(tmp_path):
    bad = bad_conversations()
    good = [chat(f"g{n}", f"Good {n}", (f"Question {n}", f"Answer {n}")).export() for n in range(len(bad) + 1)]
    mixed = [good[0]] + [x for pair in zip((b for _, b in bad), good[1:], strict=True) for x in pair]
    items, problems = read(write(tmp_path, mixed))
    assert [i.title for i in items] == [f"Good {n}" for n in range(len(good))]
    assert len(problems) == len(bad)
    for (where, _), problem in zip(bad, problems, strict=True):
        assert where in problem.where, (where, problem)
        assert problem.message and "\n" not in problem.message + problem.where
    reasons = " | ".join(p.message for p in problems)
    assert "cycle" in reasons and "current_node" in reasons and "mapping" in reasons


@pytest.mark.parametrize("when", [math.nan, math.inf, -math.inf, 1e300, 10**400, -5.0, "yesterday", True, [1]])
def test_a_bad_time_is_a_problem_and_the_exchange_keeps_the_conversations_time(tmp_path, when):
    conv = Conv("c1", "Bad time")
    conv.user("u", "Hello", t=when)
    conv.assistant("a", "Hi")
    path = write(tmp_path, [conv.export(), chat("c2", "After", ("Still", "here")).export()])
    items, problems = read(path)
    assert [(i.title, i.created_at) for i in items] == [("Bad time", T0), ("After", items[1].created_at)]
    assert len(problems) == 1 and "Bad time" in problems[0].where and "create_time" in problems[0].message


def test_a_bad_conversation_time_is_a_problem(tmp_path):
    conv = chat("c1", "Odd", ("Hi", "Hello"), create_time=-1.0)
    items, problems = read(write(tmp_path, [conv.export()]))
    assert len(items) == 1 and items[0].created_at == conv.mapping["c1-u0"]["message"]["create_time"]
    assert len(problems) == 1 and "create_time" in problems[0].message


def test_lone_surrogates_become_replacement_characters(tmp_path):
    conv = chat("c1", "Cut \ud83d", ("Broken \udc00 emoji \ud83d", "Fine \ud83d\ude00 and cut \ud83d"))
    items, problems = read(write(tmp_path, [conv.export(), chat("c2", "Next", ("A", "b")).export()]))
    assert [i.title for i in items] == ["Cut \ufffd", "Next"]
    assert items[0].content == "You: Broken \ufffd emoji \ufffd\n\nChatGPT: Fine 😀 and cut \ufffd"
    items[0].content.encode("utf-8")
    assert problems == []


def test_not_json_not_an_array_and_broken_files_are_one_problem(tmp_path):
    cases = {
        "text.json": b"Hello, this is not JSON",
        "object.json": json.dumps({"title": "x", "mapping": {}}).encode(),
        "number.json": b"42",
        "empty.json": b"",
        "binary.json": bytes(range(256)),
    }
    for name, data in cases.items():
        (tmp_path / name).write_bytes(data)
        items, problems = read(tmp_path / name)
        assert items == [] and len(problems) == 1, name
        assert "\n" not in problems[0].message
    (tmp_path / "damaged.zip").write_bytes(zipped(tmp_path, export_files([])).read_bytes()[:60])
    no_export = zipped(tmp_path, {"notes.txt": "hello", "user.json": "{}"}, "other.zip")
    for path in (tmp_path / "damaged.zip", no_export, tmp_path / "missing.json"):
        items, problems = read(path)
        assert items == [] and len(problems) == 1, path


def test_a_byte_order_mark_is_skipped(tmp_path):
    path = tmp_path / "conversations.json"
    path.write_bytes(b"\xef\xbb\xbf" + json.dumps([chat("c1", "Saved on Windows", ("A", "b")).export()]).encode())
    assert chatgpt.sniff(path)
    assert [i.title for i in read(path)[0]] == ["Saved on Windows"]


def test_a_zip_damaged_inside_gives_what_it_can_and_one_problem(tmp_path):
    text = json.dumps([chat(f"c{n}", f"Chat {n:03d}", ("Q" * 50, "A" * 50)).export() for n in range(300)])
    path = tmp_path / "export.zip"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_STORED) as zf:
        zf.writestr("conversations.json", text)
    data = bytearray(path.read_bytes())
    where = data.index(b"Chat 290")
    data[where:where + 8] = b"Chat XYZ"  # same length: only the CRC at the member's end tells
    path.write_bytes(bytes(data))
    items, problems = read(path)
    titles = [i.title for i in items]  # streamed: what comes before the check (the damage included) is read
    assert 200 < len(titles) < 300 and titles[:290] == [f"Chat {n:03d}" for n in range(290)]
    assert len(problems) == 1 and "damaged" in problems[0].message


def test_a_truncated_file_gives_what_comes_before_the_cut_and_one_problem(tmp_path):
    text = json.dumps([chat(f"c{n}", f"Chat {n}", ("Q", "A")).export() for n in range(5)])
    path = tmp_path / "conversations.json"
    path.write_text(text[: int(len(text) * 0.7)], encoding="utf-8")
    items, problems = read(path)
    assert [i.title for i in items] == ["Chat 0", "Chat 1", "Chat 2"]
    assert len(problems) == 1 and "3" in problems[0].message


# --- sniff


def claude_export() -> list[dict[str, Any]]:
    return [{"uuid": "5e1c0a9e-0000-4000-8000-000000000001", "name": "A Claude chat",
             "created_at": "2025-01-01T10:00:00.000000Z", "updated_at": "2025-01-01T10:05:00.000000Z",
             "account": {"uuid": "acc"}, "chat_messages": [
                 {"uuid": "m1", "text": "Hi", "sender": "human", "created_at": "2025-01-01T10:00:00Z",
                  "content": [{"type": "text", "text": "Hi"}], "attachments": [], "files": []}]}]


def test_sniff_takes_chatgpt_exports_only(tmp_path):
    conversations = [chat("c1", "A", ("Q", "A")).export()]
    assert chatgpt.sniff(write(tmp_path, conversations))
    assert chatgpt.sniff(zipped(tmp_path, export_files(conversations)))
    assert chatgpt.sniff(write(tmp_path, conversations, "my-chats.json"))
    big_first = chat("c2", "Big", ("Q", "x" * 200_000)).export()  # "current_node" far from the start
    assert chatgpt.sniff(write(tmp_path, [big_first], "big.json"))
    assert chatgpt.sniff(zipped(tmp_path, {**export_files([]), "conversations.json": "[]"}, "new-account.zip"))

    assert not chatgpt.sniff(write(tmp_path, claude_export(), "claude.json"))
    assert not chatgpt.sniff(zipped(tmp_path, {"conversations.json": json.dumps(claude_export()),
                                               "users.json": "[]", "projects.json": "[]"}, "claude.zip"))
    assert not chatgpt.sniff(write(tmp_path, [{"name": "x", "mapping": {"a": 1}}], "other.json"))
    assert not chatgpt.sniff(write(tmp_path, {"mapping": {}, "current_node": None}, "single.json"))
    (tmp_path / "notes.txt").write_text(json.dumps(conversations), encoding="utf-8")
    assert not chatgpt.sniff(tmp_path / "notes.txt")
    assert not chatgpt.sniff(tmp_path / "nothing-here.json")
    assert not chatgpt.sniff(tmp_path)
    (tmp_path / "fake.zip").write_bytes(b"PK\x03\x04 not really")
    assert not chatgpt.sniff(tmp_path / "fake.zip")


# --- random malformed conversations among good ones


def good_conversation(n: int) -> tuple[dict[str, Any], list[str]]:
    conv = chat(f"good-{n}", f"Good {n}", (f"Question {n} ü 中", f"Answer {n} 🎉"), (f"Follow-up {n}", ""))
    return conv.export(), [f"You: Question {n} ü 中\n\nChatGPT: Answer {n} 🎉", f"You: Follow-up {n}"]


SPECIAL = [math.nan, math.inf, -math.inf, 1e300, -1.0, 10**400, "", "  ", "\ud83d", "\udc00 x", "\ud83d\u0041",
           "\ue200cite\ue202turn0search1\ue201", "【1†source】", "NaN", "-Infinity"]  # NaN, Infinity: not JSON
json_leaf = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=True, allow_infinity=True),
                      st.text(max_size=8), st.sampled_from(SPECIAL))
junk = st.recursive(json_leaf, lambda inner: st.one_of(st.lists(inner, max_size=3),
                                                       st.dictionaries(st.text(max_size=5), inner, max_size=3)),
                    max_leaves=8)
field_names = st.sampled_from(["title", "create_time", "update_time", "mapping", "current_node", "conversation_id",
                               "id", "default_model_slug"])


@st.composite
def malformed(draw: st.DrawFn) -> Any:
    """A conversation broken in one or more places, or not a conversation at all."""
    kind = draw(st.sampled_from(["junk", "fields", "node", "message"]))
    if kind == "junk":
        return draw(junk)
    conv = chat("bad", draw(st.text(max_size=10)), ("Q", "A"), ("Q2", "A2")).export()
    if kind == "fields":
        for name in draw(st.lists(field_names, min_size=1, max_size=3)):
            conv[name] = draw(junk)
        return conv
    node = conv["mapping"][draw(st.sampled_from(sorted(conv["mapping"])))]
    if kind == "node":
        node[draw(st.sampled_from(["parent", "children", "message", "id"]))] = draw(junk)
        return conv
    if node["message"] is None:
        node["message"] = draw(junk)
        return conv
    target = draw(st.sampled_from(["create_time", "content", "author", "metadata", "recipient", "parts"]))
    if target == "parts":
        node["message"]["content"]["parts"] = draw(st.lists(junk, max_size=3))
    else:
        node["message"][target] = draw(junk)
    return conv


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(st.booleans(), malformed()), min_size=1, max_size=8))
def test_random_malformed_conversations_never_stop_the_good_ones(mix):
    conversations, expected = [], []
    for n, (good, bad) in enumerate(mix):
        if good:
            conv, contents = good_conversation(n)
            conversations.append(conv)
            expected += contents
        else:
            conversations.append(bad)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "conversations.json"
        path.write_text(json.dumps(conversations), encoding="utf-8")  # NaN and lone surrogates included
        items, problems = read(path)
    contents = [i.content for i in items]
    assert [c for c in contents if c in expected] == expected
    for p in problems:
        assert p.where and p.message and "\n" not in p.where + p.message and "\r" not in p.where + p.message
    for i in items:
        i.content.encode("utf-8")
        assert i.content.strip()


# --- bounded memory


def test_a_large_export_is_read_in_bounded_memory(tmp_path):
    """6,000 conversations, 25 MB (20,000 small ones take ~20 s under tracemalloc: it is the allocations)."""
    path = tmp_path / "conversations.json"
    count = 6_000
    with path.open("w", encoding="utf-8") as fh:
        fh.write("[")
        for n in range(count):
            conv = chat(f"c{n:05d}", f"Chat {n}", (f"Question number {n}?", f"Answer number {n}. " * 150))
            fh.write(("," if n else "") + json.dumps(conv.export()))
        fh.write("]")
    size = path.stat().st_size
    seen = 0
    tracemalloc.start()
    try:
        for out in chatgpt.read(path):
            assert isinstance(out, Item)
            seen += 1
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert seen == count
    assert size > 20_000_000 and peak < size / 20, (size, peak)


def test_huge_and_very_precise_numbers_neither_crash_nor_lose_precision_silently(tmp_path):
    """ijson reads a number with a fraction as a Decimal and an integer as an int, never a float that could
    overflow: a time of 1e400 or a 30-digit integer is a bad time (said once), a time with 15 decimals is read to
    a float's precision, a huge number where text belongs is a Problem; the exchange is still read."""
    raw = ('[{"id": "c1", "title": "big", "create_time": 1e400, "mapping": {'
           '"a": {"id": "a", "message": null, "parent": null, "children": ["b"]},'
           '"b": {"id": "b", "parent": "a", "children": ["c"], "message": {"author": {"role": "user"},'
           ' "create_time": 123456789012345678901234567890, "metadata": {"x": 1.00000000000000000000001},'
           ' "content": {"content_type": "text", "parts": ["hi", 12345678901234567890123456789]}}},'
           '"c": {"id": "c", "parent": "b", "children": [], "message": {"author": {"role": "assistant"},'
           ' "create_time": 1700000000.123456789012345, "content": {"content_type": "text", "parts": ["hello"]}}}'
           '}, "current_node": "c"}]')
    path = tmp_path / "conversations.json"
    path.write_text(raw)
    items, problems = read(path)
    assert [i.content for i in items] == ["You: hi\n\nChatGPT: hello"]
    assert items[0].created_at is None  # the prompt's time and the conversation's are out of range
    assert len(problems) == 1 and "not text but a JSON number" in problems[0].message
    assert "2 more problems" in problems[0].message
    path.write_text(raw.replace("123456789012345678901234567890", "1700000000.123456789012345"))
    items, _ = read(path)
    assert items[0].created_at == pytest.approx(1700000000.123456789, abs=1e-6)
