"""Faults of the store itself, as a user meets them: a damaged file is told from a busy one and named in one
sentence, ``doctor`` says so, the hooks stay fast and silent instead of starting a service that dies on every
prompt, and ``repair`` rebuilds the store from the transcripts with every forget still applied (byte scan).
Without a service, parallel commands take turns instead of failing."""

from __future__ import annotations

import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import duckdb
import pytest

from claude_memory.core import locations
from claude_memory.core.filters import EventFilters
from claude_memory.service.memory import Memory
from claude_memory.store import db
from support import own_fixtures
from support.waiting import wait_for

REPO = Path(__file__).resolve().parents[2]
HOOK = REPO / "hooks" / "claude-memory-hook"
FORGOTTEN = own_fixtures.RANKING  # the session the user forgot
KEPT = own_fixtures.ECHO_WORD  # text that stays: proves the byte scan can see stored text

Cli = Callable[..., subprocess.CompletedProcess[str]]


def _env(data: Path, home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("CLAUDE")}
    env |= {"CLAUDE_MEMORY_HOME": str(data), "CLAUDE_CONFIG_DIR": str(home)}
    return env | {"CLAUDE_MEMORY_PYTHON": sys.executable}


def _run(data: Path, home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "claude_memory", *args], env=_env(data, home),
                          capture_output=True, text=True, timeout=300)  # fmt: skip


def _ids(data: Path) -> list[int]:
    with Memory(data) as memory:
        return sorted(int(r[0]) for r in memory.con.execute("SELECT id FROM events").fetchall())


def _pieces_only_in(memory: Memory, session: str) -> list[str]:
    """12-character pieces of the session's texts that no other event holds."""
    rows = memory.con.execute("SELECT session_id, text FROM events").fetchall()
    others = "\n".join(str(t) for s, t in rows if s != session)
    mine = [str(t) for s, t in rows if s == session]
    pieces = {t[i : i + 12] for t in mine for i in range(0, max(1, len(t) - 11), 7)}
    return sorted(p for p in pieces if p.strip() and sum(c.isalnum() for c in p) >= 8 and p not in others)


def _raw(data: Path) -> bytes:
    return b"".join(p.read_bytes() for p in data.rglob("*") if p.is_file() and "damaged" not in p.parts)


@pytest.fixture()
def forgotten_store(tmp_path: Path, fixtures_home: Path) -> tuple[Path, Path, list[str], list[int]]:
    """A store of the fixtures in which the user forgot one session (through the CLI), the pieces of text only
    that session held, and the event ids a clean import of everything else gives."""
    home, data = tmp_path / "claude", tmp_path / "data"
    shutil.copytree(fixtures_home, home)
    assert _run(data, home, "import", "--no-wait", "--settle-seconds", "0").returncode == 0
    with Memory(data) as memory:
        pieces = _pieces_only_in(memory, FORGOTTEN)
    assert len(pieces) >= 20
    done = _run(data, home, "forget", "--session", FORGOTTEN, "--yes")
    assert done.returncode == 0, done.stderr
    reference = _ids(data)
    return home, data, pieces, reference


def _text_block(path: Path) -> int:
    """The file offset of a block holding the events' text (DuckDB: three 4 KiB headers, then 256 KiB blocks)."""
    con = duckdb.connect(str(path), read_only=True)
    try:
        row = con.execute(
            "SELECT block_id FROM pragma_storage_info('events') WHERE column_name = 'text' AND persistent "
            "AND block_id >= 0 ORDER BY block_id LIMIT 1"
        ).fetchone()
    finally:
        con.close()
    assert row is not None
    return 3 * 4096 + int(row[0]) * 262_144


