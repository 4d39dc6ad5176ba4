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


# A projection whose reading of the events changes between versions names its offset ``<family>:<version>``.
_FAMILY = "name = $family OR starts_with(name, $family || ':')"


def other_versions(con: duckdb.DuckDBPyConnection, family: str, name: str) -> bool:
    """Whether an offset of ``family`` other than ``name`` (another version's, or the plain family name) is kept."""
    row = con.execute(
        f"SELECT count(*) FROM projection_offsets WHERE ({_FAMILY}) AND name <> $name", {"family": family, "name": name}
    ).fetchone()
    return bool(row and row[0])


def reset_family(con: duckdb.DuckDBPyConnection, family: str) -> None:
    """Drop every version's offset of ``family``."""
    con.execute(f"DELETE FROM projection_offsets WHERE {_FAMILY}", {"family": family})
