"""Deterministic entity extraction: patterns and capitalised names."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from desktop_memory.core.extract import Entity, extract, merge, normalise_type


def found(text: str) -> set[tuple[str, str]]:
    return {(e.text, e.type) for e in extract(text)}


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("See https://example.com/a?b=1, then www.python.org.", {("https://example.com/a?b=1", "url"),
                                                                ("www.python.org", "url")}),
        ("Mail john.smith@acme.co.uk or ops+alerts@example.com", {("john.smith@acme.co.uk", "email"),
                                                                   ("ops+alerts@example.com", "email")}),
        ("Edit ~/.config/app/settings.json and /etc/nginx/nginx.conf", {("~/.config/app/settings.json", "path"),
                                                                        ("/etc/nginx/nginx.conf", "path")}),
        (r"Saved to C:\Users\ana\Documents\report.docx", {(r"C:\Users\ana\Documents\report.docx", "path")}),
        ("Call parse_config() then MemoryService.search; MAX_TERMS is 48", {("parse_config()", "code"),
                                                                             ("MemoryService.search", "code"),
                                                                             ("MAX_TERMS", "code")}),
        ("Due 2026-03-03, review on March 5th, 2026 and next Tuesday at 3pm",
         {("2026-03-03", "datetime"), ("March 5th, 2026", "datetime"), ("next Tuesday at 3pm", "datetime")}),
        ("The invoice is $1,250.00 (about €1,150) and disk is 95% of 512 GB",
         {("$1,250.00", "amount"), ("€1,150", "amount"), ("95%", "amount"), ("512 GB", "amount")}),
        ("Lunch with Sarah Connor at Google in London.", {("Sarah Connor", "person"), ("Google", "organisation"),
                                                          ("London", "place")}),
        ("We moved from MySQL to PostgreSQL and deploy with Kubernetes.",
         {("MySQL", "product"), ("PostgreSQL", "product"), ("Kubernetes", "product")}),
    ],
)
def test_patterns_and_names(text, expected):
    assert expected <= found(text)


def test_sentence_start_words_are_not_names():
    assert found("Decision: The beta ships. Remember to buy milk. Thanks!") == set()


def test_url_parts_are_not_repeated_as_paths_or_names():
    got = found("Docs at https://docs.python.org/3/library/re.html")
    assert got == {("https://docs.python.org/3/library/re.html", "url")}


def test_repeats_collapse_case_insensitively():
    texts = [e.text for e in extract("Priya met priya. PRIYA again with Priya")]
    assert texts.count("Priya") == 1


def test_merge_keeps_pattern_types_and_drops_invented_entities():
    text = "Ask Jordan about the Atlas launch on 2026-05-01"
    det = extract(text)
    model = [Entity("Atlas", "product"), Entity("Bob", "person"), Entity("2026-05-01", "person"),
             Entity("Jordan", "place")]
    merged = {(e.text, e.type) for e in merge(det, model, text)}
    assert ("Atlas", "product") in merged and ("2026-05-01", "datetime") in merged
    assert ("Jordan", "person") in merged  # a listed first name outweighs the model's guess
    assert not any(t == "Bob" for t, _ in merged)


def test_type_names_are_normalised():
    assert normalise_type("Organization") == "organisation"
    assert normalise_type(" file path ") == "path"
    assert normalise_type("weather") is None


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=400))
def test_any_text_gives_entities_found_in_it(text):
    for e in extract(text):
        assert e.text and e.text in text and e.type


def test_huge_input_is_bounded():
    text = ("word Alpha https://x.io/a 2026-01-01 " * 20_000)
    entities = extract(text)
    assert 0 < len(entities) <= 40


def test_merge_drops_copied_sentences_from_the_model():
    text = "Passport renewal: appointment at the consulate on Friday (bring photos)"
    model = [Entity("Passport renewal: appointment", "person"), Entity("the consulate on Friday (bring", "place"),
             Entity("at the consulate on Friday bring photos", "place")]
    assert {e.text for e in merge(extract(text), model, text)} == {e.text for e in extract(text)}
