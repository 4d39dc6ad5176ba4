"""Opening and creating the store: crash leftovers, concurrent first use, a second writer."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from claude_memory.store import db
from support.store_log import log_rows


def test_leftover_from_a_creation_killed_midway_is_ignored_and_removed(tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.mkdir()
    stray = data / f".{db.DB_FILE}.2147480000.creating"  # no such process
    stray.write_bytes(b"\x00" * 100)  # what a kill while DuckDB writes a new file leaves behind
    con = db.connect(data)
    try:
        assert db.schema_version(con) == len(db.MIGRATIONS)
    finally:
        con.close()
    assert not stray.exists()
    assert oct((data / db.DB_FILE).stat().st_mode & 0o777) == "0o600"


def test_first_use_by_several_processes_at_once_yields_one_good_store(tmp_path: Path) -> None:
    data = tmp_path / "data"
    env = {**os.environ, "CLAUDE_MEMORY_HOME": str(data)}
    procs = [
        subprocess.Popen(
            [sys.executable, "-m", "claude_memory", "stats", "--json"],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(4)
    ]
    codes = [p.wait(timeout=120) for p in procs]
    assert set(codes) <= {0, 3} and 0 in codes  # 3: "in use by another process", said plainly
    for p in procs:
        assert "Traceback" not in p.stderr.read()
    con = db.connect(data)
    try:
        assert db.schema_version(con) == len(db.MIGRATIONS)
    finally:
        con.close()
    assert not list(data.glob("*.creating"))


def test_an_unreadable_store_is_reported_in_one_sentence(tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.mkdir()
    (data / db.DB_FILE).write_bytes(b"this is not a database")
    with pytest.raises(db.StoreDamagedError, match="is damaged and cannot be read; run 'claude-memory repair'"):
        db.connect(data)


@pytest.mark.parametrize("holder_read_only", [False, True])
def test_a_store_another_process_holds_is_busy_not_damaged(tmp_path: Path, holder_read_only: bool) -> None:
    data = tmp_path / "data"
    db.connect(data).close()
    code = (
        "import sys, time, duckdb; c = duckdb.connect(sys.argv[1], read_only=sys.argv[2] == '1'); "
        "print('held', flush=True); time.sleep(60)"
    )
    holder = subprocess.Popen([sys.executable, "-c", code, str(data / db.DB_FILE), "1" if holder_read_only else "0"],
                              stdout=subprocess.PIPE, text=True)  # fmt: skip
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        with pytest.raises(db.StoreBusyError, match="in use by another process"):
            db.connect(data)
        if not holder_read_only:
            with pytest.raises(db.StoreBusyError):
                db.connect(data, read_only=True)
        # The probe took no lock of its own: the holder still has the file, and once it is gone the store opens.
        assert holder.poll() is None
    finally:
        holder.kill()
        holder.wait()
    db.connect(data).close()


def test_every_connection_and_cursor_has_duckdbs_progress_bar_off(tmp_path: Path) -> None:
    """DuckDB draws one on stdout, terminal or not, for a query that runs over 2 s: in `--json` output or a protocol
    on stdout it would be garbage. Every connection the store opens, and its cursors, have it off."""
    con = db.connect(tmp_path / "data")
    try:
        for c in (con, con.cursor()):
            assert c.execute("SELECT current_setting('enable_progress_bar')").fetchall() == [(False,)]
    finally:
        con.close()


def test_duckdbs_cache_of_the_store_is_handed_back_down_to_its_bound(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """release_cache: blocks read from the file are evicted down to the bound once they pass it by half (the bound
    lowered here to what a small store reaches), the memory limit is the default again, and queries still answer."""
    monkeypatch.setattr(db, "CACHE_FLOOR", 3 << 20)  # (so trimmed past 4.5 MB)
    assert db.cache_bound(0) == db.cache_bound(1_000) == 3 << 20  # a store's bound grows with its events
    assert db.cache_bound(1_000_000) == 1_000_000 * db.CACHE_PER_EVENT > 3 << 20
    data = tmp_path / "data"
    con = db.connect(data)
    limit = db.memory_limit(con)
    con.execute("CREATE TABLE scratch AS SELECT range AS n, md5(range::VARCHAR) AS s FROM range(400000)")
    con.close()
    con = db.connect(data)  # (a new process: the cache holds only what it reads)
    try:
        assert not db.release_cache(con, limit)  # nothing read yet: under the bound, untouched
        total = con.execute("SELECT sum(n), count(DISTINCT s) FROM scratch").fetchone()
        held = db.cache_bytes(con)
        assert held > 6 << 20, held
        assert db.release_cache(con, limit)
        assert db.cache_bytes(con) <= 3 << 20 < held
        # the limit in force is the default again, not only its text: a query needing far more than the bound runs
        assert con.execute("SELECT sum(n), count(DISTINCT s) FROM scratch").fetchone() == total
        assert con.execute("SELECT count(DISTINCT md5(range::VARCHAR)) FROM range(3000000)").fetchone() == (3000000,)
        put_back = db.memory_limit(con)
        for _ in range(3):  # and what is put back does not drift down trim after trim
            con.execute("SELECT sum(n), count(DISTINCT s) FROM scratch").fetchone()
            assert db.release_cache(con, limit)
        assert db.memory_limit(con) == put_back
    finally:
        con.close()


def test_a_bounded_read_keeps_duckdbs_cache_to_its_bound_and_needing_more_runs_without_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """db.bounded: a read over the whole file keeps no more of it than the bound as it goes; work that needs more
    memory at once than the bound runs again without it; the memory limit is put back either way."""
    monkeypatch.setattr(db, "CACHE_FLOOR", 3 << 20)
    data = tmp_path / "data"
    con = db.connect(data)
    con.execute("CREATE TABLE scratch AS SELECT range AS n, md5(range::VARCHAR) AS s FROM range(400000)")
    con.close()
    con = db.connect(data)
    try:
        limit = db.memory_limit(con)
        read = "SELECT sum(n), count(*) FILTER (WHERE s LIKE 'ab%') FROM scratch"
        limits: list[str] = []

        def watched(sql: str) -> tuple[int, ...]:
            limits.append(db.memory_limit(con))
            return con.execute(sql).fetchone()  # type: ignore[return-value]

        total = db.bounded(con, limit, lambda: watched(read))
        assert limits == ["3.0 MiB"] and db.cache_bytes(con) <= 3 << 20  # read under the bound, and kept to it
        put_back = db.memory_limit(con)  # (the text read back rounds once, as after release_cache)
        assert put_back[-3:] == limit[-3:] == "GiB" and con.execute(read).fetchone() == total
        assert db.cache_bytes(con) > 6 << 20  # (unbounded, the same read keeps the whole of it)
        limits.clear()
        needs_more = "SELECT length(string_agg(md5(range::VARCHAR), ',')) FROM range(300000)"
        assert db.bounded(con, limit, lambda: watched(needs_more)) == (300000 * 33 - 1,)
        assert limits == ["3.0 MiB", put_back] and db.memory_limit(con) == put_back  # tried bounded, then without
    finally:
        con.close()


def test_a_deferred_checkpoint_waits_for_its_caller_and_puts_the_memory_limit_back(tmp_path: Path) -> None:
    """defer_checkpoints: commits no longer write the log into the file at DuckDB's 16 MB (they would at
    AUTO_CHECKPOINT); checkpoint does, within its bound, and puts the memory limit back."""
    data = tmp_path / "data"
    con = db.connect(data)
    try:
        log_rows(con, 24)  # by default a commit checkpoints once the log passes 16 MB
        assert db.log_bytes(data) < 16 << 20
        limit = db.memory_limit(con)
        db.defer_checkpoints(con)
        log_rows(con, 24)
        assert db.log_bytes(data) > 16 << 20
        rows = con.execute("SELECT count(*), sum(n) FROM logged").fetchone()
        db.checkpoint(con, limit)
        assert db.log_bytes(data) < 1 << 20
        put_back = db.memory_limit(con)  # (the text read back rounds once, as after release_cache)
        for _ in range(3):
            db.checkpoint(con, limit)
        assert db.memory_limit(con) == put_back
        assert con.execute("SELECT count(DISTINCT md5(range::VARCHAR)) FROM range(3000000)").fetchone() == (3000000,)
    finally:
        con.close()
    con = db.connect(data)
    try:
        assert con.execute("SELECT count(*), sum(n) FROM logged").fetchone() == rows
    finally:
        con.close()
