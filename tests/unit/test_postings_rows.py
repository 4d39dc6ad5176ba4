"""The keyword postings' rows, placed part by part as they are read (a counting sort), equal one stable sort of all
the postings by term: same offsets, and each term's documents and frequencies in the same order."""

from __future__ import annotations

import numpy as np
import pytest

from claude_memory.store.postings import _placed


def _parts(seed: int, terms: int, sizes: list[int]) -> list[tuple[np.ndarray, np.ndarray, np.ndarray]]:
    rng = np.random.default_rng(seed)
    parts, start = [], 0
    for size in sizes:
        codes = rng.integers(0, terms, size).astype(np.int32)
        docs = np.arange(start, start + size, dtype=np.int32)  # ascending, as the store reads them
        parts.append((codes, docs, rng.integers(1, 9, size).astype(np.int32)))
        start += size
    return parts


@pytest.mark.parametrize("sizes", [[0], [1], [500], [300, 0, 700, 5], [1, 1, 1]])
def test_placed_rows_equal_one_stable_sort_of_every_posting(sizes: list[int]) -> None:
    terms = 37
    parts = _parts(sum(sizes), terms, sizes)
    codes, docs, tf = (np.concatenate([p[i] for p in parts]) for i in range(3))
    counts = np.bincount(codes, minlength=terms)
    rows = _placed(counts, iter(parts), np.dtype(np.uint16))
    order = np.argsort(codes, kind="stable")
    assert rows.offsets.tolist() == [0, *np.cumsum(counts).tolist()]
    assert rows.docs.tolist() == docs[order].tolist()
    assert rows.tf.tolist() == tf[order].tolist() and rows.tf.dtype == np.uint16
    for code in range(terms):  # each term's documents ascending, as the lookups' binary search needs
        held = rows.docs[rows.offsets[code] : rows.offsets[code + 1]]
        assert (np.diff(held) > 0).all()


def test_postings_that_do_not_match_their_counts_are_an_error_not_a_wrong_index() -> None:
    parts = _parts(3, 5, [50])
    counts = np.bincount(parts[0][0], minlength=5)
    counts[0] += 1  # a term counted once more than it was read
    with pytest.raises(RuntimeError, match="changed while they were read"):
        _placed(counts, iter(parts), np.dtype(np.uint16))
