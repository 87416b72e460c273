"""Issue 29 (items 2 and 4): every time given to the engine is within a range every later read handles, and
every text field is valid UTF-8, on every input path (import lines, `add`'s fields, MCP, capture, filters).

A value out of range is a one-line InvalidInput for its record, never a stored value that later breaks
export, stats, search or context; a time already stored out of range (before the check) is shown safely.
"""

from __future__ import annotations

import datetime as dt
import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from desktop_memory.core.capture import Snapshot
from desktop_memory.core.errors import InvalidInput
from desktop_memory.core.filter_input import filters_from_fields
from desktop_memory.core.models import Memory, Version, from_iso, local, to_iso
from desktop_memory.core.query import parse, parse_date
from desktop_memory.engine import records

EARLIEST = 0.0  # 1970-01-01T00:00:00Z, the first time accepted
LATEST = dt.datetime(3000, 1, 1, tzinfo=dt.UTC).timestamp()  # the first time refused
CUT = "\ud83d"  # half of an emoji: a lone surrogate, which UTF-8 cannot hold

OUT_OF_RANGE = ["0001-01-01T00:00:00+14:00", "9999-12-31T23:59:59-14:00", "0001-01-01T00:00:00Z",
                "9999-12-31T23:59:59Z", "0001-01-01", "9999-12-31", "1969-12-31T23:59:59Z", "3000-01-01T00:00:00Z"]
NOT_TIMES = ["yesterday", "2024-13-01", "2024-01-01T25:00:00", "2024-01-01T00:00:00+25:00", " ", "0", "NaN"]
BAD_NUMBERS = [-1, -1e300, 1e300, 10**400, -(10**400), float("nan"), float("inf"), float("-inf"), LATEST, True]


def _one_line(exc: pytest.ExceptionInfo[InvalidInput], words: str) -> None:
    text = str(exc.value)
    assert words in text and "\n" not in text and len(text) < 200, text


def _strings(value: Any) -> list[str]:
    """Every string inside a JSON-like value, dict keys included."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for k, v in value.items() for s in (*_strings(k), *_strings(v))]
    if isinstance(value, list | tuple):
        return [s for v in value for s in _strings(v)]
    return []


def _all_utf8(value: Any) -> bool:
    for s in _strings(value):
        s.encode("utf-8")  # UnicodeEncodeError fails the test
    return True


# -- times ------------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("value", OUT_OF_RANGE + NOT_TIMES)
def test_an_import_time_out_of_range_or_not_a_time_is_refused_in_one_line(value):
    with pytest.raises(InvalidInput) as exc:
        records.parse_line(json.dumps({"content": "x", "created_at": value}))
    _one_line(exc, '"created_at"')


@pytest.mark.parametrize("value", OUT_OF_RANGE)
@pytest.mark.parametrize("key", ["created_at", "replaced_at"])
def test_a_version_time_out_of_range_is_refused(value, key):
    with pytest.raises(InvalidInput) as exc:
        records.parse_line(json.dumps({"content": "x", "versions": [{"content": "old", key: value}]}))
    _one_line(exc, f'version 1: "{key}"')


@pytest.mark.parametrize("value", BAD_NUMBERS + OUT_OF_RANGE)
def test_add_refuses_a_time_out_of_range(value):
    with pytest.raises(InvalidInput) as exc:
        records.check_fields(created_at=value)
    _one_line(exc, '"created_at"')


@pytest.mark.parametrize(("value", "expected"), [
    ("1970-01-01T00:00:00Z", 0.0), ("2999-12-31T23:59:59Z", LATEST - 1), ("2024-03-01T10:00:00+14:00", 1709236800.0),
    (0, 0.0), (1_000_000, 1_000_000.0), (LATEST - 1, LATEST - 1)])
def test_times_inside_the_range_are_kept(value, expected):
    assert records.check_fields(created_at=value).created_at == expected
    if isinstance(value, str):
        assert records.parse_line(json.dumps({"content": "x", "created_at": value})).created_at == expected


@pytest.mark.parametrize("value", [10**400, -(10**400), 10**30])
def test_a_huge_importance_is_refused_not_an_overflow(value):
    with pytest.raises(InvalidInput) as exc:
        records.parse_line(f'{{"content": "x", "importance": {value}}}')
    _one_line(exc, '"importance"')


def test_local_time_works_for_every_time_a_memory_may_carry(monkeypatch):
    """Windows' localtime refuses a local time before 1970 (1970-01-01 west of UTC): such a moment shows in UTC."""
    import desktop_memory.core.models as models

    in_zone = models._in_local_zone

    def windows_west_of_utc(ts: float) -> dt.datetime:
        if ts < 86400:
            raise OSError(22, "Invalid argument")
        return in_zone(ts)

    monkeypatch.setattr(models, "_in_local_zone", windows_west_of_utc)
    assert local(0.0) == dt.datetime(1970, 1, 1, tzinfo=dt.UTC)
    assert local(-5.0) == dt.datetime(1970, 1, 1, tzinfo=dt.UTC)  # out of range: the earliest time
    assert local(10**6).year == 1970 and local(10**6).tzinfo is not None


