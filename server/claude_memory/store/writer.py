"""The single writer: every write to a running store goes through :class:`EventWriter`.

It appends events with their keyword postings, embedding-queue rows, sessions, subagents and checkpoints
atomically; stores embedded chunks and their vectors (or marks a failed attempt); records citation uses
and session summaries; rebuilds the project registry; merges and repairs the keyword index (whose
statements live in :mod:`claude_memory.store.keyword`, called only from here); and forgets events. Only
opening the store writes without it (:mod:`claude_memory.store.db`: migrations, citations for events
stored before they existed, and the file rewrite that finishes a forget).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Final

import duckdb
import numpy as np
import pyarrow as pa

from claude_memory.core.events import ParsedEvent
from claude_memory.core.filters import ForgetSelector
from claude_memory.store import arrow, edits, endless, insights, keyword, learning, tasks, traits
from claude_memory.store.arrow import arrow_view, id_table
from claude_memory.store.checkpoints import Checkpoint
from claude_memory.store.citations import allocate_citations
from claude_memory.store.db import transaction, utc_now
from claude_memory.store.embedding_queue import Chunk
from claude_memory.store.forget import selected_ids_sql
from claude_memory.store.learning import Use
from claude_memory.store.ledger import ForgetLedger

# The vectors some chunk (current or a model switch's) still uses.
_CHUNK_HASHES: Final = "SELECT content_hash FROM chunks UNION ALL SELECT content_hash FROM next_chunks"


@dataclass(slots=True)
class SessionInfo:
    session_id: str
    project: str | None
    cwd: str | None
    transcript: str | None
    title: str | None = None
    git_branch: str | None = None
    cc_version: str | None = None


@dataclass(slots=True)
class SubagentInfo:
    session_id: str
    agent_id: str
    agent_type: str | None
    description: str | None
    transcript: str


_INSERT_EVENTS = f"""
    INSERT INTO events (id, seq, dedupe_key, type, session_id, project, agent_id, is_sidechain, ts, text,
                        message_id, tool_name, tool_use_id, files, cwd, git_branch, source_path, line_start,
                        line_end, byte_start, byte_end, source_uuid, metadata, kw_len, ingested_at, citation,
                        is_question, names_time)
    SELECT b.id, (SELECT coalesce(max(seq), 0) FROM events) + row_number() OVER (ORDER BY b.pos),
    b.dedupe_key, b.type, b.session_id, b.project, b.agent_id, b.is_sidechain,
    TRY_CAST(b.ts AS TIMESTAMPTZ)::TIMESTAMP, b.text, b.message_id, b.tool_name, b.tool_use_id,
    b.files, b.cwd, b.git_branch, b.source_path, b.line_start, b.line_end, b.byte_start,
    b.byte_end, b.source_uuid, b.metadata::JSON, coalesce(l.dl, 0), ?, c.citation,
    {traits.is_question("b.text")}, {traits.names_time("b.text")}
    FROM batch_new b
    JOIN batch_citations c ON c.pos = b.pos
    LEFT JOIN batch_lengths l ON l.event_id = b.id
    ORDER BY b.pos
