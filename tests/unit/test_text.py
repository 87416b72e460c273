import pytest

from desktop_memory.core.errors import InvalidInput
from desktop_memory.core.text import check_content, content_hash, decode, first_line, normalise


def test_line_endings_and_control_characters_are_normalised():
    assert normalise("a\r\nb\rc\x00d\x07") == "a\nb\ncd"


def test_broken_utf8_is_replaced_not_rejected():
    assert normalise(b"caf\xc3\xa9 \xff\xfe ok") == "café \ufffd\ufffd ok"
    assert decode(b"\xef\xbb\xbfhello") == "hello"


def test_lone_surrogates_become_replacement_characters():
    assert normalise("a\ud800b") == "a\ufffdb"


@pytest.mark.parametrize("text", ["", "   ", "\n\t\r\n", "\x00\x00"])
def test_empty_input_is_refused_with_a_clear_message(text):
    with pytest.raises(InvalidInput, match="empty"):
        check_content(text)


def test_oversized_input_is_refused_with_the_limit_in_the_message():
    with pytest.raises(InvalidInput, match="1,000 bytes"):
        check_content("x" * 1001, max_bytes=1000)
    assert check_content("x" * 1000, max_bytes=1000) == "x" * 1000


def test_content_hash_ignores_whitespace_differences_only():
    assert content_hash("a  b\n") == content_hash("a b")
    assert content_hash("a b") != content_hash("A b")


def test_first_line_skips_blank_lines_and_shortens():
    assert first_line("\n\n  hello world  \nsecond") == "hello world"
    assert first_line("x" * 100, 10) == "x" * 9 + "…"
