"""Import lines and `add` fields are validated at the edge: wrong types are refused, never coerced.

Real SQLite and Chroma with the fake embedder (fast); each wrong-typed field sits between good lines.
"""

from __future__ import annotations

import io
import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from desktop_memory.core.errors import InvalidInput
from desktop_memory.engine import records

GOOD = {"content": "placeholder", "source": "chat", "tags": ["trip"], "pinned": False}

# (field, wrong value, words the one-line reason must contain)
WRONG = [
    ("pinned", "no", '"pinned"'),
    ("pinned", "yes", '"pinned"'),
    ("pinned", 1, '"pinned"'),
    ("pinned", "0", '"pinned"'),
    ("pinned", [True], '"pinned"'),
    ("tags", [1, None, {"x": 2}], '"tags"'),
    ("tags", ["ok", None], '"tags"'),
    ("tags", 42, '"tags"'),
    ("tags", {"a": 1}, '"tags"'),
    ("source", ["a"], '"source"'),
    ("source", 7, '"source"'),
    ("title", {"t": 1}, '"title"'),
    ("source_app", False, '"source_app"'),
    ("source_url", 3.5, '"source_url"'),
    ("importance", 5, '"importance"'),
    ("importance", -0.1, '"importance"'),
    ("importance", True, '"importance"'),
    ("importance", "0.5", '"importance"'),
    ("importance", float("nan"), '"importance"'),
    ("importance", float("inf"), '"importance"'),
    ("created_at", "yesterday", '"created_at"'),
    ("created_at", 1700000000, '"created_at"'),
    ("metadata", [1, 2], '"metadata"'),
    ("metadata", "k=v", '"metadata"'),
    ("content", 12, '"content"'),
    ("content", None, '"content"'),
    ("versions", "old text", '"versions"'),
    ("versions", [{"content": 5}], "version 1"),
]


def _line(n: int, **fields) -> str:
    return json.dumps({**GOOD, "content": f"trip note {n}: the ferry to island {n} leaves at {n % 12 + 1} pm",
                       **fields})


@pytest.mark.parametrize(("field", "value", "words"), WRONG, ids=[f"{f}={v!r}" for f, v, _ in WRONG])
def test_a_wrong_typed_field_is_refused_with_its_line_number_and_the_rest_is_imported(fake_service, field, value,
                                                                                      words):
    lines = [_line(1), _line(2), _line(3, **{field: value}), _line(4), "", _line(6)]
    report = fake_service.import_records(lines)
    assert report.added == 4
    assert len(report.errors) == 1
    number, reason = report.errors[0]
    assert number == 3
    assert words in reason and "\n" not in reason and len(reason) < 160, reason
    assert "validation error" not in reason.lower() and "pydantic" not in reason.lower()
    contents = {m.content for m in fake_service.store.iter_all()}
    assert not any("island 3 " in c for c in contents)


@pytest.mark.parametrize("value", ["false", "False", "FALSE", False, None])
def test_pinned_false_never_pins(fake_service, value):
    report = fake_service.import_records([json.dumps({"content": f"a note pinned={value!r}", "pinned": value})])
    assert report.added == 1 and not report.errors
    (m,) = list(fake_service.store.iter_all())
    assert m.pinned is False


@pytest.mark.parametrize("value", ["true", "True", True])
def test_pinned_true_pins(fake_service, value):
    fake_service.import_records([json.dumps({"content": "the pinned note", "pinned": value})])
    (m,) = list(fake_service.store.iter_all())
    assert m.pinned is True


def test_tags_as_one_string_are_split_and_unknown_keys_are_ignored(fake_service):
    report = fake_service.import_records([json.dumps({
        "content": "exported by another tool", "tags": "work, travel  plans", "id": 17, "score": 0.3,
        "embedding": [0.1, 0.2], "importance": 0.25, "created_at": "2024-03-01T10:00:00Z"})])
    assert report.added == 1 and not report.errors
    (m,) = list(fake_service.store.iter_all())
    assert m.tags == ["work", "travel", "plans"] and m.importance == 0.25


def test_null_means_not_given(fake_service):
    fake_service.import_records([json.dumps({"content": "nulls everywhere", "tags": None, "pinned": None,
                                             "source": None, "title": None, "importance": None,
                                             "metadata": None, "created_at": None, "versions": None})])
    (m,) = list(fake_service.store.iter_all())
    assert (m.tags, m.pinned, m.source, m.importance, m.metadata) == ([], False, "import", 0.5, {})


def test_versions_are_validated_and_passed_through():
    rec = records.parse_line(json.dumps({"content": "v3 text", "versions": [
        {"content": "v1 text", "created_at": "2024-01-01T00:00:00Z", "replaced_at": "2024-01-02T00:00:00Z"},
        {"content": "v2 text", "seq": 2}]}))
    assert [v.content for v in rec.versions] == ["v1 text", "v2 text"]
    assert rec.versions[0].created_at == "2024-01-01T00:00:00Z" and rec.versions[1].created_at is None
    with pytest.raises(InvalidInput, match=r"version 2: .*created_at"):
        records.parse_line(json.dumps({"content": "x", "versions": [{"content": "a"},
                                                                    {"content": "b", "created_at": "soon"}]}))


def test_imported_versions_are_kept(fake_service):
    report = fake_service.import_records([json.dumps({"content": "draft three of the plan", "versions": [
        {"content": "draft one of the plan", "created_at": "2024-01-01T00:00:00Z",
         "replaced_at": "2024-01-02T00:00:00Z"}]})])
    assert report.added == 1 and not report.errors
    (m,) = list(fake_service.store.iter_all())
    assert [v.content for v in fake_service.versions(m.id)] == ["draft one of the plan"]


