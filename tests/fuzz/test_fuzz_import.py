"""`desktop-memory import` with generated JSON Lines: good records among broken ones, with every quirk of type,
date and text. Asserted: exit 0 or 1 and one line, and every distinct good record back as it was given."""

from __future__ import annotations

import datetime as dt
import itertools
import json
import uuid

import pytest
from hypothesis import given
from hypothesis import strategies as st

from .cli_runner import assert_clean, cli
from .conftest import FUZZ
from .strategies import dumps, junk_lines, words

pytestmark = pytest.mark.integration
COUNTER = itertools.count()

times = st.datetimes(min_value=dt.datetime(1970, 1, 3), max_value=dt.datetime(2999, 12, 30),
                     timezones=st.sampled_from([dt.UTC, dt.timezone(dt.timedelta(hours=14)),
                                                dt.timezone(dt.timedelta(hours=-12)),
                                                dt.timezone(dt.timedelta(hours=5, minutes=45))]))
tags = st.lists(st.sampled_from(["work", "home", "project-x", "日本", "café", "q3"]), unique=True, max_size=3)


@st.composite
def good_records(draw) -> dict:
    record = {"content": f"{draw(words)} {uuid.uuid4().hex[:10]}"}  # distinct from every other record of the run
    if draw(st.booleans()):
        record["title"] = draw(words)[:100]
    if draw(st.booleans()):
        record["tags"] = draw(tags)
    if draw(st.booleans()):
        record["pinned"] = draw(st.booleans())
    if draw(st.booleans()):
        record["created_at"] = draw(times).isoformat()
    if draw(st.booleans()):
        record["metadata"] = draw(st.dictionaries(st.sampled_from(["dia_id", "chat", "n"]),
                                                  st.one_of(st.integers(-1000, 1000), words), max_size=2))
    return record


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    return tmp_path_factory.mktemp("fuzz-import") / "data"


@FUZZ
@given(lines=st.lists(st.one_of(good_records(), junk_lines), min_size=1, max_size=12),
       newline=st.sampled_from([b"\n", b"\r\n"]))
def test_good_records_come_back_as_given_whatever_is_around_them(folder, tmp_path_factory, lines, newline):
    good = [line for line in lines if isinstance(line, dict)]
    raw = newline.join(dumps(line).encode() if isinstance(line, dict)
                       else line.replace(b"\n", b" ").replace(b"\r", b" ") for line in lines)
    source = folder.parent / f"in-{next(COUNTER)}.jsonl"
    source.write_bytes(raw)
    run = cli("--data-dir", str(folder), "import", str(source))
    assert_clean(run)
    assert run.code == 0 or not good, run.err  # exit 1 only when nothing at all could be imported
    exported = cli("--data-dir", str(folder), "export", "--include-forgotten")
    back = {r["content"]: r for r in map(json.loads, exported.out.splitlines())}
    for record in good:
        assert record["content"] in back, f"lost: {record}"
        got = back[record["content"]]
        assert got["title"] == record.get("title", got["title"])
        assert got["pinned"] == record.get("pinned", got["pinned"])
        assert sorted(got["tags"]) == sorted(t.lower() for t in record.get("tags", got["tags"]))
        if "created_at" in record:  # the same instant; times are float seconds: 1 µs kept to 2242, 4 µs to 2999
            drift = dt.datetime.fromisoformat(got["created_at"]) - dt.datetime.fromisoformat(record["created_at"])
            assert abs(drift) <= dt.timedelta(microseconds=4), (record, got)
        if "metadata" in record:
            assert got["metadata"] == record["metadata"]
