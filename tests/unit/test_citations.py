from __future__ import annotations

import pytest

from claude_memory.core import citations


def test_candidates_are_deterministic_six_base62_chars_and_differ_by_attempt() -> None:
    first = citations.candidate(123456789)
    assert first == citations.candidate(123456789)
    assert len(first) == 6 and set(first) <= set(citations.ALPHABET)
    attempts = {citations.candidate(123456789, a) for a in range(20)}
    assert len(attempts) == 20
    spread = {citations.candidate(i) for i in range(5000)}
    assert len(spread) == 5000  # no collision among 5,000 consecutive ids


@pytest.mark.parametrize(
    ("ref", "expected"),
    [
        ("mem:AbC123", "AbC123"),
        ("[mem:AbC123]", "AbC123"),
        ("AbC123", "AbC123"),
        (" mem:zz99ZZ ", "zz99ZZ"),
        ("mem:AbC12", None),
        ("mem:AbC1234", None),
        ("mem:AbC-12", None),
        ("12345678", None),
        ("", None),
    ],
)
def test_parse(ref: str, expected: str | None) -> None:
    assert citations.parse(ref) == expected


def test_citations_are_found_in_text() -> None:
    text = "as decided in [mem:AbC123] and mem:zz99ZZ, not mem:short, xmem:AbC123 or mem:AbC123x"
    assert citations.IN_TEXT.findall(text) == ["AbC123", "zz99ZZ"]
