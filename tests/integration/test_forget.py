"""Forget removes content from the events table, the keyword index and the bytes of the file."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

from claude_memory.service.memory import ForgetSelector, Memory
from claude_memory.store.keyword import KeywordFilters


def _line(obj: dict[str, object]) -> str:
    return json.dumps(obj) + "\n"


def _prompt(uuid: str, session: str, text: str, ts: str) -> dict[str, object]:
    return {
        "type": "user",
        "uuid": uuid,
        "sessionId": session,
        "timestamp": ts,
        "cwd": "/nonexistent/proj",
        "message": {"role": "user", "content": text},
    }


def write_home(home: Path) -> None:
    folder = home / "projects" / "-nonexistent-proj"
    folder.mkdir(parents=True)
    (folder / "s1.jsonl").write_text(
        _line(_prompt("u1", "s1", "the zebraquokka migration plan for the payments table", "2026-01-01T10:00:00.000Z"))
        + _line(_prompt("u2", "s1", "keep the canarykeeper note about retries", "2026-03-01T10:00:00.000Z"))
    )
    (folder / "s2.jsonl").write_text(
        _line(_prompt("u3", "s2", "session two talks about flamingoflux caching", "2026-02-01T10:00:00.000Z"))
    )


def raw_bytes(data_dir: Path) -> bytes:
    return b"".join(p.read_bytes() for p in data_dir.rglob("*") if p.is_file())


def test_forget_event_removes_it_everywhere_and_reimport_does_not_restore_it(tmp_path: Path) -> None:
    home, data = tmp_path / "claude", tmp_path / "data"
    write_home(home)
    with Memory(data) as memory:
        # Store uncompressed so that a raw byte scan can see text at all (DuckDB compresses strings).
        memory.con.execute("SET force_compression = 'uncompressed'")
        memory.import_history(home, settle_seconds=0)
        memory.con.execute("CHECKPOINT")
        assert b"zebraquokka" in raw_bytes(data)  # the scan can see stored text
        (hit,), _ = memory.search("zebraquokka", KeywordFilters(), 5)
        assert memory.count_matching(ForgetSelector(event_ids=(hit.event.id,))) == 1
        assert memory.forget(ForgetSelector(event_ids=(hit.event.id,))) == 1
        hits, _ = memory.search("zebraquokka", KeywordFilters(), 5)
        assert hits == []
        postings = memory.con.execute("SELECT count(*) FROM kw_main WHERE event_id = ?", [hit.event.id]).fetchone()
        postings_delta = memory.con.execute(
            "SELECT count(*) FROM kw_delta WHERE event_id = ?", [hit.event.id]
        ).fetchone()
        assert postings == (0,) and postings_delta == (0,)
        assert memory.stats()["forgotten_events"] == 1
        memory.con.execute("DELETE FROM ingest_checkpoints")  # force a full re-read of the transcripts
        again = memory.import_history(home, settle_seconds=0)
        assert again.events_new == 0
        assert [h.event.text for h in memory.search("canarykeeper", KeywordFilters(), 5)[0]]
    data_bytes = raw_bytes(data)
    assert b"canarykeeper" in data_bytes  # control: kept text is still visible to this scan
    assert b"zebraquokka" not in data_bytes
    assert b"zebraquo" not in data_bytes


def test_forget_by_session_and_before_date(tmp_path: Path) -> None:
    home, data = tmp_path / "claude", tmp_path / "data"
    write_home(home)
    with Memory(data) as memory:
        memory.import_history(home, settle_seconds=0)
        assert memory.forget(ForgetSelector(session_id="s2")) == 1
        assert [s["session_id"] for s in memory.sessions(None, 10)] == ["s1"]
        assert memory.forget(ForgetSelector(before=datetime(2026, 2, 1, tzinfo=UTC))) == 1
        remaining = [e.text for e in memory.history(KeywordFilters(), 10)]
        assert remaining == ["keep the canarykeeper note about retries"]
        assert memory.forget(ForgetSelector(project="/elsewhere")) == 0
        assert memory.forget(ForgetSelector(project="/nonexistent/proj")) == 1
        assert memory.stats()["events"] == 0


def test_a_crash_between_forget_and_the_file_rewrite_is_finished_at_the_next_open(tmp_path: Path) -> None:
    home, data = tmp_path / "claude", tmp_path / "it's data"  # a quote in the path, too
    write_home(home)
    with Memory(data) as memory:
        memory.con.execute("SET force_compression = 'uncompressed'")
        memory.import_history(home, settle_seconds=0)
        (hit,), _ = memory.search("zebraquokka", KeywordFilters(), 5)
        sql, params = ForgetSelector(event_ids=(hit.event.id,)).sql()
        assert memory.writer.forget(sql, params)[0] == 1  # committed; then the process "dies" before rewriting
        memory.con.execute("CHECKPOINT")
        assert b"zebraquokka" in raw_bytes(data)  # the deleted text is still in freed blocks
    with Memory(data) as memory:  # the next open finishes the job
        assert memory.search("zebraquokka", KeywordFilters(), 5)[0] == []
        pending = memory.con.execute("SELECT count(*) FROM store_flags").fetchone()
        assert pending == (0,)
    assert b"zebraquokka" not in raw_bytes(data)
    assert b"canarykeeper" in raw_bytes(data)
