"""Generated exports of other tools through the real CLI, in this process (real SQLite, Chroma, MiniLM):
ChatGPT zips with message trees, branches, every kind of message and bad values; asserted: exit 0 or 1 and no
traceback, every well-formed exchange of the branch shown stored exactly once (found by a marker in its text),
one session per conversation, the same zip again adds nothing, a newer export adds exactly its new exchanges.
The Claude and notes readers get a smaller check of the same kind."""

from __future__ import annotations

import json
import os
import re
import tempfile
import zipfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from desktop_memory.engine.store import Store
from tests.fuzz.cli_runner import Run, cli

pytestmark = [pytest.mark.integration, pytest.mark.usefixtures("engine_in_process")]
HUNT = "DESKTOP_MEMORY_IMPORT_EXAMPLES" in os.environ  # a hunt: new examples each run, failures shrunk
EXAMPLES = settings(max_examples=int(os.environ.get("DESKTOP_MEMORY_IMPORT_EXAMPLES", "15")), deadline=None,
                    database=None, derandomize=not HUNT, print_blob=True,
                    phases=list(Phase) if HUNT else [Phase.explicit, Phase.generate],  # each example: 2-3 imports
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])

# odd but valid text: combining marks, right-to-left runs and marks, emoji sequences, other scripts, odd spaces
ODD = ["e\u0301\u0323", "a\u0308\u0308\u0308", "שלום עולם", "\u200fمرحبا\u200f", "\u202bرتل\u202c", "👩🏽‍💻🇳🇴",
       "🏳️‍🌈", "日本語のテキスト", "中文", "Привет", "ﷺ", "\u00a0\u2009\u3000", "Ω≈ç√", "𝔘𝔫𝔦𝔠𝔬𝔡𝔢", "`code`", "**bold**",
       "```", "【11†source】", "tab\there", "line\nbreak", "\\u0000", '"quoted"', "{json}", "</html>"]
text_bits = st.lists(st.one_of(st.sampled_from(ODD), st.text(
    st.characters(blacklist_categories=("Cs", "Cc", "Co", "Cn")), max_size=12)), max_size=4).map(" ".join)
BAD_TIMES = [None, "yesterday", "1700000000", 1e308, -5, 0, 99_999_999_999, True, [], {}, float("nan"), 1.5e9]
good_time = st.floats(min_value=1e8, max_value=4e9, allow_nan=False)
bad_value = st.sampled_from([None, 5, -1, "x", [], {}, [1, "a"], {"k": []}, True, 1e400 * 0, ""])


def marker(kind: str, n: int) -> str:
    return f"mk{kind}{n:05d}q"  # alphanumeric: never redacted, never normalised away


@dataclass
class Export:
    """The conversations of a generated export and what each must give."""

    conversations: list[Any] = field(default_factory=list)
    expected: dict[str, int] = field(default_factory=dict)  # prompt marker -> conversation index
    answers: dict[str, str] = field(default_factory=dict)  # answer marker -> its prompt's marker
    absent: set[str] = field(default_factory=set)  # markers that must be in no memory's text
    maybe: set[str] = field(default_factory=set)  # markers of damaged exchanges: in at most one memory
    leaves: dict[int, str] = field(default_factory=dict)  # conversation index -> its active leaf (readable ones)
    counter: int = 0

    def next(self, kind: str) -> str:
        self.counter += 1
        return marker(kind, self.counter)


def message(nid: str, role: str, body: dict[str, Any], t: Any, **kw: Any) -> dict[str, Any]:
    meta = kw.pop("metadata", {})
    return {"id": nid, "author": {"role": role, "name": kw.pop("name", None), "metadata": {}}, "create_time": t,
            "update_time": kw.pop("update_time", None), "content": body, "status": kw.pop("status", "finished"),
            "end_turn": kw.pop("end_turn", None), "weight": kw.pop("weight", 1.0), "metadata": meta,
            "recipient": kw.pop("recipient", "all"), "channel": kw.pop("channel", None)}