"""


class Changes:
    """Counts this process's writes that can change what a search finds (events added or forgotten,
    vectors added). The process that opens the store read-write is its only writer (DuckDB locks the file),
    so while the count stands still the store has not changed, and search need not ask DuckDB."""

    __slots__ = ("count",)

    def __init__(self) -> None:
        self.count = 0

    def bump(self) -> None:
        self.count += 1


class EventWriter:
    """Owns every write to the store. Not thread-safe: use it from one thread."""

    def __init__(
        self, con: duckdb.DuckDBPyConnection, changes: Changes | None = None, ledger: ForgetLedger | None = None
    ) -> None:
        self.con = con
        self.ledger = ledger  # where forgets are recorded outside the store (store.ledger)
        self.changes = changes if changes is not None else Changes()

    def append(
        self,
        events: Sequence[ParsedEvent],
        *,
        checkpoints: Iterable[Checkpoint] = (),
        sessions: Iterable[SessionInfo] = (),
        subagents: Iterable[SubagentInfo] = (),
    ) -> Counter[str]:
        """Store new events (duplicates and forgotten events are skipped) with their checkpoints,
        in one transaction. Returns how many events of each type were new."""
        unique: dict[str, ParsedEvent] = {}
        for event in events:
            unique.setdefault(event.dedupe_key, event)
        con = self.con
        now = utc_now()
        con.register("batch", arrow.event_table(list(unique.values())))
        con.register("batch_edits", edits.edit_table(list(unique.values())))
        try:
            with transaction(con):
                con.execute(
                    "CREATE OR REPLACE TEMP TABLE batch_new AS SELECT b.* FROM batch b "
                    "WHERE NOT EXISTS (SELECT 1 FROM events e WHERE e.id = b.id) "
                    "AND NOT EXISTS (SELECT 1 FROM tombstones t WHERE t.event_id = b.id)"
                )
                keyword.stage_tokens(con, "batch_new")
                rows = con.execute("SELECT pos, id FROM batch_new ORDER BY pos").fetchall()
                positions, new_ids = [int(r[0]) for r in rows], [int(r[1]) for r in rows]
                con.register(
                    "batch_citations",
                    pa.table(
                        {"pos": positions, "citation": allocate_citations(con, new_ids)},
                        schema=pa.schema([("pos", pa.int64()), ("citation", pa.string())]),
                    ),
                )
                con.execute(_INSERT_EVENTS, [now])
                keyword.index_staged(con)
                con.execute("INSERT INTO embed_queue SELECT id, 0, NULL, NULL FROM batch_new")
                edits.insert_staged(con, "batch_edits", "batch_new")
                inserted = Counter(
                    {
                        str(t): int(n)
                        for t, n in con.execute("SELECT type, count(*) FROM batch_new GROUP BY type").fetchall()
                    }
                )
                self._upsert_sessions(list(sessions))
                self._upsert_subagents(list(subagents))
                self._save_checkpoints(list(checkpoints), now)
                con.execute("DROP TABLE batch_new")
        finally:
            self.changes.bump()
            for name in ("batch", "batch_edits", "batch_citations", "session_rows", "agent_rows", "checkpoint_rows"):
                con.unregister(name)
        return inserted

    def _upsert_sessions(self, sessions: list[SessionInfo]) -> None:
        """Insert or update sessions that have events (a session all of whose events were forgotten does not
        come back, title and all); their time span grows with the events just inserted."""
        if not sessions:
            return
        self.con.register("session_rows", arrow.dataclass_table(sessions, arrow.SESSION_SCHEMA))
        self.con.execute(
            """
            INSERT INTO sessions
            SELECT s.session_id, s.project, s.cwd, s.title, s.git_branch, s.cc_version, s.transcript,
                   t.first_ts, t.last_ts
            FROM session_rows s LEFT JOIN (
                SELECT session_id, min(TRY_CAST(ts AS TIMESTAMPTZ)::TIMESTAMP) AS first_ts,
                       max(TRY_CAST(ts AS TIMESTAMPTZ)::TIMESTAMP) AS last_ts
                FROM batch_new GROUP BY session_id
            ) t USING (session_id)
            WHERE s.session_id IN (SELECT session_id FROM events)
            ON CONFLICT (session_id) DO UPDATE SET
                project = coalesce(sessions.project, excluded.project),
                cwd = coalesce(sessions.cwd, excluded.cwd),
                title = coalesce(excluded.title, sessions.title),
                git_branch = coalesce(excluded.git_branch, sessions.git_branch),
                cc_version = coalesce(excluded.cc_version, sessions.cc_version),
                transcript = coalesce(sessions.transcript, excluded.transcript),
                first_ts = least(sessions.first_ts, excluded.first_ts),
                last_ts = greatest(sessions.last_ts, excluded.last_ts)
            """
        )

    def _upsert_subagents(self, subagents: list[SubagentInfo]) -> None:
        if not subagents:
            return
        self.con.register("agent_rows", arrow.dataclass_table(subagents, arrow.SUBAGENT_SCHEMA))
        self.con.execute(
            "INSERT OR REPLACE INTO subagents SELECT * FROM agent_rows "
            "WHERE session_id IN (SELECT session_id FROM sessions)"
        )

    def _save_checkpoints(self, checkpoints: list[Checkpoint], now: datetime) -> None:
        if not checkpoints:
            return
        self.con.register("checkpoint_rows", arrow.dataclass_table(checkpoints, arrow.CHECKPOINT_SCHEMA))
        self.con.execute("INSERT OR REPLACE INTO ingest_checkpoints SELECT *, ? FROM checkpoint_rows", [now])

    def refresh_projects(self) -> None:
        """Rebuild the project registry from the sessions (first and last activity per project).
        Once per import rather than per batch: it is derived, and the next import repairs a lag."""
        with transaction(self.con):
            self.con.execute("DELETE FROM projects")
            self.con.execute(
                "INSERT INTO projects SELECT project, min(first_ts), max(last_ts) FROM sessions "
                "WHERE project IS NOT NULL GROUP BY project"
            )

    def merge_keyword_index(self, *, force: bool = False) -> int:
        if force or keyword.delta_rows(self.con) >= keyword.MERGE_THRESHOLD_ROWS:
            return keyword.merge(self.con)
        return 0

    def drop_keyword_orphans(self) -> int:
        """Delete keyword postings an interrupted write left without their events; returns how many."""
        return keyword.drop_orphans(self.con)

    def record_uses(self, uses: Sequence[Use]) -> None:
        """Count one use of each memory (its access metrics, :mod:`claude_memory.store.learning`), in one
        statement: each costs a commit."""
        if uses:
            learning.record_uses(self.con, uses, utc_now())

    def save_levels(self, levels: Sequence[tuple[int, int, bool]]) -> None:
        """The graduation worker's verdicts: ``(event_id, level, promoted)`` per memory evaluated."""
        learning.save_levels(self.con, levels, utc_now())

    def add_embeddings(
        self, event_ids: Sequence[int], chunks: Sequence[Chunk], new_hashes: Sequence[str], new_vectors: np.ndarray
    ) -> list[int]:
        """In one transaction: store the vectors of chunk texts not embedded before (``new_vectors`` row i
        belongs to ``new_hashes[i]``), the chunks of ``event_ids`` under newly allocated index labels, and
        take those events off the embedding queue. Returns the chunks' labels, in order."""
        con = self.con
        with transaction(con):
            labels = self._add_chunks("chunks", chunks, new_hashes, new_vectors)
            with arrow_view(con, "done_events", id_table(list(event_ids))):
                con.execute("DELETE FROM embed_queue WHERE event_id IN (SELECT id FROM done_events)")
        self.changes.bump()
        return labels

    def _add_chunks(self, table: str, chunks: Sequence[Chunk], hashes: Sequence[str], vectors: np.ndarray) -> list[int]:
        """Inside the caller's transaction: the new vectors, and the chunks into ``table`` under new index labels
        (labels only grow); returns the labels."""
        con = self.con
        row = con.execute("SELECT next_label FROM label_counter").fetchone()
        first = int(row[0]) if row else 0
        con.execute("UPDATE label_counter SET next_label = ?", [first + len(chunks)])
        labels = list(range(first, first + len(chunks)))
        if hashes:
            with arrow_view(con, "new_vectors", arrow.vector_table(hashes, vectors)):
                con.execute("INSERT OR IGNORE INTO vectors SELECT content_hash, vector FROM new_vectors")
        with arrow_view(con, "new_chunks", arrow.chunk_table(labels, chunks)):
            con.execute(f"INSERT INTO {table} SELECT * FROM new_chunks")
        return labels

    def start_switch(self, name: str, model_id: str, path: str, source: str, requested: str) -> None:
        """Begin embedding every event again under the next model (replacing any switch in progress)."""
        with transaction(self.con):
            self._drop_switch()
            self.con.execute(
                "INSERT INTO next_model VALUES (?, ?, ?, ?, ?, ?, 0, NULL)",
                [name, model_id, path, source, requested, utc_now()],
            )

    def add_next_embeddings(
        self, chunks: Sequence[Chunk], new_hashes: Sequence[str], new_vectors: np.ndarray, done_seq: int
    ) -> list[int]:
        """As :meth:`add_embeddings`, for the model switch: the chunks go to ``next_chunks`` and the events up to
        ``done_seq`` are done. Returns the chunks' labels."""
        con = self.con
        with transaction(con):
            labels = self._add_chunks("next_chunks", chunks, new_hashes, new_vectors)
            con.execute("UPDATE next_model SET done_seq = ?, last_error = NULL", [done_seq])
        self.changes.bump()
        return labels

    def switch_failed(self, reason: str) -> None:
        self.con.execute("UPDATE next_model SET last_error = ?", [reason])

    def finish_switch(self, fingerprint: str | None) -> bool:
        """Once every event has its next chunks: in one transaction they replace the current ones, the current
        model's vectors go, the queued events are done, and the next model is recorded as the store's. False (and
        nothing changed) when events remain."""
        con = self.con
        row = con.execute(  # (this is the store's one writer: nothing is added between this and the commit)
            "SELECT name, model_id, source, path, done_seq >= (SELECT coalesce(max(seq), 0) FROM events) "
            "FROM next_model"
        ).fetchone()
        if row is None or not row[4]:
            return False
        with transaction(con):
            con.execute("DELETE FROM chunks")
            con.execute("INSERT INTO chunks SELECT * FROM next_chunks")
            con.execute("DELETE FROM embed_queue")  # every event is embedded under the next model
            self._drop_switch()
            con.execute("DELETE FROM embedding_model")
            con.execute("INSERT INTO embedding_model VALUES (?, ?, ?, ?, ?, ?)",
                        [row[0], row[1], row[2], row[3], fingerprint, utc_now()])  # fmt: skip
        self.changes.bump()
        return True

    def cancel_switch(self) -> None:
        with transaction(self.con):
            self._drop_switch()
        self.changes.bump()

    def _drop_switch(self) -> None:
        self.con.execute("DELETE FROM next_model")
        self.con.execute("DELETE FROM next_chunks")
        self.con.execute(f"DELETE FROM vectors WHERE content_hash NOT IN ({_CHUNK_HASHES})")

    def embedding_failed(self, event_ids: Sequence[int], reason: str) -> None:
        """Count a failed embedding attempt for these queued events and back their retry off
        exponentially (30 s, 1 min, 2 min, ...)."""
        con = self.con
        with arrow_view(con, "failed_events", id_table(list(event_ids))), transaction(con):
            con.execute(
                "UPDATE embed_queue SET attempts = attempts + 1, last_error = ?, "
                "not_before = ? + to_seconds(30 * pow(2, attempts)::BIGINT) "
                "WHERE event_id IN (SELECT id FROM failed_events)",
                [reason, utc_now()],
            )

    def seed_tombstones(self, forgotten: dict[int, str | None]) -> int:
        """Tombstone every forgotten event (id → citation) in a fresh store, before any import (``repair``);
        returns how many."""
        if not forgotten:
            return 0
        table = pa.table(
            {"event_id": list(forgotten), "citation": list(forgotten.values())},
            schema=pa.schema([("event_id", pa.int64()), ("citation", pa.string())]),
        )
        self.con.register("ledger_rows", table)
        try:
            self.con.execute(
                "INSERT OR IGNORE INTO tombstones (event_id, forgotten_at, citation) "
                "SELECT event_id, ?, citation FROM ledger_rows",
                [utc_now()],
            )
        finally:
            self.con.unregister("ledger_rows")
        self.changes.bump()
        return len(forgotten)

    def record_model(self, name: str, model_id: str, source: str, path: str | None, fingerprint: str | None) -> None:
        """The embedding model the store's vectors are made with, replacing the one recorded before."""
        with transaction(self.con):
            self.con.execute("DELETE FROM embedding_model")
            self.con.execute(
                "INSERT INTO embedding_model VALUES (?, ?, ?, ?, ?, ?)",
                [name, model_id, source, path, fingerprint, utc_now()],
            )

    def backfill_edits(self, rows: pa.Table) -> None:
        """Store the edit records read again for calls stored before they existed, and mark that done."""
        with transaction(self.con):
            edits.finish_backfill(self.con, rows)
        self.changes.bump()

    def write_tasks(
        self,
        events: pa.Table,
        entities: pa.Table,
        aliases: list[tuple[str, str]],
        edges: list[tuple[str, str, str]],
        state: int,
        board: bytes,
        *,
        add: bool = False,
    ) -> None:
        """Replace the task projection (service/tasks.py) and the board it came from in one transaction; with
        ``add``, ``events`` are added to the stored task events instead of replacing them."""
        with transaction(self.con):
            tasks.replace(self.con, events, entities, aliases, edges, state, board, add=add)

    def keep_task_board(self, state: int, board: bytes) -> None:
        """The board of a projection that was current already (folded from the start, nothing new to write)."""
        with transaction(self.con):
            tasks.keep_board(self.con, state, board)

    def add_insights(self, rows: pa.Table, after: int, seq: int) -> None:
        """What the prompts after the offset ``after`` up to ``seq`` say (service/insights.py), with the projection's
        offset, in one transaction."""
        with transaction(self.con):
            insights.add(self.con, rows, after, seq)

    def reset_insights(self) -> None:
        with transaction(self.con):
            insights.reset(self.con)

    def reread_insights(self) -> None:
        with transaction(self.con):
            insights.reread(self.con)

    def set_endless(self, key: str, value: object) -> None:
        """Endless mode's mode or settings (a person's)."""
        endless.set_config(self.con, key, value)

    def add_endless(self, working: pa.Table, continuity: pa.Table, seq: int, max_events: int) -> None:
        """New events into the working set (cut to size, expired rows out) and the prompts' continuity, with the
        offset moved to ``seq``, in one transaction."""
        with transaction(self.con):
            endless.add_working(self.con, working, max_events, utc_now())
            endless.add_continuity(self.con, continuity)
            endless.set_offset(self.con, seq)

    def add_consolidated(self, rows: Sequence[tuple[object, ...]], pruned: Sequence[int], before: datetime) -> None:
        """Consolidated memories, and their events older than ``before`` out of the working set."""
        with transaction(self.con):
            endless.add_consolidated(self.con, rows)
            endless.prune(self.con, pruned, before)

    def expire_working_set(self) -> None:
        endless.expire(self.con, utc_now())

    def mark_insight(self, insight_id: str, mark: str | None) -> None:
        """A person's mark on an insight (pin, forget) or none."""
        insights.set_mark(self.con, insight_id, mark, utc_now())

    def correct_task(self, kind: str, task_id: str, into_id: str | None) -> None:
        """Record a person's correction of a task (close, cancel, merge); the next refresh folds it in."""
        with transaction(self.con):
            tasks.add_correction(self.con, utc_now(), kind, task_id, into_id)

    def end_session(self, session_id: str, reason: str | None, summary: str) -> None:
        """Record (or replace) the rule-based summary written when Claude Code ends a session."""
        self.con.execute(
            "INSERT OR REPLACE INTO session_ends (session_id, ended_at, reason, summary) VALUES (?, ?, ?, ?)",
            [session_id, utc_now(), reason, summary],
        )

    def forget(self, selector: ForgetSelector) -> tuple[int, list[int]]:
        """Delete the events ``selector`` matches from the store, the keyword index and the vectors,
        leaving a content-free tombstone per event so a re-import does not bring them back. Returns how
        many events went, and the vector-index labels of their chunks."""
        ids_sql, params = selected_ids_sql(selector)
        con = self.con
        now = utc_now()
        with transaction(con):
            con.execute(f"CREATE OR REPLACE TEMP TABLE doomed AS SELECT DISTINCT id FROM ({ids_sql})", list(params))
            row = con.execute("SELECT count(*) FROM doomed").fetchone()
            count = int(row[0]) if row else 0
            if count and self.ledger is not None:  # first, outside the store: a repair must not bring them back
                doomed = con.execute(
                    "SELECT d.id, e.citation FROM doomed d LEFT JOIN events e ON e.id = d.id ORDER BY d.id"
                ).fetchall()
                self.ledger.append(selector, [(int(r[0]), r[1]) for r in doomed])
            keyword.delete(con, "doomed")
            con.execute(
                "INSERT OR IGNORE INTO tombstones (event_id, forgotten_at, citation) "
                "SELECT d.id, ?, e.citation FROM doomed d LEFT JOIN events e ON e.id = d.id",
                [now],
            )
            con.execute("DELETE FROM embed_queue WHERE event_id IN (SELECT id FROM doomed)")
            edits.delete(con, "doomed")
            tasks.forget(con, "doomed")
            learning.forget(con, "doomed")
            insights.forget(con, "doomed")
            endless.forget(con, "doomed")
            # A session summary quotes its prompts: it goes with any forgotten event of its session.
            con.execute(
                "DELETE FROM session_ends WHERE session_id IN "
                "(SELECT DISTINCT e.session_id FROM doomed d JOIN events e ON e.id = d.id)"
            )
            labels = [  # (a model switch's chunks too: the next index forgets them as well)
                int(r[0])
                for r in con.execute(
                    "SELECT label FROM chunks WHERE event_id IN (SELECT id FROM doomed) "
                    "UNION ALL SELECT label FROM next_chunks WHERE event_id IN (SELECT id FROM doomed)"
                ).fetchall()
            ]
            con.execute("DELETE FROM chunks WHERE event_id IN (SELECT id FROM doomed)")
            con.execute("DELETE FROM next_chunks WHERE event_id IN (SELECT id FROM doomed)")
            con.execute(f"DELETE FROM vectors WHERE content_hash NOT IN ({_CHUNK_HASHES})")
            con.execute("DELETE FROM events WHERE id IN (SELECT id FROM doomed)")
            if count:
                con.execute("INSERT OR REPLACE INTO store_flags VALUES ('rewrite_pending', ?)", [now])
            con.execute("DELETE FROM sessions WHERE session_id NOT IN (SELECT DISTINCT session_id FROM events)")
            con.execute(
                "UPDATE sessions SET first_ts = t.first_ts, last_ts = t.last_ts FROM "
                "(SELECT session_id, min(ts) AS first_ts, max(ts) AS last_ts FROM events GROUP BY 1) t "
                "WHERE sessions.session_id = t.session_id"
            )
            con.execute("DELETE FROM subagents WHERE session_id NOT IN (SELECT session_id FROM sessions)")
            con.execute("DROP TABLE doomed")
        self.changes.bump()  # (a failed transaction rolled back: nothing changed)
        return count, labels
