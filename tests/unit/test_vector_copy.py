"""The vector copy (store/vector_copy.py): rows read back as written whatever the order and spacing of the labels asked
for (runs of close labels come in one read), zeroed rows read as no vector, a whole-copy read skips them, and an
opened copy is cut to the extent its index saved."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from claude_memory.store.vector_copy import GAP, SCALE_BYTES, VectorCopy, decode_rows, encode_rows

DIM = 24


def _vectors(count: int, seed: int = 1) -> np.ndarray:
    return np.random.default_rng(seed).normal(size=(count, DIM)).astype(np.float32)


def _unit(vectors: np.ndarray) -> np.ndarray:
    return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)


def test_rows_read_back_as_written_in_the_order_asked_for(tmp_path: Path) -> None:
    copy = VectorCopy(tmp_path / "v.q8", DIM)
    vectors = _vectors(300)
    labels = np.arange(300, dtype=np.int64)
    copy.write(labels[150:], vectors[150:])  # two batches, the later labels first
    copy.write(labels[:150], vectors[:150])
    assert copy.rows >= 300 and (tmp_path / "v.q8").stat().st_size == copy.rows * (DIM + SCALE_BYTES)
    rng = np.random.default_rng(2)
    close = np.array([5, 3, 4, 4, 3 + GAP, 3 + GAP + 1], dtype=np.int64)  # repeats, out of order, one read apart
    for wanted in (rng.permutation(300)[:40], close, labels[::-1], labels[:1]):
        read = copy.read(wanted)
        assert read.shape == (len(wanted), DIM)
        assert np.allclose(read, _unit(vectors[wanted]), atol=2e-2)  # int8: within a step of 1/127 of the largest
        assert np.array_equal(read, decode_rows(encode_rows(vectors[wanted])))
    assert copy.read(np.empty(0, dtype=np.int64)).shape == (0, DIM)


def test_a_zeroed_row_is_no_vector_and_a_whole_read_leaves_it_out(tmp_path: Path) -> None:
    copy = VectorCopy(tmp_path / "v.q8", DIM)
    vectors = _vectors(40)
    copy.write(np.arange(40, dtype=np.int64), vectors)
    copy.zero([7, 8, 39, 10_000])  # (a label past the copy is ignored)
    assert not copy.read(np.array([7, 39], dtype=np.int64)).any()
    labels, read = zip(*copy.pages(top=29), strict=True)
    held = np.concatenate(labels)
    assert held.tolist() == [n for n in range(30) if n not in (7, 8)]
    assert np.array_equal(np.concatenate(read), decode_rows(encode_rows(vectors[held])))
    every_third = np.concatenate([labels for labels, _ in copy.pages(top=39, step=3)])
    assert every_third.tolist() == [n for n in range(0, 39, 3)]


def test_an_opened_copy_is_cut_to_the_saved_extent_and_one_of_another_width_is_dropped(tmp_path: Path) -> None:
    path = tmp_path / "v.q8"
    copy = VectorCopy(path, DIM)
    copy.write(np.arange(50, dtype=np.int64), _vectors(50))
    copy.sync()
    opened = VectorCopy.open(path, DIM, copied=19)
    assert opened is not None and opened.rows == 20 and path.stat().st_size == 20 * (DIM + SCALE_BYTES)
    assert VectorCopy.open(path, DIM + 1, copied=19) is None and not path.exists()
    assert VectorCopy.open(path, DIM, copied=19) is None  # (missing)