@pytest.mark.parametrize("ts", [-62135647200.0, -1.0, 253402351199.0, 1e20, -1e20, float("nan"), float("inf")])
def test_a_stored_time_out_of_range_is_shown_safely(ts):
    """A folder imported before the check may hold such times: every reader still works."""
    m = Memory(id="m1", content="old row", created_at=ts, updated_at=ts, accessed_at=ts)
    data = m.to_dict()
    for key in ("created_at", "updated_at", "accessed_at"):
        moment = dt.datetime.fromisoformat(data[key])
        assert EARLIEST <= moment.timestamp() < LATEST
    assert EARLIEST <= m.created_at < LATEST
    assert local(m.created_at).tzinfo is not None  # local time, as context and the app show it (every platform)
    v = Version(1, "old", "h", ts, ts).to_dict()
    assert v["created_at"] and v["replaced_at"]
    assert to_iso(ts) is not None and to_iso(None) is None


@pytest.mark.parametrize("value", OUT_OF_RANGE + ["0001-01-01T00:00:00-14:00", "9999-12-31T23:59:59+14:00"])
def test_filter_dates_far_out_are_brought_into_the_range(value):
    for end in (False, True):
        moment = parse_date(value, end_of_day=end)
        assert moment is not None and EARLIEST <= moment.timestamp() < LATEST
        assert local(moment.timestamp()).tzinfo is not None
    f = filters_from_fields(after=value, before=value)
    assert EARLIEST <= f.after.timestamp() < LATEST and EARLIEST <= f.before.timestamp() < LATEST
    q = parse(f"llamas after:{value} before:{value}")
    assert q.text == "llamas" and EARLIEST <= q.filters.after.timestamp() < LATEST


def test_filter_dates_keep_their_meaning():
    assert parse_date("1900-01-01").timestamp() == EARLIEST  # after 1900: every memory
    assert parse_date("2024-03-01").timestamp() == 1709251200.0
    assert parse_date("3500-01-01").timestamp() >= LATEST - 1  # after 3500: none


# -- text --------------------------------------------------------------------------------------------------------------
def test_lone_surrogates_in_every_text_field_of_an_import_line_become_replacement_characters():
    rec = records.parse_line(json.dumps({
        "content": f"cut {CUT} emoji", "title": f"title {CUT}", "tags": [f"tag{CUT}", "ok"], "source": f"s{CUT}",
        "source_app": f"app {CUT}", "source_url": f"https://x.test/{CUT}",
        "metadata": {f"key{CUT}": f"value {CUT}", "nested": {"list": [f"a{CUT}", {f"k{CUT}": [CUT]}]}, "n": 1},
        "versions": [{"content": f"old {CUT}"}]}))
    assert rec.title == "title \ufffd" and rec.tags == ["tag\ufffd", "ok"] and rec.source == "s\ufffd"
    assert rec.source_app == "app \ufffd" and rec.source_url == "https://x.test/\ufffd"
    assert rec.metadata == {"key\ufffd": "value \ufffd", "nested": {"list": ["a\ufffd", {"k\ufffd": ["\ufffd"]}]},
                            "n": 1}
    assert _all_utf8(rec.model_dump())


def test_tags_given_as_one_string_with_a_surrogate():
    assert records.parse_line(json.dumps({"content": "x", "tags": f"a{CUT}, b"})).tags == ["a\ufffd", "b"]


def test_a_valid_emoji_is_kept():
    rec = records.parse_line(json.dumps({"content": "x", "title": "party \U0001f389", "tags": ["\U0001f389"]}))
    assert rec.title == "party \U0001f389" and rec.tags == ["\U0001f389"]


