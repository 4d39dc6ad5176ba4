"""Open the DuckDB event store: one read-write connection, migrations, the offline FTS extension."""

from __future__ import annotations

import importlib.util
import os
import shutil
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from datetime import UTC, datetime
from pathlib import Path
from typing import TypeVar

import duckdb

from claude_memory.core import locations
from claude_memory.core.paths import secure_data_dir
from claude_memory.store.citations import assign_missing
from claude_memory.store.migrations import MIGRATIONS

__all__ = [
    "DB_FILE",
    "MIGRATIONS",
    "StoreBusyError",
    "StoreDamagedError",
    "StoreError",
    "connect",
    "migrate",
    "rewrite",
    "transaction",
]

T = TypeVar("T")

DB_FILE = locations.DB_FILE
LOW_DISK = 64 << 20  # bytes free below which a failed write is the disk's fault, not the file's
# DuckDB keeps every block it read from the store (up to 80 % of the machine's memory): after the service loaded its
# maps they held 52 MB at 100k events and 595 MB at a million, and searches kept adding the text blocks of their hits
# (710 MB after 200 at a million). ``release_cache`` brings the cache back to CACHE_FLOOR or CACHE_PER_EVENT bytes
# per stored event, whichever is larger, once it holds half as much again. At a million events 256 MB kept the
# searches as fast as the whole cache did (47 MB made them ~10 ms slower for a while); at 100k, 32 MB.
CACHE_FLOOR = 32 << 20
CACHE_PER_EVENT = 256
# A bounded read (``bounded``) works in at least this much: the task calls' read at 100k events needs more than 32 MB
# (there, unbounded +94 MB for a moment, held to 64 MB +57 MB).
READ_FLOOR = 64 << 20
# DuckDB writes its log (the WAL) into the database file, a checkpoint, on the commit that takes the log past its
# ``checkpoint_threshold`` (16 MB by default). A checkpoint rewrites each row group a write touched: after vectors were
# added, the partly filled last row group of ``vectors`` (up to 122,880 vectors of 384 floats, ~190 MB) is read and
# written again in memory. At 100k events that took 4.6 s and +550 MB of RSS, on whichever commit crossed the line (a
# hook's capture waited for it). A service lets commits checkpoint only past AUTO_CHECKPOINT (bulk work: an import),
# and checkpoints itself when quiet once the log holds QUIET_CHECKPOINT, with DuckDB's memory held to the cache's
# bound (:func:`cache_bound`): the same checkpoint took as long (2.6-3.4 s) at 128, 64, 48 or 32 MB, and the process
# grew by 113, 47, 31 and 24 MB while it ran (at a million events, 1.7 s within 32 MB).
AUTO_CHECKPOINT = "64MB"
QUIET_CHECKPOINT = 16 << 20


class StoreError(Exception):
    """A store problem described in one plain sentence."""


class StoreBusyError(StoreError):
    """Another process holds the database."""


class StoreDamagedError(StoreError):
    """The database file cannot be read although no other process holds it: it is damaged (truncated, a
    block that fails its checksum, a header that is not DuckDB's). ``claude-memory repair`` rebuilds it."""


def damaged_sentence(db_path: Path) -> str:
    return (
        f"The memory store {db_path} is damaged and cannot be read; run 'claude-memory repair' to rebuild it "
        "from your transcripts (forgotten memories stay forgotten)."
    )


def fts_extension_path() -> Path:
    """The FTS extension binary shipped in the duckdb-extension-fts wheel (no network needed)."""
    spec = importlib.util.find_spec("duckdb_extension_fts")
    if spec is None or spec.origin is None:
        raise StoreError("The duckdb-extension-fts package is not installed; reinstall claude-memory-layer.")
    path = Path(spec.origin).parent / "extensions" / f"v{duckdb.__version__}" / "fts.duckdb_extension"
    if not path.exists():
        raise StoreError(
            f"No full-text-search extension for DuckDB {duckdb.__version__} was found; "
            "install duckdb-extension-fts of the same version."
        )
    return path


