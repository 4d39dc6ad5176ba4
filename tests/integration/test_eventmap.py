"""The in-memory event map agrees with DuckDB: session neighbours, filters, and label -> event mapping, on a
store built from the real fixture tree (tests/fixtures); and it follows imports and forgets."""

from __future__ import annotations

import re
import shutil
from datetime import UTC, datetime
from pathlib import Path

import duckdb
import numpy as np
import pytest

from claude_memory.core.filters import EventFilters, ForgetSelector
from claude_memory.core.ranking import KEYWORD, NO_TIME, Facts, Scope, micros
from claude_memory.service.memory import Memory
from claude_memory.store import db
from claude_memory.store.eventmap import EventMap
from claude_memory.store.traits import TIME_WORDS
from support import own_fixtures
from support.old_store import drop_tables_after

WORK = own_fixtures.WORK


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


def neighbour_ids(facts: Facts) -> dict[int, tuple[int | None, int | None]]:
    ids = facts.ids.tolist()
    return {
        i: (ids[p] if p >= 0 else None, ids[n] if n >= 0 else None)
        for i, p, n in zip(ids, facts.prev.tolist(), facts.next.tolist(), strict=True)
    }


def test_neighbours_and_facts_match_duckdb_for_every_event(store: Path, tmp_path: Path) -> None:
    with Memory(shutil.copytree(store, tmp_path / "d")) as memory:
        expected = sql_neighbours(memory)
        event_map = EventMap()
        event_map.refresh(memory.con)
        first = memory.con.execute("SELECT session_id FROM events LIMIT 1").fetchone()
        assert first is not None
        some_session = first[0]
        got = event_map.facts(list(expected), EventFilters(), Scope(project=WORK, session_id=some_session))
        assert set(got.ids.tolist()) == set(expected) and len(got) == len(expected) > 80
        assert neighbour_ids(got) == expected
        rows = memory.con.execute("SELECT id, session_id, project, ts FROM events").fetchall()
        row_of = {int(i): r for r, i in enumerate(got.ids.tolist())}
        session_of: dict[str, int] = {}
        for event_id, session_id, event_project, ts in rows:
            row = row_of[int(event_id)]
            assert session_of.setdefault(session_id, int(got.session[row])) == got.session[row]  # one code each
            assert got.ts[row] == (micros(ts) if ts else NO_TIME)
            assert got.same_project[row] == (event_project == WORK)
            assert got.same_session[row] == (session_id == some_session)
        assert len(set(session_of.values())) == len(session_of)


def test_filters_skip_to_the_nearest_admitted_neighbour(store: Path, tmp_path: Path) -> None:
    with Memory(shutil.copytree(store, tmp_path / "d")) as memory:
        expected = sql_neighbours(memory, f"type IN ('user_prompt', 'agent_response') AND project = '{WORK}'")
        event_map = EventMap()
        event_map.refresh(memory.con)
        filters = EventFilters(project=WORK, types=("user_prompt", "agent_response"))
        everything = [int(r[0]) for r in memory.con.execute("SELECT id FROM events").fetchall()]
        got = event_map.facts(everything, filters)
        assert neighbour_ids(got) == expected
        since = datetime(2100, 1, 1, tzinfo=UTC)
        assert len(event_map.facts(everything, EventFilters(since=since))) == 0


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
        strangers = np.asarray([-1, int(labels.max()) + 1, 10**9], dtype=np.int64)  # labels never given out
        assert event_map.events_of_labels(strangers).tolist() == [-1, -1, -1]
        victim = int(chunks[0][1])
        assert memory.forget(ForgetSelector(event_ids=(victim,))) == 1
        event_map.refresh(memory.con)
        assert event_map.positions([victim]).tolist() == [-1]
        assert event_map.events_of_labels(labels[:1]).tolist() == [-1]
        survivors = [int(r[1]) for r in chunks if int(r[1]) != victim]
        assert (event_map.positions(survivors) >= 0).all()


def expected_traits(memory: Memory) -> dict[int, tuple[int, bool, bool]]:
    """Each event's (length, is question, names a time) recomputed here with Python's re from its text, told
    to be ASCII only like DuckDB's RE2 (white space, word boundaries and case)."""
    names_time = re.compile(TIME_WORDS, re.IGNORECASE | re.ASCII)
    rows = memory.con.execute("SELECT id, kw_len, text FROM events").fetchall()
    return {
        int(i): (int(n), re.search(r"\?[ \t\n\f\r]*$", text) is not None, names_time.search(text) is not None)
        for i, n, text in rows
    }


def traits_of(event_map: EventMap, ids: list[int]) -> dict[int, tuple[int, bool, bool]]:
    facts = event_map.facts(ids, EventFilters())
    return {
        int(i): (int(n), bool(q), bool(t))
        for i, n, q, t in zip(facts.ids, facts.length, facts.question, facts.names_time, strict=True)
    }


def test_text_traits_are_stored_with_each_event_and_reach_ranking(store: Path, tmp_path: Path) -> None:
    with Memory(shutil.copytree(store, tmp_path / "d")) as memory:
        expected = expected_traits(memory)
        event_map = EventMap()
        event_map.refresh(memory.con)
        assert traits_of(event_map, list(expected)) == expected
    questions = sum(q for _, q, _ in expected.values())
    timed = sum(t for _, _, t in expected.values())
    assert 0 < questions < len(expected) and 0 < timed < len(expected)  # the real fixtures have both kinds


def test_a_store_from_before_the_traits_gains_them_when_opened(store: Path, tmp_path: Path) -> None:
    data = shutil.copytree(store, tmp_path / "d")
    with Memory(data) as memory:
        expected = expected_traits(memory)
    old = duckdb.connect(str(data / db.DB_FILE))
    try:  # back to the schema of migration 0006
        old.execute("ALTER TABLE events DROP COLUMN names_time")
        old.execute("ALTER TABLE events DROP COLUMN is_question")
        drop_tables_after(old, 6)
    finally:
        old.close()
    with Memory(data) as memory:
        assert db.schema_version(memory.con) == len(db.MIGRATIONS)
        event_map = EventMap()
        event_map.refresh(memory.con)
        assert traits_of(event_map, list(expected)) == expected


def test_search_gives_the_time_bonus_only_to_a_question_asking_when(store: Path, tmp_path: Path) -> None:
    with Memory(shutil.copytree(store, tmp_path / "d")) as memory:
        timed = {int(r[0]) for r in memory.con.execute("SELECT id FROM events WHERE names_time").fetchall()}
        row = memory.con.execute(
            "SELECT text FROM events WHERE names_time AND type = 'user_prompt' ORDER BY id LIMIT 1"
        ).fetchone()
        assert row is not None
        words = " ".join(re.findall(r"[A-Za-z]{5,}", row[0])[:4])
        bonus = {}
        for query in (f"When did we {words}?", f"Why did we {words}?"):
            hits, _ = memory.search(query, EventFilters(), 20, "keyword")
            assert any(h.event.id in timed for h in hits)
            parts = [(h.event.id, h.components or {}) for h in hits]
            bonus[query] = {i: c["time"] for i, c in parts if "time" in c}  # not follow-ups alone: they have none
        asked, other = bonus.values()
        assert {i for i, t in asked.items() if t == KEYWORD.names_time} == {i for i in asked if i in timed}
        assert any(i in timed for i in asked) and set(other.values()) == {0.0}
