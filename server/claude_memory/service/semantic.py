"""Semantic candidates (embed the query, search the hnswlib index, map chunks back to events) and the
similarities of every candidate ranking considers."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from claude_memory.core.filters import EventFilters
from claude_memory.core.ranking import Facts, Floats
from claude_memory.store.embedder import Embedder
from claude_memory.store.eventmap import EventMap
from claude_memory.store.vector_index import VectorIndex

# Chunks asked of the index per result wanted (1.1 chunks per event at 100k; filters drop some). 3 and 2 gave
# the same LoCoMo dev recall; the k-NN search time grows with it.
OVERSAMPLE = 2
MAX_CHUNKS = 4000
# A filter (a project, a session, a type, a time span) that admits at most this many chunks is searched
# exhaustively, from the vector copy, instead of through the index: the k-NN search ranks every chunk of the
# store, and a project holding 1 % of them would get about 1 % of its results back. 10,000 rows take ~2 ms.
EXACT_CHUNKS = 10_000


def embed_query(embedder: Embedder, query: str) -> npt.NDArray[np.float32]:
    vector: npt.NDArray[np.float32] = embedder.embed([query])[0]
    return vector


def _best_per_event(
    events: EventMap, positions: npt.NDArray[np.int64], scores: npt.NDArray[np.float64], limit: int
) -> list[tuple[int, float]]:
    """(event id, best score of its chunks), best first: ``positions`` and ``scores`` are per chunk."""
    order = np.argsort(-scores, kind="stable")
    positions, scores = positions[order], scores[order]
    _, first = np.unique(positions, return_index=True)  # the first occurrence is the best chunk
    first = np.sort(first)[:limit]
    ids = events.id_at(positions[first])
    return [(int(i), float(s)) for i, s in zip(ids, scores[first], strict=True)]


def semantic_candidates(
    index: VectorIndex,
    events: EventMap,
    vector: npt.NDArray[np.float32],
    filters: EventFilters,
    limit: int,
) -> list[tuple[int, float]]:
    """Top ``limit`` (event id, cosine similarity of its best chunk), best first, within ``filters``: every
    admitted chunk scored when the filters leave few (:data:`EXACT_CHUNKS`), else the index's nearest chunks,
    asked for in proportion to the share of the store the filters admit."""
    wanted = limit * OVERSAMPLE
    if filters != EventFilters():
        labels, owners = events.admitted_chunks(filters)
        if len(labels) <= EXACT_CHUNKS:
            scores = index.cosines(labels, _unit(vector))
            held = scores != 0.0  # a zero row: not in the copy yet (or forgotten)
            return _best_per_event(events, owners[held], scores[held], limit)
        wanted = math.ceil(wanted * index.live_count / len(labels))
    labels, scores = index.search(vector, min(MAX_CHUNKS, wanted))
    if not len(labels):
        return []
    positions = events.events_of_labels(labels)
    known = positions >= 0
    positions, scores = positions[known], scores[known]
    keep = events.admitted(positions, filters)
    return _best_per_event(events, positions[keep], scores[keep], limit)


@dataclass(frozen=True, slots=True)
class Similarities:
    """Per row of some :class:`~claude_memory.core.ranking.Facts`: NaN where the event has no vector yet."""

    cosine: Floats  # the cosine of the event's best chunk with the query
    context: Floats  # the same, each chunk's vector first mixed with the events on either side (below)
    chunks: Floats  # how many chunks the best was taken from (0: no vector yet)


def similarities(
    index: VectorIndex, events: EventMap, facts: Facts, vector: npt.NDArray[np.float32], context: float
) -> Similarities:
    """Exact cosines of every row of ``facts`` (read from the index's copy: the k-NN search returns only its top),
    and contextual ones: each chunk's vector plus ``context`` times each neighbouring row's event vector (the
    normalised sum of its chunks), normalised again, against the query. A turn such as "I've had them for three
    years now" is about the question before it. LoCoMo dev, hybrid r@5/@10 through the CLI: 67.8/77.8 with the
    plain cosines of the semantic hits and of the best keyword hits only, 69.4/78.1 with contextual cosines for
    every row (docs/architecture.md has the weights and variants tried).

    cos(q, c + w a), with a = p + n the neighbours' vectors, is (q.c + w q.a) / |c + w a|, where
    |c + w a|^2 = |c|^2 + w^2 (|p|^2 + |n|^2 + 2 p.n) + 2 w (c.p + c.n). With the rows in event order, a row's
    neighbour on either side, when it is a row, is the row beside it (the map orders events by session and time,
    and every row is admitted), so every product is of two shifted views of one array: no vectors are copied
    but each row's first chunk, read once (~1,500 rows of a hybrid query at 100k events)."""
    n = len(facts)
    positions = events.positions(facts.ids)
    order = np.argsort(positions, kind="stable")
    labels, counts = events.labels_of(positions[order])  # an unknown id (-1) has no chunks
    if not len(labels):
        return Similarities(np.full(n, np.nan), np.full(n, np.nan), np.zeros(n))
    starts = np.cumsum(counts) - counts
    query = _unit(vector)
    own = index.vectors(np.where(counts > 0, labels[np.minimum(starts, len(labels) - 1)], -1))  # first chunks
    first_q = np.einsum("ij,j->i", own, query)  # not BLAS: its threads would wait on the model's spinning ones
    held = first_q != 0.0  # a zero row (no vector); a real vector exactly orthogonal to the query is as good as lost
    several = np.flatnonzero(counts > 1)
    if len(several):  # their event vectors: the normalised sum of their chunks, read together (grouped by row)
        sizes = counts[several]
        group = np.cumsum(sizes) - sizes  # where each row's chunks start among them
        chunk_vectors = index.vectors(labels[np.repeat(starts[several] - group, sizes) + np.arange(int(sizes.sum()))])
        summed = np.zeros((len(several), own.shape[1]), dtype=np.float32)
        for level in range(int(sizes.max())):
            deep = sizes > level
            summed[deep] += chunk_vectors[group[deep] + level]
        own[several] = summed / np.maximum(np.linalg.norm(summed, axis=1), 1e-12)[:, None]
    own_q = first_q.copy()
    own_q[several] = np.einsum("ij,j->i", own[several], query)
    present = (own_q != 0.0).astype(np.float32)  # 1 for a row with a vector (unit length), else 0
    has_before = facts.prev[order] >= 0
    has_after = facts.next[order] >= 0
    beside = _shifted(np.einsum("ij,ij->i", own[:-1], own[1:]), 1, n)  # [r]: row r-1 . row r
    apart = _shifted(np.einsum("ij,ij->i", own[:-2], own[2:]), 1, n)  # [r]: row r-1 . row r+1
    towards = has_before * _shifted(own_q, 1, n) + has_after * _shifted(own_q, -1, n)
    spread = has_before * _shifted(present, 1, n) + has_after * _shifted(present, -1, n)
    spread += 2.0 * (has_before & has_after) * apart
    overlap = has_before * beside + has_after * _shifted(beside, -1, n)  # exact for rows of one chunk

    def contextual(chunk_q: Floats, chunk_overlap: Floats, rows: npt.NDArray[np.int64]) -> Floats:
        length = np.sqrt(np.maximum(1.0 + context**2 * spread[rows] + 2.0 * context * chunk_overlap, 1e-12))
        return np.asarray((chunk_q + context * towards[rows]) / length, dtype=np.float64)

    every = np.arange(n)
    plain = np.where(held, first_q, np.nan).astype(np.float64)
    mixed = np.where(held, contextual(first_q, overlap, every), np.nan)
    if len(several):  # each chunk of a longer event against its neighbours' vectors; its best chunk counts
        around = own[np.maximum(several - 1, 0)] * has_before[several, None]
        around += own[np.minimum(several + 1, n - 1)] * has_after[several, None]
        near = np.repeat(np.arange(len(several)), sizes)  # index into ``several`` of each chunk
        chunk_q = np.einsum("ij,j->i", chunk_vectors, query)
        chunk_mixed = contextual(chunk_q, np.einsum("ij,ij->i", chunk_vectors, around[near]), several[near])
        missing = chunk_q == 0.0
        plain[several] = np.maximum.reduceat(np.where(missing, -np.inf, chunk_q.astype(np.float64)), group)
        mixed[several] = np.maximum.reduceat(np.where(missing, -np.inf, chunk_mixed), group)
        plain[np.isinf(plain)], mixed[np.isinf(mixed)] = np.nan, np.nan
    cosine, best, chunks = np.empty(n), np.empty(n), np.empty(n)
    cosine[order], best[order], chunks[order] = plain, mixed, counts
    return Similarities(cosine, best, chunks)


def _unit(vector: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
    unit: npt.NDArray[np.float32] = (vector / (np.linalg.norm(vector) or 1.0)).astype(np.float32)
    return unit


def _shifted(values: npt.NDArray[np.float32], by: int, n: int) -> npt.NDArray[np.float32]:
    """``values`` (one per row, or per pair of rows) moved ``by`` rows later (earlier if negative) into ``n``
    rows, 0 where nothing moved in: with ``by=1``, row r gets the value of row r - 1."""
    out = np.zeros(n, dtype=np.float32)
    if by > 0:
        out[by : by + len(values)] = values[: n - by]
    else:
        out[: len(values) + by] = values[-by:]
    return out
