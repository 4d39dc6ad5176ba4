"""The embedding queue's read of what is due: a short queue is read by id, a long one joined; both give the same."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest

from claude_memory.service.memory import Memory
from claude_memory.store import embedding_queue
from claude_memory.store.db import utc_now
from claude_memory.store.embedding_queue import MAX_ATTEMPTS, due


def test_a_short_queue_read_by_id_gives_what_the_join_gives(
    fixtures_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with Memory(tmp_path / "data") as memory:  # no model: every event stays queued
        memory.import_history(fixtures_home, settle_seconds=0)
        con = memory.con
        ids = [r[0] for r in con.execute("SELECT id FROM events ORDER BY seq").fetchall()]
        assert len(ids) > 40
        con.execute("UPDATE embed_queue SET attempts = ? WHERE event_id = ?", [MAX_ATTEMPTS, ids[0]])  # failed
        later = utc_now() + timedelta(hours=1)
        con.execute("UPDATE embed_queue SET not_before = ? WHERE event_id IN (?, ?)", [later, ids[1], ids[5]])
        waiting = [i for n, i in enumerate(ids) if n not in (0, 1, 5)]
        for limit in (1, 7, len(ids) + 10):
            by_id = due(con, limit)
            assert [q.event_id for q in by_id] == waiting[:limit]  # oldest stored first, none failed or backing off
            monkeypatch.setattr(embedding_queue, "BY_ID", 0)  # as a long queue is read: joined with the events
            assert due(con, limit) == by_id
            monkeypatch.setattr(embedding_queue, "BY_ID", 1_000)
        texts = dict(con.execute("SELECT id, text FROM events").fetchall())
        assert all(q.text == texts[q.event_id] for q in due(con, len(ids)))
        con.execute("UPDATE embed_queue SET attempts = ?", [MAX_ATTEMPTS])
        assert due(con, 10) == []
