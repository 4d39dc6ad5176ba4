"""The insight tables (migration 0014): per informative user prompt its canonical key and the rules it states
(``prompt_insights``, derived: the projection's offset is ``insights:<extractor version>`` in ``projection_offsets``),
and a person's marks on insights (``insight_marks``, kept by a rebuild)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import duckdb
import pyarrow as pa

from claude_memory.core.insights import EXTRACTOR
from claude_memory.store import projections
from claude_memory.store.arrow import arrow_view

_STATE_MOD = 1_000_003
OFFSET = f"insights:{EXTRACTOR}"  # named by the extractor that read the prompts (before versions: plain "insights")
SPAN = 20  # seqs looked through per prompt wanted (about one event in five is a prompt): see prompts_after

ROW_SCHEMA = pa.schema(
    [("event_id", pa.int64()), ("project", pa.string()), ("session_id", pa.string()), ("ts", pa.timestamp("us")),
     ("canonical_key", pa.string()), ("rules", pa.string())]
)  # fmt: skip


@dataclass(frozen=True, slots=True)
class Prompt:
    event_id: int
    seq: int
    project: str | None
    session_id: str
    ts: datetime | None
    text: str
    metadata: dict[str, Any]


@dataclass(frozen=True, slots=True)
class Stated:
    """A prompt that states rules, with its citation."""

    event_id: int
    citation: str | None
    project: str | None
    session_id: str
    ts: datetime | None
    rules: str  # JSON: a list of Rule.to_json (decoded when grouped, a few at a time)
    event_seq: int = 0


def offset(con: duckdb.DuckDBPyConnection) -> int:
    return projections.offset(con, OFFSET) or 0


def outdated(con: duckdb.DuckDBPyConnection) -> bool:
    """Prompts were read by another version of the extractor (what they state must be read again)."""
    return projections.other_versions(con, "insights", OFFSET)


def reread(con: duckdb.DuckDBPyConnection) -> None:
    """Inside the writer's transaction: read every prompt again from the start. The rows an older reading left
    serve until each batch read again replaces its own (:func:`add`)."""
    projections.reset_family(con, "insights")


def prompts_after(con: duckdb.DuckDBPyConnection, seq: int, limit: int) -> list[Prompt]:
    """The user prompts stored after ``seq``, oldest first: looked for among the next ``limit * SPAN`` seqs, and past
    them when those hold none (at a million events, reading the next 500 of a backlog took 20-50 ms, most of it
    ordering every prompt after ``seq``; within the next 10,000 seqs, 3-5 ms)."""
    sql = (
        "SELECT id, seq, project, session_id, ts, text, metadata FROM events WHERE type = 'user_prompt' AND seq > ? "
        "AND seq <= ? ORDER BY seq LIMIT ?"
    )
    rows = con.execute(sql, [seq, seq + limit * SPAN, limit]).fetchall()
    if not rows:  # a stretch with no prompt, or the end
        rows = con.execute(sql, [seq, 2**62, limit]).fetchall()
    return [
        Prompt(int(r[0]), int(r[1]), r[2], str(r[3]), r[4], str(r[5]), json.loads(r[6]) if r[6] else {}) for r in rows
    ]


def add(con: duckdb.DuckDBPyConnection, rows: pa.Table, after: int, seq: int) -> None:
    """Inside the writer's transaction: the rows of the prompts read (after the offset ``after``, up to ``seq``), in
    place of whatever an earlier reading of them left, and the offset moved to ``seq``."""
    con.execute(
        "DELETE FROM prompt_insights WHERE event_id IN "
        "(SELECT id FROM events WHERE type = 'user_prompt' AND seq > ? AND seq <= ?)",
        [after, seq],
    )
    with arrow_view(con, "insight_rows", rows):
        con.execute("INSERT OR REPLACE INTO prompt_insights SELECT * FROM insight_rows")
    projections.set_offset(con, OFFSET, seq)


def reset(con: duckdb.DuckDBPyConnection) -> None:
    """Inside the writer's transaction: everything derived goes, to be made again from the prompts."""
    con.execute("DELETE FROM prompt_insights")
    projections.reset_family(con, "insights")


def stated(con: duckdb.DuckDBPyConnection, after_seq: int = 0) -> list[Stated]:
    """Every prompt that states rules (or those stored after ``after_seq``), in the order they were made."""
    rows = con.execute(
        "SELECT p.event_id, e.citation, p.project, p.session_id, p.ts, p.rules, e.seq FROM prompt_insights p "
        "JOIN events e ON e.id = p.event_id WHERE p.rules IS NOT NULL AND e.seq > ? ORDER BY p.ts NULLS FIRST, e.seq",
        [after_seq],
    ).fetchall()
    return [Stated(int(r[0]), r[1], r[2], str(r[3]), r[4], str(r[5]), int(r[6])) for r in rows]


def stating(con: duckdb.DuckDBPyConnection) -> set[int]:
    """The event ids of the stored prompts that state rules (a forget deletes a prompt's row with it)."""
    return {int(r[0]) for r in con.execute("SELECT event_id FROM prompt_insights WHERE rules IS NOT NULL").fetchall()}


def stated_state(con: duckdb.DuckDBPyConnection) -> tuple[int, int, int]:
    """Changes whenever a prompt stating rules comes or goes (what grouping preferences is cached on)."""
    row = con.execute(
        f"SELECT count(*), coalesce(max(event_id), 0), coalesce(sum(event_id % {_STATE_MOD}), 0) FROM prompt_insights "
        "WHERE rules IS NOT NULL"
    ).fetchone()
    return (int(row[0]), int(row[1]), int(row[2])) if row else (0, 0, 0)


def state_after(state: tuple[int, int, int], added: list[Stated]) -> tuple[int, int, int]:
    """What :func:`stated_state` gives once ``added`` are stored too and nothing went."""
    ids = [s.event_id for s in added]
    return (state[0] + len(ids), max([state[1], *ids]), state[2] + sum(i % _STATE_MOD for i in ids))


def repeated(
    con: duckdb.DuckDBPyConnection, project: str | None, min_count: int, limit: int
) -> list[tuple[str, str | None, list[int]]]:
    """Canonical keys asked at least ``min_count`` times (in ``project``, or anywhere): ``(key, project, event ids
    oldest first)``, the most asked first."""
    where, params = ("WHERE project = ?", [project]) if project else ("", [])
    rows = con.execute(
        f"SELECT canonical_key, project, list(event_id ORDER BY ts NULLS FIRST, event_id) FROM prompt_insights {where} "
        "GROUP BY canonical_key, project HAVING count(*) >= ? ORDER BY count(*) DESC, max(ts) DESC LIMIT ?",
        [*params, min_count, limit],
    ).fetchall()
    return [(str(r[0]), r[1], [int(i) for i in r[2]]) for r in rows]


def marks(con: duckdb.DuckDBPyConnection) -> dict[str, str]:
    return {str(r[0]): str(r[1]) for r in con.execute("SELECT insight_id, mark FROM insight_marks").fetchall()}


def set_mark(con: duckdb.DuckDBPyConnection, insight_id: str, mark: str | None, now: datetime) -> None:
    con.execute("DELETE FROM insight_marks WHERE insight_id = ?", [insight_id])
    if mark is not None:
        con.execute("INSERT INTO insight_marks VALUES (?, ?, ?)", [insight_id, mark, now])


def forget(con: duckdb.DuckDBPyConnection, doomed: str) -> None:
    """Inside the forget's transaction: what the forgotten prompts said (insights are grouped again when read)."""
    con.execute(f"DELETE FROM prompt_insights WHERE event_id IN (SELECT id FROM {doomed})")
