"""SIGKILL the real importer at random moments; every resumed run must end in the clean run's store.

Uses the deterministic corpus generator in bench/corpus.py (an ~8,000-event Claude Code tree), the real
CLI in a subprocess, and a real DuckDB file. The comparison covers every stored column except the
ingestion wall-clock time, plus the keyword postings, sessions, subagents and checkpoints.
"""

from __future__ import annotations

import os
import random
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from types import ModuleType
from typing import Any

import duckdb
import pytest

from claude_memory.service.memory import Memory

KILLS_REQUIRED = 24


def start_import(home: Path, data: Path) -> subprocess.Popen[bytes]:
    env = {**os.environ, "CLAUDE_MEMORY_HOME": str(data)}
    return subprocess.Popen(
        [
            sys.executable,
            "-m",
            "claude_memory",
            "import",
            "--claude-home",
            str(home),
            "--json",
            "--settle-seconds",
            "0",
        ],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )


def finish_import(home: Path, data: Path) -> float:
    started = time.perf_counter()
    proc = start_import(home, data)
    _, err = proc.communicate(timeout=600)
    assert proc.returncode == 0, err.decode()
    return time.perf_counter() - started


def snapshot(data: Path) -> dict[str, list[tuple[Any, ...]]]:
    con = duckdb.connect(str(data / "memory.duckdb"), read_only=True)
    try:
        columns = [
            r[0]
            for r in con.execute(
                "SELECT column_name FROM information_schema.columns WHERE table_name = 'events' "
                "ORDER BY ordinal_position"
            ).fetchall()
            if r[0] != "ingested_at"
        ]
        return {
            "events": con.execute(f"SELECT {', '.join(columns)} FROM events ORDER BY id").fetchall(),
            "postings": con.execute(
                "SELECT term, event_id, tf FROM (SELECT * FROM kw_main UNION ALL SELECT * FROM kw_delta) ORDER BY ALL"
            ).fetchall(),
            "sessions": con.execute("SELECT * FROM sessions ORDER BY session_id").fetchall(),
            "subagents": con.execute("SELECT * FROM subagents ORDER BY ALL").fetchall(),
            "checkpoints": con.execute(
                "SELECT path, size, byte_offset, line_no FROM ingest_checkpoints ORDER BY path"
            ).fetchall(),
        }
    finally:
        con.close()


@pytest.mark.slow
def test_sigkill_at_random_moments_then_resume_gives_the_clean_store(tmp_path: Path, corpus_module: ModuleType) -> None:
    home = tmp_path / "claude"
    truth = corpus_module.generate(home, 8_000, seed=11)
    clean_dir = tmp_path / "clean"
    clean_seconds = finish_import(home, clean_dir)
    clean = snapshot(clean_dir)
    assert len(clean["events"]) == truth.events()

    rng = random.Random(2026)
    kills = 0
    comparisons = 0
    chain = 0
    while kills < KILLS_REQUIRED:
        chain += 1
        assert chain <= 30, "the importer kept finishing before it could be killed"
        data = tmp_path / f"killed-{chain}"
        for _ in range(8):
            proc = start_import(home, data)
            time.sleep(rng.uniform(0.05, clean_seconds * 0.8))
            proc.send_signal(signal.SIGKILL)
            proc.wait(timeout=60)
            if proc.returncode != -signal.SIGKILL:
                break  # finished before the kill: this chain is done
            kills += 1
            if kills % 3 == 0:
                # Resume a copy of the killed store to completion and compare it with the clean store.
                copy = tmp_path / f"resume-{kills}"
                shutil.copytree(data, copy)
                finish_import(home, copy)
                assert snapshot(copy) == clean, f"store differs after kill #{kills}"
                comparisons += 1
                shutil.rmtree(copy)
        finish_import(home, data)
        assert snapshot(data) == clean, f"store differs at the end of chain {chain}"
        comparisons += 1
    assert kills >= KILLS_REQUIRED and comparisons >= 10


def test_postings_a_crash_kept_without_their_events_are_dropped_before_reimport(
    tmp_path: Path, fixtures_home: Path
) -> None:
    """The state the kill test found: a killed commit kept the batch's postings (written to the file before
    the commit) but not its events or checkpoints. Importing again must not index those events twice."""
    data = tmp_path / "data"
    with Memory(data) as memory:
        first = memory.import_history(fixtures_home, settle_seconds=0)
        postings = memory.con.execute("SELECT * FROM kw_delta ORDER BY ALL").fetchall()
        assert postings and memory.con.execute("SELECT count(*) FROM kw_main").fetchone() == (0,)
        for table in ("events", "ingest_checkpoints", "sessions", "subagents", "embed_queue"):
            memory.con.execute(f"DELETE FROM {table}")
        report = memory.import_history(fixtures_home, settle_seconds=0)
        assert report.events_new == first.events_new == memory.stats()["events"] > 0
        assert any(f"Removed {len(postings)} keyword postings" in note for note in report.notes)
        assert memory.con.execute("SELECT * FROM kw_delta ORDER BY ALL").fetchall() == postings
