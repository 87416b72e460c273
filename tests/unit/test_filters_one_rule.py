"""One rule decides which memories pass the filters, whichever channel finds them.

A memory can reach a search by keyword (SQL), by meaning from Chroma (SQL-filtered), by meaning from
its vector copy while its vector still waits in the queue, as a session neighbour, or as a family
member; browsing (no words) lists it by SQL alone. All must agree.
"""

from __future__ import annotations

import pytest

from desktop_memory.core.query import EntityFilter, Filters
from desktop_memory.service import MemoryService
from tests.fakes import FakeEmbedder

TEXT = "offshore wind farm contract signed for the northern coast"


def _open(svc: MemoryService) -> MemoryService:
    """The index opened first: vectors of later adds wait in the queue (the first search would drain it)."""
    assert svc.vectors.count() == 0
    return svc


def _with_entity(svc: MemoryService, text: str, entity: dict) -> str:
    mid = svc.add(text, source="cli", source_app="Éditeur Pro").memory.id
    with svc.store.transaction():
        svc.store.update(mid, entities=[entity])
    return mid


def _found(svc: MemoryService, query: str, filters: Filters | None = None) -> set[str]:
    return {h.memory.id for h in svc.search(query, filters=filters, record_access=False, expand=True)}


@pytest.mark.parametrize("wanted", ["entity:ørsted", "entity:organisation:ørsted", "entity:Ørsted"])
def test_an_entity_filter_gives_the_same_memories_in_every_channel(tmp_path, wanted):
    with MemoryService(tmp_path / "data", embedder=FakeEmbedder()) as svc:
        _open(svc)
        mid = _with_entity(svc, TEXT, {"text": "Ørsted", "type": "organisation"})
        other = _with_entity(svc, "again: " + TEXT, {"text": "Vestas", "type": "organisation"})
        assert svc.store.vectors.queued_upserts(10)  # both vectors wait for Chroma: found by meaning from the copies
        queued = _found(svc, f"offshore wind {wanted}")
        browsed = _found(svc, wanted)
        svc.sync_vectors()
        assert not svc.store.vectors.queued_upserts(10)
        indexed = _found(svc, f"offshore wind {wanted}")
        keyword_only = _found(svc, f"contract {wanted}")
        assert queued == browsed == indexed == keyword_only == {mid}, (queued, browsed, indexed, keyword_only)
        assert other != mid and other not in queued


def test_an_app_filter_matches_any_case_in_every_channel(tmp_path):
    with MemoryService(tmp_path / "data", embedder=FakeEmbedder()) as svc:
        _open(svc)
        mid = svc.add(TEXT, source="cli", source_app="Éditeur Pro").memory.id
        svc.add("elsewhere: " + TEXT, source="cli", source_app="Browser")
        filters = Filters(apps=("éditeur",))
        queued = _found(svc, "offshore wind", filters)
        browsed = _found(svc, "", filters)
        svc.sync_vectors()
        assert queued == browsed == _found(svc, "offshore wind", filters) == {mid}


def test_family_members_and_neighbours_are_filtered_by_the_same_rule(tmp_path):
    with MemoryService(tmp_path / "data", embedder=FakeEmbedder()) as svc:
        _open(svc)
        base = " ".join(f"word{i}" for i in range(40))
        first = _with_entity(svc, f"{base} alpha", {"text": "Ørsted", "type": "organisation"})
        second = svc.add(f"{base} beta", source="cli").memory  # a look-alike, without the entity
        assert svc.get(second.id).family_id == svc.get(first).family_id
        hits = svc.search("word1 word2 entity:ørsted", record_access=False)
        assert [h.memory.id for h in hits] == [first]
        assert not hits[0].similar  # the member without the entity does not pass


def test_an_entity_filter_object_from_a_front_end_is_the_same_rule(tmp_path):
    with MemoryService(tmp_path / "data", embedder=FakeEmbedder()) as svc:
        _open(svc)
        mid = _with_entity(svc, TEXT, {"text": "Ørsted", "type": "organisation"})
        filters = Filters(entities=(EntityFilter("ørsted", "organisation"),))
        assert _found(svc, "offshore wind", filters) == _found(svc, "", filters) == {mid}
