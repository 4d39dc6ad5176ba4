"""The hnswlib index beside the database: derived from the ``chunks`` and ``vectors`` tables.

Labels are the chunk labels, assigned in increasing order by the embedding worker and added to the
index only after their rows are committed. So on load, any label above the index's highest is simply
added from DuckDB, and an index that is missing, unreadable or inconsistent (its live count differs
from DuckDB's chunk count: e.g. a crash after forget's commit left forgotten labels in it) is rebuilt.
hnswlib pitfalls handled here (TOOLING.md §4): ``ef`` is not persisted (set after every load), ``k``
larger than the live count raises (clamped), the capacity is fixed (grown before adding).

Search also reads stored vectors (to score candidates the k-NN search did not return, and their
neighbours), and hnswlib's ``get_items`` builds a Python float per component: about 35 us a vector at 110k,
38 ms for 1,000. So every vector is also kept in ``vectors.q8`` (:mod:`claude_memory.store.vector_copy`), a copy
in int8 with one row per label, read as a file: the ~2,800 rows of a hybrid search at 110k chunks in ~2.2 ms.
Cosines from it are within 2e-3 of exact; LoCoMo dev recall was identical. Rows are written as vectors are added
and zeroed as they are forgotten; the meta file records the highest label the copy holds, and a copy that is
missing or short (an index from before the copy, a crash between add and save) is filled from DuckDB on load.

From :data:`PROJECT_FROM` vectors on, hnswlib holds each vector projected onto the store's own
:data:`PROJECTED_DIM` principal directions (fitted on a sample of its vectors, kept in ``vectors.basis``): hnswlib's
float32 vectors and links are the largest part of the service's memory (183 of 645 MB at 110k chunks, 1.6 of 3.4 GB
at a million), and projected onto 96 they take 32 % of it (56 MB instead of 176 at 110k; 69 MB onto 128). The
projected k-NN search only finds candidates: :data:`RESCORE` times as many as asked (up to :data:`RESCORE_MAX`) are
scored again from the copy, in every dimension, and the best returned. Of the exact top 400 of 100 queries at 110k
chunks (what a search asks for; ``bench/bench_projection.py``), the projected index finds 99.7 % (the full one 98.2 %,
onto 128 directions 99.9 %), and 68.4 % for questions from another domain (66.5 %, 78.1 %: their cosines are flat);
of the top 40, 99.8 % (99.6 %) and 66.0 % (57.0 %). The
basis is fitted again each time the store has doubled since the last fit: :meth:`VectorIndex.build_refit` builds the
new index (in the service, on a thread of its own: :mod:`claude_memory.service.idle`) while the old one serves and
grows, and :meth:`VectorIndex.adopt` swaps it in on the thread that adds to the index.
"""

from __future__ import annotations

import json
import os
import threading
import zlib
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import duckdb
import hnswlib
import numpy as np
import numpy.typing as npt
import pyarrow.compute as pc

from claude_memory.store.vector_copy import VectorCopy

STEM: Final = "vectors"  # the store's index files are named from this
NEXT_STEM: Final = "vectors.next"  # a model switch's index, built beside the current one (``next_chunks``)


def file_names(stem: str) -> tuple[str, str, str, str]:
    """An index's files: the hnswlib index, its meta file, the vector copy, the projection's basis."""
    return f"{stem}.hnsw", f"{stem}.hnsw.json", f"{stem}.q8", f"{stem}.basis"


INDEX_FILE, META_FILE, COPY_FILE, BASIS_FILE = file_names(STEM)
EF_SEARCH: Final = 128
EF_CONSTRUCTION: Final = 100
M: Final = 16
PROJECT_FROM: Final = 20_000  # live vectors from which hnswlib holds them projected (fewer: 34 MB at most as they are)
PROJECTED_DIM: Final = 96
RESCORE: Final = 8  # candidates a projected search asks for per result wanted, scored again from the copy ...
RESCORE_MAX: Final = 1_000  # ... up to this many (or as many as wanted, if more): ~1.2 us a scattered row
SAMPLE: Final = 20_000  # vectors the basis is fitted on (an SVD of 20,000 x 384: ~1 s)

