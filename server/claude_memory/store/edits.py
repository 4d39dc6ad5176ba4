"""Edit records: the text each successful ``Edit``/``MultiEdit``/``Write``/``NotebookEdit`` call inserted into a
file (``edit_hunks``, one row per hunk, derived from the call's event and deleted with it), and the reads blame
needs: a file's records, newest first, each with the prompt that led to it and the answer around it.

Written by the single writer in the same transaction as the events (:func:`insert_staged`), and for stores made
before edit records existed by :func:`finish_backfill` (fed by ``service.provenance``, which rereads the calls from
their transcripts).
"""

from __future__ import annotations

import posixpath
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Final

import duckdb
import pyarrow as pa

from claude_memory.core.edits import EDIT_TOOLS
from claude_memory.core.events import ParsedEvent
from claude_memory.store.db import sql_string

BACKFILL_FLAG: Final = "edits_backfill"  # set by migration 0012, cleared when the older calls are read again

EDIT_SCHEMA = pa.schema(
    [
        ("event_id", pa.int64()),
        ("hunk_no", pa.int32()),
        ("file", pa.string()),
        ("rel_path", pa.string()),
        ("new_start", pa.int32()),
        ("text", pa.string()),
        ("removed", pa.string()),
    ]
)


def relative_path(file: str, project: str | None) -> str | None:
    """``file`` relative to the project root, when it lies under it."""
    if not project or not posixpath.isabs(file):
        return None
    rel = posixpath.relpath(posixpath.normpath(file), project)
    return None if rel.startswith("..") else rel


def edit_table(events: Sequence[ParsedEvent]) -> pa.Table:
    """The hunks of ``events`` as rows of :data:`EDIT_SCHEMA`."""
    return rows_table(
        [
            (e.event_id, n, h.file, relative_path(h.file, e.project), h.new_start, h.text, h.removed)
            for e in events
            for n, h in enumerate(e.edits)
        ]
    )


def rows_table(rows: Sequence[tuple[Any, ...]]) -> pa.Table:
    """Rows in :data:`EDIT_SCHEMA`'s column order, as its Arrow table."""
    return pa.table({name: [r[i] for r in rows] for i, name in enumerate(EDIT_SCHEMA.names)}, schema=EDIT_SCHEMA)


def insert_staged(con: duckdb.DuckDBPyConnection, view: str, new_events: str) -> None:
    """Store the hunks in ``view`` whose event is in ``new_events`` (the writer's batch, in its transaction). Rows
    already there for those events are orphans a killed commit left behind (as it can leave postings: see
    tests/integration/test_kill_resume.py), since the events themselves are new: they are replaced."""
    con.execute(f"DELETE FROM edit_hunks WHERE event_id IN (SELECT id FROM {new_events})")
    con.execute(f"INSERT INTO edit_hunks SELECT * FROM {view} WHERE event_id IN (SELECT id FROM {new_events})")


def delete(con: duckdb.DuckDBPyConnection, doomed: str) -> None:
    """Forget the hunks of the events in ``doomed`` (the writer's forget, in its transaction)."""
    con.execute(f"DELETE FROM edit_hunks WHERE event_id IN (SELECT id FROM {doomed})")


@dataclass(frozen=True, slots=True)
class EditRecord:
    """One call's hunks in one file, with what led to it."""

    event_id: int
    citation: str | None
    tool_name: str
    tool_use_id: str | None
    session_id: str
    agent_id: str | None
    ts: datetime | None
    seq: int
    file: str
    hunks: tuple[tuple[str, int | None, str], ...]  # (inserted text, its line right after the call, removed text)
    prompt_id: int | None  # the user prompt of the session that led to it (subagents: their parent's)
    answer_id: int | None  # Claude's words around the call (same session and agent): before it in its turn, else after


# The prompt: the session's last user prompt at or before the call (a subagent's calls: its parent's prompt, since
# a subagent's own prompt is not a user prompt). Claude's words: its last answer before the call in the same turn
# (same session and agent, not before the prompt), else its first answer after the call.
_AROUND = """
    ASOF LEFT JOIN (SELECT id, session_id, ts FROM events WHERE type = 'user_prompt' AND agent_id IS NULL
                    AND ts IS NOT NULL AND session_id IN (SELECT session_id FROM r)) p
      ON p.session_id = r.session_id AND r.ts >= p.ts
    ASOF LEFT JOIN (SELECT id, session_id, coalesce(agent_id, '') AS agent, ts FROM events
                    WHERE type = 'agent_response' AND ts IS NOT NULL AND session_id IN (SELECT session_id FROM r)) a
      ON a.session_id = r.session_id AND a.agent = r.agent AND r.ts >= a.ts
    ASOF LEFT JOIN (SELECT id, session_id, coalesce(agent_id, '') AS agent, ts FROM events
                    WHERE type = 'agent_response' AND ts IS NOT NULL AND session_id IN (SELECT session_id FROM r)) n
      ON n.session_id = r.session_id AND n.agent = r.agent AND r.ts <= n.ts
"""


