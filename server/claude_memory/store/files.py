"""Which events concern a file: the ones whose tool call touched it (``events.files``) and, for a symbol,
the ones of the same project whose text mentions it as a word. Read-only; used by the editor's hovers and
code lenses (service methods ``file_history`` and ``file_summary``).

Measured at 100,006 generated events (2 cores, bench/out/store-100000-seed1-embedded): the
``list_contains`` scan over ``files`` takes 4-9 ms, so no derived table is kept. A symbol is found
through the keyword postings (its stemmed terms, one equality scan each, the way keyword search reads
them: 3-25 ms), newest candidates first, then checked as a whole word in Python on their text, 64 at a
time, until enough match. Scanning the text itself (``contains`` / ``regexp_matches``) took 50-160 ms.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Final

import duckdb

from claude_memory.store.queries import StoredEvent, events_by_ids, id_list

TEXT_BATCH: Final = 64  # candidates whose text is fetched and checked at once
MAX_CANDIDATES: Final = 4_096  # newest candidates checked for a symbol; older ones are not looked at


@dataclass(frozen=True, slots=True)
class _Row:
    id: int
    ts: datetime | None
    seq: int

    def key(self) -> tuple[bool, datetime, int]:
        """Newest first when sorted in reverse; events without a time sort last."""
        return (self.ts is not None, self.ts or datetime.min, self.seq)


@dataclass(frozen=True, slots=True)
class FileHistory:
    events: list[StoredEvent]  # newest first
    file_events: int  # how many events touched the file in all
    projects: tuple[str, ...]  # where the symbol was looked for


def word_pattern(symbol: str) -> re.Pattern[str]:
    """``symbol`` as a whole word: not preceded or followed by a letter, digit or underscore."""
    return re.compile(rf"(?<!\w){re.escape(symbol)}(?!\w)")


def file_history(
    con: duckdb.DuckDBPyConnection,
    path: str,
    *,
    symbol: str | None = None,
    terms: Sequence[str] = (),
    project: str | None = None,
    limit: int = 20,
) -> FileHistory:
    """The newest ``limit`` events that touched ``path`` or (with ``symbol`` and its stemmed keyword
    ``terms``) mention ``symbol`` as a word, in ``project`` or, without one, in the projects of the
    events that touched the file."""
    touched = con.execute("SELECT id, ts, seq, project FROM events WHERE list_contains(files, ?)", [path]).fetchall()
    rows = {int(r[0]): _Row(int(r[0]), r[1], int(r[2])) for r in touched}
    projects = (project,) if project else tuple(sorted({str(r[3]) for r in touched if r[3]}))
    newest = sorted(rows.values(), key=_Row.key, reverse=True)[:limit]
    if symbol and terms and projects:
        mentions = _mentions(con, word_pattern(symbol), terms, projects, limit, exclude=set(rows))
        newest = sorted([*newest, *mentions], key=_Row.key, reverse=True)[:limit]
    found = events_by_ids(con, [r.id for r in newest])
    return FileHistory([found[r.id] for r in newest if r.id in found], len(rows), projects)


def _mentions(
    con: duckdb.DuckDBPyConnection,
    pattern: re.Pattern[str],
    terms: Sequence[str],
    projects: Sequence[str],
    limit: int,
    exclude: set[int],
) -> list[_Row]:
    """The newest ``limit`` events of ``projects`` holding every term whose text matches ``pattern``."""
    postings = " UNION ALL ".join(
        f"SELECT term, event_id FROM {table} WHERE term = ?" for _ in terms for table in ("kw_main", "kw_delta")
    )
    marks = ", ".join("?" for _ in projects)
    candidates = con.execute(
        f"""
        WITH p AS ({postings}),
        c AS (SELECT event_id FROM p GROUP BY event_id HAVING count(DISTINCT term) = {len(terms)})
        SELECT e.id, e.ts, e.seq FROM events e SEMI JOIN c ON e.id = c.event_id
        WHERE e.project IN ({marks})
        ORDER BY e.ts DESC NULLS LAST, e.seq DESC
        LIMIT {MAX_CANDIDATES}
        """,
        [*(t for t in terms for _ in range(2)), *projects],
    ).fetchall()
    rows = [_Row(int(r[0]), r[1], int(r[2])) for r in candidates if int(r[0]) not in exclude]
    found: list[_Row] = []
    for start in range(0, len(rows), TEXT_BATCH):
        batch = rows[start : start + TEXT_BATCH]
        texts = _texts(con, (r.id for r in batch))
        for row in batch:
            if pattern.search(texts.get(row.id, "")):
                found.append(row)
                if len(found) >= limit:
                    return found
    return found


def _texts(con: duckdb.DuckDBPyConnection, ids: Iterable[int]) -> dict[int, str]:
    literal = id_list(ids)
    if not literal:
        return {}
    return {int(i): str(t) for i, t in con.execute(f"SELECT id, text FROM events WHERE id IN ({literal})").fetchall()}


def file_summary(con: duckdb.DuckDBPyConnection, paths: Sequence[str]) -> dict[str, tuple[int, datetime | None]]:
    """For each path: how many events touched it and the time of the newest (0 and None when none)."""
    wanted = list(dict.fromkeys(paths))
    out: dict[str, tuple[int, datetime | None]] = {p: (0, None) for p in wanted}
    if len(wanted) == 1:
        row = con.execute("SELECT count(*), max(ts) FROM events WHERE list_contains(files, ?)", wanted).fetchone()
        if row:
            out[wanted[0]] = (int(row[0]), row[1])
        return out
    rows = con.execute(
        "SELECT f, count(*), max(ts) FROM (SELECT unnest(files) AS f, ts FROM events WHERE list_has_any(files, ?)) "
        "WHERE f IN (SELECT unnest(?)) GROUP BY f",
        [wanted, wanted],
    ).fetchall()
    for path, count, last in rows:
        out[str(path)] = (int(count), last)
    return out
