"""Health of Chroma's vector index on disk: checked before Chroma opens it, moved aside when damaged.

Chroma keeps each HNSW segment as four files in `vectors/<segment-uuid>/` (hnswlib's persistent
format, chroma-core/hnswlib `hnswalg.h`) plus `index_metadata.pickle` (its id <-> label maps):

- `header.bin`: 100 bytes, native little-endian: int32 version (1), u64 offsetLevel0 (0),
  u64 max_elements, u64 cur_element_count, u64 size_data_per_element, u64 label_offset,
  u64 offsetData, int32 maxlevel, u32 enterpoint, u64 maxM, u64 maxM0, u64 M, f64 mult,
  u64 ef_construction;
- `data_level0.bin`: per element `size_data_per_element` bytes: u32 (link count in the low 16 bits,
  deleted flag 0x10000), maxM0 u32 neighbour ids, the vector (dim float32), u64 label;
- `length.bin`: a float32 per element;
- `link_lists.bin`: per element u32 byte count (0 or levels * (maxM + 1) * 4) and, per upper level,
  u32 link count and maxM u32 neighbour ids.

A process killed while Chroma rewrites these files (it seeks and writes them in place, without a
journal) leaves them inconsistent: Chroma then fails every call ("Failed to apply logs to the hnsw
segment writer") or, worse, crashes the process (a read of a garbage length, a seek to a 4 TB offset).
A crash cannot be caught in-process, so the files are checked before Chroma sees them:

- every open (~0.1 ms): the headers parse and are self-consistent, and the file sizes agree with them;
- when the index was not closed cleanly (the `desktop-memory.open` marker is still there: the process
  was killed or crashed), every element as well: link counts, neighbour ids, labels, the link-list
  walk, and the pickle (read with an unpickler that refuses every class).

A damaged index is renamed `vectors.broken-<UTC time>` and the service rebuilds it from SQLite's
vector copies (service.py); the moved folder is deleted once the rebuild completes.
"""

from __future__ import annotations

import contextlib
import io
import logging
import os
import pickle
import shutil
import struct
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

log = logging.getLogger(__name__)

OPEN_MARKER = "desktop-memory.open"  # written before Chroma opens the index, removed after a clean close
REBUILDING_MARKER = "desktop-memory.rebuilding"  # an index being refilled from the database copies
BROKEN_PREFIX = ".broken-"  # vectors.broken-<time>: a damaged index moved aside
HNSW_FILES = ("header.bin", "data_level0.bin", "length.bin", "link_lists.bin")
PICKLE = "index_metadata.pickle"
_HEADER = struct.Struct("<iQQQQQQiIQQQdQ")  # hnswlib HEADER_FIELDS, packed as writeBinaryPOD writes them
_LABEL_BYTES = 8  # hnswlib labeltype (size_t)
_MAX_ELEMENTS = 1 << 31
_MAX_LEVEL = 64


class IndexDamaged(Exception):
    """The vector index on disk is inconsistent; `str()` says how, for a log line."""


@dataclass(frozen=True)
class Header:
    """The fields of a segment's header.bin that the checks use."""

    capacity: int
    elements: int
    stride: int  # size_data_per_element
    label_offset: int
    data_offset: int
    max_level: int
    entrypoint: int
    max_m: int
    max_m0: int

    @property
    def dim(self) -> int:
        return (self.label_offset - self.data_offset) // 4

    @property
    def upper_bytes(self) -> int:
        """Bytes of one upper level of an element's links in link_lists.bin."""
        return (self.max_m + 1) * 4


def segment_dirs(vectors_dir: Path) -> list[Path]:
    """The HNSW segment folders of an index (those holding any of the segment files)."""
    if not vectors_dir.is_dir():
        return []
    return sorted(p for p in vectors_dir.iterdir()
                  if p.is_dir() and any((p / f).exists() for f in (*HNSW_FILES, PICKLE)))


