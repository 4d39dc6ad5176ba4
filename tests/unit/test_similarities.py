"""Exact and contextual cosines of ranking's rows (service.semantic.similarities) against a direct computation,
on hand-made events: several sessions, events of several chunks, events without vectors, rows out of order."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt
import pytest

from claude_memory.core.ranking import NO_TIME, Facts
from claude_memory.service.semantic import similarities

DIM = 8
Vectors = npt.NDArray[np.float32]


class Events:
    """The two lookups similarities makes of the event map: event positions, and each event's chunk labels."""

    def __init__(self, sessions: list[list[int]], chunks: dict[int, list[int]]) -> None:
        self.order = [event for session in sessions for event in session]  # position = index here
        self.session_of = {event: n for n, session in enumerate(sessions) for event in session}
        self.chunks = chunks

    def positions(self, ids: npt.NDArray[np.int64]) -> npt.NDArray[np.int64]:
        return np.asarray([self.order.index(int(i)) if int(i) in self.order else -1 for i in ids], dtype=np.int64)

    def labels_of(self, positions: npt.NDArray[np.int64]) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]:
        labels = [self.chunks.get(self.order[p], []) if p >= 0 else [] for p in positions.tolist()]
        flat = [label for group in labels for label in group]
        return np.asarray(flat, dtype=np.int64), np.asarray([len(g) for g in labels], dtype=np.int64)


class Index:
    def __init__(self, vectors: dict[int, Vectors]) -> None:
        self.held = vectors

    def vectors(self, labels: npt.NDArray[np.int64]) -> Vectors:
        return np.asarray([self.held.get(int(label), np.zeros(DIM, dtype=np.float32)) for label in labels])


def unit(vector: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
    return vector / np.linalg.norm(vector)


def expected(
    rows: list[int], events: Events, index: Index, query: Vectors, context: float
) -> tuple[list[float], list[float]]:
    """Straight from the definition: each chunk's vector plus ``context`` times the event vectors (normalised
    sums of their chunks) of the row's neighbours among the rows, normalised, against the query; best chunk."""

    def event_vector(event: int) -> npt.NDArray[np.float64] | None:
        held = [index.held[label] for label in events.chunks.get(event, []) if label in index.held]
        return unit(np.sum(held, axis=0).astype(np.float64)) if held else None

    q = unit(query.astype(np.float64))
    plain, mixed = [], []
    for event in rows:
        at = events.order.index(event)
        around = np.zeros(DIM)
        for step in (-1, 1):
            near = at + step
            if 0 <= near < len(events.order) and events.session_of[events.order[near]] == events.session_of[event]:
                vector = event_vector(events.order[near]) if events.order[near] in rows else None
                around += vector if vector is not None else 0.0
        chunks = [index.held[label].astype(np.float64) for label in events.chunks.get(event, []) if label in index.held]
        plain.append(max((float(c @ q) for c in chunks), default=np.nan))
        mixed.append(max((float(unit(c + context * around) @ q) for c in chunks), default=np.nan))
    return plain, mixed


def facts_of(rows: list[int], events: Events) -> Facts:
    """Facts as the event map builds them: every event admitted, a neighbour -1 unless it is among the rows."""
    row_of = {event: r for r, event in enumerate(rows)}

    def beside(event: int, step: int) -> int:
        near = events.order.index(event) + step
        if not 0 <= near < len(events.order) or events.session_of[events.order[near]] != events.session_of[event]:
            return -1
        return row_of.get(events.order[near], -1)

    n = len(rows)
    return Facts(
        ids=np.asarray(rows, dtype=np.int64),
        session=np.asarray([events.session_of[e] for e in rows], dtype=np.int64),
        ts=np.full(n, NO_TIME, dtype=np.int64),
        length=np.zeros(n, dtype=np.int64),
        question=np.zeros(n, dtype=bool),
        names_time=np.zeros(n, dtype=bool),
        user=np.zeros(n, dtype=bool),
        prev=np.asarray([beside(e, -1) for e in rows], dtype=np.int64),
        next=np.asarray([beside(e, +1) for e in rows], dtype=np.int64),
        same_session=np.zeros(n, dtype=bool),
        same_project=np.zeros(n, dtype=bool),
    )


@pytest.fixture
def world() -> tuple[Events, Index, Vectors]:
    rng = np.random.default_rng(7)
    sessions = [[10, 11, 12, 13, 14, 15], [20, 21, 22], [30]]
    chunks: dict[int, list[int]] = {}
    label = 0
    for event in [e for s in sessions for e in s]:
        count = {12: 3, 21: 2, 14: 0}.get(event, 1)  # 12 and 21 are long (several chunks); 14 is not embedded yet
        chunks[event] = list(range(label, label + count))
        label += count
    held = {n: unit(rng.normal(size=DIM)).astype(np.float32) for n in range(label)}
    return Events(sessions, chunks), Index(held), rng.normal(size=DIM).astype(np.float32)


@pytest.mark.parametrize(
    "rows",
    [
        [10, 11, 12, 13, 14, 15, 20, 21, 22, 30],  # everything, in event order
        [22, 13, 30, 11, 12, 20, 15, 21, 10],  # out of order, 14 missing: 13 and 15 have one neighbour each
        [12, 21],  # two long events, no neighbours among the rows
        [14, 15],  # a row without a vector beside one with
    ],
)
def test_similarities_match_the_definition(world: tuple[Events, Index, Vectors], rows: list[int]) -> None:
    events, index, query = world
    found = similarities(index, events, facts_of(rows, events), query, 0.35)  # type: ignore[arg-type]
    plain, mixed = expected(rows, events, index, query, 0.35)
    assert np.allclose(found.cosine, plain, atol=1e-6, equal_nan=True)
    assert np.allclose(found.context, mixed, atol=1e-6, equal_nan=True)


def test_without_context_the_contextual_cosine_is_the_plain_one(world: tuple[Events, Index, Vectors]) -> None:
    events, index, query = world
    rows = [10, 11, 12, 13, 15, 20, 21, 22, 30]
    found = similarities(index, events, facts_of(rows, events), query, 0.0)  # type: ignore[arg-type]
    assert np.allclose(found.cosine, found.context, atol=1e-6)
    mixed = similarities(index, events, facts_of(rows, events), query, 0.35)  # type: ignore[arg-type]
    assert not np.allclose(mixed.cosine, mixed.context, atol=1e-3)  # control: the neighbours do change it


def test_rows_without_any_vector_get_none(world: tuple[Events, Index, Vectors]) -> None:
    events, _, query = world
    found = similarities(Index({}), events, facts_of([10, 11, 12], events), query, 0.35)  # type: ignore[arg-type]
    assert np.isnan(found.cosine).all() and np.isnan(found.context).all()
    empty = similarities(Index({}), events, facts_of([14], events), query, 0.35)  # type: ignore[arg-type]
    assert np.isnan(empty.cosine).all()
