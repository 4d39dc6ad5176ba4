"""Taking a store back to the schema of an older migration, for the tests of opening stores made by older versions."""

from __future__ import annotations

import re

import duckdb

from claude_memory.store.migrations import MIGRATIONS


def drop_tables_after(con: duckdb.DuckDBPyConnection, version: int) -> None:
    """Drop every table and column the migrations after ``version`` created, the flags they set, and their records."""
    for _name, sql in MIGRATIONS[version:]:
        for table in re.findall(r"CREATE TABLE (\w+)", sql):
            con.execute(f"DROP TABLE IF EXISTS {table}")
        for table, column in re.findall(r"ALTER TABLE (\w+) ADD COLUMN (\w+)", sql):
            con.execute(f"ALTER TABLE {table} DROP COLUMN IF EXISTS {column}")
    con.execute("DELETE FROM store_flags WHERE name = 'edits_backfill'")
    con.execute("DELETE FROM schema_migrations WHERE version > ?", [version])
