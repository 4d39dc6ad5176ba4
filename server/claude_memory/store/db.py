"""Open the DuckDB event store: one read-write connection, migrations, the offline FTS extension."""

from __future__ import annotations

import importlib.util
import os
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from datetime import UTC, datetime
from pathlib import Path

import duckdb

from claude_memory.core.paths import secure_data_dir
from claude_memory.store.citations import assign_missing
from claude_memory.store.migrations import MIGRATIONS

__all__ = ["DB_FILE", "MIGRATIONS", "StoreBusyError", "StoreError", "connect", "migrate", "rewrite", "transaction"]

DB_FILE = "memory.duckdb"


class StoreError(Exception):
    """A store problem described in one plain sentence."""


class StoreBusyError(StoreError):
    """Another process holds the database."""


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
    try:
        con = duckdb.connect(str(db_path), read_only=read_only)
    except duckdb.IOException as exc:
        if "lock" in str(exc).lower():
            raise StoreBusyError(
                f"The memory store in {data_dir} is in use by another process; try again when it finishes."
            ) from exc
        raise StoreError(f"Could not open the memory store in {data_dir}: {exc}") from exc
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
    except Exception:
        con.close()
        raise
    if not read_only and rewrite_pending(con):
        # A forget committed but the process died before the file was rewritten: finish it now.
        return rewrite(con, data_dir)
    return con


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
