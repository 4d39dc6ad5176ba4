"""A quiet memory service hands back what it no longer needs (IdleWork → Memory.release_memory): DuckDB's cache of
the store past its bound, every RELEASE_EVERY seconds, a refit of the vector index building beside it or not;
DuckDB's part alone every RELEASE_CACHE_EVERY seconds, busy or quiet; and a backlog of prompts is read with DuckDB's
cache held to its bound."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

from claude_memory.service import idle
from claude_memory.service.memory import Memory
from claude_memory.store import db
from support.idle_work import quiet_idle_work
from support.store_log import log_rows


def scratch_store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, list[float]]:
    """A store with a table whose reading fills DuckDB's cache past a bound of 3 MB (trimmed past 4.5 MB), and the idle
    work's clock, set by the test. Its task projection is made (with the board kept), as a service's first idle step
    would: that fold's bounded read would trim the cache too."""
    monkeypatch.setattr(db, "CACHE_FLOOR", 3 << 20)
    data = tmp_path / "data"
    with Memory(data) as memory:
        memory.con.execute("CREATE TABLE scratch AS SELECT range AS n, md5(range::VARCHAR) AS s FROM range(400000)")
        memory.tasks.refresh(warm=True)
    clock = [1_000.0]
    monkeypatch.setattr(idle.time, "monotonic", lambda: clock[0])
    return data, clock


def test_a_quiet_service_trims_duckdbs_cache_every_half_minute(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    data, clock = scratch_store(tmp_path, monkeypatch)
    with Memory(data) as memory:
        work = quiet_idle_work(memory)
        work._worker.last_request = clock[0] - 2  # quiet, but not for long: no checkpoint (which hands back too)

        def read() -> int:
            memory.con.execute("SELECT count(DISTINCT s) FROM scratch").fetchone()
            return db.cache_bytes(memory.con)

        held = read()
        assert held > 6 << 20
        work.step()
        assert db.cache_bytes(memory.con) >= held  # not yet: the last hand-back was less than RELEASE_EVERY ago
        clock[0] += idle.RELEASE_EVERY
        work._worker.last_request = clock[0] - 2
        # even while a refit builds (it reads the vector copy, not the store: nothing queries beside the hand-back)
        work._refit = (threading.Thread(target=lambda: None), memory.vector_index(), [])
        work.step()
        assert db.cache_bytes(memory.con) <= 3 << 20
        assert read() > 6 << 20  # the next read fills it again: the limit is the default again


@pytest.mark.parametrize("since_request", [0.0, 2.0], ids=["busy", "quiet"])
def test_a_service_trims_duckdbs_cache_every_few_seconds_and_keeps_the_rest(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, since_request: float
) -> None:
    data, clock = scratch_store(tmp_path, monkeypatch)
    with Memory(data) as memory:
        work = quiet_idle_work(memory)
        boards: list[None] = []
        monkeypatch.setattr(memory.tasks, "release", lambda: boards.append(None))
        memory.con.execute("SELECT count(DISTINCT s) FROM scratch").fetchone()
        held = db.cache_bytes(memory.con)
        assert held > 6 << 20
        work._worker.last_request = clock[0] - since_request
        work.step()
        assert db.cache_bytes(memory.con) >= held  # not yet: less than RELEASE_CACHE_EVERY since the last hand-back
        clock[0] += idle.RELEASE_CACHE_EVERY
        work._worker.last_request = clock[0] - since_request
        work.step()
        assert db.cache_bytes(memory.con) <= 3 << 20 and boards == []  # DuckDB's part only: the task board stays


def test_a_backlog_of_prompts_is_read_with_duckdbs_cache_held_to_its_bound(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A first import's prompts are read a slice per quiet idle step, each bringing blocks of the store into DuckDB's
    cache; the reads run with DuckDB's memory limit at the bound (at least READ_FLOOR), even while a refit of the
    vector index builds (it reads the vector copy, not the store), and the limit is the default again after."""
    data, _ = scratch_store(tmp_path, monkeypatch)
    with Memory(data) as memory:
        work = quiet_idle_work(memory)
        default = _bytes(db.memory_limit(memory.con))  # (DuckDB's, a share of the machine's memory)
        limits: list[str] = []
        monkeypatch.setattr(memory.insights, "refresh", lambda **_: limits.append(db.memory_limit(memory.con)) or 0)
        work._read_prompts(memory, 10)
        work._refit = (threading.Thread(target=lambda: None), memory.vector_index(), [])
        work._read_prompts(memory, 10)
        bound = max(db.cache_bound(0), db.READ_FLOOR)
        assert len(limits) == 2 and all(abs(_bytes(limit) - bound) <= bound // 100 for limit in limits)
        # (the limit set back reads a little lower: DuckDB rounds its text, see db.release_cache)
        assert _bytes(db.memory_limit(memory.con)) > default * 0.99


def _bytes(setting: str) -> float:
    """DuckDB's reading of a memory setting ("64.0 MiB") in bytes."""
    number, unit = setting.split()
    return float(number) * {"KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30}[unit]


def test_a_quiet_service_writes_duckdbs_log_into_the_store_and_so_does_closing(tmp_path: Path) -> None:
    """With checkpoints deferred (the service's), the idle step checkpoints once the log holds QUIET_CHECKPOINT, and
    not before, or any log once no request came for CHECKPOINT_IDLE_SECONDS; closing checkpoints whatever is left."""
    data = tmp_path / "data"
    with Memory(data) as memory:
        memory.defer_checkpoints()
        work = quiet_idle_work(memory)
        log_rows(memory.con, 4)
        work._worker.last_request = time.monotonic() - idle.CHECKPOINT_QUIET_SECONDS - 1
        work.step()
        assert 3 << 20 < db.log_bytes(data) < db.QUIET_CHECKPOINT  # under the line: left alone
        log_rows(memory.con, 16)
        assert db.log_bytes(data) > db.QUIET_CHECKPOINT  # (no commit checkpointed it)
        work._worker.last_request = time.monotonic() - 2  # quiet, but a request came 2 s ago: not yet
        work.step()
        assert db.log_bytes(data) > db.QUIET_CHECKPOINT
        work._worker.last_request = time.monotonic() - idle.CHECKPOINT_QUIET_SECONDS - 1
        assert work.step()
        assert db.log_bytes(data) < 1 << 20
        log_rows(memory.con, 4)
        work.step()
        assert 3 << 20 < db.log_bytes(data) < db.QUIET_CHECKPOINT
        work._worker.last_request = time.monotonic() - idle.CHECKPOINT_IDLE_SECONDS - 1
        assert work.step()
        assert db.log_bytes(data) < 1 << 20  # no request for long: a smaller log is written into the file too
        log_rows(memory.con, 4)
    assert db.log_bytes(data) == 0  # closed: written into the file
    with Memory(data) as memory:
        assert memory.con.execute("SELECT count(*) FROM logged").fetchone() == (28 * 5 * 1000,)