def read_header(seg: Path) -> Header:
    """Parse and check header.bin; IndexDamaged when it cannot belong to an index hnswlib wrote."""
    try:
        raw = (seg / "header.bin").read_bytes()
    except OSError as exc:
        raise IndexDamaged(f"{seg.name}/header.bin cannot be read ({exc.strerror})") from None
    if len(raw) != _HEADER.size:
        raise IndexDamaged(f"{seg.name}/header.bin has {len(raw)} bytes, not {_HEADER.size}")
    (version, offset0, capacity, elements, stride, label_offset, data_offset, max_level, entrypoint,
     max_m, max_m0, m, mult, ef_construction) = _HEADER.unpack(raw)
    h = Header(capacity, elements, stride, label_offset, data_offset, max_level, entrypoint, max_m, max_m0)
    level0 = (max_m0 + 1) * 4
    problems = [
        (version != 1, "version"),
        (offset0 != 0, "level-0 offset"),
        (not 0 < m <= 4096 or max_m != m or max_m0 < max_m or max_m0 > 2 * 4096, "M"),
        (data_offset != level0, "data offset"),
        (label_offset <= data_offset or (label_offset - data_offset) % 4, "vector size"),
        (stride != label_offset + _LABEL_BYTES, "element size"),
        (capacity > _MAX_ELEMENTS or elements > capacity, "element count"),
        (not -1 <= max_level <= _MAX_LEVEL, "max level"),
        (elements > 0 and (max_level < 0 or entrypoint >= elements), "entry point"),
        (not (mult == mult and 0 <= mult < 100) or ef_construction > 1 << 24, "build parameters"),
    ]
    if bad := [why for failed, why in problems if failed]:
        more = ", ..." if len(bad) > 3 else ""
        raise IndexDamaged(f"{seg.name}/header.bin is not consistent ({', '.join(bad[:3])}{more})")
    return h


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        raise IndexDamaged(f"{path.parent.name}/{path.name} is missing") from None


def check_sizes(seg: Path, h: Header) -> None:
    """The files' sizes agree with the header (a cheap check; sparse or truncated files fail it)."""
    data, lengths, links = (_size(seg / f) for f in HNSW_FILES[1:])
    room = max(h.capacity, h.elements)
    if not h.elements * h.stride <= data <= room * h.stride:
        raise IndexDamaged(f"{seg.name}/data_level0.bin has {data} bytes for {h.elements} elements")
    if not h.elements * 4 <= lengths <= room * 4:
        raise IndexDamaged(f"{seg.name}/length.bin has {lengths} bytes for {h.elements} elements")
    most = h.elements * (4 + max(h.max_level, 0) * h.upper_bytes)
    if not 4 * h.elements <= links <= most:
        raise IndexDamaged(f"{seg.name}/link_lists.bin has {links} bytes for {h.elements} elements")


def check_elements(seg: Path, h: Header) -> np.ndarray:
    """Every element's level-0 links and label, and the link-list walk; returns the deleted flags."""
    n = h.elements
    if n == 0:
        return np.zeros(0, dtype=bool)
    data = np.fromfile(seg / "data_level0.bin", dtype=np.uint8, count=n * h.stride).reshape(n, h.stride)
    head = np.ascontiguousarray(data[:, : h.data_offset]).view("<u4")
    counts = head[:, 0] & 0xFFFF
    deleted = (head[:, 0] & 0x10000) != 0
    if (counts > h.max_m0).any():
        raise IndexDamaged(f"{seg.name}/data_level0.bin: a link count above {h.max_m0}")
    used = np.arange(h.max_m0)[None, :] < counts[:, None]
    if (head[:, 1:][used] >= n).any():
        raise IndexDamaged(f"{seg.name}/data_level0.bin: a neighbour beyond the {n} elements")
    labels = np.ascontiguousarray(data[:, h.label_offset : h.stride]).view("<u8")[:, 0]
    if len(np.unique(labels)) != n:
        raise IndexDamaged(f"{seg.name}/data_level0.bin: two elements share a label")
    _walk_links(seg, h)
    return deleted


