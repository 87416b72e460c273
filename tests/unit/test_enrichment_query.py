"""`entity:` filters in typed queries."""

from desktop_memory.core.query import EntityFilter, Filters, parse


def test_entity_words_become_filters():
    q = parse("lunch entity:Priya entity:place:new_york entity:person: entity:weird:thing")
    assert q.text == "lunch"
    assert q.filters.entities == (EntityFilter("priya"), EntityFilter("new york", "place"), EntityFilter("", "person"),
                                  EntityFilter("weird:thing"))
    assert q.filters.active


def test_empty_entity_filter_stays_text():
    assert parse("entity:: hello").filters.entities == (EntityFilter(":"),)
    assert not Filters().active
