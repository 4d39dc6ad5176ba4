"""The offsets of the projections derived from the events (``projection_offsets``: one row per projection, the seq
of the last event it has folded in). Tasks, insights and endless mode each keep theirs under their own name; the
writes here run inside those modules' writer-run statements."""

from __future__ import annotations

import duckdb


def offset(con: duckdb.DuckDBPyConnection, name: str) -> int | None:
    """The projection's offset; None when it has none (never folded, or reset)."""
    row = con.execute("SELECT event_seq FROM projection_offsets WHERE name = ?", [name]).fetchone()
    return int(row[0]) if row else None


def set_offset(con: duckdb.DuckDBPyConnection, name: str, seq: int) -> None:
    con.execute("INSERT OR REPLACE INTO projection_offsets VALUES (?, ?)", [name, seq])


def reset(con: duckdb.DuckDBPyConnection, name: str) -> None:
    """Drop the offset: the projection is folded again from the start at its next refresh."""
    con.execute("DELETE FROM projection_offsets WHERE name = ?", [name])
