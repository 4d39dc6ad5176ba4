"""Semantic candidates: embed the query, search the hnswlib index, map chunks back to events."""

from __future__ import annotations

import duckdb
import numpy as np
import numpy.typing as npt
import pyarrow as pa

from claude_memory.store.arrow import arrow_view, id_table
from claude_memory.store.embedder import Embedder
from claude_memory.store.keyword import KeywordFilters, filter_sql
from claude_memory.store.vector_index import VectorIndex

OVERSAMPLE = 8  # chunks asked of the index per result wanted (events have several chunks; filters drop some)
MAX_CHUNKS = 4000


def embed_query(embedder: Embedder, query: str) -> npt.NDArray[np.float32]:
    vector: npt.NDArray[np.float32] = embedder.embed([query])[0]
    return vector


def semantic_candidates(
    con: duckdb.DuckDBPyConnection,
    index: VectorIndex,
    vector: npt.NDArray[np.float32],
    filters: KeywordFilters,
    limit: int,
) -> list[tuple[int, float]]:
    """Top ``limit`` (event id, cosine similarity of its best chunk), best first, within ``filters``."""
    where, params = filter_sql(filters)
    k = min(MAX_CHUNKS, limit * OVERSAMPLE * (4 if where else 1))
    hits = index.search(vector, k)
    if not hits:
        return []
    table = pa.table(
        {"label": [h[0] for h in hits], "score": [h[1] for h in hits]},
        schema=pa.schema([("label", pa.int64()), ("score", pa.float64())]),
    )
    with arrow_view(con, "semantic_hits", table):
        rows = con.execute(
            f"""
            SELECT c.event_id, max(h.score) AS score
            FROM semantic_hits h JOIN chunks c USING (label) JOIN events e ON e.id = c.event_id
            WHERE TRUE {where}
            GROUP BY c.event_id ORDER BY score DESC, c.event_id LIMIT ?
            """,
            [*params, limit],
        ).fetchall()
    return [(int(r[0]), float(r[1])) for r in rows]


def event_similarities(
    con: duckdb.DuckDBPyConnection, index: VectorIndex, vector: npt.NDArray[np.float32], event_ids: list[int]
) -> dict[int, float]:
    """Exact cosine similarity of the best chunk of each event in ``event_ids`` (those with vectors)."""
    if not event_ids:
        return {}
    with arrow_view(con, "similarity_ids", id_table(event_ids)):
        rows = con.execute(
            "SELECT c.event_id, c.label FROM chunks c JOIN similarity_ids s ON s.id = c.event_id"
        ).fetchall()
    scores = index.similarities(vector, [int(r[1]) for r in rows])
    best: dict[int, float] = {}
    for event_id, label in rows:
        if label in scores:
            best[int(event_id)] = max(best.get(int(event_id), -1.0), scores[label])
    return best
