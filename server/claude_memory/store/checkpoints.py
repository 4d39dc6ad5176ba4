"""Import checkpoints: how far each transcript has been read. The writer saves them with their events."""

from __future__ import annotations

from dataclasses import dataclass

import duckdb


@dataclass(slots=True)
class Checkpoint:
    path: str
    device: int
    inode: int
    head_hash: str
    size: int
    byte_offset: int
    line_no: int


def load_checkpoints(con: duckdb.DuckDBPyConnection) -> dict[str, Checkpoint]:
    """Every transcript's checkpoint, by path."""
    rows = con.execute(
        "SELECT path, device, inode, head_hash, size, byte_offset, line_no FROM ingest_checkpoints"
    ).fetchall()
    return {row[0]: Checkpoint(*row) for row in rows}
