"""``claude-memory repair``: replace a damaged store by one rebuilt from Claude Code's transcripts, with every
forget applied again before anything is imported.

Under the data directory's owner lock (no service can start meanwhile):

1. what was forgotten is gathered: the forget ledger (:mod:`claude_memory.store.ledger`, kept outside the
   database file), plus any tombstones still readable in the damaged file;
2. the damaged file, its write-ahead log and the vector index built from it move to
   ``<data dir>/damaged/<time>/`` (kept for the user to inspect or delete; they hold no forgotten memory,
   since a forget rewrites the file);
3. a fresh store is created and every forgotten event is tombstoned in it, then the transcripts are
   imported (the importer skips tombstoned events, so a forgotten memory is never written, not even for a
   moment); the embeddings are rebuilt by the service in the background.

Memories whose transcripts Claude Code has already deleted cannot come back from the transcripts: a sound
store is therefore never rebuilt unless asked (``force``).
"""

from __future__ import annotations

import contextlib
import os
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import duckdb

from claude_memory.core import locations
from claude_memory.core.paths import RuntimePaths
from claude_memory.service.lock import OwnerLock
from claude_memory.service.memory import Memory
from claude_memory.store import ledger
from claude_memory.store.db import DB_FILE, StoreDamagedError
from claude_memory.store.ledger import ForgetLedger
from claude_memory.store.vector_index import NEXT_STEM, STEM, file_names

if TYPE_CHECKING:
    from claude_memory.wire import Progress

DAMAGED_DIR = "damaged"


class StoreSound(Exception):
    """The store is not damaged: rebuilding it would only lose what the transcripts no longer hold."""


@dataclass
class RepairReport:
    moved_to: str | None
    forgotten_reapplied: int
    salvaged_tombstones: int
    import_report: dict[str, Any]

    def as_json(self) -> dict[str, Any]:
        return {
            "moved_to": self.moved_to,
            "forgotten_reapplied": self.forgotten_reapplied,
            "salvaged_tombstones": self.salvaged_tombstones,
            "import": self.import_report,
        }


def problem(data_dir: Path) -> str | None:
    """Why the store needs repairing (one sentence), or None when it opens and reads back whole."""
    if not (data_dir / DB_FILE).exists():
        return None
    try:
        with Memory(data_dir) as memory:
            found = memory.verify()
    except StoreDamagedError as exc:
        return str(exc)
    return None if found["ok"] else str(found["problem"])


def repair(
    data_dir: Path,
    claude_home: Path,
    *,
    force: bool = False,
    progress: Progress | None = None,
) -> RepairReport:
    """Rebuild the store of ``data_dir`` from the transcripts under ``claude_home``. Raises LockHeld when a
    service runs (stop it first), StoreSound when there is nothing to repair and not ``force``."""
    lock = OwnerLock(RuntimePaths(data_dir).lock)
    lock.acquire()
    try:
        if not force and not (data_dir / DB_FILE).exists():
            raise StoreSound(f"There is no memory store in {data_dir} to repair; `claude-memory import` creates one.")
        if not force and problem(data_dir) is None:
            raise StoreSound(
                f"The memory store in {data_dir} is sound; nothing to repair (--force rebuilds it from the "
                "transcripts anyway, losing memories whose transcripts are gone)."
            )
        forgotten = ForgetLedger(data_dir).entries()
        salvaged = {k: v for k, v in _readable_tombstones(data_dir).items() if k not in forgotten}
        moved = _move_aside(data_dir)
        with Memory(data_dir) as memory:
            if salvaged:  # keep them outside the store too from now on
                memory.ledger.append(None, sorted(salvaged.items()))
            reapplied = memory.writer.seed_tombstones({**forgotten, **salvaged})
            plan = memory.plan_import(claude_home)
            if progress is not None:
                progress.start("import", plan.pending_bytes())
            report = plan.run(progress.advance if progress is not None else None)
        locations.clear_damaged(str(data_dir))
        return RepairReport(str(moved) if moved else None, reapplied, len(salvaged), report.to_json())
    finally:
        lock.release()


def _readable_tombstones(data_dir: Path) -> dict[int, str | None]:
    """The tombstones a damaged store still lets us read (often all of them: a small table), else none."""
    path = data_dir / DB_FILE
    if not path.exists():
        return {}
    try:
        con = duckdb.connect(str(path), read_only=True)
    except duckdb.Error:
        return {}
    try:
        return ledger.tombstones(con)
    except duckdb.Error:
        return {}
    finally:
        con.close()


def _move_aside(data_dir: Path) -> Path | None:
    """Move the store file, its WAL and the vector index into ``damaged/<time>/``; None if there was none."""
    names = [DB_FILE, f"{DB_FILE}.wal", *file_names(STEM), *file_names(NEXT_STEM)]
    present = [n for n in names if (data_dir / n).exists()]
    if not present:
        return None
    target = data_dir / DAMAGED_DIR / datetime.now().strftime("%Y%m%dT%H%M%S")
    target.mkdir(parents=True, exist_ok=True, mode=0o700)
    for name in present:
        os.replace(data_dir / name, target / name)
    with contextlib.suppress(OSError):
        (data_dir / f"{DB_FILE}.rewrite").unlink()
    return target
