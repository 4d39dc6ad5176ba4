"""What a forget selects: the SELECT of event ids a selector (:class:`claude_memory.core.filters.ForgetSelector`)
stands for, and how many events match.

The deletion itself is the writer's (:meth:`claude_memory.store.writer.EventWriter.forget`).
"""

from __future__ import annotations

import duckdb

from claude_memory.core.filters import ForgetSelector


def selected_ids_sql(selector: ForgetSelector) -> tuple[str, list[object]]:
    """A SELECT of the ids of every event matching all the selector's criteria, and its parameters."""
    clauses: list[str] = []
    params: list[object] = []
    if selector.event_ids:
        clauses.append("id IN (SELECT unnest(?))")
        params.append(list(selector.event_ids))
    if selector.session_id:
        clauses.append("session_id = ?")
        params.append(selector.session_id)
    if selector.project:
        clauses.append("project = ?")
        params.append(selector.project)
    if selector.before:
        clauses.append("ts < ?")
        params.append(selector.before)
    if not clauses:
        raise ValueError("A forget selector needs at least one criterion.")
    return f"SELECT id FROM events WHERE {' AND '.join(clauses)}", params


def count_matching(con: duckdb.DuckDBPyConnection, selector: ForgetSelector) -> int:
    """How many stored events the selector matches."""
    sql, params = selected_ids_sql(selector)
    row = con.execute(f"SELECT count(*) FROM ({sql})", params).fetchone()
    return int(row[0]) if row else 0
