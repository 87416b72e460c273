"""Chunked imports: bad lines keep their numbers, and searches run between chunks."""

from __future__ import annotations

import json

from desktop_memory.qt.importing import ChunkedImport


def test_chunks_keep_line_numbers_and_let_searches_in(qtbot, bridge, engine) -> None:
    lines = [json.dumps({"content": f"imported note number {i} about gardening"}) for i in range(1, 11)]
    lines[6] = "{not json"
    order: list[str] = []
    finished = []

    def progress(report) -> None:
        order.append(f"chunk:{report.added}")
        if len(order) == 1:  # typed while the import runs: must not wait for the whole import
            bridge.submit(lambda s: len(s.search("gardening", record_access=False)), lambda n: order.append("search"))

    job = ChunkedImport(bridge, lambda: iter(lines), done=finished.append, failed=order.append, progress=progress,
                        chunk=3)
    job.start()
    qtbot.waitUntil(lambda: bool(finished), timeout=20_000)
    report = finished[0]
    assert report.added == 9 and [n for n, _ in report.errors] == [7]
    assert order.index("search") < len(order) - 1  # the search ran before the last chunk
    assert engine(bridge, lambda s: s.stats()["memories"]) == 9


def test_an_unreadable_source_is_a_readable_error(qtbot, bridge) -> None:
    failures: list[str] = []

    def missing():
        return open("/nonexistent/memories.jsonl", "rb")  # noqa: SIM115

    ChunkedImport(bridge, missing, done=lambda r: None, failed=failures.append).start()
    qtbot.waitUntil(lambda: bool(failures), timeout=10_000)
    assert failures[0].startswith("unexpected error: FileNotFoundError")


def test_a_file_is_read_in_bounded_chunks_and_an_overlong_line_is_skipped_unread(qtbot, bridge, engine,
                                                                                monkeypatch) -> None:
    import io

    import desktop_memory.qt.importing as importing
    from desktop_memory.engine import records

    monkeypatch.setattr(importing, "IMPORT_BATCH_BYTES", 50_000)
    limit = records.line_limit(engine(bridge, lambda s: s.settings.max_bytes))
    lines = [json.dumps({"content": f"long note {i} " + f"harbour{i} schedule " * 1500}) for i in range(6)]
    lines.insert(2, json.dumps({"content": "x" * (limit + 10)}))  # line 3: over the line limit
    data = io.BytesIO("\n".join(lines).encode() + b"\n")
    chunks: list[int] = []
    finished = []
    ChunkedImport(bridge, lambda: data, done=finished.append, failed=finished.append,
                  progress=lambda r: chunks.append(r.added + r.related)).start()
    qtbot.waitUntil(lambda: bool(finished), timeout=30_000)
    report = finished[0]
    assert report.added + report.related == 6
    assert [n for n, _ in report.errors] == [3] and "too long" in report.errors[0][1]
    assert len(chunks) >= 3  # ~30 KB records, 50 KB chunks: two records a chunk, not all six at once
    assert data.closed


def test_a_full_disk_part_way_is_told_from_the_start_of_the_file(qtbot, bridge, engine, monkeypatch) -> None:
    from desktop_memory.core.errors import DiskFull
    from desktop_memory.engine import failures

    service = engine(bridge, lambda s: s)
    real = service.import_records
    calls: list[int] = []

    def fills_up(lines, **kw):
        calls.append(len(lines))
        if len(calls) == 2:
            real(lines[:2], **kw)
            raise DiskFull(failures.DISK_FULL, "2 record(s) were stored, nothing after line 2 was imported")
        return real(lines, **kw)

    monkeypatch.setattr(service, "import_records", fills_up)
    lines = [json.dumps({"content": f"note {i} about the orchard rota"}) for i in range(1, 10)]
    failed: list[str] = []
    ChunkedImport(bridge, lambda: iter(lines), done=failed.append, failed=failed.append, chunk=3).start()
    qtbot.waitUntil(lambda: bool(failed), timeout=20_000)
    assert failed[0] == f"{failures.DISK_FULL}; 5 record(s) were stored, nothing after line 5 was imported"