Labels = npt.NDArray[np.int64]
Scores = npt.NDArray[np.float64]


class VectorIndex:
    def __init__(
        self, data_dir: Path, model_id: str, *, table: str = "chunks", stem: str = STEM, project_from: int | None = None
    ) -> None:
        """The index of the chunks in ``table`` (``chunks``, or a model switch's ``next_chunks``), in the files
        named ``stem``; projected from ``project_from`` vectors on (default :data:`PROJECT_FROM`)."""
        self._place(data_dir, table, stem)
        self.project_from = PROJECT_FROM if project_from is None else project_from
        self.model_id = model_id
        self._index: Any = None
        self._copy: VectorCopy | None = None
        self._basis: npt.NDArray[np.float32] | None = None  # (dimensions, PROJECTED_DIM), once projected
        self.fitted_at = 0  # live vectors when the basis was fitted
        self._reshaped = False  # the index changed dimensions since it was saved (see save)
        # Labels removed while a refit is built (None: none is). The one state a refit's own thread shares with the
        # thread that adds to, removes from and searches the index (the service's worker), hence the lock.
        self._forgotten_meanwhile: list[int] | None = None
        self._building = threading.Lock()
        self.max_label = -1
        self.deleted = 0
        self.rebuilt = False  # set when load() had to rebuild: the caller may report it

    def _place(self, data_dir: Path, table: str, stem: str) -> None:
        self.table, self.stem = table, stem
        self.path, self.meta_path, self.copy_path, self.basis_path = (data_dir / name for name in file_names(stem))

    # ------------------------------------------------------------------ lifecycle

    def take_place_of(self, current: VectorIndex) -> None:
        """A model switch's index becomes the store's: its files replace ``current``'s (call it once its chunks are
        the ``chunks`` table). A crash half-way leaves files of the wrong model, which the next load rebuilds."""
        self.save()
        current.meta_path.unlink(missing_ok=True)  # (written last: the files below are one index again only then)
        current.basis_path.unlink(missing_ok=True)
        for mine, theirs in ((self.path, current.path), (self.copy_path, current.copy_path),
                             (self.basis_path, current.basis_path), (self.meta_path, current.meta_path)):  # fmt: skip
            if mine.exists():
                os.replace(mine, theirs)
        self._place(current.path.parent, current.table, current.stem)
        if self._copy is not None:
            self._copy.path = self.copy_path

    def remove_files(self) -> None:
        """Delete this index's files (a model switch given up)."""
        self._index, self._copy, self._basis = None, None, None
        self.save()  # (with no index: deletes them)

    def load(self, con: duckdb.DuckDBPyConnection) -> None:
        """Open the index and bring it level with DuckDB (add missing labels, or rebuild)."""
        meta = self._read_meta()
        row = con.execute("SELECT next_label FROM label_counter").fetchone()
        issued = (int(row[0]) if row else 0) - 1  # the highest label ever given out
        if meta is None or meta.get("model_id") != self.model_id or not self.path.exists():
            self.rebuild(con)
            return
        try:
            basis = self._read_basis(meta["basis"]) if meta.get("basis") else None
            index = hnswlib.Index(space="cosine", dim=int(meta["dim"]))
            index.load_index(str(self.path), allow_replace_deleted=False)
        except (RuntimeError, OSError, ValueError, KeyError, TypeError):
            self.rebuild(con)
            return
        if basis is not None:
            self._basis, self.fitted_at = basis, int(meta["basis"]["fitted_at"])
        index.set_ef(EF_SEARCH)
        self._index = index
        self.max_label = int(meta["max_label"])
        self.deleted = int(meta.get("deleted", 0))
        if self.max_label > issued:
            self.rebuild(con)  # the index knows labels never issued here: it belongs to another store
            return
        self._copy = VectorCopy.open(self.copy_path, self.dim, int(meta.get("copied", -1)))
        copied = self._copy.rows - 1 if self._copy is not None else -1
        if copied < self.max_label:
            self._copy_from_db(con, f"c.label > {copied} AND c.label <= {self.max_label}")
            if self._copy is not None:
                self._copy.sync()
            self._write_meta()  # the index file is unchanged: only the copy's extent is new
        repaired = issued > self.max_label and self._add_from_db(con, f"label > {self.max_label}") > 0
        row = con.execute(f"SELECT count(*) FROM {self.table}").fetchone()
        if self.live_count != (int(row[0]) if row else 0):
            # Labels DuckDB no longer has (a crash between forget's commit and the index update) or lacks
            # below the highest: only a rebuild gets rid of a forgotten vector, or finds a missing one.
            self.rebuild(con)
        elif repaired:
            self.save()  # committed chunks a crash kept out of the index

    def rebuild(self, con: duckdb.DuckDBPyConnection) -> int:
        """Build the index anew from DuckDB; returns the number of vectors in it."""
        self._index = None
        self.max_label = -1
        self.deleted = 0
        self.rebuilt = True
        self._copy = None
        self.meta_path.unlink(missing_ok=True)  # an interrupted rebuild is redone at the next load
        self.copy_path.unlink(missing_ok=True)
        self.basis_path.unlink(missing_ok=True)
        row = con.execute(f"SELECT count(*) FROM {self.table}").fetchone()
        count = int(row[0]) if row else 0
        if count >= self.project_from:
            sample = _stored(con, f"c.label % {_sample_step(count)} = 0", self.table)
            self._basis = _fit_basis(vectors for _, vectors in sample)
        else:
            self._basis = None
        self.fitted_at = count if self._basis is not None else 0
        self._reshaped = True
        count = self._add_from_db(con, "TRUE")
        self.save()
        return count

    def refit_due(self) -> bool:
        """From :attr:`project_from` vectors on, and again each time they have doubled since the basis was fitted. A
        basis of another :data:`PROJECTED_DIM` (fitted by an older version) serves until then: a refit holds ~640 MB
        more for a moment at 100k chunks (bench/README.md), too much to spend on 13 MB at an upgrade."""
        live = self.live_count
        if self._index is None or live < self.project_from or self._forgotten_meanwhile is not None:
            return False  # (not while one is being built)
        return self._basis is None or live >= 2 * self.fitted_at

    def refit_if_due(self, con: duckdb.DuckDBPyConnection) -> bool:
        """:meth:`build_refit` and :meth:`adopt` in one go, when due. Returns whether the index was replaced."""
        if not self.refit_due():
            return False
        refit = self.build_refit(threads=-1)
        return refit is not None and self.adopt(refit, con)

    def build_refit(self, threads: int = 1) -> Refit | None:
        """Fit the projection's basis and build an index of every vector in it, while this one serves and the embedding
        worker goes on adding to it (any thread may build, on ``threads`` cores: by default one, leaving the other to
        the service); None if the model's vectors are too short to project or another is being built. Hand the result
        to :meth:`adopt`. Both are read from the vector copy, read as a file (so its pages are not mapped into this
        process): read from DuckDB, every vector joined to its chunk, they held ~640 MB more at 100k chunks. The
        copy's int8 vectors only place the candidates, which a search scores again from the copy."""
        live, top = self.live_count, self.max_label  # (add writes a vector's row before it raises max_label)
        with self._building:
            copy = self._copy
            if self._forgotten_meanwhile is not None or copy is None:
                return None  # another is being built (or there is no copy: an empty index)
            self._forgotten_meanwhile = []
        refit: Refit | None = None
        try:
            basis = _fit_basis(vectors for _, vectors in copy.pages(top, _sample_step(live)))
            if basis is None:
                return None
            index = _new_index(int(basis.shape[1]), max(live, 1024))
            for labels, vectors in copy.pages(top):
                _add_to(index, _projected(vectors, basis), labels, threads)
            refit = Refit(index, basis, top, live)
            return refit
        finally:
            if refit is None:  # nothing to adopt: stop collecting forgotten labels
                with self._building:
                    self._forgotten_meanwhile = None

    def adopt(self, refit: Refit, con: duckdb.DuckDBPyConnection) -> bool:
        """Make ``refit`` this index, on the thread that adds to it: the vectors stored since the build read them are
        added, and it is saved. False (and nothing changes) if anything was forgotten meanwhile (the new index would
        keep the bytes of what a forget removed from this one) or if it does not hold what the store holds."""
        try:
            with self._building:  # (the build is over: only this thread, the one that removes, changes it now)
                if self._forgotten_meanwhile:
                    return False
            for labels, vectors in _stored(con, f"c.label > {refit.max_label}", self.table):
                _add_to(refit.index, _projected(vectors, refit.basis), labels)
            row = con.execute(f"SELECT count(*) FROM {self.table}").fetchone()
            if refit.index.get_current_count() != (int(row[0]) if row else 0):
                return False
            self._index, self._basis, self.fitted_at, self.deleted = refit.index, refit.basis, refit.live, 0
            self.max_label = max(self.max_label, refit.max_label)
        finally:
            with self._building:
                self._forgotten_meanwhile = None
        self._reshaped = True
        self.save()
        return True

    def save(self) -> None:
        if self._index is None:
            for path in (self.path, self.meta_path, self.copy_path, self.basis_path):
                path.unlink(missing_ok=True)
            return
        if self._copy is not None:
            self._copy.sync()
        if self._reshaped:  # new dimensions: until the meta file says so, the files are not one index
            self.meta_path.unlink(missing_ok=True)
            if self._basis is None:
                self.basis_path.unlink(missing_ok=True)
            else:
                _write_atomically(self.basis_path, self._basis.tobytes())
        temp = self.path.with_name(self.path.name + ".tmp")
        self._index.save_index(str(temp))
        os.replace(temp, self.path)
        self._write_meta()
        self._reshaped = False

    # ------------------------------------------------------------------ changes

    def add(self, labels: list[int], vectors: npt.NDArray[np.float32]) -> None:
        if not labels:
            return
        if self._index is None:
            dim = int(vectors.shape[1] if self._basis is None else self._basis.shape[1])
            self._index = _new_index(dim, max(1024, len(labels) * 2))
        _add_to(self._index, _projected(vectors, self._basis), np.asarray(labels, dtype=np.int64))
        if self._copy is None:
            self._copy = VectorCopy(self.copy_path, int(vectors.shape[1]))
        self._copy.write(np.asarray(labels, dtype=np.int64), vectors)
        self.max_label = max(self.max_label, max(labels))  # (after the copy's rows: a refit reads up to it)

    def remove(self, labels: list[int]) -> None:
        """Forget: these labels never come back in results."""
        if self._index is None:
            return
        with self._building:
            if self._forgotten_meanwhile is not None:
                self._forgotten_meanwhile.extend(labels)
        for label in labels:
            try:
                self._index.mark_deleted(label)
                self.deleted += 1
            except RuntimeError:
                pass  # not in the index (never added, or already deleted)
        if self._copy is not None:
            self._copy.zero(labels)

    @property
    def live_count(self) -> int:
        return 0 if self._index is None else int(self._index.get_current_count()) - self.deleted

    def search(self, vector: npt.NDArray[np.float32], k: int) -> tuple[Labels, Scores]:
        """Labels and cosine similarities of the ``k`` nearest live vectors, best first (from a projected index:
        :data:`RESCORE` times as many candidates, scored from the copy)."""
        live = self.live_count
        k = min(k, live)
        if k <= 0 or self._index is None:
            return np.empty(0, dtype=np.int64), np.empty(0)
        if self._basis is None:
            labels, distances = self._index.knn_query(vector.reshape(1, -1), k=k)
            return labels[0].astype(np.int64), 1.0 - distances[0].astype(np.float64)
        asked = min(max(k, min(k * RESCORE, RESCORE_MAX)), live)
        found, _ = self._index.knn_query(_projected(vector.reshape(1, -1), self._basis), k=asked)
        labels = found[0].astype(np.int64)
        scores = self.cosines(labels, (vector / (np.linalg.norm(vector) or 1.0)).astype(np.float32))
        best = np.argsort(-scores, kind="stable")[:k]
        return labels[best], scores[best]

    def vectors(self, labels: Labels) -> npt.NDArray[np.float32]:
        """The vectors of ``labels``, one row each, unit length as the index stores them (read from the copy);
        a zero row for a label the index does not hold (or forgot)."""
        copy = self._copy
        if copy is None:
            return np.zeros((len(labels), self.dim), dtype=np.float32)
        held = (labels >= 0) & (labels < copy.rows) & (labels <= self.max_label)
        if held.all():
            return copy.read(labels)
        out = np.zeros((len(labels), copy.dim), dtype=np.float32)
        out[held] = copy.read(labels[held])
        return out

    def cosines(self, labels: Labels, vector: npt.NDArray[np.float32]) -> Scores:
        """The cosine of ``vector`` (unit length) with each label's stored vector, read from the copy (within 2e-3
        of exact); 0 for a label the copy does not hold."""
        scores: Scores = np.einsum("ij,j->i", self.vectors(labels), vector).astype(np.float64)  # not BLAS (semantic.py)
        return scores

    @property
    def dim(self) -> int:
        """The vectors' dimensions (hnswlib's own are fewer once projected); 0 before any."""
        if self._basis is not None:
            return int(self._basis.shape[0])
        return int(self._index.dim) if self._index is not None else 0

    @property
    def projected(self) -> bool:
        return self._basis is not None

    # ------------------------------------------------------------------ internals

    def _read_basis(self, about: dict[str, Any]) -> npt.NDArray[np.float32]:
        """The basis file, checked against what the meta file says of it (a mismatch raises ValueError)."""
        data = self.basis_path.read_bytes()
        rows, cols = (int(n) for n in about["shape"])
        if len(data) != rows * cols * 4 or zlib.crc32(data) != int(about["crc32"]):
            raise ValueError("the basis file is not the one the index was built with")
        return np.frombuffer(data, dtype=np.float32).reshape(rows, cols).copy()

    def _read_meta(self) -> dict[str, Any] | None:
        try:
            meta = json.loads(self.meta_path.read_text())
        except (OSError, ValueError):
            return None
        return meta if isinstance(meta, dict) else None

    def _write_meta(self) -> None:
        meta: dict[str, Any] = {"model_id": self.model_id, "dim": self._index.dim, "max_label": self.max_label,
                                "deleted": self.deleted, "copied": self.max_label}  # fmt: skip
        if self._basis is not None:
            meta["basis"] = {"shape": list(self._basis.shape), "crc32": zlib.crc32(self._basis.tobytes()),
                             "fitted_at": self.fitted_at}  # fmt: skip
        _write_atomically(self.meta_path, json.dumps(meta).encode())

    def _copy_from_db(self, con: duckdb.DuckDBPyConnection, where: str) -> None:
        """Fill the vector copy for the chunks ``where`` selects (live ones: forgotten chunks have no row)."""
        if self._copy is None:
            self._copy = VectorCopy(self.copy_path, self.dim)
        self._copy.reserve(self.max_label + 1)
        for labels, vectors in _stored(con, where, self.table):
            self._copy.write(labels, vectors)

    def _add_from_db(self, con: duckdb.DuckDBPyConnection, where: str) -> int:
        added = 0
        for labels, vectors in _stored(con, where, self.table):
            self.add(labels.tolist(), vectors)
            added += len(labels)
        return added


