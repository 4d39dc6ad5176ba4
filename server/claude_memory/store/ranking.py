"""What ranking needs to know about candidate events beyond their scores: session, time, and the events
right before and after each one in its session (among the events the search's filters admit)."""

from __future__ import annotations

import duckdb

from claude_memory.core.ranking import Candidate
from claude_memory.store.arrow import arrow_view, id_table
from claude_memory.store.keyword import KeywordFilters, filter_sql


def candidates(con: duckdb.DuckDBPyConnection, ids: list[int], filters: KeywordFilters) -> dict[int, Candidate]:
    """Session facts of ``ids`` and their session neighbours, keyed by event id. Neighbours come back too
    (so their own facts are known), and ids the filters exclude do not."""
    if not ids:
        return {}
    where, params = filter_sql(filters)
    with arrow_view(con, "ranking_ids", id_table(ids)):
        rows = con.execute(
            f"""
            WITH ordered AS (
                SELECT e.id, e.session_id, e.project, e.ts,
                       lag(e.id) OVER w AS prev_id, lead(e.id) OVER w AS next_id
                FROM events e
                WHERE e.session_id IN (SELECT DISTINCT session_id FROM events WHERE id IN (SELECT id FROM ranking_ids))
                      {where}
                WINDOW w AS (PARTITION BY e.session_id ORDER BY e.ts NULLS LAST, e.seq)
            ), wanted AS (
                SELECT id FROM ranking_ids
                UNION SELECT o.prev_id FROM ordered o JOIN ranking_ids USING (id)
                UNION SELECT o.next_id FROM ordered o JOIN ranking_ids USING (id)
            )
            SELECT o.id, o.session_id, o.project, o.ts, o.prev_id, o.next_id FROM ordered o JOIN wanted USING (id)
            """,
            params,
        ).fetchall()
    return {
        int(r[0]): Candidate(
            session_id=r[1],
            project=r[2],
            ts=r[3],
            prev_id=None if r[4] is None else int(r[4]),
            next_id=None if r[5] is None else int(r[5]),
        )
        for r in rows
    }
