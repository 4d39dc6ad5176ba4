"""The embedding outbox's reads: the events due for embedding, the vectors already stored for chunk
texts, and the queue's counts. An event is queued in the transaction that stores it; the writer
(:meth:`claude_memory.store.writer.EventWriter.add_embeddings`, ``embedding_failed``) takes it off the
queue with its chunks, or marks a failed attempt."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

import duckdb
import pyarrow as pa

from claude_memory.store.arrow import arrow_view
from claude_memory.store.db import utc_now
from claude_memory.store.queries import id_list

MAX_ATTEMPTS: Final = 5  # after this many failed attempts an event stays queued as failed
BY_ID: Final = 1_000  # a queue of at most this many due events is read by id (10-16 ms for 1,000 at a million events)
# A missing table (a read-only store from before migration 0011): DuckDB then looks for a Python object of that
# name in the caller (a replacement scan), and finding this module's function raises InvalidInputException.
_NO_TABLE: Final = (duckdb.CatalogException, duckdb.InvalidInputException)


@dataclass(frozen=True, slots=True)
class QueuedEvent:
    event_id: int
    text: str
    type: str


@dataclass(frozen=True, slots=True)
class Chunk:
    """One chunk of an event's text, by the hash of the model id and the text (its vector's key)."""

    event_id: int
    chunk_no: int
    content_hash: str


@dataclass(frozen=True, slots=True)
class QueueCounts:
    pending: int
    failed: int
    embedded_events: int
    vectors: int


def due(con: duckdb.DuckDBPyConnection, limit: int) -> list[QueuedEvent]:
    """Up to ``limit`` queued events whose retry time has come, oldest stored first. A short queue (a turn's events) is
    looked up by id, through the primary key's index: joined, the events were scanned whole (150 ms at a million
    events, after every turn; by id, 1-6 ms)."""
    ready = "attempts < ? AND (not_before IS NULL OR not_before <= ?)"
    params = [MAX_ATTEMPTS, utc_now()]
    queued = con.execute(f"SELECT event_id FROM embed_queue WHERE {ready} LIMIT ?", [*params, BY_ID + 1]).fetchall()
    if len(queued) <= BY_ID:
        if not queued:
            return []
        literal = id_list(r[0] for r in queued)
        found = con.execute(f"SELECT seq, id, text, type FROM events WHERE id IN ({literal})").fetchall()
        rows = [r[1:] for r in sorted(found)[:limit]]
    else:
        rows = con.execute(
            f"SELECT q.event_id, e.text, e.type FROM embed_queue q JOIN events e ON e.id = q.event_id WHERE {ready} "
            "ORDER BY e.seq LIMIT ?",
            [*params, limit],
        ).fetchall()
    return [QueuedEvent(int(r[0]), str(r[1]), str(r[2])) for r in rows]


def known_vectors(con: duckdb.DuckDBPyConnection, hashes: list[str]) -> dict[str, list[float]]:
    """The stored vectors of those chunk hashes that have one."""
    with arrow_view(con, "wanted_hashes", pa.table({"h": pa.array(hashes, pa.string())})):
        rows = con.execute(
            "SELECT content_hash, vector FROM vectors WHERE content_hash IN (SELECT h FROM wanted_hashes)"
        ).fetchall()
    return {str(r[0]): r[1] for r in rows}


def queue_counts(con: duckdb.DuckDBPyConnection) -> QueueCounts:
    def one(sql: str, *params: object) -> int:
        row = con.execute(sql, list(params)).fetchone()
        return int(row[0]) if row else 0

    return QueueCounts(
        pending=one("SELECT count(*) FROM embed_queue WHERE attempts < ?", MAX_ATTEMPTS),
        failed=one("SELECT count(*) FROM embed_queue WHERE attempts >= ?", MAX_ATTEMPTS),
        embedded_events=one("SELECT count(DISTINCT event_id) FROM chunks"),
        vectors=one("SELECT count(*) FROM vectors"),
    )


@dataclass(frozen=True, slots=True)
class NextModel:
    """A change of embedding model in progress (``next_model``), with how far it got."""

    name: str
    model_id: str
    path: str
    source: str
    requested: str
    done_seq: int
    last_error: str | None
    events: int  # in the store
    done: int  # of them, embedded under the next model

    def to_json(self) -> dict[str, object]:
        return {"requested": self.requested, "name": self.name, "model_id": self.model_id, "path": self.path,
                "events": self.events, "done": self.done, "error": self.last_error}  # fmt: skip


def next_model(con: duckdb.DuckDBPyConnection) -> NextModel | None:
    try:
        row = con.execute(
            "SELECT name, model_id, path, source, requested, done_seq, last_error, (SELECT count(*) FROM events), "
            "(SELECT count(*) FROM events WHERE seq <= n.done_seq) FROM next_model n"
        ).fetchone()
    except _NO_TABLE:  # a read-only store opened before its migration to 0011
        return None
    if row is None:
        return None
    return NextModel(str(row[0]), str(row[1]), str(row[2]), str(row[3]), str(row[4]), int(row[5]),
                     row[6], int(row[7]), int(row[8]))  # fmt: skip


def next_due(con: duckdb.DuckDBPyConnection, after_seq: int, limit: int) -> tuple[list[QueuedEvent], int]:
    """Up to ``limit`` events past ``after_seq``, in store order, for the model switch; and the highest seq
    among them (``after_seq`` when there are none)."""
    rows = con.execute(
        "SELECT id, text, type, seq FROM events WHERE seq > ? ORDER BY seq LIMIT ?", [after_seq, limit]
    ).fetchall()
    return [QueuedEvent(int(r[0]), str(r[1]), str(r[2])) for r in rows], (int(rows[-1][3]) if rows else after_seq)


def switching(con: duckdb.DuckDBPyConnection) -> bool:
    """Whether a change of model is in progress (reads nothing else: cheap when a store is opened)."""
    try:
        return con.execute("SELECT EXISTS (SELECT 1 FROM next_model)").fetchone() == (True,)
    except _NO_TABLE:  # a read-only store opened before its migration to 0011
        return False
