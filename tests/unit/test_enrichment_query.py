"""`entity:` filters in typed queries."""

from desktop_memory.core.query import EntityFilter, Filters, entity_matches, parse


def test_entity_words_become_filters():
    q = parse("lunch entity:Priya entity:place:new_york entity:person: entity:weird:thing")
    assert q.text == "lunch"
    assert q.filters.entities == (EntityFilter("priya"), EntityFilter("new york", "place"), EntityFilter("", "person"),
                                  EntityFilter("weird:thing"))
    assert q.filters.active


def test_empty_entity_filter_stays_text():
    assert parse("entity:: hello").filters.entities == (EntityFilter(":"),)
    assert not Filters().active


def test_entity_matching():
    ents = [{"text": "Priya Sharma", "type": "person"}, {"text": "Berlin", "type": "place"}, "junk"]
    assert entity_matches(ents, EntityFilter("priya"))
    assert entity_matches(ents, EntityFilter("", "place"))
    assert not entity_matches(ents, EntityFilter("berlin", "person"))
    assert not entity_matches([], EntityFilter("x"))
