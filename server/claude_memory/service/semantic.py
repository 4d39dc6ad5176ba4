"""Semantic candidates: embed the query, search the hnswlib index, map chunks back to events."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from claude_memory.store.embedder import Embedder
from claude_memory.store.eventmap import EventMap
from claude_memory.store.keyword import KeywordFilters
from claude_memory.store.vector_index import VectorIndex

OVERSAMPLE = 3  # chunks asked of the index per result wanted (1.1 chunks per event at 100k; filters drop some)
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
    hits = index.search(vector, min(MAX_CHUNKS, limit * OVERSAMPLE * (2 if filtered else 1)))
    if not hits:
        return []
    labels = np.asarray([h[0] for h in hits], dtype=np.int64)
    scores = np.asarray([h[1] for h in hits], dtype=np.float64)
    positions = events.events_of_labels(labels)
    known = positions >= 0
    positions, scores = positions[known], scores[known]
    keep = events.admitted(positions, filters)
    return _best_per_event(events, positions[keep], scores[keep], limit)


def event_similarities(
    index: VectorIndex, events: EventMap, vector: npt.NDArray[np.float32], event_ids: list[int]
) -> dict[int, float]:
    """Exact cosine similarity of the best chunk of each event in ``event_ids`` (those with vectors)."""
    positions = events.positions(event_ids)
    labels, owners = events.labels_of(positions[positions >= 0])
    similar = index.similarities(vector, labels.tolist())
    if not similar:
        return {}
    held = np.fromiter(similar, dtype=np.int64, count=len(similar))  # the labels the index returned
    scores = np.fromiter(similar.values(), dtype=np.float64, count=len(similar))
    order = np.argsort(labels, kind="stable")  # labels are distinct: each has one owner
    owner_of_held = owners[order][np.searchsorted(labels[order], held)]
    return dict(_best_per_event(events, owner_of_held, scores, None))
