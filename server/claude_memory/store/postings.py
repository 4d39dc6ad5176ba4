"""BM25 over the keyword postings, held in memory as numpy arrays: the service's keyword search.

:func:`claude_memory.store.keyword.search` answers the same question in DuckDB SQL and stays the
reference; it took 16-23 ms per query at 100k events (3.2 M postings), most of it scanning postings.
Here the postings of ``kw_main`` and ``kw_delta`` are loaded once into compressed sparse rows (term ->
slice of document numbers and term frequencies) and scored with the same formula (same idf over the
store's event count, same k1 / b / average length, same coverage, same order: score descending, then
event id), the filters applied through the :class:`~claude_memory.store.eventmap.EventMap`. Events that
cannot reach the top are skipped (MaxScore) where that is cheaper, without changing a bit of the answer.

Derived data, kept level with the store like the event map: new events (a higher ``seq``) are appended
from DuckDB (their postings only, from ``kw_delta`` or, once merged, ``kw_main``) into a small second
set of rows that is folded into the main one when it grows; a forget (the tombstone count changed)
reloads everything. Merging the delta into ``kw_main`` changes neither the generation nor the postings,
so it needs nothing here. Postings whose event does not exist (a crash can leave some in ``kw_delta``
until the next import removes them) are not loaded.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import duckdb
import numpy as np
import numpy.typing as npt
import pyarrow as pa
import pyarrow.compute as pc

from claude_memory.core.filters import EventFilters
from claude_memory.store.db import transaction
from claude_memory.store.eventmap import EventMap
from claude_memory.store.heap import release_freed_memory
from claude_memory.store.keyword import K1, B

Int32s = npt.NDArray[np.int32]
Int64s = npt.NDArray[np.int64]
Floats = npt.NDArray[np.float64]

FOLD_MIN_POSTINGS = 65_536  # the appended rows are folded into the main ones past this many postings,
FOLD_FRACTION = 16  # or past 1/16 of the main rows, whichever is larger
LOAD_BATCH_ROWS = 262_144
MAX_U16 = int(np.iinfo(np.uint16).max)
LOOKUP_COST = 3  # a term's frequency found by binary search costs about as much as adding 3 postings (1M events)


@dataclass(slots=True)
class _Rows:
    """Compressed sparse rows: the postings of term code ``c`` are ``docs[offsets[c]:offsets[c + 1]]``
    (codes at or past ``len(offsets) - 1`` have none), with their term frequencies in ``tf``."""

    offsets: Int64s = field(default_factory=lambda: np.zeros(1, dtype=np.int64))
    docs: Int32s = field(default_factory=lambda: np.empty(0, dtype=np.int32))
    tf: npt.NDArray[np.integer] = field(default_factory=lambda: np.empty(0, dtype=np.uint16))
    _tf_max: npt.NDArray[np.integer] | None = None

    def count(self, code: int) -> int:
        if code + 1 >= len(self.offsets):
            return 0
        return int(self.offsets[code + 1] - self.offsets[code])

    def of(self, code: int) -> tuple[Int32s, npt.NDArray[np.integer]]:
        if code + 1 >= len(self.offsets):
            return self.docs[:0], self.tf[:0]
        start, end = int(self.offsets[code]), int(self.offsets[code + 1])
        return self.docs[start:end], self.tf[start:end]

    def tf_of(self, code: int, docs: Int32s) -> npt.NDArray[np.int64]:
        """The term frequency of ``code`` in each of ``docs`` (0 where it does not occur), by binary search."""
        held, tf = self.of(code)
        if not len(held):
            return np.zeros(len(docs), dtype=np.int64)
        at = np.searchsorted(held, docs).clip(0, len(held) - 1)
        return np.where(held[at] == docs, tf[at].astype(np.int64), 0)

    def tf_max(self) -> npt.NDArray[np.integer]:
        """The largest term frequency of every term code (0 for a term without postings here)."""
        if self._tf_max is None:
            starts, counts = self.offsets[:-1], np.diff(self.offsets)
            self._tf_max = np.zeros(len(counts), dtype=self.tf.dtype)
            if len(self.tf):  # segments are contiguous: each non-empty one runs to the next non-empty one's start
                self._tf_max[counts > 0] = np.maximum.reduceat(self.tf, starts[counts > 0])
        return self._tf_max

    def codes(self) -> Int32s:
        """The term code of every posting."""
        return np.repeat(np.arange(len(self.offsets) - 1, dtype=np.int32), np.diff(self.offsets))

    @property
    def nbytes(self) -> int:
        return int(self.offsets.nbytes + self.docs.nbytes + self.tf.nbytes)


def _rows(codes: Int32s, docs: Int32s, tf: npt.NDArray[np.integer], terms: int) -> _Rows:
    """Rows from postings in any order (``codes`` < ``terms``)."""
    return _placed(np.bincount(codes, minlength=terms), iter([(codes, docs, tf)]), _tf_type_of(tf))


Part = tuple[Int32s, Int32s, npt.NDArray[np.integer]]  # postings: term codes, documents, term frequencies


def _placed(counts: Int64s, parts: Iterator[Part], tf_type: np.dtype[Any]) -> _Rows:
    """Rows from ``parts`` (read as they come: at a million events each is a batch of DuckDB's), whose postings of
    term code ``c`` number ``counts[c]``, in their order. A counting sort: each part's postings go straight to their
    places, so no part is kept and nothing the size of all the postings is made but the rows themselves. At a million
    events (32 M postings) the load's peak went from 1,153 to 775 MB: a sort of all the codes at once held them, their
    order (256 MB) and every part beside the rows."""
    offsets = np.zeros(len(counts) + 1, dtype=np.int64)
    np.cumsum(counts, out=offsets[1:])
    docs = np.empty(int(offsets[-1]), dtype=np.int32)
    tf = np.empty(int(offsets[-1]), dtype=tf_type)
    cursor = offsets[:-1].copy()  # where each term's next posting goes
    for codes, part_docs, part_tf in parts:
        order = np.argsort(codes, kind="stable")
        ranked = codes[order]
        present, first, count = np.unique(ranked, return_index=True, return_counts=True)
        places = cursor[ranked] + (np.arange(len(ranked)) - np.repeat(first, count))
        docs[places], tf[places] = part_docs[order], part_tf[order]
        cursor[present] += count
    if not np.array_equal(cursor, offsets[1:]):
        raise RuntimeError("The keyword postings changed while they were read.")
    return _ascending(_Rows(offsets, docs, tf))


def _ascending(rows: _Rows) -> _Rows:
    """Each term's documents in ascending order, as a lookup by binary search needs. Postings come from DuckDB
    nearly so (its parallel scan swaps a few runs: 24 out of place in 3.2 M at 100k events), so only the terms
    holding a descent are sorted."""
    if len(rows.docs) < 2:
        return rows
    descents = np.flatnonzero(np.diff(rows.docs) < 0) + 1
    terms = np.searchsorted(rows.offsets, descents, side="right") - 1
    for code in np.unique(terms[rows.offsets[terms] != descents]).tolist():  # a descent inside the term's postings
        start, end = int(rows.offsets[code]), int(rows.offsets[code + 1])
        order = np.argsort(rows.docs[start:end], kind="stable")
        rows.docs[start:end] = rows.docs[start:end][order]
        rows.tf[start:end] = rows.tf[start:end][order]
    return rows


def _tf_type(most: int, least: int) -> np.dtype[Any]:
    """The type term frequencies from ``least`` to ``most`` are held in: uint16 when they fit (they do unless a text
    repeats a word 65,536 times), else int32."""
    return np.dtype(np.int32 if most > MAX_U16 or least < 0 else np.uint16)


def _tf_type_of(tf: npt.NDArray[np.integer]) -> np.dtype[Any]:
    """:func:`_tf_type` of these term frequencies (uint16 for none)."""
    return _tf_type(int(tf.max()), int(tf.min())) if len(tf) else np.dtype(np.uint16)


def _compact_tf(tf: npt.NDArray[np.integer]) -> npt.NDArray[np.integer]:
    """Term frequencies in their :func:`_tf_type`."""
    return tf.astype(_tf_type_of(tf), copy=False)


def idf(documents: int, frequency: int) -> float:
    """BM25's idf of a term found in ``frequency`` of ``documents`` events (the SQL reference's formula)."""
    return math.log((documents - frequency + 0.5) / (frequency + 0.5) + 1) if documents else 0.0


class PostingsIndex:
    """The keyword postings in memory. Not thread-safe, like the connection it reads from."""

    def __init__(self) -> None:
        self._terms: dict[str, int] = {}  # term -> code
        self._main = _Rows()
        self._tail = _Rows()  # postings of events appended since the last full load or fold
        self._ids: Int64s = np.empty(0, dtype=np.int64)  # document number -> event id
        self._dl: Int32s = np.empty(0, dtype=np.int32)  # document number -> indexed length (events.kw_len)
        self._total_length = 0
        self._state: tuple[int, int] | None = None  # (max seq, tombstones) of what is loaded
        self._norm: dict[tuple[float, float], Floats] = {}  # (k1, b) -> k1 * (1 - b + b * dl / avgdl) per document
        self._least: dict[int, float] = {}  # id of a ``_norm`` array -> its smallest value (both reset together)
        self._positions: Int64s | None = None  # document number -> event map position (-1: not in the map)
        self._layout: int | None = None  # the event map layout ``_positions`` belongs to
        self.loads = 0  # full loads so far (the first, then one per forget)

    # ------------------------------------------------------------------ keeping level with the store

    def refresh(self, con: duckdb.DuckDBPyConnection, generation: tuple[int, int, int]) -> None:
        """Bring the index level with the store, given its current :func:`queries.generation`: nothing to
        do when no event was added or forgotten, an append of the new events' postings when some were
        added, a full reload after a forget."""
        seq, tombstones = generation[0], generation[1]
        if self._state == (seq, tombstones):
            return
        if self._state is None or tombstones != self._state[1] or seq < self._state[0]:
            self._load(con)
        else:
            self._append(con, self._state[0])

    def _load(self, con: duckdb.DuckDBPyConnection) -> None:
        self._terms = {}
        postings = "SELECT term, event_id, tf FROM kw_main UNION ALL SELECT term, event_id, tf FROM kw_delta"
        with transaction(con):  # one snapshot: events, postings and the state they belong to
            state = _store_state(con)
            events = con.execute("SELECT id, kw_len FROM events ORDER BY id").to_arrow_table()
            ids = _int64s(events["id"])  # an event's document number is its place here
            counted = con.execute(  # each term's postings of events that exist, to place them as they come
                f"SELECT term, count(*), max(tf), min(tf) FROM ({postings}) WHERE event_id IN (SELECT id FROM events) "
                "GROUP BY term"
            ).to_arrow_table()
            counts = np.zeros(len(counted), dtype=np.int64)
            counts[self._codes(counted["term"])] = _int64s(counted[1])
            held = _tf_type(int(pc.max(counted[2]).as_py() or 0), int(pc.min(counted[3]).as_py() or 0))
            del counted

            def batches() -> Iterator[Part]:
                # The postings' terms as strings never all exist at once (~85 MB at 100k). Documents are found here
                # rather than by a join in DuckDB, which held 860 MB more while the postings were read at a million.
                for batch in con.execute(postings).to_arrow_reader(LOAD_BATCH_ROWS):
                    found, known = _places(ids, _int64s(batch.column(1)))
                    yield (
                        self._codes(batch.column(0))[known],
                        found[known].astype(np.int32),
                        _int32s(batch.column(2))[known],
                    )

            self._main = _placed(counts, batches(), held)
        release_freed_memory()  # the load's temporaries: ~80 MB more than used, at 100k events
        self._tail = _Rows()
        self._ids = ids
        self._dl = _int32s(events["kw_len"])
        self._total_length = int(self._dl.sum(dtype=np.int64))
        self.loads += 1
        self._finish(state)

    def _append(self, con: duckdb.DuckDBPyConnection, after_seq: int) -> None:
        new = "(SELECT id FROM events WHERE seq > ?)"
        with transaction(con):
            state = _store_state(con)
            events = con.execute(
                "SELECT id, kw_len FROM events WHERE seq > ? ORDER BY id", [after_seq]
            ).to_arrow_table()
            parts = [
                con.execute(
                    f"SELECT term, event_id, tf FROM kw_delta WHERE event_id IN {new}", [after_seq]
                ).to_arrow_table()
            ]
            expected = int(pc.sum(events["kw_len"]).as_py() or 0)
            if int(pc.sum(parts[0]["tf"]).as_py() or 0) != expected:  # some are merged into kw_main already
                parts.append(
                    con.execute(
                        f"SELECT term, event_id, tf FROM kw_main WHERE event_id IN {new}", [after_seq]
                    ).to_arrow_table()
                )
        postings = pa.concat_tables(parts)
        new_ids = _int64s(events["id"])
        found, known = _places(new_ids, _int64s(postings["event_id"]))
        docs = (found + len(self._ids)).astype(np.int32)
        codes = self._codes(postings["term"])
        tail_codes = np.concatenate([self._tail.codes(), codes[known]])
        tail_docs = np.concatenate([self._tail.docs, docs[known]])
        tail_tf = np.concatenate([self._tail.tf.astype(np.int32), _int32s(postings["tf"])[known]])
        self._tail = _rows(tail_codes, tail_docs, tail_tf, len(self._terms))
        self._ids = np.concatenate([self._ids, new_ids])
        self._dl = np.concatenate([self._dl, _int32s(events["kw_len"])])
        self._total_length += int(_int64s(events["kw_len"]).sum())
        if len(self._tail.docs) > max(FOLD_MIN_POSTINGS, len(self._main.docs) // FOLD_FRACTION):
            self._fold()
        self._finish(state)

    def _fold(self) -> None:
        """Fold the appended rows into the main ones, in linear time: both are sorted by term code, so
        each posting's new place is its old one shifted by the other part's postings of earlier terms (and a
        term's documents stay ascending: the appended ones come after every loaded one)."""
        terms = len(self._terms)
        main, tail = self._main, self._tail
        main_offsets = np.full(terms + 1, len(main.docs), dtype=np.int64)
        main_offsets[: len(main.offsets)] = main.offsets
        tail_offsets = tail.offsets
        offsets = main_offsets + tail_offsets
        size = len(main.docs) + len(tail.docs)
        docs = np.empty(size, dtype=np.int32)
        tf = np.empty(size, dtype=np.int32)
        main_at = np.arange(len(main.docs), dtype=np.int64) + np.repeat(tail_offsets[:-1], np.diff(main_offsets))
        tail_at = np.arange(len(tail.docs), dtype=np.int64) + main_offsets[tail.codes().astype(np.int64) + 1]
        docs[main_at], tf[main_at] = main.docs, main.tf
        docs[tail_at], tf[tail_at] = tail.docs, tail.tf
        self._main = _Rows(offsets, docs, _compact_tf(tf))
        self._tail = _Rows()

    def _finish(self, state: tuple[int, int]) -> None:
        self._state = state
        self._norm = {}
        self._least = {}
        self._positions = None
        self._layout = None

    def _codes(self, terms: pa.Array | pa.ChunkedArray) -> Int32s:
        """Term codes of a column of terms; terms not seen before get new codes."""
        encoded = (terms.combine_chunks() if isinstance(terms, pa.ChunkedArray) else terms).dictionary_encode()
        lookup = np.asarray(
            [self._terms.setdefault(t, len(self._terms)) for t in encoded.dictionary.to_pylist()], dtype=np.int32
        )
        codes: Int32s = lookup[encoded.indices.to_numpy(zero_copy_only=False).astype(np.int64)]
        return codes

    # ------------------------------------------------------------------ search

    def search(
        self,
        terms: list[str],
        filters: EventFilters,
        limit: int,
        events: EventMap,
        k1: float = K1,
        b: float = B,
    ) -> list[tuple[int, float, float]]:
        """Top ``limit`` (event id, BM25 score, coverage) triples for stemmed ``terms``, best first, exactly
        as :func:`claude_memory.store.keyword.search` ranks them (with its ``k1`` and ``b``; a ranking may
        ask for others). ``events`` must be refreshed (it applies the filters). Repeated terms count once."""
        if self._state is None:
            raise RuntimeError("PostingsIndex.refresh() must run before search().")
        codes = [self._terms[t] for t in dict.fromkeys(terms) if t in self._terms]
        if not codes or limit <= 0:
            return []
        n = len(self._ids)
        norm = self._norms(k1, b)
        weights = [idf(n, self._main.count(code) + self._tail.count(code)) for code in codes]
        total = sum(weights)

        filtered = filters != EventFilters()
        pruned = None if len(codes) == 1 else self._pruned(codes, weights, norm, k1, limit, filters, events)
        if pruned is not None:
            (hits, scores), filtered = pruned, False
        elif len(codes) == 1:
            hits, scores = self._one_term(codes[0], weights[0], norm, k1)
        else:
            hits, scores = self._many_terms(codes, weights, norm, k1)
        if filtered:
            inside = self._admitted(hits, filters, events)
            hits, scores = hits[inside], scores[inside]
        if len(hits) > limit:  # the limit best, and every tie of the last so that ids can break it
            threshold = scores[np.argpartition(-scores, limit - 1)[:limit]].min()
            keep = scores >= threshold
            hits, scores = hits[keep], scores[keep]
        ids = self._ids[hits]
        order = np.lexsort((ids, -scores))[:limit]
        coverage = self._summed_idf(codes, weights, hits[order]) / total
        return [
            (int(i), float(s), float(c))
            for i, s, c in zip(ids[order].tolist(), scores[order].tolist(), coverage.tolist(), strict=True)
        ]

    def _parts(self, code: int) -> list[tuple[Int32s, npt.NDArray[np.integer]]]:
        return [(docs, tf) for docs, tf in (self._main.of(code), self._tail.of(code)) if len(docs)]

    @staticmethod
    def _contribution(weight: float, tf: npt.NDArray[np.integer], norms: Floats, k1: float) -> Floats:
        """``weight * tf * (k1 + 1) / (tf + norms)``, each operation in that order (the same figures to the last
        bit), into one new array."""
        freq = tf.astype(np.float64)
        denominator = freq + norms
        freq *= weight
        freq *= k1 + 1
        freq /= denominator
        return freq

    def _one_term(self, code: int, weight: float, norm: Floats, k1: float) -> tuple[Int32s, Floats]:
        """One term: its postings are the hits, scored where they lie (no pass over every event)."""
        parts = self._parts(code)
        hits = np.concatenate([docs for docs, _ in parts]) if parts else np.empty(0, dtype=np.int32)
        scores = [self._contribution(weight, tf, norm[docs], k1) for docs, tf in parts]
        return hits, np.concatenate(scores) if scores else np.empty(0)

    def _many_terms(self, codes: list[int], weights: list[float], norm: Floats, k1: float) -> tuple[Int32s, Floats]:
        """Several terms: every posting's part, summed per event by one ``bincount`` in the query's term order (the
        running sum a pass term by term gives, to the last bit, at 0.65 of its time at a million events). Every
        part is above 0 (idf > 0: df never exceeds the event count), so the hits are the events scored."""
        docs: list[Int32s] = []
        parts: list[Floats] = []
        for code, weight in zip(codes, weights, strict=True):
            for held, tf in self._parts(code):
                docs.append(held)
                parts.append(self._contribution(weight, tf, norm[held], k1))
        summed = np.bincount(np.concatenate(docs), weights=np.concatenate(parts), minlength=len(self._ids))
        scores = np.asarray(summed, dtype=np.float64)  # (it is: with weights, bincount sums floats)
        hits = np.flatnonzero(scores > 0).astype(np.int32)  # (a mask first: 6 times faster than on the floats)
        return hits, scores[hits]

    def _pruned(
        self,
        codes: list[int],
        weights: list[float],
        norm: Floats,
        k1: float,
        limit: int,
        filters: EventFilters,
        events: EventMap,
    ) -> tuple[Int32s, Floats] | None:
        """The hits that can reach the top ``limit``, scored in full, without a pass over the common terms'
        postings (MaxScore, Turtle and Flood 1995). A floor under the final cut-off: the ``limit``-th best final
        score of a few hundred admitted events of the rarest term. With each term's most (:meth:`_bound`): the
        fewest rarest terms whose others together add less than the floor are the terms an event must hold one
        of to reach it, and of each such term's events only those whose score from it plus every other term's
        most reaches the floor are kept. The events left get every term's frequency by binary search and their
        scores summed in the query's term order, so that every figure is the one the full pass gives, to the last
        bit. None when it cannot prune, or when reading the terms or looking up the events left would cost more
        than the full pass."""
        least = self._least_norm(norm)
        bounds = [self._bound(code, weight, least, k1) for code, weight in zip(codes, weights, strict=True)]
        sizes = [self._main.count(code) + self._tail.count(code) for code in codes]
        rarest = sorted(range(len(codes)), key=lambda i: -bounds[i])
        docs, partial = self._one_term(codes[rarest[0]], weights[rarest[0]], norm, k1)
        inside = self._admitted(docs, filters, events)
        docs, partial = docs[inside], partial[inside]
        if len(docs) < limit:
            return None
        floor = self._floor(docs, partial, [(codes[i], weights[i]) for i in rarest[1:]], norm, k1, limit)
        taken = next((t for t in range(1, len(codes)) if sum(bounds[i] for i in rarest[t:]) < floor), None)
        if taken is None or sum(sizes[i] for i in rarest[:taken]) * 2 > sum(sizes):
            return None  # every term can lift an event past the floor, or no cheaper than the full pass
        most = sum(bounds)
        left: list[Int32s] = []
        for i in rarest[:taken]:  # an event can reach the floor only through a term it holds scoring enough
            found, scored = (docs, partial) if i == rarest[0] else self._one_term(codes[i], weights[i], norm, k1)
            left.append(found[scored + (most - bounds[i]) >= floor])
            if sum(len(part) for part in left) * len(codes) * LOOKUP_COST > sum(sizes):
                return None  # so many left that looking each term up for them costs more than the full pass
        docs = np.unique(np.concatenate(left)) if len(left) > 1 else np.sort(left[0])
        if taken > 1:
            docs = docs[self._admitted(docs, filters, events)]
        scores = np.zeros(len(docs), dtype=np.float64)
        for code, weight in zip(codes, weights, strict=True):
            self._add_term(scores, docs, code, weight, norm, k1)
        return docs, scores

    def _admitted(self, docs: Int32s, filters: EventFilters, events: EventMap) -> npt.NDArray[np.bool_]:
        """Which of ``docs`` the filters admit."""
        if filters == EventFilters():
            return np.ones(len(docs), dtype=bool)
        positions = self._event_positions(events)[docs]
        inside = positions >= 0
        inside[inside] = events.admitted(positions[inside], filters)
        return inside

    def _floor(
        self,
        docs: Int32s,
        partial: Floats,
        others: list[tuple[int, float]],
        norm: Floats,
        k1: float,
        limit: int,
    ) -> float:
        """At most the ``limit``-th best final score: that of the best ``2 * limit`` events by partial score, the
        other terms added (by binary search: a few hundred look-ups), less a margin for the order of the sums."""
        best = docs, partial
        if len(docs) > 2 * limit:
            top = np.argpartition(-partial, 2 * limit - 1)[: 2 * limit]
            best = docs[top], partial[top]
        full = best[1].copy()
        for code, weight in others:
            self._add_term(full, best[0], code, weight, norm, k1)
        return float(np.partition(full, len(full) - limit)[len(full) - limit]) * (1 - 1e-9)

    def _add_term(self, scores: Floats, docs: Int32s, code: int, weight: float, norm: Floats, k1: float) -> None:
        """Add term ``code``'s part to the scores of ``docs`` (its frequencies found by binary search)."""
        tf = self._tf_of(code, docs)
        held = tf > 0
        scores[held] += self._contribution(weight, tf[held], norm[docs[held]], k1)

    def _bound(self, code: int, weight: float, least_norm: float, k1: float) -> float:
        """At least the most ``code`` adds to any event's score: its largest frequency over the smallest length
        norm (a relative margin of 1e-9 covers rounding)."""
        tf = max(int(rows.tf_max()[code]) if code < len(rows.offsets) - 1 else 0 for rows in (self._main, self._tail))
        return weight * tf * (k1 + 1) / (tf + least_norm) * (1 + 1e-9)

    def _tf_of(self, code: int, docs: Int32s) -> npt.NDArray[np.int64]:
        """Term ``code``'s frequency in each of ``docs``, by binary search (0 where it does not occur)."""
        return self._main.tf_of(code, docs) + self._tail.tf_of(code, docs)  # a document is in one of the two

    def _summed_idf(self, codes: list[int], weights: list[float], docs: Int32s) -> Floats:
        """The summed idf of the terms each of ``docs`` holds, added in the query's term order (the same figures to
        the last bit as a running sum over the postings)."""
        cover = np.zeros(len(docs), dtype=np.float64)
        for code, weight in zip(codes, weights, strict=True):
            cover += np.where(self._tf_of(code, docs) > 0, weight, 0.0)
        return cover

    def _least_norm(self, norm: Floats) -> float:
        """The smallest of ``norm`` (one of :meth:`_norms`), kept until the store changes."""
        least = self._least.get(id(norm))
        if least is None:
            least = self._least[id(norm)] = float(norm.min()) if len(norm) else 0.0
        return least

    def _norms(self, k1: float, b: float) -> Floats:
        if (k1, b) not in self._norm:
            n = len(self._ids)
            avgdl = max(self._total_length / n, 1.0) if n else 1.0  # keyword.corpus_stats
            self._norm[k1, b] = k1 * (1 - b + b * self._dl.astype(np.float64) / avgdl)
        return self._norm[k1, b]

    def place(self, events: EventMap) -> None:
        """Map the documents to ``events``' positions now (after the map was read again) rather than in the next
        filtered search (50 ms at a million events)."""
        if self._state is not None:
            self._event_positions(events)

    def _event_positions(self, events: EventMap) -> Int64s:
        if self._positions is None or self._layout != events.layout:
            self._positions = events.positions(self._ids)
            self._layout = events.layout
        return self._positions

    # ------------------------------------------------------------------ facts

    @property
    def documents(self) -> int:
        return len(self._ids)

    @property
    def postings(self) -> int:
        return len(self._main.docs) + len(self._tail.docs)

    @property
    def appended_postings(self) -> int:
        """Postings appended since the last full load or fold (kept in the second set of rows)."""
        return len(self._tail.docs)

    @property
    def nbytes(self) -> int:
        """Memory held: the arrays, plus the term dictionary and its strings (Python objects)."""
        arrays = self._main.nbytes + self._tail.nbytes + self._ids.nbytes + self._dl.nbytes
        arrays += sum(a.nbytes for a in (*self._norm.values(), self._positions) if a is not None)
        strings = sum(49 + len(t) for t in self._terms)  # a compact str object, ASCII or close to it
        return int(arrays + strings + 40 * len(self._terms))  # ~40 bytes of dict slot and small int per entry


def _store_state(con: duckdb.DuckDBPyConnection) -> tuple[int, int]:
    row = con.execute("SELECT (SELECT coalesce(max(seq), 0) FROM events), (SELECT count(*) FROM tombstones)").fetchone()
    return (int(row[0]), int(row[1])) if row else (0, 0)


def _int32s(column: pa.Array | pa.ChunkedArray) -> Int32s:
    flat = column.combine_chunks() if isinstance(column, pa.ChunkedArray) else column
    return np.asarray(flat.to_numpy(zero_copy_only=False), dtype=np.int32)


def _int64s(column: pa.Array | pa.ChunkedArray) -> Int64s:
    flat = column.combine_chunks() if isinstance(column, pa.ChunkedArray) else column
    return np.asarray(flat.to_numpy(zero_copy_only=False), dtype=np.int64)


def _places(ids: Int64s, event_ids: Int64s) -> tuple[Int64s, npt.NDArray[np.bool_]]:
    """Where each of ``event_ids`` is in the sorted ``ids``, and whether it is there at all (a posting of an event
    that does not exist: a crash can leave some)."""
    found = np.searchsorted(ids, event_ids).clip(0, max(len(ids) - 1, 0))
    known = ids[found] == event_ids if len(ids) else np.zeros(len(event_ids), dtype=bool)
    return found, known
