"""Is the store sound? A checksum-level read of every table (every block of every column is read, and DuckDB
checks each block's checksum on the way) and the schema version against the migrations this code knows.
For ``claude-memory doctor`` and ``repair``; it reads the whole file (about a second per 100 MB)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import duckdb

from claude_memory.store.db import MIGRATIONS, damaged_sentence, schema_version


def verify(con: duckdb.DuckDBPyConnection, db_path: Path) -> dict[str, Any]:
    """``{ok, schema_version, schema_expected, tables, rows, problem}``; ``problem`` is one sentence saying
    what is wrong and what to do, or None."""
    expected = len(MIGRATIONS)
    report: dict[str, Any] = {"ok": False, "schema_version": None, "schema_expected": expected, "tables": 0,
                              "rows": 0, "problem": None}  # fmt: skip
    try:
        version = schema_version(con)
        report["schema_version"] = version
        tables = con.execute(
            "SELECT schema_name, table_name FROM duckdb_tables() WHERE NOT temporary AND database_name = "
            "current_database() ORDER BY ALL"
        ).fetchall()
        for schema, table in tables:
            row = con.execute(  # hash() reads every value of every column
                f"SELECT count(*), sum(hash(COLUMNS(*))) FROM {_quoted(schema)}.{_quoted(table)}"
            ).fetchone()
            report["tables"] += 1
            report["rows"] += int(row[0]) if row else 0
    except duckdb.IOException:
        report["problem"] = damaged_sentence(db_path)
        return report
    if version > expected:
        report["problem"] = (
            f"The memory store has schema version {version} but this claude-memory knows only {expected}; "
            "upgrade claude-memory-layer."
        )
        return report
    report["ok"] = True
    return report


def _quoted(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'