class Tree:
    def __init__(self, prefix: str):
        self.prefix, self.n = prefix, 0
        self.mapping: dict[str, Any] = {}
        self.root = self.node(None, None)
        self.leaf = self.root

    def node(self, msg: dict[str, Any] | None, parent: str | None, *, first: bool = False) -> str:
        self.n += 1
        nid = f"{self.prefix}-n{self.n}"
        if msg is not None:
            msg["id"] = nid
        self.mapping[nid] = {"id": nid, "message": msg, "parent": parent, "children": []}
        if parent is not None:
            kids = self.mapping[parent]["children"]
            kids.insert(0, nid) if first else kids.append(nid)
        return nid

    def add(self, msg: dict[str, Any] | None) -> str:
        self.leaf = self.node(msg, self.leaf)
        return self.leaf


@st.composite
def answer(draw: st.DrawFn, ex: Export, prompt: str, t: Any) -> tuple[list[dict[str, Any]], str]:
    """The messages of one answer (some left out by the reader) and the marker its text must hold."""
    mk = ex.next("a")
    noise = draw(text_bits)
    kind = draw(st.sampled_from(["text", "multimodal", "code", "code+output"]))
    meta = {"model_slug": draw(st.sampled_from(["gpt-4o", 5, None, ["x"]]))}
    out = []
    if kind == "text":
        out.append(message("", "assistant", {"content_type": "text", "parts": [f"{mk}\n{noise}"]}, t, metadata=meta))
    elif kind == "multimodal":
        out.append(message("", "assistant", {"content_type": "multimodal_text", "parts": [
            {"content_type": "image_asset_pointer", "asset_pointer": "file-service://x"}, f"{mk} {noise}"]}, t,
            metadata=meta))
    else:
        out.append(message("", "assistant", {"content_type": "code", "language": draw(st.sampled_from(
            ["python", "unknown", "", 7, "c++"])), "text": f"print('{mk}')  # {noise}"}, t, recipient="python"))
        if kind == "code+output":
            out.append(message("", "tool", {"content_type": "execution_output", "text": f"{mk}-out"}, t,
                               name="python"))
    for _ in range(draw(st.integers(0, 2))):  # left out: hidden, system, a tool call and its result, reasoning
        hidden = ex.next("h")
        ex.absent.add(hidden)
        out.insert(draw(st.integers(0, len(out))), draw(st.sampled_from([
            message("", "assistant", {"content_type": "text", "parts": [hidden]}, t,
                    metadata={"is_visually_hidden_from_conversation": True}),
            message("", "system", {"content_type": "text", "parts": [hidden]}, t),
            message("", "assistant", {"content_type": "code", "text": f"search('{hidden}')"}, t, recipient="browser"),
            message("", "tool", {"content_type": "tether_browsing_display", "result": hidden, "text": hidden}, t,
                    name="browser"),
            message("", "assistant", {"content_type": "thoughts", "thoughts": [{"content": hidden}]}, t),
            message("", "assistant", {"content_type": "text", "parts": [hidden]}, t, channel="analysis"),
        ])))
    for m in out:  # wrong types where the reader does not need them
        if draw(st.booleans()):
            m[draw(st.sampled_from(["status", "weight", "end_turn", "update_time"]))] = draw(bad_value)
    ex.answers[mk] = prompt
    return out, mk


