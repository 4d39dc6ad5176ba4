"""The evidence aligner (core/evidence.py): the seed's required cases (§12.3), the corrected non-ASCII offsets,
and properties over generated text."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from claude_memory.core.evidence import NotAligned, Span, align


def test_an_exact_quote_gets_code_point_offsets_even_in_non_ascii_text() -> None:
    text = "DuckDB의 JSONB를 JSON으로 변경"
    span = align("JSONB를 JSON으로", text)
    assert span == Span(8, 21, 1.0, "exact", 1)  # (the seed's example says 7..18: its defect §22.20)
    assert text[8:21] == "JSONB를 JSON으로"


def test_whitespace_only_differences_align_normalized_and_map_back_to_the_original() -> None:
    text = "Run the tests\n\n   before you\tpush,  always."
    span = align("the tests before you push", text)
    assert isinstance(span, Span) and span.method == "normalized" and span.confidence == 0.95
    assert text[span.start : span.end] == "the tests\n\n   before you\tpush"


def test_unicode_compatibility_forms_and_invisible_characters_are_normalized() -> None:
    text = "The con\u200bfig ﬁle lives in ～/.claude"
    span = align("config file lives", text)
    assert isinstance(span, Span) and span.method == "normalized"
    assert text[span.start : span.end] == "con\u200bfig ﬁle lives"


def test_a_dropped_word_aligns_fuzzily_above_the_threshold() -> None:
    text = "We decided to store every event in DuckDB and keep the vectors in an hnswlib index beside it."
    span = align("store every event in DuckDB and the vectors in an hnswlib index", text)
    assert isinstance(span, Span) and span.method == "fuzzy"
    assert 0.85 <= span.confidence < 0.95
    found = text[span.start : span.end]
    assert found.startswith("store every event") and "hnswlib index" in found


def test_an_absent_quote_and_an_empty_one_are_not_aligned() -> None:
    text = "The cart total is computed from the items' prices."
    assert align("the deployment pipeline uploads artifacts to S3", text) == NotAligned("not_found")
    assert align("   \n", text) == NotAligned("empty_quote")
    assert align("cart totl", text, fuzzy=False) == NotAligned("not_found")


def test_a_quote_found_twice_takes_the_first_place_and_says_how_many() -> None:
    text = "retry the build; if it fails, retry the build again"
    span = align("retry the build", text)
    assert span == Span(0, 15, 1.0, "exact", 2)
    loose = align("retry  the\nbuild", text)
    assert isinstance(loose, Span) and loose.method == "normalized" and loose.ambiguity == 2 and loose.start == 0


@settings(max_examples=200, deadline=None)
@given(st.text(min_size=1, max_size=300), st.data())
def test_any_substring_aligns_exactly_to_itself(text: str, data: st.DataObject) -> None:
    start = data.draw(st.integers(0, len(text) - 1))
    end = data.draw(st.integers(start + 1, len(text)))
    quote = text[start:end]
    span = align(quote, text)
    if not quote.strip():
        assert span == NotAligned("empty_quote")
        return
    assert isinstance(span, Span) and span.method == "exact" and text[span.start : span.end] == quote
    assert span.start <= start


@settings(max_examples=200, deadline=None)
@given(st.lists(st.text(alphabet=st.characters(categories=["L", "N"]), min_size=1, max_size=8), min_size=2,
                max_size=30), st.data())  # fmt: skip
def test_extra_whitespace_in_the_text_still_aligns_to_the_same_words(words: list[str], data: st.DataObject) -> None:
    gaps = data.draw(st.lists(st.sampled_from([" ", "  ", "\n", "\t ", " \n\n "]), min_size=len(words) - 1,
                              max_size=len(words) - 1))  # fmt: skip
    text = words[0] + "".join(gap + word for gap, word in zip(gaps, words[1:], strict=True))
    first = data.draw(st.integers(0, len(words) - 1))
    last = data.draw(st.integers(first, len(words) - 1))
    quote = " ".join(words[first : last + 1])
    span = align(quote, text)
    assert isinstance(span, Span) and span.method in ("exact", "normalized")
    assert " ".join(text[span.start : span.end].split()) == " ".join(quote.split())
