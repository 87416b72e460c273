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
    assert engine(bridge, lambda s: s.stats().memories) == 9


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


def test_a_full_disk_part_way_is_told_from_the_start_of_the_file(qtbot, bridge, socket_engines, tmp_path,
                                                                  monkeypatch) -> None:
    """A real full disk behind the socket: the streamed import counts from line 1 of the file by itself."""
    import re

    monkeypatch.setattr("desktop_memory.service.importing.IMPORT_BATCH", 4)
    host = socket_engines[tmp_path / "data"]
    lines = [json.dumps({"content": f"ledger entry {i}: paid invoice {1000 + i} " + "detail " * 300})
             for i in range(40)]
    pages = host.run(lambda s: s.store.scalar("PRAGMA page_count"))
    host.run(lambda s: s.store.db.execute(f"PRAGMA max_page_count={pages + 40}"))
    failed: list[str] = []
    ChunkedImport(bridge, lambda: iter(lines), done=failed.append, failed=failed.append, chunk=3).start()
    qtbot.waitUntil(lambda: bool(failed), timeout=30_000)
    host.run(lambda s: s.store.db.execute("PRAGMA max_page_count=1000000000"))
    found = re.search(r"disk is full.*; ([\d,]+) record\(s\) were stored, nothing after line ([\d,]+) was imported$",
                      str(failed[0]))
    assert found, failed
    stored, last = (int(g.replace(",", "")) for g in found.groups())
    kept = host.run(lambda s: {m.content for m in s.store.iter_all()})
    assert stored == len(kept) > 3 and last >= stored  # more than one chunk in: counted from line 1
    assert all(json.loads(x)["content"].strip() in kept for x in lines[:last])
    assert json.loads(lines[last])["content"].strip() not in kept