@dataclass(frozen=True, slots=True)
class Refit:
    """An index built in a newly fitted basis (:meth:`VectorIndex.build_refit`), not yet in use."""

    index: Any
    basis: npt.NDArray[np.float32]
    max_label: int  # the highest label it holds (-1: none)
    live: int  # the live vectors its basis was fitted on


def _add_to(index: Any, vectors: npt.NDArray[np.float32], labels: Labels, threads: int = -1) -> None:
    """Add to an hnswlib index, grown first if it is full (its capacity is fixed)."""
    needed = index.get_current_count() + len(labels)
    if needed > index.get_max_elements():
        index.resize_index(max(needed, index.get_max_elements() * 2))
    index.add_items(vectors, labels, num_threads=threads)


def _new_index(dim: int, capacity: int) -> Any:
    index = hnswlib.Index(space="cosine", dim=dim)
    index.init_index(max_elements=capacity, ef_construction=EF_CONSTRUCTION, M=M)
    index.set_ef(EF_SEARCH)
    return index


def _projected(vectors: npt.NDArray[np.float32], basis: npt.NDArray[np.float32] | None) -> npt.NDArray[np.float32]:
    """``vectors`` as hnswlib holds them: onto the basis when there is one (hnswlib makes them unit length)."""
    if basis is None:
        return vectors
    out: npt.NDArray[np.float32] = np.einsum("ij,jk->ik", vectors, basis).astype(np.float32)  # not BLAS (semantic.py)
    return out


