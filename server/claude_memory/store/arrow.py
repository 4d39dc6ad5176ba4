"""Hand Python data to DuckDB as Arrow tables: fast, unlike long lists bound as parameters."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import duckdb
import pyarrow as pa


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
