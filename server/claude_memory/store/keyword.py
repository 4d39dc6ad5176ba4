"""BM25 keyword search kept inside DuckDB and updated with every write.

DuckDB's own ``create_fts_index`` is not incremental (rows inserted later are invisible until a full
rebuild: 6-11 s at 100k events) and ``match_bm25`` measured 54-66 ms per query at 100k events. So we
keep our own postings in two tables, tokenised and stemmed in SQL with the FTS extension's ``stem``
(Porter) function, and score BM25 ourselves:

* ``kw_delta`` receives the postings of each write batch, in the same transaction as the events, so a
  new event is searchable the moment it is committed;
* ``kw_main`` holds everything older, sorted by term, so that DuckDB's zone maps let a query read only
  the row groups of its terms. ``merge`` folds the delta into it (after an import, or when it grows).

:func:`search` scores in SQL and is the reference: the service searches the same postings loaded into
memory (:mod:`claude_memory.store.postings`, 1-3 ms instead of 16-23 ms per query at 100k events), which
must rank exactly as it does (``tests/integration/test_postings_memory.py``).

The statements that change the postings (:func:`stage_tokens`, :func:`index_staged`, :func:`delete`,
:func:`drop_orphans`, :func:`merge`) are run only by the writer (:mod:`claude_memory.store.writer`).
"""

from __future__ import annotations

from typing import Final

import duckdb

from claude_memory.core.filters import EventFilters
from claude_memory.core.tokens import MAX_WORD, MIN_WORD, SPLIT_SQL, STOPWORDS
from claude_memory.store.db import to_store_time, transaction

K1: Final = 0.9  # Anserini's defaults (core.ranking's HYBRID; its KEYWORD ranking asks for 1.2 / 0.75)
B: Final = 0.4
MERGE_THRESHOLD_ROWS: Final = 300_000


def _split_sql(text_expr: str, id_expr: str, source: str) -> str:
    """SQL producing (event_id, tok) rows: lower-case words, no stopwords, 2 to 40 characters."""
    stop = ", ".join(f"'{w}'" for w in sorted(STOPWORDS))
    return (
        f"SELECT event_id, tok FROM ("
        f"SELECT {id_expr} AS event_id, unnest(regexp_split_to_array(lower({text_expr}), '{SPLIT_SQL}')) AS tok"
        f" FROM {source}) WHERE length(tok) BETWEEN {MIN_WORD} AND {MAX_WORD} AND tok NOT IN ({stop})"
    )


def stage_tokens(con: duckdb.DuckDBPyConnection, source: str) -> None:
    """Tokenise ``source`` (a relation with columns id, text) into the temp tables ``batch_tokens``
    (event_id, term, tf) and ``batch_lengths`` (event_id, dl). Each distinct word is stemmed once."""
    con.execute(
        f"CREATE OR REPLACE TEMP TABLE batch_words AS SELECT event_id, tok, count(*)::INTEGER AS n "
        f"FROM ({_split_sql('text', 'id', source)}) GROUP BY ALL"
    )
    con.execute(
        "CREATE OR REPLACE TEMP TABLE batch_tokens AS "
        "SELECT w.event_id, s.term, sum(w.n)::INTEGER AS tf FROM batch_words w "
        "JOIN (SELECT tok, stem(tok, 'porter') AS term FROM (SELECT DISTINCT tok FROM batch_words)) s USING (tok) "
        "GROUP BY ALL"
    )
    con.execute("DROP TABLE batch_words")
    con.execute(
        "CREATE OR REPLACE TEMP TABLE batch_lengths AS "
        "SELECT event_id, sum(tf)::INTEGER AS dl FROM batch_tokens GROUP BY event_id"
    )


def index_staged(con: duckdb.DuckDBPyConnection) -> None:
    """Add the postings of ``batch_tokens`` to the delta table and drop the staging table."""
    con.execute(
        "INSERT INTO kw_delta SELECT term, event_id, tf, dl FROM batch_tokens JOIN batch_lengths USING (event_id)"
    )
    con.execute("DROP TABLE batch_tokens")
    con.execute("DROP TABLE batch_lengths")


def delete(con: duckdb.DuckDBPyConnection, id_relation: str) -> None:
    """Remove the postings of the events listed in ``id_relation`` (a relation with column id)."""
    for table in ("kw_main", "kw_delta"):
        con.execute(f"DELETE FROM {table} WHERE event_id IN (SELECT id FROM {id_relation})")


def delta_rows(con: duckdb.DuckDBPyConnection) -> int:
    row = con.execute("SELECT count(*) FROM kw_delta").fetchone()
    return int(row[0]) if row else 0


