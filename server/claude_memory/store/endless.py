"""Endless mode's tables (migration 0015): its mode and settings, the working set, consolidated memories and the
continuity log. The statements that change them are run by the writer only."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import duckdb
import pyarrow as pa

from claude_memory.store import projections
from claude_memory.store.arrow import arrow_view

OFFSET = "endless"
KINDS = ("user_prompt", "agent_response", "tool_use", "compact_summary")

WORKING_SCHEMA = pa.schema(
    [("event_id", pa.int64()), ("project", pa.string()), ("added_at", pa.timestamp("us")),
     ("expires_at", pa.timestamp("us")), ("relevance", pa.float64()), ("topics", pa.string())]
)  # fmt: skip
CONTINUITY_SCHEMA = pa.schema(
    [("event_id", pa.int64()), ("project", pa.string()), ("ts", pa.timestamp("us")), ("score", pa.float64()),
     ("transition", pa.string()), ("snapshot", pa.string())]
)  # fmt: skip


@dataclass(frozen=True, slots=True)
class NewEvent:
    id: int
    seq: int
    type: str
    project: str | None
    ts: datetime | None
    text: str


@dataclass(frozen=True, slots=True)
class WorkingItem:
    event_id: int
    citation: str | None
    type: str
    project: str | None
    ts: datetime
    relevance: float
    topics: list[str]
    text: str


def config(con: duckdb.DuckDBPyConnection) -> dict[str, Any]:
    """``{mode: ..., config: {...}}`` as stored (empty when never set)."""
    rows = con.execute("SELECT key, value FROM endless_config").fetchall()
    return {str(k): json.loads(v) for k, v in rows}


def set_config(con: duckdb.DuckDBPyConnection, key: str, value: object) -> None:
    con.execute("INSERT OR REPLACE INTO endless_config VALUES (?, ?)", [key, json.dumps(value)])


def offset(con: duckdb.DuckDBPyConnection) -> int:
    return projections.offset(con, OFFSET) or 0


def set_offset(con: duckdb.DuckDBPyConnection, seq: int) -> None:
    projections.set_offset(con, OFFSET, seq)


def newest_seq(con: duckdb.DuckDBPyConnection) -> int:
    row = con.execute("SELECT coalesce(max(seq), 0) FROM events").fetchone()
    return int(row[0]) if row else 0


def events_after(con: duckdb.DuckDBPyConnection, seq: int, since: datetime | None, limit: int) -> list[NewEvent]:
    """Conversation events stored after ``seq`` (and at or after ``since``), oldest first; sidechains left out."""
    rows = con.execute(
        f"SELECT id, seq, type, project, ts, text FROM events WHERE seq > ? AND type IN {KINDS} AND NOT is_sidechain "
        "AND (? IS NULL OR ts >= ?) ORDER BY seq LIMIT ?",
        [seq, since, since, limit],
    ).fetchall()
    return [NewEvent(int(r[0]), int(r[1]), str(r[2]), r[3], r[4], str(r[5])) for r in rows]


def add_working(con: duckdb.DuckDBPyConnection, rows: pa.Table, max_events: int, now: datetime) -> None:
    """Inside the writer's transaction: the rows, then each project's set cut to ``max_events`` (highest relevance,
    newest first) and expired rows dropped."""
    with arrow_view(con, "working_rows", rows):
        con.execute("INSERT OR REPLACE INTO working_set SELECT * FROM working_rows")
    con.execute("DELETE FROM working_set WHERE expires_at < ?", [now])
    con.execute(
        "DELETE FROM working_set WHERE event_id IN (SELECT event_id FROM (SELECT event_id, row_number() OVER "
        "(PARTITION BY project ORDER BY relevance DESC, added_at DESC) AS n FROM working_set) WHERE n > ?)",
        [max_events],
    )


def expire(con: duckdb.DuckDBPyConnection, now: datetime) -> None:
    con.execute("DELETE FROM working_set WHERE expires_at < ?", [now])


def working(
    con: duckdb.DuckDBPyConnection, project: str | None, now: datetime, limit: int, min_relevance: float = 0.0
) -> list[WorkingItem]:
    """The live working set of ``project`` (None: every project): relevance first, then the newest."""
    rows = con.execute(
        "SELECT w.event_id, e.citation, e.type, w.project, w.added_at, w.relevance, w.topics, e.text "
        "FROM working_set w JOIN events e ON e.id = w.event_id WHERE w.expires_at >= ? AND w.relevance >= ? "
        "AND (? IS NULL OR w.project = ?) ORDER BY w.relevance DESC, w.added_at DESC LIMIT ?",
        [now, min_relevance, project, project, limit],
    ).fetchall()
    return [WorkingItem(int(r[0]), r[1], str(r[2]), r[3], r[4], float(r[5]), json.loads(r[6]), str(r[7])) for r in rows]


def working_count(con: duckdb.DuckDBPyConnection, project: str | None, now: datetime) -> int:
    row = con.execute(
        "SELECT count(*) FROM working_set WHERE expires_at >= ? AND (? IS NULL OR project = ?)", [now, project, project]
    ).fetchone()
    return int(row[0]) if row else 0


def last_activity(con: duckdb.DuckDBPyConnection) -> datetime | None:
    row = con.execute("SELECT max(added_at) FROM working_set").fetchone()
    return row[0] if row and isinstance(row[0], datetime) else None


def prune(con: duckdb.DuckDBPyConnection, event_ids: Sequence[int], before: datetime) -> None:
    """Take consolidated events older than ``before`` out of the working set (recent context stays)."""
    if not event_ids:
        return
    con.execute(
        "DELETE FROM working_set WHERE event_id IN (SELECT unnest(?)) AND added_at < ?", [list(event_ids), before]
    )


def add_continuity(con: duckdb.DuckDBPyConnection, rows: pa.Table) -> None:
    with arrow_view(con, "continuity_rows", rows):
        con.execute("INSERT OR REPLACE INTO continuity_log SELECT * FROM continuity_rows")


def last_snapshot(con: duckdb.DuckDBPyConnection, project: str | None) -> tuple[datetime | None, dict[str, Any]] | None:
    row = con.execute(
        "SELECT ts, snapshot FROM continuity_log WHERE project IS NOT DISTINCT FROM ? ORDER BY ts DESC NULLS LAST, "
        "event_id DESC LIMIT 1",
        [project],
    ).fetchone()
    return (row[0], json.loads(row[1])) if row else None


def continuity_since(
    con: duckdb.DuckDBPyConnection, project: str | None, since: datetime
) -> tuple[float | None, str | None]:
    """The average score of the prompts since ``since`` and the last transition (None, None without any)."""
    row = con.execute(
        "SELECT avg(score), arg_max(transition, ts) FROM continuity_log WHERE ts >= ? AND (? IS NULL OR project = ?)",
        [since, project, project],
    ).fetchone()
    if not row or row[0] is None:
        return None, None
    return float(row[0]), row[1]


def transitions(con: duckdb.DuckDBPyConnection, since: datetime) -> dict[str, int]:
    rows = con.execute("SELECT transition, count(*) FROM continuity_log WHERE ts >= ? GROUP BY 1", [since]).fetchall()
    return {str(r[0]): int(r[1]) for r in rows}


def consolidated_sources(con: duckdb.DuckDBPyConnection) -> set[int]:
    rows = con.execute("SELECT DISTINCT unnest(source_events) FROM consolidated_memories").fetchall()
    return {int(r[0]) for r in rows}


def add_consolidated(con: duckdb.DuckDBPyConnection, rows: Sequence[tuple[Any, ...]]) -> None:
    if not rows:
        return
    con.executemany("INSERT OR IGNORE INTO consolidated_memories VALUES (?, ?, ?, ?, ?, ?, ?, NULL, 0)", rows)


def consolidated(con: duckdb.DuckDBPyConnection, project: str | None, limit: int) -> list[dict[str, Any]]:
    """Consolidated memories (of ``project``, None: all), the most confident first, then the newest."""
    rows = con.execute(
        "SELECT id, project, summary, topics, source_events, confidence, created_at FROM consolidated_memories "
        "WHERE (? IS NULL OR project = ?) ORDER BY confidence DESC, created_at DESC LIMIT ?",
        [project, project, limit],
    ).fetchall()
    return [
        {"id": r[0], "project": r[1], "summary": r[2], "topics": json.loads(r[3]), "source_events": list(r[4]),
         "confidence": float(r[5]), "created_at": r[6]}
        for r in rows
    ]  # fmt: skip


def consolidated_count(con: duckdb.DuckDBPyConnection, project: str | None) -> int:
    row = con.execute(
        "SELECT count(*) FROM consolidated_memories WHERE (? IS NULL OR project = ?)", [project, project]
    ).fetchone()
    return int(row[0]) if row else 0


def last_consolidation(con: duckdb.DuckDBPyConnection) -> datetime | None:
    row = con.execute("SELECT max(created_at) FROM consolidated_memories").fetchone()
    return row[0] if row and isinstance(row[0], datetime) else None


def forget(con: duckdb.DuckDBPyConnection, doomed: str) -> None:
    """Inside the forget's transaction: the working-set entries and continuity of the forgotten events, and every
    consolidated memory built on one of them (the next consolidation makes it again from what is left)."""
    con.execute(f"DELETE FROM working_set WHERE event_id IN (SELECT id FROM {doomed})")
    con.execute(f"DELETE FROM continuity_log WHERE event_id IN (SELECT id FROM {doomed})")
    con.execute(
        "DELETE FROM consolidated_memories WHERE "
        f"len(list_intersect(source_events, (SELECT list(id) FROM {doomed}))) > 0"
    )