def _damage(path: Path, kind: str) -> None:
    block = _text_block(path) if kind == "block" else 0
    size = path.stat().st_size
    with path.open("r+b") as fh:
        if kind == "truncated":
            fh.truncate(size // 3)
        elif kind == "header":
            fh.seek(0)
            fh.write(os.urandom(64))
        else:  # a block the events' text is in, garbled as a failing disk leaves it
            fh.seek(block + 4096)
            fh.write(os.urandom(4096))


def _hook_seconds(data: Path, home: Path) -> float:
    payload = {"session_id": "after-damage", "transcript_path": str(home / "projects" / "x.jsonl"),
               "cwd": own_fixtures.WORK, "hook_event_name": "UserPromptSubmit",
               "prompt": "what did we echo"}  # fmt: skip
    started = time.perf_counter()
    done = subprocess.run([str(HOOK), "UserPromptSubmit"], input=json.dumps(payload).encode(),
                          env=_env(data, home), capture_output=True, timeout=60)  # fmt: skip
    took = time.perf_counter() - started
    assert (done.returncode, done.stdout, done.stderr) == (0, b"", b"")
    return took


@pytest.mark.parametrize("kind", ["block", "truncated", "header"])
def test_a_damaged_store_is_named_kept_quiet_and_repaired_without_bringing_forgotten_memories_back(
    forgotten_store: tuple[Path, Path, list[str], list[int]], kind: str
) -> None:
    home, data, pieces, reference = forgotten_store
    _damage(data / db.DB_FILE, kind)

    # One right sentence, its own exit code; never "in use by another process".
    done = _run(data, home, "search", "ruff format")
    assert done.returncode == 5, (done.returncode, done.stderr)
    assert done.stderr.count("\n") == 1 and "is damaged and cannot be read; run 'claude-memory repair'" in done.stderr
    assert "in use" not in done.stderr

    # doctor names it (other checks, e.g. the plugin's, are not this test's business)
    doctor = json.loads(_run(data, home, "doctor", "--json").stdout)
    (store,) = [c for c in doctor["checks"] if c["name"] == "store"]
    assert store["status"] == "error" and "damaged" in store["message"] and "repair" in store["message"]

    # The first hook starts a service. One that cannot open the store records why and exits, and the hooks
    # then start none (each would die the same way); one that opened it (the damage lies in a block read only
    # by queries) answers every hook at once with the error. Either way a hook costs no more than the
    # interpreter's start, prints nothing, and `status` says what is wrong.
    log = data / "logs" / "hooks.log"

    def met() -> bool:
        _hook_seconds(data, home)
        return "damaged" in log.read_text(encoding="utf-8")

    wait_for(met, what="a hook to meet the damage")
    times = [_hook_seconds(data, home) for _ in range(5)]
    assert statistics.median(times) < 0.1, times
    status = _run(data, home, "status")
    assert status.returncode == 5 and "is damaged and cannot be read; run 'claude-memory repair'" in status.stderr
    if locations.store_damaged(str(data)):  # recorded: no service runs, none is started
        assert subprocess.run(["pgrep", "-f", "--", f"--data-dir {data} serve"], capture_output=True).returncode == 1
    else:
        assert kind == "block"  # a service runs and says it on every request

    repaired = _run(data, home, "repair")
    assert repaired.returncode == 0, repaired.stderr
    assert "Forgotten memories kept forgotten: " in repaired.stdout and "moved to" in repaired.stdout
    assert not locations.store_damaged(str(data)) and list((data / "damaged").iterdir())
    assert _ids(data) == reference  # everything back but what was forgotten
    with Memory(data) as memory:
        assert memory.history(EventFilters(session_id=FORGOTTEN), 10) == []
        memory.con.execute("SET force_compression = 'uncompressed'")
        memory.con = db.rewrite(memory.con, data)  # every stored string written out plainly, for the scan
    raw = _raw(data)
    assert KEPT.encode() in raw  # the scan sees stored text
    leaked = [p for p in pieces if p.encode() in raw]
    assert not leaked, leaked[:5]
    assert _run(data, home, "search", "ruff format").returncode == 0


def test_repair_leaves_a_sound_store_alone_unless_forced(
    forgotten_store: tuple[Path, Path, list[str], list[int]],
) -> None:
    home, data, _, reference = forgotten_store
    done = _run(data, home, "repair")
    assert done.returncode == 0 and "is sound; nothing to repair" in done.stdout
    assert not (data / "damaged").exists()
    # The ledger outlives the store: even a forced rebuild keeps the session forgotten.
    (data / db.DB_FILE).unlink()
    done = _run(data, home, "repair", "--force")
    assert done.returncode == 0, done.stderr
    assert _ids(data) == reference


def test_a_store_from_before_the_ledger_has_its_tombstones_copied_out_when_opened(
    forgotten_store: tuple[Path, Path, list[str], list[int]],
) -> None:
    _, data, _, _ = forgotten_store
    ledger = data / "forgotten.jsonl"
    lines = ledger.read_text(encoding="utf-8").splitlines()
    assert len(lines) == 1 and FORGOTTEN in lines[0]
    record = json.loads(lines[0])
    assert set(record) == {"v", "at", "selector", "events"} and all(len(e) == 2 for e in record["events"])
    ledger.unlink()  # as a store from an older version has none
    with Memory(data):
        pass
    assert {tuple(e) for e in json.loads(ledger.read_text(encoding="utf-8"))["events"]} == {
        tuple(e) for e in record["events"]
    }


def test_parallel_commands_without_a_service_wait_their_turn(tmp_path: Path, fixtures_home: Path) -> None:
    home, data = tmp_path / "claude", tmp_path / "data"
    shutil.copytree(fixtures_home, home)

    def start(*args: str) -> subprocess.Popen[str]:
        return subprocess.Popen([sys.executable, "-m", "claude_memory", *args], env=_env(data, home),
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)  # fmt: skip

    imports = [start("import", "--no-wait", "--settle-seconds", "0", "--json") for _ in range(4)]
    searches: list[subprocess.Popen[str]] = []
    for _ in range(5):
        batch = [start("search", "ruff format", "--json") for _ in range(8)]
        searches += batch
        for proc in batch:
            proc.wait(timeout=600)
    for proc in imports:
        proc.wait(timeout=600)
    outcomes = [(p.returncode, (p.stderr.read() if p.stderr else "")) for p in [*imports, *searches]]
    assert [code for code, _ in outcomes] == [0] * 44, [o for o in outcomes if o[0]][:3]
    assert any("Waiting for another claude-memory process" in err for _, err in outcomes)
    new = [json.loads(p.stdout.read() if p.stdout else "")["events"]["new"] for p in imports]
    assert sorted(new)[:3] == [0, 0, 0] and max(new) > 0  # one did the work, the others found it done
    with Memory(tmp_path / "reference") as memory:
        memory.import_history(home, settle_seconds=0)
    assert _ids(data) == _ids(tmp_path / "reference")
