"""Hand Python data to DuckDB as Arrow tables: fast, unlike long lists bound as parameters."""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

import duckdb
import numpy as np
import pyarrow as pa

from claude_memory.core.events import ParsedEvent

if TYPE_CHECKING:
    from claude_memory.store.embedding_queue import Chunk


@contextmanager
def arrow_view(con: duckdb.DuckDBPyConnection, name: str, table: pa.Table) -> Iterator[None]:
    """``table`` is visible to SQL as ``name`` inside the block, and gone after it, error or not."""
    con.register(name, table)
    try:
        yield
    finally:
        con.unregister(name)


def id_table(ids: list[int]) -> pa.Table:
    """A one-column table of 64-bit ids, named ``id``."""
    return pa.table({"id": ids}, schema=pa.schema([("id", pa.int64())]))


EVENT_SCHEMA = pa.schema(
    [
        ("pos", pa.int64()),
        ("id", pa.int64()),
        ("dedupe_key", pa.string()),
        ("type", pa.string()),
        ("session_id", pa.string()),
        ("project", pa.string()),
        ("agent_id", pa.string()),
        ("is_sidechain", pa.bool_()),
        ("ts", pa.string()),
        ("text", pa.string()),
        ("message_id", pa.string()),
        ("tool_name", pa.string()),
        ("tool_use_id", pa.string()),
        ("files", pa.list_(pa.string())),
        ("cwd", pa.string()),
        ("git_branch", pa.string()),
        ("source_path", pa.string()),
        ("line_start", pa.int32()),
        ("line_end", pa.int32()),
        ("byte_start", pa.int64()),
        ("byte_end", pa.int64()),
        ("source_uuid", pa.string()),
        ("metadata", pa.string()),
    ]
)


def event_table(events: Sequence[ParsedEvent]) -> pa.Table:
    """The events as rows of :data:`EVENT_SCHEMA`, ``pos`` numbering them in order."""
    cols: dict[str, list[Any]] = {name: [] for name in EVENT_SCHEMA.names}
    for pos, e in enumerate(events):
        src = e.source
        for name, value in (
            ("pos", pos),
            ("id", e.event_id),
            ("dedupe_key", e.dedupe_key),
            ("type", e.type),
            ("session_id", e.session_id),
            ("project", e.project),
            ("agent_id", e.agent_id),
            ("is_sidechain", e.is_sidechain),
            ("ts", e.timestamp),
            ("text", e.text),
            ("message_id", e.message_id),
            ("tool_name", e.tool_name),
            ("tool_use_id", e.tool_use_id),
            ("files", e.files or None),
            ("cwd", e.cwd),
            ("git_branch", e.git_branch),
            ("source_path", src.path),
            ("line_start", src.line_start),
            ("line_end", src.line_end),
            ("byte_start", src.byte_start),
            ("byte_end", src.byte_end),
            ("source_uuid", src.uuid),
            ("metadata", json.dumps(e.metadata, ensure_ascii=False, sort_keys=True) if e.metadata else None),
        ):
            cols[name].append(value)
    return pa.table(cols, schema=EVENT_SCHEMA)


SESSION_SCHEMA = pa.schema(
    [(n, pa.string()) for n in ("session_id", "project", "cwd", "title", "git_branch", "cc_version", "transcript")]
)
SUBAGENT_SCHEMA = pa.schema(
    [(n, pa.string()) for n in ("session_id", "agent_id", "agent_type", "description", "transcript")]
)
CHECKPOINT_SCHEMA = pa.schema(
    [("path", pa.string()), ("device", pa.int64()), ("inode", pa.int64()), ("head_hash", pa.string())]
    + [(n, pa.int64()) for n in ("size", "byte_offset", "line_no")]
)


def rows_table(rows: Sequence[Sequence[Any]], schema: pa.Schema) -> pa.Table:
    """Rows given as tuples, in the schema's column order."""
    return pa.table({name: [r[n] for r in rows] for n, name in enumerate(schema.names)}, schema=schema)


def dataclass_table(items: Sequence[Any], schema: pa.Schema) -> pa.Table:
    """An Arrow table of dataclass instances, one column per schema field (an attribute of the same name)."""
    return pa.table({name: [getattr(item, name) for item in items] for name in schema.names}, schema=schema)


def chunk_table(labels: Sequence[int], chunks: Sequence[Chunk]) -> pa.Table:
    """Rows of the ``chunks`` table: each chunk under its index label."""
    return pa.table(
        {"label": list(labels), "event_id": [c.event_id for c in chunks], "chunk_no": [c.chunk_no for c in chunks],
         "content_hash": [c.content_hash for c in chunks]},
        schema=pa.schema([("label", pa.int64()), ("event_id", pa.int64()), ("chunk_no", pa.int32()),
                          ("content_hash", pa.string())]),
    )  # fmt: skip


def vector_table(hashes: Sequence[str], vectors: np.ndarray) -> pa.Table:
    """Rows of the ``vectors`` table: row i of ``vectors`` (float32) under ``hashes[i]``."""
    flat = pa.array(vectors.reshape(-1), type=pa.float32())
    offsets = pa.array(np.arange(0, len(flat) + 1, vectors.shape[1], dtype=np.int32))
    return pa.table({"content_hash": list(hashes), "vector": pa.ListArray.from_arrays(offsets, flat)})
