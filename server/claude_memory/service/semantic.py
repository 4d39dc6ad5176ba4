"""Semantic candidates: embed the query, search the hnswlib index, map chunks back to events."""

from __future__ import annotations

import duckdb
import pyarrow as pa

from claude_memory.store.arrow import arrow_view
from claude_memory.store.embedder import Embedder
from claude_memory.store.keyword import KeywordFilters, filter_sql
from claude_memory.store.vector_index import VectorIndex

OVERSAMPLE = 8  # chunks asked of the index per result wanted (events have several chunks; filters drop some)
MAX_CHUNKS = 4000


def semantic_candidates(
    con: duckdb.DuckDBPyConnection,
    embedder: Embedder,
    index: VectorIndex,
    query: str,
    filters: KeywordFilters,
    limit: int,
) -> list[tuple[int, float]]:
    """Top ``limit`` (event id, cosine similarity of its best chunk), best first, within ``filters``."""
    vector = embedder.embed([query])[0]
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
