"""Access metrics and graduation levels (migration 0014): a memory's uses (``citation_uses``, one row per retrieval
that reached a person or Claude) aggregated into :class:`claude_memory.core.graduation.Access`, and the levels the
graduation worker keeps in ``memory_levels`` (no row: L0)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import duckdb
import pyarrow as pa

from claude_memory.core.graduation import Access
from claude_memory.store.arrow import arrow_view, id_table


@dataclass(frozen=True, slots=True)
class Use:
    """One retrieval of a memory: its citation (bare id), the face (``via``), the session it reached (None: a person
    outside a session) and how well it matched (None: not measured)."""

    citation: str
    via: str
    session_id: str | None = None
    confidence: float | None = None


_USES_SCHEMA = pa.schema(
    [("citation", pa.string()), ("used_at", pa.timestamp("us")), ("via", pa.string()),
     ("session_id", pa.string()), ("confidence", pa.float64())]
)  # fmt: skip

_ACCESS = (
    "count(*) AS n, count(DISTINCT u.session_id) AS sessions, coalesce(max(u.confidence), 0) AS conf, "
    "max(u.used_at) AS last"
)


def record_uses(con: duckdb.DuckDBPyConnection, uses: Sequence[Use], now: datetime) -> None:
    """Append the uses (one statement, no transaction of its own)."""
    table = pa.table(
        {
            "citation": [u.citation for u in uses],
            "used_at": [now] * len(uses),
            "via": [u.via for u in uses],
            "session_id": [u.session_id for u in uses],
            "confidence": [u.confidence for u in uses],
        },
        schema=_USES_SCHEMA,
    )
    with arrow_view(con, "new_uses", table):
        con.execute("INSERT INTO citation_uses (citation, used_at, via, session_id, confidence) SELECT * FROM new_uses")


def access(con: duckdb.DuckDBPyConnection, citation: str) -> Access:
    row = con.execute(f"SELECT {_ACCESS} FROM citation_uses u WHERE u.citation = ?", [citation]).fetchone()
    return _access(row)


def _access(row: tuple[Any, ...] | None) -> Access:
    if row is None:
        return Access(0, 0, 0.0, None)
    n, sessions, conf, last = row
    return Access(int(n or 0), int(sessions or 0), float(conf or 0.0), last if isinstance(last, datetime) else None)


def candidates(
    con: duckdb.DuckDBPyConnection, level: int, evaluated_before: datetime, limit: int
) -> list[tuple[int, Access]]:
    """Up to ``limit`` memories at ``level`` that were used and not evaluated since ``evaluated_before`` (the
    cooldown), most recently used first, with their access metrics."""
    rows = con.execute(
        f"""
        SELECT e.id, {_ACCESS}
        FROM citation_uses u JOIN events e ON e.citation = u.citation
        LEFT JOIN memory_levels l ON l.event_id = e.id
        WHERE coalesce(l.level, 0) = ? AND (l.evaluated_at IS NULL OR l.evaluated_at < ?)
        GROUP BY e.id ORDER BY last DESC, e.id LIMIT ?
        """,
        [level, evaluated_before, limit],
    ).fetchall()
    return [(int(r[0]), _access(r[1:])) for r in rows]


def save_levels(con: duckdb.DuckDBPyConnection, levels: Sequence[tuple[int, int, bool]], now: datetime) -> None:
    """Record each evaluated memory's ``(event_id, level, promoted)`` (one statement)."""
    if not levels:
        return
    schema = pa.schema([("event_id", pa.int64()), ("level", pa.int32()), ("promoted", pa.bool_())])
    ids, new_levels, promoted = (list(column) for column in zip(*levels, strict=True))
    table = pa.table({"event_id": ids, "level": new_levels, "promoted": promoted}, schema=schema)
    with arrow_view(con, "evaluated", table):
        con.execute(
            """
            INSERT INTO memory_levels SELECT event_id, level, $now, CASE WHEN promoted THEN $now END FROM evaluated
            ON CONFLICT (event_id) DO UPDATE SET level = excluded.level, evaluated_at = excluded.evaluated_at,
                graduated_at = coalesce(excluded.graduated_at, memory_levels.graduated_at)
            """,
            {"now": now},
        )


def levels(con: duckdb.DuckDBPyConnection, event_ids: Sequence[int]) -> dict[int, int]:
    """The level of each of ``event_ids`` that is above L0."""
    if not event_ids:
        return {}
    with arrow_view(con, "level_ids", id_table(list(event_ids))):
        rows = con.execute(
            "SELECT event_id, level FROM memory_levels WHERE event_id IN (SELECT id FROM level_ids) AND level > 0"
        ).fetchall()
    return {int(r[0]): int(r[1]) for r in rows}


def histogram(con: duckdb.DuckDBPyConnection) -> dict[int, int]:
    """How many stored events are at each level (L0: every event without a higher one)."""
    rows = con.execute("SELECT level, count(*) FROM memory_levels WHERE level > 0 GROUP BY level").fetchall()
    above = {int(r[0]): int(r[1]) for r in rows}
    total_row = con.execute("SELECT count(*) FROM events").fetchone()
    total = int(total_row[0]) if total_row else 0
    return {0: total - sum(above.values()), **{lv: above.get(lv, 0) for lv in range(1, 5)}}


def last_run(con: duckdb.DuckDBPyConnection) -> datetime | None:
    row = con.execute("SELECT max(evaluated_at) FROM memory_levels").fetchone()
    return row[0] if row and isinstance(row[0], datetime) else None


def forget(con: duckdb.DuckDBPyConnection, doomed: str) -> None:
    """Inside the forget's transaction: the levels of the events in the temp table ``doomed``."""
    con.execute(f"DELETE FROM memory_levels WHERE event_id IN (SELECT id FROM {doomed})")