def records_for(
    con: duckdb.DuckDBPyConnection, file: str, project: str | None = None, rel_path: str | None = None
) -> list[EditRecord]:
    """The edit records of ``file`` (or of ``rel_path`` in ``project``: the same file seen from another
    checkout path of the project), newest first."""
    where, params = _where(file, project, rel_path)
    rows = con.execute(
        f"""
        WITH r AS (
            SELECT e.id, e.citation, e.tool_name, e.tool_use_id, e.session_id, e.agent_id,
                   coalesce(e.agent_id, '') AS agent, e.ts, e.seq, any_value(h.file) AS file,
                   list(struct_pack(t := h.text, s := h.new_start, r := h.removed) ORDER BY h.hunk_no) AS hunks
            FROM edit_hunks h JOIN events e ON e.id = h.event_id
            WHERE {where}
            GROUP BY ALL
        )
        SELECT r.id, r.citation, r.tool_name, r.tool_use_id, r.session_id, r.agent_id, r.ts, r.seq, r.file, r.hunks,
               p.id,
               CASE WHEN a.id IS NOT NULL AND (p.ts IS NULL OR a.ts >= p.ts) THEN a.id ELSE n.id END
        FROM r {_AROUND}
        ORDER BY r.ts DESC NULLS LAST, r.seq DESC
        """,
        params,
    ).fetchall()
    return [
        EditRecord(
            event_id=int(r[0]),
            citation=r[1],
            tool_name=str(r[2] or ""),
            tool_use_id=r[3],
            session_id=str(r[4]),
            agent_id=r[5],
            ts=r[6],
            seq=int(r[7]),
            file=str(r[8]),
            hunks=tuple((str(h["t"]), h["s"], str(h["r"])) for h in r[9]),
            prompt_id=int(r[10]) if r[10] is not None else None,
            answer_id=int(r[11]) if r[11] is not None else None,
        )
        for r in rows
    ]


def records_generation(
    con: duckdb.DuckDBPyConnection, file: str, project: str | None = None, rel_path: str | None = None
) -> tuple[int, int]:
    """How many hunks the store holds for the file (as :func:`records_for` finds it) and the newest one's event seq:
    a blame is stale once this moves."""
    where, params = _where(file, project, rel_path)
    row = con.execute(
        f"SELECT count(*), coalesce(max(e.seq), 0) FROM edit_hunks h JOIN events e ON e.id = h.event_id WHERE {where}",
        params,
    ).fetchone()
    return (int(row[0]), int(row[1])) if row else (0, 0)


def _where(file: str, project: str | None, rel_path: str | None) -> tuple[str, list[str]]:
    if project and rel_path:
        return "(h.file = ? OR (e.project = ? AND h.rel_path = ?))", [file, project, rel_path]
    return "h.file = ?", [file]


# ---------------------------------------------------------------------- backfill (stores older than 0012)


@dataclass(frozen=True, slots=True)
class CallSource:
    """Where an editing call without edit records was read from."""

    event_id: int
    tool_name: str
    tool_use_id: str | None
    project: str | None
    source_path: str
    byte_start: int
    byte_end: int


def backfill_pending(con: duckdb.DuckDBPyConnection) -> bool:
    row = con.execute("SELECT count(*) FROM store_flags WHERE name = ?", [BACKFILL_FLAG]).fetchone()
    return bool(row and row[0])


def calls_to_backfill(con: duckdb.DuckDBPyConnection) -> list[CallSource]:
    """The stored editing calls that have no edit records and a transcript range to read them from."""
    tools = ", ".join(sql_string(t) for t in sorted(EDIT_TOOLS))
    rows = con.execute(
        f"""
        SELECT id, tool_name, tool_use_id, project, source_path, byte_start, byte_end FROM events e
        WHERE type = 'tool_use' AND tool_name IN ({tools}) AND source_path IS NOT NULL AND source_path <> ''
          AND byte_end > byte_start AND NOT EXISTS (SELECT 1 FROM edit_hunks h WHERE h.event_id = e.id)
        ORDER BY source_path, byte_start
        """
    ).fetchall()
    return [CallSource(int(r[0]), str(r[1]), r[2], r[3], str(r[4]), int(r[5]), int(r[6])) for r in rows]


def finish_backfill(con: duckdb.DuckDBPyConnection, rows: pa.Table) -> None:
    """Store the re-read hunks and clear the flag, in one transaction (the writer's)."""
    con.register("backfill_rows", rows)
    try:
        con.execute("INSERT OR IGNORE INTO edit_hunks SELECT * FROM backfill_rows")
        con.execute("DELETE FROM store_flags WHERE name = ?", [BACKFILL_FLAG])
    finally:
        con.unregister("backfill_rows")
