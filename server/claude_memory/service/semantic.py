"""Semantic candidates: embed the query, search the hnswlib index, map chunks back to events."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from claude_memory.store.embedder import Embedder
from claude_memory.store.eventmap import EventMap
from claude_memory.store.keyword import KeywordFilters
from claude_memory.store.vector_index import VectorIndex

# Chunks asked of the index per result wanted (1.1 chunks per event at 100k; filters drop some). 3 and 2 gave
# the same LoCoMo dev recall; the k-NN search time grows with it.
OVERSAMPLE = 2
MAX_CHUNKS = 4000


def embed_query(embedder: Embedder, query: str) -> npt.NDArray[np.float32]:
    vector: npt.NDArray[np.float32] = embedder.embed([query])[0]
    return vector


def _best_per_event(
    events: EventMap, positions: npt.NDArray[np.int64], scores: npt.NDArray[np.float64], limit: int | None
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
    filters: KeywordFilters,
    limit: int,
) -> list[tuple[int, float]]:
    """Top ``limit`` (event id, cosine similarity of its best chunk), best first, within ``filters``."""
    filtered = filters != KeywordFilters()
    labels, scores = index.search(vector, min(MAX_CHUNKS, limit * OVERSAMPLE * (2 if filtered else 1)))
    if not len(labels):
        return []
    positions = events.events_of_labels(labels)
    known = positions >= 0
    positions, scores = positions[known], scores[known]
    keep = events.admitted(positions, filters)
    return _best_per_event(events, positions[keep], scores[keep], limit)


@dataclass(frozen=True, slots=True)
class EventVectors:
    """The vectors of every chunk of some events: row k belongs to the event at map position ``owners[k]``."""

    owners: npt.NDArray[np.int64]
    vectors: npt.NDArray[np.float32]


def event_vectors(index: VectorIndex, events: EventMap, event_ids: list[int]) -> EventVectors:
    """Read the chunk vectors of ``event_ids`` (those with vectors) from the index. Needs no query, so
    search does it while the query is still being embedded."""
    positions = events.positions(event_ids)
    labels, owners = events.labels_of(positions[positions >= 0])
    held, vectors = index.vectors(labels.tolist())
    order = np.argsort(labels, kind="stable")  # labels are distinct: each has one owner
    return EventVectors(owners[order][np.searchsorted(labels[order], held)], vectors)


def event_similarities(
    events: EventMap, found: EventVectors, vector: npt.NDArray[np.float32], event_ids: list[int]
) -> dict[int, float]:
    """Exact cosine similarity of the best chunk of each event in ``event_ids`` that ``found`` holds."""
    wanted = events.positions(event_ids)
    keep = np.isin(found.owners, wanted[wanted >= 0])
    if not keep.any():
        return {}
    unit = vector / (np.linalg.norm(vector) or 1.0)
    scores = (found.vectors[keep] @ unit).astype(np.float64)
    return dict(_best_per_event(events, found.owners[keep], scores, None))