@st.composite
def conversation(draw: st.DrawFn, ex: Export, index: int) -> dict[str, Any] | Any:
    broken = draw(st.sampled_from(["no"] * 8 + ["not an object", "no mapping", "dangling", "cycle"]))
    if broken == "not an object":
        return draw(st.sampled_from([5, "conversation", [], None, True]))
    cid = draw(st.sampled_from([f"c{index:03d}-{draw(st.uuids())}", None, f"conv {index} ü"]))
    tree = Tree(f"c{index}")
    t = draw(st.one_of(good_time, st.sampled_from(BAD_TIMES)))
    if draw(st.booleans()):
        tree.add(message("", "system", {"content_type": "text", "parts": [""]}, None,
                         metadata={"is_visually_hidden_from_conversation": True}))
    mine: list[str] = []
    for _ in range(draw(st.integers(0, 5))):
        prompt = ex.next("p")
        damaged = draw(st.integers(0, 9)) == 0
        parts: Any = [f"{prompt} {draw(text_bits)}"]
        if not damaged and draw(st.booleans()):
            parts = [{"content_type": "image_asset_pointer", "asset_pointer": "x"}, *parts]
        if damaged:
            parts = draw(st.sampled_from(["not a list", 7, {"p": prompt}]))
        meta: dict[str, Any] = {}
        if draw(st.booleans()):
            meta["attachments"] = draw(st.sampled_from([[{"name": "report.pdf"}], "x", [{"name": 5}], [7]]))
        mt = draw(st.one_of(good_time, st.sampled_from(BAD_TIMES)))
        user = tree.add(message("", "user", {"content_type": "text" if isinstance(parts, list) and len(parts) == 1
                                             else "multimodal_text", "parts": parts}, mt, metadata=meta))
        msgs, amk = draw(answer(ex, prompt, mt))
        first = None
        for m in msgs:
            nid = tree.add(m)
            first = first or nid
        if draw(st.integers(0, 3)) == 0 and first is not None:  # a regenerated answer: a branch off the prompt
            alt = ex.next("r")
            ex.absent.add(alt)
            tree.node(message("", "assistant", {"content_type": "text", "parts": [f"{alt} {draw(text_bits)}"]},
                              mt), user, first=True)
        if damaged:
            ex.maybe.update({prompt, amk})
            ex.answers.pop(amk)
        else:
            mine.append(prompt)
    current: Any = tree.leaf
    if draw(st.integers(0, 4)) == 0:
        current = draw(st.sampled_from([None, None, 12, ""]))  # None: the newest leaf, which is the same here
    if broken == "dangling":
        current = "nowhere"
    conv = {"title": draw(st.one_of(text_bits, bad_value)), "create_time": t, "update_time": draw(bad_value),
            "mapping": tree.mapping, "current_node": current, "default_model_slug": draw(bad_value),
            "gizmo_id": draw(st.sampled_from([None, 3, "g-x"])), "is_archived": False}
    if cid is not None:
        conv.update(conversation_id=cid, id=cid)
    elif draw(st.booleans()):
        conv["id"] = draw(st.sampled_from([5, "", None]))
    if broken == "no mapping":
        conv["mapping"] = draw(st.sampled_from([None, [], "x"]))
    if broken == "cycle" and len(tree.mapping) > 1:
        tree.mapping[tree.root]["parent"] = tree.leaf
    if broken != "no" and not (broken == "cycle" and len(tree.mapping) <= 1):
        ex.maybe.update(mine)
        return conv
    if current in (12, ""):  # not a node: the conversation is refused as a whole
        ex.maybe.update(mine)
        return conv
    for p in mine:
        ex.expected[p] = index
    ex.leaves[index] = tree.leaf
    conv["_tree"] = tree  # taken out before writing
    return conv


@st.composite
def chatgpt_export(draw: st.DrawFn) -> Export:
    ex = Export()
    for i in range(draw(st.integers(1, 5))):
        ex.conversations.append(draw(conversation(ex, i)))
    return ex


def write_zip(path: Path, conversations: list[Any], ascii_only: bool) -> Path:
    clean = [{k: v for k, v in c.items() if k != "_tree"} if isinstance(c, dict) else c for c in conversations]
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("conversations.json", json.dumps(clean, ensure_ascii=ascii_only))
        zf.writestr("chat.html", "<html></html>")
        zf.writestr("user.json", "{}")
    return path


def imported(data: Path, path: Path) -> tuple[Run, int]:
    run = cli("--data-dir", str(data), "import", str(path))
    assert run.code in (0, 1), (run.code, run.err[-3000:])
    assert "Traceback" not in run.err and "unexpected error" not in run.err, run.err[-3000:]
    m = re.match(r"Imported (\d+) new", run.out)
    assert m is not None, (run.out, run.err[-2000:])  # exit 1: nothing in it could be read, said in one line
    assert run.code == 0 or (int(m.group(1)) == 0 and "nothing was imported" in run.err), run.err[-2000:]
    return run, int(m.group(1)) if m else 0