def connect(data_dir: Path, *, read_only: bool = False) -> duckdb.DuckDBPyConnection:
    """Open (creating and migrating if needed) the store in ``data_dir``."""
    db_path = data_dir / DB_FILE
    if read_only and not db_path.exists():
        raise StoreError(f"There is no memory store in {data_dir} yet; run 'claude-memory import' first.")
    if not read_only:
        secure_data_dir(data_dir)
        if not db_path.exists():
            _create(db_path)
    con = _open(db_path, read_only)
    if not read_only:
        db_path.chmod(0o600)
        # We hold the write lock now, so a leftover copy is from a crash mid-rewrite: remove it.
        (data_dir / f"{DB_FILE}.rewrite").unlink(missing_ok=True)
    try:
        con.execute("SET TimeZone = 'UTC'")
        con.execute(f"LOAD {sql_string(str(fts_extension_path()))}")
        if not read_only and migrate(con):
            with transaction(con):
                assign_missing(con)
    except duckdb.IOException as exc:
        con.close()
        raise io_failure(exc, data_dir) from exc
    except Exception:
        con.close()
        raise
    if not read_only and rewrite_pending(con):
        # A forget committed but the process died before the file was rewritten: finish it now.
        return rewrite(con, data_dir)
    return con


def _open(db_path: Path, read_only: bool) -> duckdb.DuckDBPyConnection:
    """Open the database file, telling contention from damage by a real lock probe (DuckDB raises the same
    IOException for both): busy when another process holds a conflicting lock, else damaged (after a second
    try, in case the holder let go between the failure and the probe)."""
    for attempt in (1, 2):
        try:
            con = duckdb.connect(str(db_path), read_only=read_only)
        except duckdb.IOException as exc:
            if held_by_another(db_path, exclusive=not read_only):
                raise StoreBusyError(
                    f"The memory store in {db_path.parent} is in use by another process; try again when it finishes."
                ) from exc
            if not os.access(db_path, os.R_OK if read_only else os.R_OK | os.W_OK):
                raise StoreError(f"The memory store {db_path} is not readable and writable by this user.") from exc
            if attempt == 2:
                raise StoreDamagedError(damaged_sentence(db_path)) from exc
        else:
            # DuckDB draws a progress bar on stdout (a terminal or not) for a query that runs over 2 s: in a CLI
            # answering --json, or any protocol on stdout, that would be garbage in the answer. Cursors inherit it.
            con.execute("SET enable_progress_bar = false")
            return con
    raise AssertionError("unreachable")


def cache_bytes(con: duckdb.DuckDBPyConnection) -> int:
    """Memory DuckDB holds for the store: cached blocks of the file, its indexes, what queries hold."""
    row = con.execute("SELECT sum(memory_usage_bytes) FROM duckdb_memory()").fetchone()
    return int(row[0] or 0) if row else 0


def memory_limit(con: duckdb.DuckDBPyConnection) -> str:
    """DuckDB's memory limit as it reports it ("18.8 GiB"): what :func:`release_cache` puts back."""
    row = con.execute("SELECT current_setting('memory_limit')").fetchone()
    return str(row[0]) if row else ""


def cache_bound(events: int) -> int:
    """The bytes of DuckDB's cache :func:`release_cache` keeps for a store of ``events`` events."""
    return max(CACHE_FLOOR, CACHE_PER_EVENT * events)


def release_cache(con: duckdb.DuckDBPyConnection, limit: str) -> bool:
    """Hand back DuckDB's cached blocks of the store (the OS caches the file anyway) when they hold half as much again
    as the bound (``CACHE_FLOOR``, or ``CACHE_PER_EVENT`` per event): the memory limit is lowered to the bound for a
    moment, which evicts the least recently used blocks, then set back to ``limit`` (the :func:`memory_limit` read
    when the store was opened: DuckDB 1.5's RESET changes the setting's text but not the limit in force, and the
    text read again each time would round it down a little more each time). True if it did. The limit is the
    database's: call it when no other query may need memory (the service's worker, quiet); one that does meanwhile
    may fail for lack of it. ~5 ms at 100k events."""
    held = cache_bytes(con)
    if held <= CACHE_FLOOR * 3 // 2:
        return False  # under any store's bound: the store is not asked how many events it holds
    bound = _store_bound(con)
    if held <= bound * 3 // 2:
        return False
    with suppress(duckdb.OutOfMemoryException), _memory_held(con, bound, limit):
        pass  # (lowering the limit is what evicts; more than the bound in use: it evicted what it could)
    return True


def _store_bound(con: duckdb.DuckDBPyConnection) -> int:
    """:func:`cache_bound` for the store open on ``con``."""
    row = con.execute("SELECT count(*) FROM events").fetchone()
    return cache_bound(int(row[0]) if row else 0)