def test_add_fields_with_surrogates_are_made_valid():
    f = records.check_fields(title=f"t{CUT}", tags=(f"x{CUT}",), source_app="\udcff", source="cli",
                             metadata={"window": f"w{CUT}", f"k{CUT}": [CUT, 1.5, None, True]})
    assert (f.title, f.tags, f.source_app) == ("t\ufffd", ["x\ufffd"], "\ufffd")
    assert f.metadata == {"window": "w\ufffd", "k\ufffd": ["\ufffd", 1.5, None, True]}


@pytest.mark.parametrize("number", ["NaN", "Infinity", "-Infinity", "1e999"])
def test_metadata_holding_nan_or_infinity_is_refused_in_one_line(number):
    """The store keeps metadata as JSON (a CHECK json_valid): NaN there failed the insert and the whole import."""
    with pytest.raises(InvalidInput) as exc:
        records.parse_line('{"content": "x", "metadata": {"a": [1, {"b": ' + number + "}]}}")
    _one_line(exc, '"metadata"')


def test_metadata_nested_too_deeply_is_refused_in_one_line():
    deep = '{"a":' * 900 + "1" + "}" * 900
    with pytest.raises(InvalidInput) as exc:
        records.parse_line('{"content": "x", "metadata": ' + deep + "}")
    _one_line(exc, '"metadata"')


# -- the property: valid, or refused in one line -----------------------------------------------------------------------
_text = (st.text(alphabet=st.characters(exclude_categories=()), max_size=12)
         | st.sampled_from([CUT, "\udcff", "a\ud800b", ""]))
_number = (st.integers() | st.integers(min_value=-(10**400), max_value=10**400) | st.floats()
           | st.sampled_from([0, 1, 1e308, -1e308, 5e-324, 32503679999, 32503680000]))
_time = st.sampled_from(OUT_OF_RANGE + NOT_TIMES + ["2024-03-01T10:00:00Z", "1970-01-01T00:00:00Z", None])
_json = st.recursive(st.none() | st.booleans() | _number | _text | _time,
                     lambda c: st.lists(c, max_size=3) | st.dictionaries(_text, c, max_size=3), max_leaves=8)
FIELDS = ["content", "title", "tags", "source", "source_app", "source_url", "metadata", "pinned", "importance",
          "created_at", "versions"]
_record = st.dictionaries(st.sampled_from(FIELDS), _json | _time, max_size=8).map(
    lambda r: {"content": "x", **r} if "content" not in r else r)


def _valid(rec: records.MemoryFields) -> None:
    assert _all_utf8(rec.model_dump())
    assert rec.created_at is None or EARLIEST <= rec.created_at < LATEST
    assert rec.importance is None or 0.0 <= rec.importance <= 1.0
    assert isinstance(rec.pinned, bool) and isinstance(rec.metadata, dict)
    assert all(isinstance(t, str) for t in rec.tags)
    json.dumps(rec.metadata, ensure_ascii=False, allow_nan=False).encode("utf-8")  # valid JSON, as the store keeps


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_record)
def test_any_import_line_is_either_valid_or_refused_in_one_line(record):
    raw = json.dumps(record)  # lone surrogates become \ud83d escapes, as a cut emoji in a file
    try:
        rec = records.parse_line(raw)
    except InvalidInput as exc:
        assert str(exc) and "\n" not in str(exc)
        str(exc).encode("utf-8")  # the reason is printed, or sent in a --json report
        return
    _valid(rec)
    for v in rec.versions:
        assert _all_utf8(v.model_dump())
        for t in (v.created_at, v.replaced_at):
            assert t is None or EARLIEST <= from_iso(t) < LATEST


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.dictionaries(st.sampled_from([f for f in FIELDS if f not in ("content", "versions")]),
                       _json | _time | _number, max_size=8))
def test_any_add_fields_are_either_valid_or_refused_in_one_line(fields):
    try:
        rec = records.check_fields(**fields)
    except InvalidInput as exc:
        assert str(exc) and "\n" not in str(exc)
        str(exc).encode("utf-8")  # the reason is printed, or sent in a --json report
        return
    _valid(rec)


# -- through the service (fake embedder): bad lines are skipped, the folder stays readable -----------------------------
def _good(n: int) -> str:
    return json.dumps({"content": f"good line {n}: the ferry to island {n} leaves at {n % 12 + 1} pm"})


