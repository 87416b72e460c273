"""The life of stored memories: read, edit, pin, tag, forget, restore, purge, retention, stats, doctor, export.

`Lifecycle` receives its collaborators (the folder, store, settings, embedder, vector sync) and a
callback told when stored texts change (the ingest's look-alike window is read again).
"""

from __future__ import annotations

import dataclasses
import io
import json
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

from ..core.errors import DesktopMemoryError, InvalidInput, NotFound, StorageError
from ..core.models import Memory, Version, to_iso
from ..core.ranking import SIMILAR_CAP
from ..core.text import check_content, clean_tags, content_hash, first_line, utf8_safe
from ..engine import encryption, folder, outputs
from ..engine.embed import Embedder
from ..engine.settings import Settings
from ..engine.store import Store
from .ingest import redact  # the redaction rules compile on first use
from .reports import DoctorReport, StoreStats, VectorRepairs
from .vector_sync import INDEX_REPAIR_KEY, VECTORS_DIR, VectorSync

_DOCTOR_CHECKS = ("sqlite_integrity", "fts_integrity", "fts_rows_match", "embedding_model", "vectors_match")
_EXPORTED = ("content", "created_at", "source", "title", "tags", "pinned", "metadata", "source_app", "source_url",
             "importance")


class Lifecycle:
    """Operations on stored memories, and the checks and figures of the whole store."""

    def __init__(self, folder: Path, store: Store, settings: Settings, embedder: Embedder, vectors: VectorSync,
                 on_texts_changed: Callable[[], None] = lambda: None) -> None:
        self.folder = folder
        self.store = store
        self.settings = settings
        self.embedder = embedder
        self.vectors = vectors
        self.on_texts_changed = on_texts_changed

    # -- one memory ---------------------------------------------------------------------------
    def get(self, memory_id: str) -> Memory:
        return self.store.get(memory_id.strip())

    def versions(self, memory_id: str) -> list[Version]:
        """The earlier texts of a memory (replaced by a longer capture or a restore), oldest first."""
        return self.store.versions(self.get(memory_id).id)

    def family(self, memory_id: str) -> list[Memory]:
        """A memory's look-alikes (the family it was stored in), newest first; [] when it has none."""
        memory = self.get(memory_id)
        if memory.family_id is None:
            return []
        members = self.store.family_members([memory.family_id], SIMILAR_CAP + 1).get(memory.family_id, [])
        return [m for m in members if m.id != memory.id][:SIMILAR_CAP]

    def restore_version(self, memory_id: str, seq: int) -> Memory:
        """Make an earlier text current again; the current text becomes a version (nothing is lost)."""
        m = self.get(memory_id)
        chosen = next((v for v in self.store.versions(m.id) if v.seq == int(seq)), None)
        if chosen is None:
            raise NotFound(f"memory {m.id[:8]} has no version {seq}")
        now, since = time.time(), self.store.last_replaced(m.id) or m.created_at
        with self.store.transaction():
            self.store.delete_version(m.id, chosen.seq)
            self.store.add_version(m.id, Version(0, m.content, m.content_hash, since, now, m.redactions))
            self.store.update(m.id, content=chosen.content, content_hash=chosen.content_hash, updated_at=now)
        self.vectors.embed_passages([m.id])  # this text's passages now; a backlog waits for the background
        self.vectors.sync()
        self.on_texts_changed()
        return self.get(m.id)

    def _update(self, memory_id: str, **fields: Any) -> Memory:
        m = self.get(memory_id)
        with self.store.transaction():
            self.store.update(m.id, updated_at=time.time(), **fields)
        return self.get(m.id)

    def set_pinned(self, memory_id: str, pinned: bool) -> Memory:
        return self._update(memory_id, pinned=pinned)

    def set_forgotten(self, memory_id: str, forgotten: bool) -> Memory:
        return self._update(memory_id, forgotten=forgotten)

    def tag(self, memory_id: str, add: Iterable[str] = (), remove: Iterable[str] = ()) -> Memory:
        m = self.get(memory_id)
        drop = set(clean_tags(remove))
        return self._update(m.id, tags=[t for t in clean_tags([*m.tags, *add]) if t not in drop])

    def edit(self, memory_id: str, *, content: str | None = None, title: str | None = None) -> Memory:
        """Change a memory's text or title; new text is normalised, redacted and re-indexed."""
        m = self.get(memory_id)
        fields_: dict[str, Any] = {}
        if title is not None:
            fields_["title"] = redact(utf8_safe(" ".join(title.split())[:200])).text
        if content is not None:
            red = redact(check_content(content, self.settings.max_bytes))
            fields_.update(content=red.text, content_hash=content_hash(red.text),
                           redactions=m.redactions + red.total)
        m = self._update(m.id, **fields_)
        if content is not None:
            self.vectors.embed_passages([m.id])  # this text's passages now; a backlog waits for the background
            self.vectors.sync()
            self.on_texts_changed()
        return m

    # -- deleting -----------------------------------------------------------------------------
    def purge(self, ids: Sequence[str]) -> int:
        """Delete for good from SQLite, the FTS index and Chroma."""
        full = [self.get(i).id for i in ids]
        with self.store.transaction():
            n = self.store.delete(full)
        self.vectors.sync()
        self.store.scrub()
        self.on_texts_changed()
        return n

    def erase_everything(self) -> int:
        """Purge every memory (the settings window's "Erase everything"); returns how many."""
        ids = sorted(self.store.all_ids())
        return self.purge(ids) if ids else 0

    def retention(self, *, older_than_days: float, below_importance: float = 1.0,
                  include_forgotten_only: bool = False, dry_run: bool = False) -> list[str]:
        """Purge memories older than N days and less important than a threshold; pinned are kept."""
        if older_than_days < 0:
            raise InvalidInput("the age must be zero or more days")
        cutoff = time.time() - older_than_days * 86400
        ids = self.store.retention_candidates(cutoff, below_importance, forgotten_only=include_forgotten_only)
        if ids and not dry_run:
            self.purge(ids)
        return ids

    # -- the whole store ----------------------------------------------------------------------
    def stats(self) -> StoreStats:
        s = self.store
        figures = s.stats.figures()
        db_bytes = sum(p.stat().st_size for p in self.folder.glob(s.path.name + "*"))
        vec_dir = self.folder / VECTORS_DIR
        vec_bytes = sum(p.stat().st_size for p in vec_dir.rglob("*") if p.is_file()) if vec_dir.exists() else 0
        return StoreStats(
            data_dir=str(self.folder),
            memories=s.count(),
            forgotten=s.count(include_forgotten=True) - s.count(),
            pinned=figures["pinned"],
            sessions=figures["sessions"],
            by_source=figures["by_source"],
            redacted_secrets=figures["redactions"],
            oldest=to_iso(figures["oldest"]),
            newest=to_iso(figures["newest"]),
            vector_queue=s.vectors.queue_length(),
            database_bytes=db_bytes,
            vector_bytes=vec_bytes,
            schema_version=s.schema_version,
        )

    def doctor(self) -> DoctorReport:
        """Check every store and repair what can be repaired (the vector index)."""
        encrypted = encryption.describe(self.folder, self.store.path)
        stats = self.store.stats
        checks: dict[str, Any] = {"sqlite_integrity": stats.quick_check(), "fts_integrity": stats.fts_integrity(),
                                  "fts_rows_match": stats.fts_count() == self.store.count(include_forgotten=True)}
        try:
            self.embedder.encode(["doctor"])
            checks["embedding_model"] = "ok"
        except DesktopMemoryError as exc:
            checks["embedding_model"] = str(exc)
        repaired = self.vectors.reconcile(full=True)
        at_open = self.vectors.take_open_repairs()  # repaired when the index opened
        repairs = VectorRepairs(**{k: n + at_open.get(k, 0) for k, n in repaired.items()})
        index = self.vectors.status()
        if index.state == "ok" and (last := self.store.get_meta(INDEX_REPAIR_KEY)):
            index = dataclasses.replace(index, last_repair=json.loads(last))
        checks["vectors_match"] = self.vectors.index.count() == self.store.count(include_forgotten=True)
        ok = all(v is True or v == "ok" for k, v in checks.items() if k in _DOCTOR_CHECKS)
        return DoctorReport(data_dir=str(self.folder), schema_version=self.store.schema_version,
                            encryption=encrypted, vector_repairs=repairs, vector_index=index, ok=ok, **checks)

    # -- export -------------------------------------------------------------------------------
    def export_records(self, *, include_forgotten: bool = False) -> Iterator[dict[str, Any]]:
        """Records in the import format (plus the fields an import can carry back)."""
        with_versions = self.store.ids_with_versions()
        for m in self.store.iter_all(include_forgotten=include_forgotten):
            d = m.to_dict()
            record = {k: d[k] for k in _EXPORTED}
            if m.id in with_versions and (versions := self.store.versions(m.id)):
                record["versions"] = [{k: v for k, v in x.to_dict().items() if k != "seq"} for x in versions]
            yield record

    def export_to_file(self, target: Path, *, fmt: str = "jsonl", include_forgotten: bool = False) -> int:
        """Write the export to `target` (0600 whatever the umask, through `<target>.partial`: whole or not at
        all, an older file replaced); how many memories it holds."""
        if fmt not in ("jsonl", "markdown"):
            raise InvalidInput(f"unknown export format {fmt!r}: jsonl or markdown")
        outputs.check_outside(self.folder, Path(target), "export")  # never over the database or its settings
        count = 0
        try:  # it holds every memory: private like the data folder
            with folder.private_output(Path(target)) as raw, io.TextIOWrapper(raw, encoding="utf-8") as fh:
                if fmt == "markdown":
                    parts = self.export_markdown(include_forgotten=include_forgotten)
                    fh.write(next(parts))  # the heading; then one part per memory
                else:
                    parts = (json.dumps(r, ensure_ascii=False) + "\n"
                             for r in self.export_records(include_forgotten=include_forgotten))
                for part in parts:
                    fh.write(part)
                    count += 1
        except OSError as exc:
            raise StorageError(f"cannot write {target}: {exc.strerror}") from exc
        return count

    def export_markdown(self, *, include_forgotten: bool = False) -> Iterator[str]:
        yield "# desktop-memory export\n"
        for m in self.store.iter_all(include_forgotten=include_forgotten):
            d = m.to_dict()
            title = m.title or first_line(m.content, 70)
            meta = f"*{d['created_at']} · {m.source}" + (f" · {m.source_app}" if m.source_app else "")
            meta += (" · pinned" if m.pinned else "") + (f" · #{' #'.join(m.tags)}" if m.tags else "") + "*"
            yield f"\n## {title}\n\n{meta}\n\n{m.content}\n"
