"""The in-memory event map agrees with DuckDB: session neighbours, filters, and label -> event mapping, on a
store built from the real fixture tree; and it follows imports and forgets."""

from __future__ import annotations

import shutil
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import pytest

from claude_memory.service.memory import ForgetSelector, Memory
from claude_memory.store.eventmap import EventMap
from claude_memory.store.keyword import KeywordFilters

WORK = "/home/dev/work"


@pytest.fixture(scope="module")
def store(fixtures_home: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    data = tmp_path_factory.mktemp("eventmap") / "data"
    with Memory(data) as memory:
        memory.import_history(fixtures_home, settle_seconds=0)
    return data


def sql_neighbours(memory: Memory, filters_sql: str = "TRUE") -> dict[int, tuple[int | None, int | None]]:
    rows = memory.con.execute(
        f"""SELECT id, lag(id) OVER w, lead(id) OVER w FROM events WHERE {filters_sql}
            WINDOW w AS (PARTITION BY session_id ORDER BY ts NULLS LAST, seq)"""
    ).fetchall()
    return {int(r[0]): (r[1], r[2]) for r in rows}


def test_neighbours_and_facts_match_duckdb_for_every_event(store: Path, tmp_path: Path) -> None:
    with Memory(shutil.copytree(store, tmp_path / "d")) as memory:
        expected = sql_neighbours(memory)
        event_map = EventMap()
        event_map.refresh(memory.con)
        got = event_map.candidates(list(expected), KeywordFilters())
        assert set(got) == set(expected) and len(got) == 661
        for event_id, (prev_id, next_id) in expected.items():
            assert (got[event_id].prev_id, got[event_id].next_id) == (prev_id, next_id), event_id
        rows = memory.con.execute("SELECT id, session_id, project, ts FROM events").fetchall()
        for event_id, session_id, project, ts in rows:
            fact = got[int(event_id)]
            assert (fact.session_id, fact.project) == (session_id, project)
            assert fact.ts == (ts.replace(tzinfo=UTC) if ts else None)


def test_filters_skip_to_the_nearest_admitted_neighbour(store: Path, tmp_path: Path) -> None:
    with Memory(shutil.copytree(store, tmp_path / "d")) as memory:
        expected = sql_neighbours(memory, "type IN ('user_prompt', 'agent_response') AND project = '/home/dev/work'")
        event_map = EventMap()
        event_map.refresh(memory.con)
        filters = KeywordFilters(project=WORK, types=("user_prompt", "agent_response"))
        everything = [int(r[0]) for r in memory.con.execute("SELECT id FROM events").fetchall()]
        got = event_map.candidates(everything, filters)
        assert set(got) == set(expected)
        assert {i: (c.prev_id, c.next_id) for i, c in got.items()} == expected
        since = datetime(2100, 1, 1, tzinfo=UTC)
        assert event_map.candidates(everything, KeywordFilters(since=since)) == {}


def test_labels_map_to_their_events_and_the_map_follows_forgets(
    fixtures_home: Path, tmp_path: Path, model_dir: Path
) -> None:
    data = tmp_path / "data"
    with Memory(data) as memory:
        memory.import_history(fixtures_home, project=WORK, settle_seconds=0)
        memory.embed_pending()
        event_map = EventMap()
        event_map.refresh(memory.con)
        chunks = memory.con.execute("SELECT label, event_id FROM chunks ORDER BY label").fetchall()
        labels = np.asarray([r[0] for r in chunks], dtype=np.int64)
        assert event_map.id_at(event_map.events_of_labels(labels)).tolist() == [r[1] for r in chunks]
        victim = int(chunks[0][1])
        assert memory.forget(ForgetSelector(event_ids=(victim,))) == 1
        event_map.refresh(memory.con)
        assert event_map.positions([victim]).tolist() == [-1]
        assert event_map.events_of_labels(labels[:1]).tolist() == [-1]
        survivors = [int(r[1]) for r in chunks if int(r[1]) != victim]
        assert (event_map.positions(survivors) >= 0).all()