def memories(data: Path) -> list[tuple[str, str | None, list[str]]]:
    """(content, session id, earlier texts) of every memory."""
    if not (data / "memories.sqlite3").exists():
        return []
    store = Store(data / "memories.sqlite3")
    try:
        return [(m.content, m.session_id, [v.content for v in store.versions(m.id)]) for m in store.iter_all()]
    finally:
        store.close()


def check(ex: Export, stored: list[tuple[str, str | None, list[str]]]) -> None:
    texts = [c for c, _, _ in stored]
    holders = {mk: [i for i, c in enumerate(texts) if mk in c] for mk in {*ex.expected, *ex.answers, *ex.maybe}}
    for mk in ex.expected:
        assert len(holders[mk]) == 1, (mk, holders[mk])
    for mk, prompt in ex.answers.items():
        assert holders[mk] == holders[prompt], (mk, prompt)  # the answer stored with its prompt, once
    for mk in ex.maybe:
        assert len(holders[mk]) <= 1, mk
    for mk in ex.absent:
        assert not any(mk in c for c in texts), mk
    sessions: dict[int, set[str | None]] = {}
    for mk, conv in ex.expected.items():
        sessions.setdefault(conv, set()).add(stored[holders[mk][0]][1])
    assert all(len(s) == 1 and None not in s for s in sessions.values()), sessions
    assert len({next(iter(s)) for s in sessions.values()}) == len(sessions)  # one session per conversation


def extend(ex: Export, draw: Any) -> int:
    """A newer export: new well-formed exchanges at the active leaf of some readable conversations."""
    added = 0
    for index, conv in enumerate(ex.conversations):
        if index not in ex.leaves or not draw(st.booleans()):
            continue
        tree: Tree = conv["_tree"]
        for _ in range(draw(st.integers(1, 3))):
            prompt, amk = ex.next("p"), ex.next("a")
            tree.add(message("", "user", {"content_type": "text", "parts": [f"{prompt} {draw(text_bits)}"]}, 1.8e9))
            tree.add(message("", "assistant", {"content_type": "text", "parts": [amk]}, 1.8e9 + 1))
            ex.expected[prompt], ex.answers[amk] = index, prompt
            added += 1
        if isinstance(conv.get("current_node"), str):
            conv["current_node"] = tree.leaf
    return added


@EXAMPLES
@given(ex=chatgpt_export(), ascii_only=st.booleans(), data=st.data())
def test_generated_chatgpt_exports_import_each_exchange_once(ex: Export, ascii_only: bool, data: Any) -> None:
    with tempfile.TemporaryDirectory(prefix="dm-gpt-") as tmp:
        folder = Path(tmp) / "data"
        first = write_zip(Path(tmp) / "export.zip", ex.conversations, ascii_only)
        run, new = imported(folder, first)
        stored = memories(folder)
        assert new == len(stored) >= len(ex.expected), (run.out, run.err[-2000:])
        check(ex, stored)
        again, new = imported(folder, first)
        assert new == 0 and len(memories(folder)) == len(stored), again.out
        assert "updated" not in again.out
        added = extend(ex, data.draw)
        newer, new = imported(folder, write_zip(Path(tmp) / "newer.zip", ex.conversations, ascii_only))
        after = memories(folder)
        assert new == added and len(after) == len(stored) + added, (newer.out, newer.err[-2000:])
        assert "updated" not in newer.out
        check(ex, after)


# -- Claude: a smaller check of the same kind --------------------------------------------------------------------
def claude_message(uuid: str, sender: str, blocks: list[dict[str, Any]], at: Any, parent: str | None
                   ) -> dict[str, Any]:
    text = "\n".join(b.get("text", "") for b in blocks if b.get("type") == "text")
    m = {"uuid": uuid, "text": text, "content": blocks, "sender": sender, "created_at": at, "updated_at": at,
         "attachments": [], "files": []}
    if parent is not None:
        m["parent_message_uuid"] = parent
    return m


