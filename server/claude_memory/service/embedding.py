"""The embedding worker: drains the ``embed_queue`` outbox into vectors, chunks and the hnswlib index.

Each batch is committed through the store's single writer (vectors, chunks, queue rows removed, in one
transaction), then added to the index. A process killed at any point leaves either the queue rows (the
batch is redone) or committed chunks the index lacks (added at the next load): every event ends up
embedded exactly once. A failing batch is retried with backoff; after ``MAX_ATTEMPTS``
(:mod:`claude_memory.store.embedding_queue`) the events stay queued as failed and ``status`` says so.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import duckdb
import numpy as np
import numpy.typing as npt

from claude_memory.core.chunks import MAX_CHUNKS, MAX_TOOL_CHUNKS, chunk_hash, chunk_text
from claude_memory.core.events import TOOL_USE
from claude_memory.store import embedding_queue
from claude_memory.store.embedder import Embedder
from claude_memory.store.embedding_queue import Chunk, QueuedEvent
from claude_memory.store.heap import release_freed_memory
from claude_memory.store.vector_index import VectorIndex
from claude_memory.store.writer import EventWriter

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


@dataclass
class EmbeddedBatch:
    """Events cut into chunks and embedded: the chunks in order, and the vectors of the chunk texts that had none
    stored (``new_vectors`` row i is ``new_hashes[i]``'s); ``known`` holds the stored ones the batch reuses."""

    chunks: list[Chunk]
    new_hashes: list[str]
    new_vectors: npt.NDArray[np.float32]
    known: dict[str, npt.NDArray[np.float32]]

    def vectors(self) -> npt.NDArray[np.float32]:
        """One row per chunk, in order."""
        by_hash = dict(zip(self.new_hashes, self.new_vectors, strict=True)) | self.known
        return np.stack([by_hash[c.content_hash] for c in self.chunks])


def embed_events(con: duckdb.DuckDBPyConnection, embedder: Embedder, due: list[QueuedEvent]) -> EmbeddedBatch:
    """Chunk the events' text and embed each chunk text the store has no vector for under ``embedder``'s model."""
    model_id = embedder.model_id
    chunks: list[Chunk] = []
    texts: list[str] = []
    for queued in due:
        limit = MAX_TOOL_CHUNKS if queued.type == TOOL_USE else MAX_CHUNKS
        for no, text in enumerate(chunk_text(queued.text, limit)):
            chunks.append(Chunk(queued.event_id, no, chunk_hash(model_id, text)))
            texts.append(text)
    stored = embedding_queue.known_vectors(con, sorted({c.content_hash for c in chunks}))
    todo: dict[str, str] = {}
    for chunk, text in zip(chunks, texts, strict=True):
        if chunk.content_hash not in stored:
            todo.setdefault(chunk.content_hash, text)
    new_vectors = embedder.embed(list(todo.values())) if todo else np.zeros((0, 0), dtype=np.float32)
    known = {h: np.asarray(v, dtype=np.float32) for h, v in stored.items()}
    return EmbeddedBatch(chunks, list(todo), new_vectors, known)


def queue_status(con: duckdb.DuckDBPyConnection, index: VectorIndex | None) -> QueueStatus:
    """The embedding queue's counts, and the vectors ``index`` serves (0 without one: no model this process may
    use with the store's vectors)."""
    counts = embedding_queue.queue_counts(con)
    return QueueStatus(
        pending=counts.pending,
        failed=counts.failed,
        embedded_events=counts.embedded_events,
        vectors=counts.vectors,
        index_live=index.live_count if index is not None else 0,
    )


class EmbeddingWorker:
    def __init__(self, writer: EventWriter, embedder: Embedder, index: VectorIndex) -> None:
        self.writer = writer
        self.embedder = embedder
        self.index = index

    @property
    def con(self) -> duckdb.DuckDBPyConnection:
        return self.writer.con

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
            due = embedding_queue.due(self.con, batch)
            if not due:
                break
            try:
                self._embed_batch(due)
            except Exception as exc:  # the model or the store failed for this batch: back off, go on
                self._failed([q.event_id for q in due], exc)
                continue
            finally:
                release_freed_memory()  # the model's activations: hundreds of MB held otherwise
            done += len(due)
            if progress:
                progress(len(due))
        if save:
            self.index.save()
        return done

    def _embed_batch(self, due: list[QueuedEvent]) -> None:
        batch = embed_events(self.con, self.embedder, due)
        event_ids = [q.event_id for q in due]
        labels = self.writer.add_embeddings(event_ids, batch.chunks, batch.new_hashes, batch.new_vectors)
        if labels:
            self.index.add(labels, batch.vectors())

    def _failed(self, event_ids: list[int], exc: Exception) -> None:
        reason = f"{type(exc).__name__}: {str(exc).splitlines()[0][:200] if str(exc) else ''}"
        self.writer.embedding_failed(event_ids, reason)
