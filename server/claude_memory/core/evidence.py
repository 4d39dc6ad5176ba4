"""The evidence aligner (seed §12.2): where a quote sits in a text, as code-point offsets into the original text.

Three steps, the first that finds the quote wins:

1. **exact**: the quote as it is, confidence 1.0;
2. **normalized**: both sides in NFKC, every run of whitespace one space, invisible format characters dropped;
   found there, the span is mapped back to the original text (each normalized character remembers the original
   one it came from; a run of whitespace, its first), confidence 0.95;
3. **fuzzy**: both sides also lowercased and without punctuation; rapidfuzz finds the best window of the quote's
   length, then windows of 1.0, 1.1 and 1.2 times that length starting there are scored by normalized Levenshtein
   similarity; the best at or above 0.85 is kept, mapped back, confidence = its similarity (below 0.95).

A quote found more than once is aligned to its first place, and ``ambiguity`` counts the places (exact and
normalized steps). Pure: no I/O, no state.
"""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass
from typing import Final, Literal

from rapidfuzz import fuzz
from rapidfuzz.distance import Levenshtein

EXACT: Final = 1.0
NORMALIZED: Final = 0.95
FUZZY_THRESHOLD: Final = 0.85
MIN_FUZZY_CHARS: Final = 5  # a normalized quote shorter than this is not looked for fuzzily
WINDOWS: Final = (1.0, 1.1, 1.2)  # fuzzy window lengths, as multiples of the quote's
MAX_SLACK: Final = 40  # fuzzy windows start at most this many characters either side of rapidfuzz's best one

Method = Literal["exact", "normalized", "fuzzy"]
Failure = Literal["empty_quote", "not_found"]


@dataclass(frozen=True, slots=True)
class Span:
    """``text[start:end]`` is where the quote was found (code points of the original text)."""

    start: int
    end: int
    confidence: float
    method: Method
    ambiguity: int = 1  # how many places the quote was found in (the first is the span)


@dataclass(frozen=True, slots=True)
class NotAligned:
    reason: Failure


def align(quote: str, text: str, *, fuzzy: bool = True) -> Span | NotAligned:
    """Locate ``quote`` in ``text``: exact, then normalized, then (unless ``fuzzy`` is False) fuzzy."""
    if not quote.strip():
        return NotAligned("empty_quote")
    found = _occurrences(text, quote)
    if found:
        return Span(found[0], found[0] + len(quote), EXACT, "exact", len(found))
    norm_text, where = _normalize(text, fold=False)
    norm_quote, _ = _normalize(quote, fold=False)
    found = _occurrences(norm_text, norm_quote) if norm_quote else []
    if found:
        start, end = _original(where, found[0], found[0] + len(norm_quote), len(text))
        return Span(start, end, NORMALIZED, "normalized", len(found))
    if not fuzzy:
        return NotAligned("not_found")
    return _fuzzy(quote, text) or NotAligned("not_found")


def _fuzzy(quote: str, text: str) -> Span | None:
    folded_text, where = _normalize(text, fold=True)
    folded_quote, _ = _normalize(quote, fold=True)
    if len(folded_quote) < MIN_FUZZY_CHARS or not folded_text:
        return None
    anchor = fuzz.partial_ratio_alignment(folded_quote, folded_text)
    if anchor is None:
        return None
    best: tuple[float, int, int] | None = None
    # windows of each length starting near the anchor (a dropped or added word moves the best start a little)
    slack = min(MAX_SLACK, max(1, len(folded_quote) // 5))
    for factor in WINDOWS:
        length = max(1, round(len(folded_quote) * factor))
        for start in range(max(0, anchor.dest_start - slack), min(len(folded_text), anchor.dest_start + slack) + 1):
            window = folded_text[start : start + length]
            score = Levenshtein.normalized_similarity(folded_quote, window)
            if best is None or score > best[0]:
                best = (score, start, start + len(window))
    if best is None or best[0] < FUZZY_THRESHOLD:
        return None
    score, start, end = best
    while start < end and folded_text[start] == " ":  # (a window may take in the space beside a word)
        start += 1
    while end > start and folded_text[end - 1] == " ":
        end -= 1
    first, last = _original(where, start, end, len(text))
    return Span(first, last, min(score, NORMALIZED - 1e-6), "fuzzy")


def _occurrences(text: str, quote: str) -> list[int]:
    """Every start of ``quote`` in ``text`` (overlapping ones too)."""
    found: list[int] = []
    at = text.find(quote)
    while at >= 0:
        found.append(at)
        at = text.find(quote, at + 1)
    return found


def _normalize(text: str, *, fold: bool) -> tuple[str, list[int]]:
    """The normalized text and, per normalized character, the index of the original character it came from.
    NFKC per character (a ligature becomes several characters, all from one), whitespace runs one space (from the
    run's first), format characters (zero-width spaces, joiners, BOM) dropped; ``fold`` also lowercases and turns
    punctuation into spaces. Leading and trailing spaces are trimmed."""
    out: list[str] = []
    where: list[int] = []
    for index, char in enumerate(text):
        for piece in unicodedata.normalize("NFKC", char):
            category = unicodedata.category(piece)
            if category == "Cf":
                continue
            if fold:
                if category.startswith("P") or category.startswith("S"):
                    piece = " "
                piece = piece.lower()
            for small in piece:  # (lower() may give more than one character)
                if small.isspace():
                    if out and out[-1] == " ":
                        continue
                    small = " "
                out.append(small)
                where.append(index)
    while out and out[-1] == " ":
        out.pop()
        where.pop()
    skip = 0
    while skip < len(out) and out[skip] == " ":
        skip += 1
    return "".join(out[skip:]), where[skip:]


def _original(where: list[int], start: int, end: int, size: int) -> tuple[int, int]:
    """The original span of normalized characters ``start`` to ``end`` (exclusive)."""
    if end <= start:
        return where[start] if start < len(where) else size, where[start] if start < len(where) else size
    return where[start], min(size, where[end - 1] + 1)