@st.composite
def claude_conversation(draw: st.DrawFn, ex: Export, index: int) -> Any:
    broken = draw(st.sampled_from(["no"] * 6 + ["not an object", "messages not a list", "no sender", "bad date",
                                                "NaN"]))
    if broken == "not an object":
        return draw(st.sampled_from([3, "x", [], None]))
    linked = draw(st.booleans())
    messages: list[dict[str, Any]] = []
    last: str | None = "00000000-0000-4000-8000-000000000000" if linked else None
    mine: list[str] = []
    leaf_given = False
    for k in range(draw(st.integers(1, 4))):
        prompt, amk, hidden = ex.next("p"), ex.next("a"), ex.next("h")
        ex.absent.add(hidden)
        at = f"2025-0{1 + k % 9}-0{1 + index % 9}T10:00:0{k % 10}Z"
        human = f"c{index}-h{k}"
        messages.append(claude_message(human, "human", [{"type": "text", "text": f"{prompt} {draw(text_bits)}"}],
                                       at, last if linked else None))
        blocks = [{"type": "thinking", "thinking": hidden},
                  {"type": "tool_use", "name": "web_search", "input": {"query": hidden}, "id": "t"},
                  {"type": "tool_result", "name": "web_search", "content": [{"type": "text", "text": hidden}]},
                  {"type": "text", "text": f"{amk} {draw(text_bits)}"}]
        answer_id = f"c{index}-a{k}"
        if linked and draw(st.integers(0, 3)) == 0:  # a regenerated answer beside the one shown
            alt = ex.next("r")
            ex.absent.add(alt)
            messages.append(claude_message(f"c{index}-r{k}", "assistant", [{"type": "text", "text": alt}], at, human))
            leaf_given = True
        messages.append(claude_message(answer_id, "assistant", draw(st.permutations(blocks)), at,
                                       human if linked else None))
        last = answer_id
        mine.append(prompt)
        ex.answers[amk] = prompt
    conv: dict[str, Any] = {"uuid": f"claude-{index}-{draw(st.uuids())}", "name": draw(st.one_of(text_bits, st.none())),
                            "created_at": "2025-01-01T00:00:00Z", "updated_at": None,
                            "account": {"uuid": "acc"}, "chat_messages": messages}
    if leaf_given:
        conv["current_leaf_message_uuid"] = last
    if broken == "messages not a list":
        conv["chat_messages"] = draw(st.sampled_from(["x", 5, {"a": 1}]))
    elif broken == "no sender":
        messages[draw(st.integers(0, len(messages) - 1))].pop("sender")
    elif broken == "bad date":
        messages[draw(st.integers(0, len(messages) - 1))]["created_at"] = draw(st.sampled_from(
            ["yesterday", "2025-13-45T00:00:00Z", 5, []]))
    elif broken == "NaN":  # not JSON, but json.dumps writes it: this conversation is refused, not the rest
        conv["updated_at"] = draw(st.sampled_from([float("nan"), float("inf"), -float("inf")]))
    if broken != "no":
        ex.maybe.update(mine)
        ex.maybe.update(a for a, p in list(ex.answers.items()) if p in mine)
        for a in [a for a, p in ex.answers.items() if p in mine]:
            ex.answers.pop(a)
        return conv
    for p in mine:
        ex.expected[p] = index
    return conv


