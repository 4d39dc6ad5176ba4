"""The task projection's tables (migration 0013): the task tool calls it is folded from, and what it holds (task
events, entities, aliases, edges, its offset). Reads here; writes through the single writer (:func:`replace`,
called by ``EventWriter.write_tasks``)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Final

import duckdb
import orjson
import pyarrow as pa

from claude_memory.core.tasks import TASK_TOOLS
from claude_memory.store import projections
from claude_memory.store.db import sql_string

OFFSET: Final = "task_projector"
_TOOLS: Final = ", ".join(sql_string(t) for t in sorted(TASK_TOOLS))  # the task tools, as an SQL list
IS_CALL: Final = f"type = 'tool_use' AND tool_name IN ({_TOOLS})"  # an event that is a task tool call, in SQL
MAX_WORDS: Final = 4_000  # of the words around a call looked at for blockers


@dataclass(frozen=True, slots=True)
class StoredCall:
    """A stored task tool call: what the projector folds."""

    event_id: int
    seq: int
    session_id: str
    agent_id: str | None
    project: str | None
    ts: datetime | None
    tool_name: str
    tool_use_id: str | None
    op: dict[str, Any] | None  # metadata.task; None for calls stored before it was kept
    source_path: str | None
    byte_start: int | None
    byte_end: int | None
    prompt: str = ""  # the user's prompt before it (same session), for blockers
    answer: str = ""  # Claude's words just before it in the same turn


def calls(con: duckdb.DuckDBPyConnection, after: int = 0) -> list[StoredCall]:
    """Every stored task tool call (or those stored after the seq ``after``), in the order they happened (time, then
    storage order)."""
    # The prompt and answer before each call are found by time without their text, then only theirs are read: joining
    # every prompt and answer of these sessions with its text took ~90 MB more memory at 100k events.
    rows = con.execute(
        f"""
        WITH c AS (SELECT id, seq, session_id, agent_id, project, ts, tool_name, tool_use_id, metadata, source_path,
                          byte_start, byte_end
                   FROM events WHERE {IS_CALL} AND seq > $after),
        said AS (SELECT id, session_id, ts, type FROM events
                 WHERE type IN ('user_prompt', 'agent_response') AND ts IS NOT NULL
                   AND session_id IN (SELECT session_id FROM c)),
        j AS (SELECT c.*, p.id AS prompt_id, CASE WHEN a.ts >= p.ts OR p.ts IS NULL THEN a.id END AS answer_id
              FROM c
              ASOF LEFT JOIN (SELECT * FROM said WHERE type = 'user_prompt') p
                ON p.session_id = c.session_id AND c.ts >= p.ts
              ASOF LEFT JOIN (SELECT * FROM said WHERE type = 'agent_response') a
                ON a.session_id = c.session_id AND c.ts >= a.ts),
        words AS (SELECT id, left(text, {MAX_WORDS}) AS text FROM events
                  WHERE id IN (SELECT prompt_id FROM j UNION ALL SELECT answer_id FROM j))
        SELECT j.id, j.seq, j.session_id, j.agent_id, j.project, j.ts, j.tool_name, j.tool_use_id,
               json_extract(j.metadata, '$.task'), j.source_path, j.byte_start, j.byte_end, p.text, a.text
        FROM j LEFT JOIN words p ON p.id = j.prompt_id LEFT JOIN words a ON a.id = j.answer_id
        ORDER BY j.ts NULLS LAST, j.seq
        """,
        {"after": after},
    ).fetchall()
    return [StoredCall(int(r[0]), int(r[1]), str(r[2]), r[3], r[4], r[5], str(r[6]), r[7], _json(r[8]), r[9], r[10],
                       r[11], str(r[12] or ""), str(r[13] or "")) for r in rows]  # fmt: skip


def _json(value: str | None) -> dict[str, Any] | None:
    found = json.loads(value) if value is not None else None
    return found if isinstance(found, dict) else None


@dataclass(frozen=True, slots=True)
class Correction:
    seq: int
    ts: datetime
    kind: str  # close | cancel | merge
    task_id: str
    into_id: str | None


def corrections(con: duckdb.DuckDBPyConnection) -> list[Correction]:
    rows = con.execute("SELECT seq, ts, kind, task_id, into_id FROM task_corrections ORDER BY seq").fetchall()
    return [Correction(int(r[0]), r[1], str(r[2]), str(r[3]), r[4]) for r in rows]


def add_correction(con: duckdb.DuckDBPyConnection, ts: datetime, kind: str, task_id: str, into_id: str | None) -> None:
    """Record a person's correction (the writer's), and have the projection folded again."""
    con.execute(
        "INSERT INTO task_corrections SELECT coalesce(max(seq), 0) + 1, ?, ?, ?, ? FROM task_corrections",
        [ts, kind, task_id, into_id],
    )
    _drop_board(con)


def newest_call(con: duckdb.DuckDBPyConnection) -> int:
    """The highest event seq among task tool calls (0: none): the projection is current while its offset is this
    (a forget resets the offset: :func:`forget`)."""
    row = con.execute(f"SELECT coalesce(max(seq), 0) FROM events WHERE {IS_CALL}").fetchone()
    return int(row[0]) if row else 0


def forget(con: duckdb.DuckDBPyConnection, doomed: str) -> None:
    """The writer's forget, before the events go: the task events of forgotten calls go now, and when the fold read
    any forgotten event (a call, or a prompt or answer of a session with calls: :func:`calls` reads their words), the
    projection is made again from the calls left at its next refresh. Otherwise it stays as it is: a fold from the
    start takes 52 s at a million events (300 s before titles were matched within core.tasks.MATCH_WINDOW)."""
    con.execute(f"DELETE FROM task_events WHERE source_event IN (SELECT id FROM {doomed})")
    read = con.execute(
        f"SELECT count(*) FROM events WHERE id IN (SELECT id FROM {doomed}) AND session_id IN "
        f"(SELECT session_id FROM events WHERE {IS_CALL})"
    ).fetchone()
    if read and read[0]:
        _drop_board(con)


def _drop_board(con: duckdb.DuckDBPyConnection) -> None:
    """The projection folded again from the start at its next refresh: its offset and its board go (the board holds
    the titles and words of the calls it folded)."""
    projections.reset(con, OFFSET)
    con.execute("DELETE FROM task_board")


def board(con: duckdb.DuckDBPyConnection, state: int) -> bytes | None:
    """The board kept with the projection (:func:`replace`), if it was folded to the offset ``state``."""
    row = con.execute("SELECT body FROM task_board WHERE state = ?", [state]).fetchone()
    return bytes(row[0]) if row else None


def board_state(con: duckdb.DuckDBPyConnection) -> int | None:
    """The offset of the board kept, without reading it."""
    row = con.execute("SELECT state FROM task_board").fetchone()
    return int(row[0]) if row else None


def keep_board(con: duckdb.DuckDBPyConnection, state: int, body: bytes) -> None:  # (the writer's)
    con.execute("DELETE FROM task_board")
    con.execute("INSERT INTO task_board VALUES (?, ?)", [state, body])


def known_keys(con: duckdb.DuckDBPyConnection, keys: Sequence[str]) -> set[str]:
    """Those of these task event dedupe keys that are stored."""
    if not keys:
        return set()
    rows = con.execute("SELECT dedupe_key FROM task_events WHERE list_contains(?, dedupe_key)", [list(keys)])
    return {str(r[0]) for r in rows.fetchall()}


def offset(con: duckdb.DuckDBPyConnection) -> int | None:
    return projections.offset(con, OFFSET)


EVENT_SCHEMA = pa.schema(
    [("seq", pa.int64()), ("dedupe_key", pa.string()), ("type", pa.string()), ("task_id", pa.string()),
     ("session_id", pa.string()), ("source_event", pa.int64()), ("ts", pa.timestamp("us")), ("payload", pa.string())]
)  # fmt: skip
ENTITY_SCHEMA = pa.schema(
    [("id", pa.string()), ("type", pa.string()), ("title", pa.string()), ("project", pa.string()),
     ("current_json", pa.string())]
)  # fmt: skip


def replace(
    con: duckdb.DuckDBPyConnection,
    events: pa.Table,
    entities: pa.Table,
    aliases: list[tuple[str, str]],
    edges: list[tuple[str, str, str]],
    state: int,
    board_body: bytes,
    *,
    add: bool = False,
) -> None:  # (the writer's)
    """The projection replaced (the writer's transaction): its entities, aliases and edges, and its task events, or,
    with ``add``, the task events that later calls made added to them; and the board they came from."""
    con.register("new_task_events", events)
    con.register("new_entities", entities)
    try:
        if not add:
            con.execute("DELETE FROM task_events")
        con.execute("INSERT INTO task_events SELECT seq, dedupe_key, type, task_id, session_id, source_event, ts, "
                    "payload::JSON FROM new_task_events")  # fmt: skip
        con.execute("DELETE FROM entities")
        con.execute("INSERT INTO entities SELECT id, type, title, project, current_json::JSON FROM new_entities")
        con.execute("DELETE FROM entity_aliases")
        con.register("new_aliases", _strings(("alias_key", "entity_id"), aliases))
        con.execute("INSERT INTO entity_aliases SELECT * FROM new_aliases")
        con.execute("DELETE FROM edges")
        con.register("new_edges", _strings(("src", "rel", "dst"), edges))
        con.execute("INSERT INTO edges SELECT * FROM new_edges")
        projections.set_offset(con, OFFSET, state)
        keep_board(con, state, board_body)
    finally:
        for name in ("new_task_events", "new_entities", "new_aliases", "new_edges"):
            con.unregister(name)


def _strings(names: tuple[str, ...], rows: Sequence[tuple[str, ...]]) -> pa.Table:
    """Rows of strings as an Arrow table with these column names."""
    schema = pa.schema([(name, pa.string()) for name in names])
    return pa.table({name: [row[i] for row in rows] for i, name in enumerate(names)}, schema=schema)


# ---------------------------------------------------------------------- reads for the faces


@dataclass(frozen=True, slots=True)
class TaskRow:
    id: str
    title: str
    project: str | None
    state: dict[str, Any]
    first_ts: datetime | None
    last_ts: datetime | None
    last_citation: str | None = None  # of the call that last changed it


def tasks(
    con: duckdb.DuckDBPyConnection,
    project: str | None,
    statuses: tuple[str, ...],
    task_id: str | None = None,
    *,
    status_order: Sequence[str] = (),
    limit: int | None = None,
) -> list[TaskRow]:
    """Tasks (of ``project``, in ``statuses``; only ``task_id`` when given): by their status in ``status_order``
    (others after), then the most recently changed first; the first ``limit``."""
    where, params = ["e.type = 'task'"], []
    if task_id:
        where.append("e.id = ?")
        params.append(task_id)
    if project:
        where.append("e.project = ?")
        params.append(project)
    if statuses:
        where.append(f"json_extract_string(e.current_json, '$.status') IN ({', '.join('?' for _ in statuses)})")
        params += list(statuses)
    whens = " ".join(f"WHEN ? THEN {n}" for n in range(len(status_order)))
    rank = f"CASE json_extract_string(current_json, '$.status') {whens} ELSE {len(status_order)} END, " if whens else ""
    rows = con.execute(
        f"""
        SELECT * FROM (
            SELECT e.id, e.title, e.project, e.current_json, min(t.ts) AS first_ts, max(t.ts) AS last_ts,
                   arg_max(ev.citation, t.seq)
            FROM entities e LEFT JOIN task_events t ON t.task_id = e.id LEFT JOIN events ev ON ev.id = t.source_event
            WHERE {" AND ".join(where)}
            GROUP BY ALL
        ) ORDER BY {rank}last_ts DESC NULLS LAST, id {"LIMIT ?" if limit is not None else ""}
        """,
        [*params, *status_order, *([limit] if limit is not None else [])],
    ).fetchall()
    return [TaskRow(str(r[0]), str(r[1]), r[2], orjson.loads(r[3]), r[4], r[5], r[6]) for r in rows]


def entity(con: duckdb.DuckDBPyConnection, entity_id: str) -> tuple[str, str, str, str | None, dict[str, Any]] | None:
    """(id, type, title, project, state) of an entity, found by its id or an alias."""
    row = con.execute(
        "SELECT e.id, e.type, e.title, e.project, e.current_json FROM entities e WHERE e.id = ? OR e.id = "
        "(SELECT entity_id FROM entity_aliases WHERE alias_key = ?) ORDER BY e.id = ? DESC LIMIT 1",
        [entity_id, entity_id, entity_id],
    ).fetchone()
    return (str(row[0]), str(row[1]), str(row[2]), row[3], json.loads(row[4])) if row else None


def history(con: duckdb.DuckDBPyConnection, task_id: str) -> list[dict[str, Any]]:
    """A task's events in order, each with the citation of the call it came from."""
    rows = con.execute(
        "SELECT t.type, t.ts, t.session_id, t.payload, ev.citation FROM task_events t "
        "LEFT JOIN events ev ON ev.id = t.source_event WHERE t.task_id = ? ORDER BY t.seq",
        [task_id],
    ).fetchall()
    return [{"type": r[0], "ts": r[1], "session_id": r[2], "payload": json.loads(r[3]), "citation": r[4]} for r in rows]


def count_events(con: duckdb.DuckDBPyConnection) -> int:
    row = con.execute("SELECT count(*) FROM task_events").fetchone()
    return int(row[0]) if row else 0


def conditions(
    con: duckdb.DuckDBPyConnection, project: str | None
) -> list[tuple[str, str, str | None, dict[str, Any], list[str]]]:
    """Conditions (blockers that are not tasks or artifacts): (id, text, project, state, the tasks they block or may
    block), newest first."""
    where, params = ("AND e.project = ?", [project]) if project else ("", [])
    rows = con.execute(
        f"""
        SELECT e.id, e.title, e.project, e.current_json, list(DISTINCT g.src) FILTER (WHERE g.src IS NOT NULL)
        FROM entities e LEFT JOIN edges g ON g.dst = e.id AND g.rel IN ('blocked_by', 'blocked_by_suggested')
        WHERE e.type = 'condition' {where}
        GROUP BY ALL ORDER BY e.id
        """,
        params,
    ).fetchall()
    return [(str(r[0]), str(r[1]), r[2], json.loads(r[3]), sorted(r[4] or [])) for r in rows]