def _readable(service) -> list[dict[str, Any]]:
    exported = list(service.export_records(include_forgotten=True))
    for r in exported:
        json.dumps(r, ensure_ascii=False).encode("utf-8")
    "".join(service.export_markdown(include_forgotten=True)).encode("utf-8")
    service.stats()
    for hit in service.search("ferry island", limit=50, record_access=False):
        json.dumps(hit.to_dict(), ensure_ascii=False).encode("utf-8")
    service.context("ferry island").text.encode("utf-8")
    return exported


def test_import_with_times_out_of_range_skips_those_lines_only(fake_service):
    bad = [json.dumps({"content": f"bad time {v}", "created_at": v}) for v in OUT_OF_RANGE + NOT_TIMES]
    bad += ['{"content": "negative epoch", "created_at": -1}', '{"content": "nan", "created_at": NaN}',
            '{"content": "inf", "created_at": Infinity}', '{"content": "huge", "created_at": 1' + "0" * 400 + "}",
            '{"content": "huge importance", "importance": 1' + "0" * 400 + "}",
            '{"content": "nan metadata", "metadata": {"score": [NaN]}}',
            '{"content": "deep metadata", "metadata": ' + '{"a":' * 900 + "1" + "}" * 900 + "}"]
    lines = [_good(0), *bad, _good(1)]
    report = fake_service.import_records(lines)
    assert report.added == 2 and [n for n, _ in report.errors] == list(range(2, len(bad) + 2))
    assert len(_readable(fake_service)) == 2


def test_import_with_cut_emoji_in_every_field_keeps_every_line(fake_service):
    lines = [_good(0),
             json.dumps({"content": "a ferry with a title", "title": f"cut {CUT}"}),
             json.dumps({"content": "a ferry with tags", "tags": [f"t{CUT}"]}),
             json.dumps({"content": "a ferry with metadata", "metadata": {f"k{CUT}": {"deep": [f"v{CUT}"]}}}),
             json.dumps({"content": "a ferry from an app", "source_app": f"app{CUT}", "source": f"s{CUT}"}),
             _good(1)]
    report = fake_service.import_records(lines)
    assert report.added == 6 and not report.errors
    exported = {r["content"]: r for r in _readable(fake_service)}
    assert exported["a ferry with a title"]["title"] == "cut \ufffd"
    assert exported["a ferry with tags"]["tags"] == ["t\ufffd"]
    assert exported["a ferry with metadata"]["metadata"] == {"k\ufffd": {"deep": ["v\ufffd"]}}
    assert exported["a ferry from an app"]["source_app"] == "app\ufffd"


def test_add_and_capture_with_cut_emoji_are_stored(fake_service):
    fake_service.add("a ferry note added", title=f"t{CUT}", tags=[f"x{CUT}"], metadata={"k": CUT}, source_app=CUT)
    result = fake_service.capture(Snapshot("a ferry note copied from somewhere", app=f"app{CUT}",
                                           window=f"window {CUT}", source="cli"))
    assert result.stored, result.message
    captured = fake_service.get(result.memory_id)
    assert captured.source_app == "app\ufffd" and captured.metadata == {"window": "window \ufffd"}
    assert len(_readable(fake_service)) == 2


def test_add_with_a_time_out_of_range_is_refused_and_nothing_is_stored(fake_service):
    for value in (-62135647200.0, 253402351199.0, float("nan")):
        with pytest.raises(InvalidInput, match='"created_at"'):
            fake_service.add("a ferry note from the past", created_at=value)
    assert fake_service.store.count() == 0


def test_a_folder_holding_times_out_of_range_from_before_the_check_stays_readable(fake_service):
    ids = [fake_service.add(f"ferry island note {n}").memory.id for n in range(4)]
    for mid, ts in zip(ids, (-62135647200.0, 253402351199.0, -1.0, 1e20), strict=True):  # NaN is stored as NULL
        fake_service.store.update(mid, created_at=ts, updated_at=ts, accessed_at=ts)
    exported = _readable(fake_service)
    assert len(exported) == 4
    for r in exported:
        assert records.parse_line(json.dumps(r)).created_at is not None  # the export imports again
    stats = fake_service.stats()
    assert stats.oldest and stats.newest
    assert all(fake_service.get(i).created_at >= EARLIEST for i in ids)