@contextmanager
def _memory_held(con: duckdb.DuckDBPyConnection, bound: int, limit: str) -> Iterator[None]:
    """DuckDB's memory limit at ``bound`` for the block, then set back to ``limit`` (the :func:`memory_limit` read at
    open, see :func:`release_cache`). Lowering it evicts cached blocks past the bound; it raises
    OutOfMemoryException when more than that is in use."""
    try:
        con.execute(f"SET memory_limit = '{bound}B'")
        yield
    finally:
        con.execute(f"SET memory_limit = {sql_string(limit)}")


def defer_checkpoints(con: duckdb.DuckDBPyConnection) -> None:
    """Commits checkpoint only once the log holds AUTO_CHECKPOINT; below that, :func:`checkpoint` is the caller's to
    run (a service, when quiet). The setting is the database's."""
    con.execute(f"SET checkpoint_threshold = '{AUTO_CHECKPOINT}'")


def log_bytes(data_dir: Path) -> int:
    """The size of DuckDB's log of the store (0 when there is none)."""
    try:
        return (data_dir / f"{DB_FILE}.wal").stat().st_size
    except OSError:
        return 0


def checkpoint(con: duckdb.DuckDBPyConnection, limit: str, *, quietly: bool = False) -> None:
    """Write the log into the database file with DuckDB's memory held to the cache's bound (:func:`bounded`: the
    limit is the database's, call it where no other query runs). ``quietly``: a failure is left to the close that
    follows (which checkpoints too, or leaves the log to be replayed at the next open)."""
    try:
        bounded(con, limit, lambda: con.execute("CHECKPOINT"))
    except duckdb.Error:
        if not quietly:
            raise


def bounded(con: duckdb.DuckDBPyConnection, limit: str, work: Callable[[], T], *, least: int = 0) -> T:
    """``work()`` with DuckDB's memory held to the cache's bound (:func:`cache_bound`, or ``least`` if more), then
    set back to ``limit`` (as :func:`release_cache` does): a read over much of the file keeps no more of its blocks
    than that as it goes (the task calls of a million events, with the words around them: a peak of 680 MB more, 340
    MB bounded, as fast). Done again without the bound when it needs more than that in memory at once. The limit is
    the database's: call it where no other query runs (the service's worker, no index being built beside it)."""
    try:
        with _memory_held(con, max(_store_bound(con), least), limit):
            return work()
    except duckdb.OutOfMemoryException:
        return work()  # (the limit is back at ``limit``)


def io_failure(exc: duckdb.IOException, data_dir: Path) -> StoreError:
    """What an I/O error on the open store means: the disk is full (measured, not read from the message), or
    the file could not be read back (a block failing its checksum, a truncated file): damaged."""
    try:
        full = shutil.disk_usage(data_dir).free < LOW_DISK
    except OSError:
        full = False
    if full:
        return StoreError(f"The disk holding {data_dir} is full ({first_line(exc)}); free some space and try again.")
    return StoreDamagedError(damaged_sentence(data_dir / DB_FILE))


def first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0].rstrip(".") if text else type(exc).__name__


def held_by_another(db_path: Path, *, exclusive: bool) -> bool:
    """True if another process holds a lock on ``db_path`` that conflicts with opening it read-write
    (``exclusive``) or read-only. DuckDB locks its file with ``fcntl`` record locks, which this probes."""
    import errno
    import fcntl

    try:
        fd = os.open(db_path, os.O_RDWR if exclusive else os.O_RDONLY)
    except OSError:
        return False
    try:
        fcntl.lockf(fd, (fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH) | fcntl.LOCK_NB)
    except OSError as exc:
        return exc.errno in (errno.EACCES, errno.EAGAIN)
    else:
        fcntl.lockf(fd, fcntl.LOCK_UN)
        return False
    finally:
        os.close(fd)  # (this process holds no lock on the file: it has not opened it)


def sql_string(value: str) -> str:
    """A SQL string literal (for the statements that take no parameters: LOAD, ATTACH)."""
    return "'" + value.replace("'", "''") + "'"


def rewrite_pending(con: duckdb.DuckDBPyConnection) -> bool:
    row = con.execute("SELECT count(*) FROM store_flags WHERE name = 'rewrite_pending'").fetchone()
    return bool(row and row[0])


def utc_now() -> datetime:
    """Now, as the naive UTC datetime the store's TIMESTAMP columns hold."""
    return datetime.now(UTC).replace(tzinfo=None)


