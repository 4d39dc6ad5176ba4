"""The forget ledger: what was forgotten, kept outside the database file, so that losing the store (damage,
``claude-memory repair``) never brings a forgotten memory back.

``<data dir>/forgotten.jsonl``, user-only, one line per forget and nothing but what identifies: the selector
(session id, project path, date, how many citations were named) and each forgotten event's id and citation.
An event id is a hash of the event's place in its transcript, a citation a random code: neither holds any
of the memory's text. The writer appends and fsyncs the line inside the forget's transaction, before COMMIT,
so a forget that then fails leaves a line that forgets a little more on repair, never less. A store that
predates the ledger has its tombstones copied into it when it is first opened.

``EventWriter.seed_tombstones`` puts every ledger entry into a fresh store's tombstones before anything is
imported into it: the importer skips tombstoned ids, so a rebuilt store never holds a forgotten event, not even
for a moment.
"""

from __future__ import annotations

import json
import os
from datetime import datetime
from pathlib import Path

import duckdb

from claude_memory.core.filters import ForgetSelector

LEDGER_FILE = "forgotten.jsonl"


class ForgetLedger:
    def __init__(self, data_dir: Path) -> None:
        self.path = data_dir / LEDGER_FILE

    def append(self, selector: ForgetSelector | None, events: list[tuple[int, str | None]]) -> None:
        """Record one forget (fsynced). OSError (e.g. a full disk) stops the forget before it commits."""
        what: dict[str, object] = {}
        if selector is not None:
            what = {
                "session": selector.session_id,
                "project": selector.project,
                "before": selector.before.isoformat() if selector.before else None,
                "refs": len(selector.event_ids),
            }
        line = json.dumps(
            {"v": 1, "at": datetime.now().astimezone().isoformat(timespec="seconds"), "selector": what,
             "events": [[event_id, citation] for event_id, citation in events]},
            separators=(",", ":"),
        )  # fmt: skip
        fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        try:
            os.write(fd, line.encode("ascii") + b"\n")
            os.fsync(fd)
        finally:
            os.close(fd)

    def entries(self) -> dict[int, str | None]:
        """Every forgotten event id with its citation. A line torn by a crash mid-write is skipped (its forget
        never committed: the append comes first)."""
        found: dict[int, str | None] = {}
        try:
            text = self.path.read_text(encoding="ascii", errors="replace")
        except FileNotFoundError:
            return found
        for raw in text.splitlines():
            try:
                record = json.loads(raw)
                for event_id, citation in record["events"]:
                    found[int(event_id)] = citation if isinstance(citation, str) else None
            except (ValueError, KeyError, TypeError):
                continue
        return found


def backfill(con: duckdb.DuckDBPyConnection, ledger: ForgetLedger) -> None:
    """Copy a store's tombstones into a ledger that does not exist yet (a store from before the ledger)."""
    if ledger.path.exists():
        return
    rows = con.execute("SELECT event_id, citation FROM tombstones ORDER BY event_id").fetchall()
    if rows:
        ledger.append(None, [(int(r[0]), r[1]) for r in rows])


def tombstones(con: duckdb.DuckDBPyConnection) -> dict[int, str | None]:
    """A store's tombstones (event id → citation), e.g. read from a damaged store before it is replaced."""
    return {int(r[0]): r[1] for r in con.execute("SELECT event_id, citation FROM tombstones").fetchall()}