def _walk_links(seg: Path, h: Header) -> None:
    raw = (seg / "link_lists.bin").read_bytes()
    pos, n, upper = 0, h.elements, h.upper_bytes
    for _ in range(n):
        if pos + 4 > len(raw):
            raise IndexDamaged(f"{seg.name}/link_lists.bin ends before its {n} elements")
        size = int.from_bytes(raw[pos : pos + 4], "little")
        pos += 4
        if not size:
            continue
        if size % upper or size // upper > max(h.max_level, 0) or pos + size > len(raw):
            raise IndexDamaged(f"{seg.name}/link_lists.bin: an element with {size} bytes of links")
        block = np.frombuffer(raw, dtype="<u4", count=size // 4, offset=pos).reshape(-1, h.max_m + 1)
        if (block[:, 0] > h.max_m).any():
            raise IndexDamaged(f"{seg.name}/link_lists.bin: a link count above {h.max_m}")
        used = np.arange(h.max_m)[None, :] < block[:, :1]
        if (block[:, 1:][used] >= n).any():
            raise IndexDamaged(f"{seg.name}/link_lists.bin: a neighbour beyond the {n} elements")
        pos += size
    if pos != len(raw):
        raise IndexDamaged(f"{seg.name}/link_lists.bin has {len(raw) - pos} bytes after its {n} elements")


class _NoClasses(pickle.Unpickler):
    """Chroma's pickle holds only dicts, ints, strings and None: any class reference is damage."""

    def find_class(self, module: str, name: str) -> Any:
        raise pickle.UnpicklingError(f"refused {module}.{name}")


def check_pickle(seg: Path, h: Header, deleted: np.ndarray) -> None:
    """index_metadata.pickle loads without classes and its maps agree with each other and the header."""
    path = seg / PICKLE
    if not path.exists():
        if h.elements:
            raise IndexDamaged(f"{seg.name}/{PICKLE} is missing for {h.elements} elements")
        return
    try:
        meta = _NoClasses(io.BytesIO(path.read_bytes())).load()
    except Exception as exc:  # noqa: BLE001 - any failure to parse is damage
        raise IndexDamaged(f"{seg.name}/{PICKLE} cannot be read ({type(exc).__name__})") from None
    if not isinstance(meta, dict):
        raise IndexDamaged(f"{seg.name}/{PICKLE} is not a map")
    id_to_label, label_to_id = meta.get("id_to_label"), meta.get("label_to_id")
    dim = meta.get("dimensionality")
    if not isinstance(id_to_label, dict) or not isinstance(label_to_id, dict):
        raise IndexDamaged(f"{seg.name}/{PICKLE} lacks its id maps")
    if dim is not None and dim != h.dim:
        raise IndexDamaged(f"{seg.name}/{PICKLE} says {dim} dimensions, the header {h.dim}")
    if len(id_to_label) != len(label_to_id) or any(label_to_id.get(v) != k for k, v in id_to_label.items()):
        raise IndexDamaged(f"{seg.name}/{PICKLE}: its two id maps disagree")
    if len(id_to_label) != int((~deleted).sum()):
        raise IndexDamaged(f"{seg.name}/{PICKLE} maps {len(id_to_label)} ids, the index holds {int((~deleted).sum())}")


def inspect(vectors_dir: Path, *, thorough: bool) -> str | None:
    """Why the index cannot be trusted, or None. `thorough` reads every element (after a crash)."""
    try:
        for seg in segment_dirs(vectors_dir):
            if not (seg / "header.bin").exists() and not (seg / PICKLE).exists():
                continue
            h = read_header(seg)
            check_sizes(seg, h)
            if thorough:
                check_pickle(seg, h, check_elements(seg, h))
    except IndexDamaged as exc:
        return str(exc)
    except (OSError, ValueError) as exc:
        return f"the index files cannot be read ({exc})"
    return None


# -- markers and moving aside ----------------------------------------------------------------
def was_left_open(vectors_dir: Path) -> bool:
    """True when the last process that opened the index did not close it (killed or crashed)."""
    return (vectors_dir / OPEN_MARKER).exists()


def mark_open(vectors_dir: Path) -> None:
    """Written before Chroma opens the index; its presence at the next open means a crash."""
    vectors_dir.mkdir(parents=True, exist_ok=True)
    fd = os.open(vectors_dir / OPEN_MARKER, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        os.write(fd, f"{os.getpid()}\n".encode())
    finally:
        os.close(fd)


def mark_closed(vectors_dir: Path) -> None:
    with contextlib.suppress(FileNotFoundError):
        (vectors_dir / OPEN_MARKER).unlink()


def is_rebuilding(vectors_dir: Path) -> bool:
    return (vectors_dir / REBUILDING_MARKER).exists()


def set_rebuilding(vectors_dir: Path, on: bool) -> None:
    marker = vectors_dir / REBUILDING_MARKER
    if on:
        vectors_dir.mkdir(parents=True, exist_ok=True)
        marker.touch(mode=0o600)
    else:
        with contextlib.suppress(FileNotFoundError):
            marker.unlink()


def move_aside(vectors_dir: Path) -> Path | None:
    """Rename a damaged index to vectors.broken-<UTC time> (kept until the rebuild completes)."""
    if not vectors_dir.exists():
        return None
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    target = vectors_dir.with_name(f"{vectors_dir.name}{BROKEN_PREFIX}{stamp}")
    n = 1
    while target.exists():
        n += 1
        target = vectors_dir.with_name(f"{vectors_dir.name}{BROKEN_PREFIX}{stamp}-{n}")
    vectors_dir.rename(target)
    return target


def remove_moved_aside(vectors_dir: Path) -> int:
    """Delete every damaged index moved aside (after a complete rebuild); returns how many."""
    removed = 0
    for old in vectors_dir.parent.glob(f"{vectors_dir.name}{BROKEN_PREFIX}*"):
        shutil.rmtree(old, ignore_errors=True)
        removed += not old.exists()
    return removed
