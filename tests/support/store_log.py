"""Filling DuckDB's log (its WAL) the way a service's small commits do (captures, embeddings)."""

from __future__ import annotations

import duckdb


def log_rows(con: duckdb.DuckDBPyConnection, megabytes: int) -> None:
    """About ``megabytes`` MB of rows into the table ``logged`` (made if missing), 1,000 per commit: each commit's rows
    go to the log, not straight into the file as a bulk insert's would."""
    con.execute("CREATE TABLE IF NOT EXISTS logged (n BIGINT, s VARCHAR)")
    for batch in range(megabytes * 5):
        con.execute(
            "INSERT INTO logged SELECT range, repeat(md5(range::VARCHAR), 6) FROM range(?, ?)",
            [batch * 1000, batch * 1000 + 1000],
        )