def drop_orphans(con: duckdb.DuckDBPyConnection) -> int:
    """Delete delta postings whose event does not exist; returns how many.

    A SIGKILL in the middle of a commit can leave them: DuckDB 1.5 writes a large insert (here the
    postings of a 10k-event batch, over one 122,880-row group) to the database file before the commit,
    and the kill test found such rows kept after a restart while the same transaction's events were not.
    Re-importing those events would then index them twice. The delta is small (it is merged after every
    import), so checking it before each import is cheap."""
    row = con.execute(
        "SELECT count(*) FROM kw_delta d WHERE NOT EXISTS (SELECT 1 FROM events e WHERE e.id = d.event_id)"
    ).fetchone()
    orphans = int(row[0]) if row else 0
    if orphans:
        with transaction(con):
            con.execute("DELETE FROM kw_delta WHERE event_id NOT IN (SELECT id FROM events)")
    return orphans


def merge(con: duckdb.DuckDBPyConnection) -> int:
    """Fold kw_delta into the term-sorted kw_main. Atomic; returns the rows merged. Postings of events
    that do not exist (see :func:`drop_orphans`) are left out."""
    rows = delta_rows(con)
    if rows == 0:
        return 0
    with transaction(con):
        con.execute(
            "CREATE OR REPLACE TABLE kw_main AS SELECT * FROM (SELECT * FROM kw_main UNION ALL "
            "SELECT * FROM kw_delta d WHERE EXISTS (SELECT 1 FROM events e WHERE e.id = d.event_id)) "
            "ORDER BY term, event_id"
        )
        con.execute("DELETE FROM kw_delta")
    return rows


def filter_sql(filters: EventFilters, alias: str = "e") -> tuple[str, list[object]]:
    """A WHERE fragment (starting with ' AND', or empty) and its parameters, for the events table."""
    clauses: list[str] = []
    params: list[object] = []
    if filters.project is not None:
        clauses.append(f"{alias}.project = ?")
        params.append(filters.project)
    if filters.session_id is not None:
        clauses.append(f"{alias}.session_id = ?")
        params.append(filters.session_id)
    if filters.types:
        clauses.append(f"{alias}.type IN ({', '.join('?' for _ in filters.types)})")
        params.extend(filters.types)
    if filters.since is not None:
        clauses.append(f"{alias}.ts >= ?")
        params.append(to_store_time(filters.since))
    if filters.until is not None:
        clauses.append(f"{alias}.ts < ?")
        params.append(to_store_time(filters.until))
    return "".join(f" AND {c}" for c in clauses), params


def corpus_stats(con: duckdb.DuckDBPyConnection) -> tuple[int, float]:
    """(number of events, average indexed length) for BM25's idf and length normalisation."""
    row = con.execute("SELECT count(*), coalesce(avg(kw_len), 1) FROM events").fetchone()
    return (int(row[0]), max(float(row[1]), 1.0)) if row else (0, 1.0)


def search(
    con: duckdb.DuckDBPyConnection,
    terms: list[str],
    filters: EventFilters,
    limit: int,
    stats: tuple[int, float] | None = None,
    k1: float = K1,
    b: float = B,
) -> list[tuple[int, float, float]]:
    """Top ``limit`` (event id, BM25 score, coverage) triples for stemmed ``terms``, best first. Coverage is
    the share of the query's idf mass (over terms the store knows) that the event matches: 0 to 1, and
    comparable across queries, unlike the score.

    One equality scan per term (not ``term IN (...)``): DuckDB then prunes kw_main's row groups by
    their min/max statistics for each term, instead of scanning the whole range between the
    alphabetically first and last query terms."""
    if not terms:
        return []
    n, avgdl = stats or corpus_stats(con)
    where, params = filter_sql(filters)
    postings = " UNION ALL ".join(
        f"SELECT term, event_id, tf, dl FROM {table} WHERE term = ?" for _ in terms for table in ("kw_main", "kw_delta")
    )
    join_events = "JOIN events e ON e.id = p.event_id" if where else ""
    sql = f"""
        WITH p AS ({postings}),
        df AS (SELECT term, ln((? - count(*) + 0.5) / (count(*) + 0.5) + 1) AS idf FROM p GROUP BY term),
        total AS (SELECT sum(idf) AS idf FROM df)
        SELECT p.event_id,
               sum(df.idf * p.tf * ({k1} + 1) / (p.tf + {k1} * (1 - {b} + {b} * p.dl / ?))) AS score,
               sum(df.idf) / any_value(total.idf) AS coverage
        FROM p JOIN df USING (term) CROSS JOIN total {join_events}
        WHERE TRUE {where}
        GROUP BY p.event_id
        ORDER BY score DESC, p.event_id
        LIMIT ?
    """
    term_params = [t for t in terms for _ in range(2)]
    rows = con.execute(sql, [*term_params, n, avgdl, *params, limit]).fetchall()
    return [(int(r[0]), float(r[1]), float(r[2])) for r in rows]
