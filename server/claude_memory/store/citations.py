"""Allocate citations (``mem:`` ids) against everything already issued: for the events the writer
appends, and once, when the store is opened, for events stored before citations existed."""

from __future__ import annotations

import duckdb
import pyarrow as pa

from claude_memory.core import citations
from claude_memory.store.arrow import arrow_view


def _taken(con: duckdb.DuckDBPyConnection, wanted: list[str]) -> set[str]:
    if not wanted:
        return set()
    # An Arrow table, not a list parameter: DuckDB binds long Python lists element by element (slow).
    with arrow_view(con, "wanted_citations", pa.table({"citation": pa.array(wanted, pa.string())})):
        rows = con.execute(
            "SELECT citation FROM events WHERE citation IN (SELECT citation FROM wanted_citations) "
            "UNION SELECT citation FROM tombstones WHERE citation IN (SELECT citation FROM wanted_citations)"
        ).fetchall()
    return {str(r[0]) for r in rows}


def allocate_citations(con: duckdb.DuckDBPyConnection, event_ids: list[int]) -> list[str]:
    """One new citation per event id, in order: the id's first candidate unless an existing event, a
    tombstone or an earlier id of this call holds it, then the next attempts. Deterministic for a
    given store and order, so a resumed import allocates exactly what a clean one does."""
    first = [citations.candidate(event_id) for event_id in event_ids]
    taken = _taken(con, first)
    out: list[str] = []
    for event_id, chosen in zip(event_ids, first, strict=True):
        attempt = 0
        while chosen in taken:
            attempt += 1
            if attempt >= citations.MAX_ATTEMPTS:
                raise RuntimeError(f"Could not find a free citation for event {event_id}.")
            chosen = citations.candidate(event_id, attempt)
            taken |= _taken(con, [chosen])
        taken.add(chosen)
        out.append(chosen)
    return out


def assign_missing(con: duckdb.DuckDBPyConnection) -> int:
    """Give citations to events stored before citations existed (schema < 3). Returns how many."""
    rows = con.execute("SELECT id FROM events WHERE citation IS NULL ORDER BY seq").fetchall()
    if not rows:
        return 0
    ids = [int(r[0]) for r in rows]
    schema = pa.schema([("id", pa.int64()), ("citation", pa.string())])
    table = pa.table({"id": ids, "citation": allocate_citations(con, ids)}, schema=schema)
    with arrow_view(con, "missing_citations", table):
        con.execute("UPDATE events SET citation = m.citation FROM missing_citations m WHERE events.id = m.id")
    return len(ids)
