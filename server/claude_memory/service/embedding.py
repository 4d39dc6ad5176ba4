"""The embedding worker: drains the ``embed_queue`` outbox into vectors, chunks and the hnswlib index.

Single writer: it uses the store's connection and commits each batch (vectors, chunks, queue rows
removed) in one transaction, then adds the batch to the index. A process killed at any point leaves
either the queue rows (the batch is redone) or committed chunks the index lacks (added at the next
load): every event ends up embedded exactly once. A failing batch is retried with backoff; after
MAX_ATTEMPTS the events stay queued as failed and ``status`` says so.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import duckdb
import numpy as np
import pyarrow as pa

from claude_memory.core.chunks import MAX_CHUNKS, MAX_TOOL_CHUNKS, chunk_hash, chunk_text
from claude_memory.core.events import TOOL_USE
from claude_memory.store.arrow import arrow_view, id_table
from claude_memory.store.db import transaction, utc_now
from claude_memory.store.embedder import Embedder
from claude_memory.store.vector_index import VectorIndex
from claude_memory.store.writer import EventWriter

MAX_ATTEMPTS = 5
BATCH_EVENTS = 512


@dataclass
class QueueStatus:
    pending: int
    failed: int
    embedded_events: int
    vectors: int
    index_live: int

    def to_json(self) -> dict[str, int]:
        return {"pending": self.pending, "failed": self.failed, "embedded_events": self.embedded_events,
                "vectors": self.vectors, "index_live": self.index_live}  # fmt: skip


class EmbeddingWorker:
    def __init__(self, writer: EventWriter, embedder: Embedder, index: VectorIndex) -> None:
        self.writer = writer
        self.embedder = embedder
        self.index = index

    @property
    def con(self) -> duckdb.DuckDBPyConnection:
        return self.writer.con

    def status(self) -> QueueStatus:
        def one(sql: str, *params: object) -> int:
            row = self.con.execute(sql, list(params)).fetchone()
            return int(row[0]) if row else 0

        return QueueStatus(
            pending=one("SELECT count(*) FROM embed_queue WHERE attempts < ?", MAX_ATTEMPTS),
            failed=one("SELECT count(*) FROM embed_queue WHERE attempts >= ?", MAX_ATTEMPTS),
            embedded_events=one("SELECT count(DISTINCT event_id) FROM chunks"),
            vectors=one("SELECT count(*) FROM vectors"),
            index_live=self.index.live_count,
        )

    def run(
        self,
        progress: Callable[[int], None] | None = None,
        *,
        batch: int = BATCH_EVENTS,
        max_batches: int | None = None,
        save: bool = True,
    ) -> int:
        """Embed everything due (or at most ``max_batches`` batches, so that a service can answer requests
        in between); returns how many events were embedded. ``save`` writes the index file at the end."""
        done = 0
        batches = 0
        while max_batches is None or batches < max_batches:
            batches += 1
            rows = self.con.execute(
                "SELECT q.event_id, e.text, e.type FROM embed_queue q JOIN events e ON e.id = q.event_id "
                "WHERE q.attempts < ? AND (q.not_before IS NULL OR q.not_before <= ?) ORDER BY e.seq LIMIT ?",
                [MAX_ATTEMPTS, utc_now(), batch],
            ).fetchall()
            if not rows:
                break
            try:
                self._embed_batch([int(r[0]) for r in rows], [str(r[1]) for r in rows], [str(r[2]) for r in rows])
            except Exception as exc:  # the model or the store failed for this batch: back off, go on
                self._failed([int(r[0]) for r in rows], exc)
                continue
            done += len(rows)
            if progress:
                progress(len(rows))
        if save:
            self.index.save()
        return done

    def _embed_batch(self, event_ids: list[int], texts: list[str], types: list[str]) -> None:
        model_id = self.embedder.model_id
        pieces: list[tuple[int, int, str, str]] = []  # event id, chunk no, hash, text
        for event_id, text, kind in zip(event_ids, texts, types, strict=True):
            limit = MAX_TOOL_CHUNKS if kind == TOOL_USE else MAX_CHUNKS
            for no, chunk in enumerate(chunk_text(text, limit)):
                pieces.append((event_id, no, chunk_hash(model_id, chunk), chunk))
        hashes = sorted({p[2] for p in pieces})
        con = self.con
        with arrow_view(con, "wanted_hashes", pa.table({"h": pa.array(hashes, pa.string())})):
            known = {str(r[0]): r[1] for r in con.execute(
                "SELECT content_hash, vector FROM vectors WHERE content_hash IN (SELECT h FROM wanted_hashes)"
            ).fetchall()}  # fmt: skip
        todo: dict[str, str] = {}
        for _, _, digest, chunk in pieces:
            if digest not in known:
                todo.setdefault(digest, chunk)
        new_vectors = self.embedder.embed(list(todo.values())) if todo else np.zeros((0, 0), dtype=np.float32)
        by_hash = dict(zip(todo, new_vectors, strict=True))
        by_hash.update({h: np.asarray(v, dtype=np.float32) for h, v in known.items()})
        with transaction(con):
            row = con.execute("SELECT next_label FROM label_counter").fetchone()
            first_label = int(row[0]) if row else 0
            labels = list(range(first_label, first_label + len(pieces)))
            con.execute("UPDATE label_counter SET next_label = ?", [first_label + len(pieces)])
            if todo:
                flat = pa.array(new_vectors.reshape(-1), type=pa.float32())
                offsets = pa.array(np.arange(0, len(flat) + 1, new_vectors.shape[1], dtype=np.int32))
                vectors = pa.table({"content_hash": list(todo), "vector": pa.ListArray.from_arrays(offsets, flat)})
                with arrow_view(con, "new_vectors", vectors):
                    con.execute("INSERT OR IGNORE INTO vectors SELECT content_hash, vector FROM new_vectors")
            chunks = pa.table(
                {"label": labels, "event_id": [p[0] for p in pieces], "chunk_no": [p[1] for p in pieces],
                 "content_hash": [p[2] for p in pieces]},
                schema=pa.schema([("label", pa.int64()), ("event_id", pa.int64()), ("chunk_no", pa.int32()),
                                  ("content_hash", pa.string())]),
            )  # fmt: skip
            with arrow_view(con, "new_chunks", chunks):
                con.execute("INSERT INTO chunks SELECT * FROM new_chunks")
            with arrow_view(con, "done_events", id_table(event_ids)):
                con.execute("DELETE FROM embed_queue WHERE event_id IN (SELECT id FROM done_events)")
        self.writer.changes.bump()
        if labels:
            self.index.add(labels, np.stack([by_hash[p[2]] for p in pieces]))

    def _failed(self, event_ids: list[int], exc: Exception) -> None:
        reason = f"{type(exc).__name__}: {str(exc).splitlines()[0][:200] if str(exc) else ''}"
        con = self.con
        with arrow_view(con, "failed_events", id_table(event_ids)), transaction(con):
            con.execute(
                "UPDATE embed_queue SET attempts = attempts + 1, last_error = ?, "
                "not_before = ? + to_seconds(30 * pow(2, attempts)::BIGINT) "
                "WHERE event_id IN (SELECT id FROM failed_events)",
                [reason, utc_now()],
            )