def to_store_time(value: datetime) -> datetime:
    """An aware (or local naive) datetime as naive UTC, for comparing with stored timestamps."""
    aware = value if value.tzinfo else value.astimezone()
    return aware.astimezone(UTC).replace(tzinfo=None)


def from_store_time(value: datetime | None) -> str | None:
    """A stored timestamp as ISO-8601 UTC text."""
    return value.replace(tzinfo=UTC).isoformat().replace("+00:00", "Z") if value else None


@contextmanager
def transaction(con: duckdb.DuckDBPyConnection) -> Iterator[None]:
    """BEGIN ... COMMIT; on any error ROLLBACK and re-raise the original error (a rollback that fails
    too, e.g. after a full disk invalidated the database, must not hide what went wrong)."""
    con.execute("BEGIN TRANSACTION")
    try:
        yield
        con.execute("COMMIT")
    except BaseException:
        with suppress(duckdb.Error):
            con.execute("ROLLBACK")
        raise


def _create(db_path: Path) -> None:
    """Create a new, migrated store under a private name and link it into place only when complete.

    A process killed while DuckDB writes a brand-new file leaves a file DuckDB refuses to open ever
    after; building it aside means such a crash leaves only a stray temporary file. ``os.link`` fails
    if another process won the race, in which case its store is used."""
    temp = db_path.with_name(f".{db_path.name}.{os.getpid()}.creating")
    temp.unlink(missing_ok=True)
    con = duckdb.connect(str(temp))
    try:
        con.execute(f"LOAD {sql_string(str(fts_extension_path()))}")
        migrate(con)
    finally:
        con.close()
    temp.chmod(0o600)
    with suppress(FileExistsError):
        os.link(temp, db_path)
    temp.unlink()
    for stray in db_path.parent.glob(f".{db_path.name}.*.creating"):
        with suppress(OSError):  # left by a process killed while creating; harmless to remove
            if stray != temp and _pid_gone(stray.name.split(".")[-2]):
                stray.unlink()


def _pid_gone(pid: str) -> bool:
    try:
        os.kill(int(pid), 0)
    except (ValueError, ProcessLookupError):
        return True
    except PermissionError:
        return False
    return False


def migrate(con: duckdb.DuckDBPyConnection) -> list[str]:
    """Apply pending migrations in order; return the names applied."""
    con.execute(
        "CREATE TABLE IF NOT EXISTS schema_migrations "
        "(version INTEGER PRIMARY KEY, name VARCHAR NOT NULL, applied_at TIMESTAMP NOT NULL)"
    )
    done = {row[0] for row in con.execute("SELECT version FROM schema_migrations").fetchall()}
    applied: list[str] = []
    for version, (name, sql) in enumerate(MIGRATIONS, start=1):
        if version in done:
            continue
        with transaction(con):
            con.execute(sql)
            con.execute("INSERT INTO schema_migrations VALUES (?, ?, ?)", [version, name, utc_now()])
        applied.append(name)
    return applied


def rewrite(con: duckdb.DuckDBPyConnection, data_dir: Path) -> duckdb.DuckDBPyConnection:
    """Copy the live contents into a fresh database file and swap it in; return a connection to it.

    DuckDB neither zeroes deleted rows nor frees their blocks' bytes (not even after VACUUM or a table
    rewrite), so after a forget this is the only way to make sure no copy of the text stays on disk."""
    db_path = data_dir / DB_FILE
    fresh = data_dir / f"{DB_FILE}.rewrite"
    fresh.unlink(missing_ok=True)
    con.execute(f"ATTACH {sql_string(str(fresh))} AS fresh_copy")
    try:
        con.execute(f"COPY FROM DATABASE {_database_name(con)} TO fresh_copy")
        con.execute("DELETE FROM fresh_copy.store_flags WHERE name = 'rewrite_pending'")
    finally:
        con.execute("DETACH fresh_copy")
    con.close()
    fresh.chmod(0o600)
    os.replace(fresh, db_path)  # atomic: a crash leaves either the old or the new file
    return connect(data_dir)


def _database_name(con: duckdb.DuckDBPyConnection) -> str:
    row = con.execute("SELECT current_database()").fetchone()
    return f'"{row[0]}"' if row else "memory"


def schema_version(con: duckdb.DuckDBPyConnection) -> int:
    row = con.execute("SELECT coalesce(max(version), 0) FROM schema_migrations").fetchone()
    return int(row[0]) if row else 0