def _sample_step(count: int) -> int:
    """Every how many labels a vector is in the sample the basis is fitted on: about :data:`SAMPLE` of ``count``."""
    return max(1, count // SAMPLE)


def _fit_basis(pages: Iterable[npt.NDArray[np.float32]]) -> npt.NDArray[np.float32] | None:
    """The :data:`PROJECTED_DIM` principal directions (not centred: cosines are of the vectors as they are) of a
    sample of the stored vectors (every n-th by label, :func:`_sample_step`: a store's whole history is in it), made
    unit length. They are the eigenvectors of the sample's Gram matrix, summed a page at a time: an SVD of the whole
    sample (in float64) held ~300 MB more at 100k chunks."""
    gram: npt.NDArray[np.float64] | None = None
    rows = 0
    for page in pages:
        unit = page.astype(np.float64) / np.maximum(np.linalg.norm(page, axis=1, keepdims=True), 1e-12)
        gram = unit.T @ unit if gram is None else gram + unit.T @ unit
        rows += len(page)
    if gram is None or len(gram) < 2 * PROJECTED_DIM or rows < PROJECTED_DIM:
        return None  # a small model's vectors are kept as they are
    _, directions = np.linalg.eigh(gram)  # (ascending)
    basis: npt.NDArray[np.float32] = np.ascontiguousarray(directions[:, ::-1][:, :PROJECTED_DIM], dtype=np.float32)
    return basis


def _write_atomically(path: Path, data: bytes) -> None:
    temp = path.with_name(path.name + ".tmp")
    temp.write_bytes(data)
    os.replace(temp, path)


def _stored(
    con: duckdb.DuckDBPyConnection, where: str, table: str, page: int = 20_000
) -> Iterator[tuple[Labels, npt.NDArray[np.float32]]]:
    """The stored vectors of the chunks ``where`` selects (``c`` is ``table``), streamed a page at a time."""
    reader = con.execute(
        f"SELECT c.label, v.vector FROM {table} c JOIN vectors v USING (content_hash) WHERE {where} ORDER BY c.label"
    ).to_arrow_reader(page)  # in label order: a rebuilt index is the same every time
    for batch in reader:
        if batch.num_rows:
            labels = batch.column("label").to_numpy().astype(np.int64)
            flat = pc.list_flatten(batch.column("vector")).to_numpy().astype(np.float32)
            yield labels, flat.reshape(len(labels), -1)