@settings(EXAMPLES, max_examples=max(5, EXAMPLES.max_examples // 2))
@given(data=st.data())
def test_generated_claude_exports_import_each_exchange_once(data: Any) -> None:
    ex = Export()
    ex.conversations = [data.draw(claude_conversation(ex, i)) for i in range(data.draw(st.integers(1, 4)))]
    with tempfile.TemporaryDirectory(prefix="dm-claude-") as tmp:
        folder, path = Path(tmp) / "data", Path(tmp) / "claude.zip"
        with zipfile.ZipFile(path, "w") as zf:
            zf.writestr("conversations.json", json.dumps(ex.conversations, ensure_ascii=data.draw(st.booleans())))
            zf.writestr("users.json", "[]")
        run, new = imported(folder, path)
        stored = memories(folder)
        assert new == len(stored) >= len(ex.expected), (run.out, run.err[-2000:])
        check(ex, stored)
        again, new = imported(folder, path)
        assert new == 0 and "updated" not in again.out and len(memories(folder)) == len(stored), again.out


# -- Markdown folders and Obsidian vaults --------------------------------------------------------------------------
FRONT = [
    "---\ntitle: {m}\ntags: [a, b, 日本]\n---\n", "---\ntitle: 2024\ncreated: 2021-03-04\n---\n",
    "---\ntitle: 3.14\ntags: 5\naliases: [x, {{y: 1}}]\n---\n", "---\ntitle: [unclosed\n---\n",
    "---\n- a list\n- not a mapping\n---\n", "---\ncreated: not a date\ndate: 1e400\n---\n",
    "---\ntitle: yes\ncreated: 9999-12-31\n---\n", "---\nunclosed: front matter\n", "+++\ntitle = 'toml'\n+++\n",
    "+++\nbroken toml = = \n+++\n", "---\n---\n", "---\n: : :\n\t- tab\n---\n", "",
]


@st.composite
def vault(draw: st.DrawFn, root: Path, outside: Path, ex: Export) -> bool:
    """Notes in `root` (an Obsidian vault or not), with what must be skipped; True when a vault."""
    obsidian = draw(st.booleans())
    if obsidian:
        (root / ".obsidian").mkdir(parents=True)
        hidden = ex.next("h")
        ex.absent.add(hidden)
        (root / ".obsidian" / "workspace.md").write_text(f"{hidden}\n")
    for n in range(draw(st.integers(1, 6))):
        mk = ex.next("p")
        sub = root / draw(st.sampled_from(["", "Trips", "Ünïcode dir", "a/b/c"]))
        sub.mkdir(parents=True, exist_ok=True)
        name = draw(st.sampled_from(["note", "Ноты", "日記", "with space", "2024-01-05", "#hash"])) + f"-{n}"
        body = f"{mk} {draw(text_bits)}\n#tag-{n} [[Other note]] ![[pic.png]]\n"
        front = draw(st.sampled_from(FRONT)).format(m=draw(st.sampled_from(["T", "'quoted: colon'", "- x"])))
        ext = draw(st.sampled_from([".md", ".md", ".markdown", ".txt"]))
        if draw(st.integers(0, 5)) == 0:  # not UTF-8
            raw = (front + body + "caf\xe9 na\xefve\n").encode("latin-1", "replace")
        else:
            raw = (front + body).encode()
        (sub / f"{name}{ext}").write_bytes(raw)
        ex.expected[mk] = 0 if obsidian else n  # a vault is one session, else each note is one
        if draw(st.integers(0, 4)) == 0:  # the same text in a second file: one memory
            (sub / f"{name} copy{ext}").write_bytes(raw)
    skipped = ex.next("h")
    ex.absent.add(skipped)
    (outside / "secret.md").write_text(f"{skipped} outside the folder\n")
    (root / "attachments").mkdir(exist_ok=True)
    (root / "attachments" / "pic.png").write_bytes(b"\x89PNG\r\n\x1a\n" + skipped.encode())
    (root / "attachments" / "doc.pdf").write_text(skipped)
    (root / ".hidden.md").write_text(skipped)
    os.symlink(outside / "secret.md", root / "escape.md")
    os.symlink(outside, root / "escape-dir")
    return obsidian


@settings(EXAMPLES, max_examples=max(5, EXAMPLES.max_examples // 2))
@given(data=st.data())
def test_generated_note_folders_import_each_note_once_and_never_leave_the_folder(data: Any) -> None:
    ex = Export()
    with tempfile.TemporaryDirectory(prefix="dm-notes-") as tmp:
        root, outside, folder = Path(tmp) / "Vault", Path(tmp) / "outside", Path(tmp) / "data"
        outside.mkdir()
        root.mkdir()
        obsidian = data.draw(vault(root, outside, ex))
        run, new = imported(folder, root)
        assert ("an Obsidian vault" if obsidian else "Markdown and text notes") in run.err
        assert "escape" in run.err  # the symlinks out of the folder: said, not followed
        stored = memories(folder)
        assert new == len(stored) == len(ex.expected), (run.out, run.err[-2000:])
        check(ex, stored)
        if obsidian:  # a vault is one session
            assert len({s for _, s, _ in stored}) == 1
        again, new = imported(folder, root)
        assert new == 0 and "updated" not in again.out and len(memories(folder)) == len(stored), again.out
