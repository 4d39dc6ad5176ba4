"""The vector copy beside the hnswlib index (``vectors.q8``): every stored vector in int8, one row per label, so that a
search scores its candidates in every dimension without hnswlib's slow ``get_items`` (store.vector_index).

A row is the unit vector in int8 (scaled so that its largest component is 127) followed by that scale as a float32:
388 bytes for 384 dimensions, 42 MB at 110k chunks; cosines from it are within 2e-3 of exact. A zero row is no
vector (a label never stored, or forgotten); rows past the file's end are missing.

The file is read and written with ``pread``/``pwrite``, never memory-mapped. Mapped, it counted in the service's
memory page by page as searches read it, and a search's ~1,000 scattered rows brought it all in at once: Linux maps
the cached pages around each one it faults in (64 KB), and ``madvise`` does not turn that off. So the whole copy was
resident (41 MB more at 110k chunks, ten times that at a million). Read instead, it stays in the system's file
cache; rows less than :data:`GAP` labels apart come in one read.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Final

import numpy as np
import numpy.typing as npt

SCALE_BYTES: Final = 4  # the float32 scale at the end of each row
GAP: Final = 16  # labels apart below which one read takes both rows (a 4 KB page holds ~10)
PAGE: Final = 5_000  # rows read at a time when reading the whole copy

Labels = npt.NDArray[np.int64]


class VectorCopy:
    """The copy's file at ``path``, of vectors of ``dim`` dimensions; :attr:`rows` is its extent in rows."""

    def __init__(self, path: Path, dim: int, rows: int = 0) -> None:
        self.path, self.dim, self.rows = path, dim, rows
        self.width = dim + SCALE_BYTES

    @classmethod
    def open(cls, path: Path, dim: int, copied: int) -> VectorCopy | None:
        """The copy at ``path`` up to label ``copied`` (the extent its index saved); None if it is missing or of
        another width. Rows past the saved extent are cut off: they were written after the last save, so the index
        does not have them, and one may be of a chunk forgotten before the process died."""
        width = dim + SCALE_BYTES
        try:
            size = path.stat().st_size
        except OSError:
            size = 0
        rows = min(size // width, copied + 1)
        if size % width or rows <= 0:
            path.unlink(missing_ok=True)
            return None
        if size > rows * width:
            os.truncate(path, rows * width)
        return cls(path, dim, rows)

    def reserve(self, rows: int) -> None:
        """Grow the file (with zero rows: sparse where the file system can) to hold at least ``rows`` rows."""
        if rows <= self.rows:
            return
        with self.path.open("ab") as file:
            file.truncate(rows * self.width)
        self.rows = rows

    def write(self, labels: Labels, vectors: npt.NDArray[np.float32]) -> None:
        """Store ``vectors`` as the rows of ``labels`` (grown first in doubling steps: labels come in batches)."""
        needed = int(labels.max()) + 1
        self.reserve(needed if needed <= self.rows else max(needed, 1024, 2 * self.rows))
        self._put(labels, encode_rows(vectors))

    def zero(self, labels: list[int]) -> None:
        """Forget the rows of ``labels``: a zero row is no vector."""
        held = np.asarray([label for label in labels if 0 <= label < self.rows], dtype=np.int64)
        if len(held):
            self._put(held, np.zeros((len(held), self.width), dtype=np.uint8))

    def read(self, labels: Labels) -> npt.NDArray[np.float32]:
        """The vectors of ``labels`` (each below :attr:`rows`), one row each; a zero row for one the copy lacks."""
        if not len(labels):
            return np.zeros((0, self.dim), dtype=np.float32)
        order = np.argsort(labels, kind="stable")
        wanted = labels[order]
        cuts = np.flatnonzero(np.diff(wanted) > GAP) + 1  # one read per run of labels close together
        firsts, lasts = wanted[np.r_[0, cuts]], wanted[np.r_[cuts - 1, len(wanted) - 1]]
        sizes = lasts - firsts + 1
        fd = os.open(self.path, os.O_RDONLY)
        try:
            reads = zip(sizes.tolist(), firsts.tolist(), strict=True)
            data = b"".join([os.pread(fd, n * self.width, first * self.width) for n, first in reads])
        finally:
            os.close(fd)
        rows = np.frombuffer(data, dtype=np.uint8).reshape(-1, self.width)
        run = np.zeros(len(wanted), dtype=np.int64)
        run[cuts] = 1
        np.cumsum(run, out=run)  # each wanted label's run
        at = np.empty(len(labels), dtype=np.int64)  # each label's row in ``rows``
        at[order] = wanted + (np.cumsum(sizes) - sizes - firsts)[run]
        return decode_rows(rows[at])

    def pages(self, top: int, step: int = 1) -> Iterator[tuple[Labels, npt.NDArray[np.float32]]]:
        """The vectors held for labels up to ``top`` (every ``step``-th label's), :data:`PAGE` rows at a time: a
        refit's read of the whole copy, on a thread of its own while the index serves and grows."""
        with self.path.open("rb") as file:
            for first in range(0, min(top + 1, self.rows), PAGE):
                file.seek(first * self.width)
                data = file.read(min(PAGE, top + 1 - first) * self.width)
                rows = np.frombuffer(data, dtype=np.uint8)[: len(data) // self.width * self.width]
                rows = rows.reshape(-1, self.width)
                labels = np.arange(first, first + len(rows), dtype=np.int64)
                held = rows[:, -SCALE_BYTES:].any(axis=1) & (labels % step == 0)
                if held.any():
                    yield labels[held], decode_rows(rows[held])

    def sync(self) -> None:
        """Make what was written durable (before the meta file records the copy's extent)."""
        fd = os.open(self.path, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)

    def _put(self, labels: Labels, rows: npt.NDArray[np.uint8]) -> None:
        order = np.argsort(labels, kind="stable")
        wanted, rows = labels[order], rows[order]
        cuts = np.flatnonzero(np.diff(wanted) != 1) + 1  # one write per run of consecutive labels
        fd = os.open(self.path, os.O_WRONLY)
        try:
            for first, end in zip(np.r_[0, cuts].tolist(), np.r_[cuts, len(wanted)].tolist(), strict=True):
                os.pwrite(fd, rows[first:end].tobytes(), int(wanted[first]) * self.width)
        finally:
            os.close(fd)


def encode_rows(vectors: npt.NDArray[np.float32]) -> npt.NDArray[np.uint8]:
    """Rows of the vector copy: each vector made unit length (as hnswlib stores it), in int8 scaled so that its
    largest component is 127, then the scale as a float32. A zero vector gives a zero row."""
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    unit = vectors / np.where(norms > 0, norms, 1.0)
    scale = (np.abs(unit).max(axis=1, keepdims=True) / 127.0).astype(np.float32)
    rows = np.empty((len(vectors), vectors.shape[1] + SCALE_BYTES), dtype=np.uint8)
    rows[:, : vectors.shape[1]] = np.round(unit / np.where(scale > 0, scale, 1.0)).astype(np.int8).view(np.uint8)
    rows[:, vectors.shape[1] :] = scale.view(np.uint8)
    return rows


def decode_rows(rows: npt.NDArray[np.uint8]) -> npt.NDArray[np.float32]:
    """The vectors of rows of the vector copy (:func:`encode_rows`)."""
    scale = np.ascontiguousarray(rows[:, -SCALE_BYTES:]).view(np.float32)
    vectors: npt.NDArray[np.float32] = rows[:, :-SCALE_BYTES].view(np.int8).astype(np.float32)
    vectors *= scale
    return vectors