@pytest.mark.parametrize(("fields", "words"), [
    ({"pinned": "no"}, '"pinned"'), ({"importance": 5}, '"importance"'), ({"importance": float("nan")}, "NaN"),
    ({"tags": [1, None]}, '"tags"'), ({"source_app": ["x"]}, '"source_app"'), ({"title": 3}, '"title"'),
])
def test_add_refuses_wrong_typed_fields_instead_of_coercing_them(fake_service, fields, words):
    with pytest.raises(InvalidInput, match=words):
        fake_service.add("a note with a wrong field", **fields)
    assert fake_service.store.count() == 0


def test_add_keeps_its_python_callers_working(fake_service):
    m = fake_service.add("a note from the app", source="clipboard", tags=("a", "b"), pinned=True,
                         importance=1, created_at=1_000_000, metadata={"k": 1}).memory
    assert (m.tags, m.pinned, m.importance, m.created_at) == (["a", "b"], True, 1.0, 1_000_000.0)


@settings(max_examples=150, deadline=None)
@given(st.dictionaries(st.sampled_from(["pinned", "tags", "importance", "source", "created_at", "metadata"]),
                       st.recursive(st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8),
                                    lambda c: st.lists(c, max_size=3) | st.dictionaries(st.text(max_size=3), c,
                                                                                         max_size=2),
                                    max_leaves=4)))
def test_any_json_value_is_either_valid_or_refused_in_one_line(extra):
    raw = json.dumps({"content": "x", **extra})
    try:
        rec = records.parse_line(raw)
    except InvalidInput as exc:
        assert "\n" not in str(exc) and str(exc)
        return
    assert isinstance(rec.pinned, bool) and all(isinstance(t, str) for t in rec.tags)
    assert rec.importance is None or 0.0 <= rec.importance <= 1.0
    assert isinstance(rec.source, str) and isinstance(rec.metadata, dict)
    if "pinned" in extra and rec.pinned:
        assert extra["pinned"] is True or str(extra["pinned"]).lower() == "true"


# -- reading lines without holding an over-long one ----------------------------------------------
def test_read_lines_skips_an_overlong_line_and_keeps_the_numbering():
    data = b"\xef\xbb\xbf" + b'{"content": "a"}\n' + b"x" * 5000 + b"\n" + b'{"content": "c"}\n' + b"y" * 3000
    got = list(records.read_lines(io.BytesIO(data), limit=1000))
    assert got[0] == b'{"content": "a"}\n'
    assert got[1] == records.Overlong(5001, 1000)
    assert got[2] == b'{"content": "c"}\n'
    assert got[3] == records.Overlong(3000, 1000)


def test_read_lines_holds_at_most_the_limit(monkeypatch):
    class Spy(io.BytesIO):
        biggest = 0

        def readline(self, size=-1):
            line = super().readline(size)
            Spy.biggest = max(Spy.biggest, len(line))
            assert size != -1
            return line

    list(records.read_lines(Spy(b"z" * 10_000_000 + b"\n{}\n"), limit=100_000))
    assert Spy.biggest <= 1 << 20


def test_an_overlong_line_is_reported_with_its_number(fake_service):
    limit = records.line_limit(fake_service.settings.max_bytes)
    stream = io.BytesIO(b"\n".join([
        json.dumps({"content": "before the big one"}).encode(),
        json.dumps({"content": "big " * (limit // 4 + 10)}).encode(),
        json.dumps({"content": "after the big one"}).encode()]))
    report = fake_service.import_records(records.read_lines(stream, limit))
    assert report.added == 2
    assert [n for n, _ in report.errors] == [2] and "too long" in report.errors[0][1]


def test_plain_lines_over_the_limit_are_refused_too(fake_service):
    limit = records.line_limit(fake_service.settings.max_bytes)
    report = fake_service.import_records([json.dumps({"content": "fine"}), "x" * (limit + 1)])
    assert report.added == 1 and report.errors[0][0] == 2 and "too long" in report.errors[0][1]


# -- batches bounded by bytes -------------------------------------------------------------------
def test_import_batches_are_bounded_by_bytes(fake_service, monkeypatch):
    import desktop_memory.service.importing as service_module

    sizes: list[int] = []
    real = fake_service.embedder.encode

    def spy(texts, batch_size=64):
        sizes.append(sum(len(t) for t in texts))
        return real(texts, batch_size)

    monkeypatch.setattr(fake_service.embedder, "encode", spy)
    monkeypatch.setattr(service_module, "IMPORT_BATCH_BYTES", 100_000)
    lines = [json.dumps({"content": f"record {i} " + f"word{i} " * 4000}) for i in range(12)]
    report = fake_service.import_records(lines)
    assert report.added == 12
    assert len(sizes) >= 3 and max(sizes) <= 100_000 + 30_000  # the record that reaches the bound ends a batch


@pytest.mark.parametrize("value", ["5", "nan", "inf", "-0.1", "true", "high"])
def test_cli_add_importance_is_checked_like_an_import(tmp_path, capsys, value):
    from desktop_memory.cli.main import main

    code = main(["--data-dir", str(tmp_path / "d"), "add", "--importance", value, "a note"])
    err = capsys.readouterr().err.strip()
    assert code == 1 and len(err.splitlines()) == 1
    assert err.startswith("desktop-memory: --importance must be a number from 0 to 1"), err
