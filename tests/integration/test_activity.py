"""The dashboard's two reads over a real store of the project's own fixtures: activity per day (its window ends
at the most recent event) and what arrived after an insertion number (the live view's poll)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from claude_memory.core.filters import EventFilters
from claude_memory.service import dispatch
from claude_memory.service.local import LocalEngine
from claude_memory.service.memory import Memory
from claude_memory.service.operations import registry
from support.own_fixtures import SHOP


@pytest.fixture(scope="module")
def engine(tmp_path_factory: pytest.TempPathFactory, fixtures_home: Path) -> Iterator[LocalEngine]:
    memory = Memory(tmp_path_factory.mktemp("activity"))
    found = LocalEngine(memory)
    try:
        memory.import_history(fixtures_home, settle_seconds=0)
        yield found
    finally:
        found.close()


def call(engine: LocalEngine, method: str, **params: object) -> Any:
    return dispatch.run(engine, registry(), method, dict(params))


def test_activity_counts_every_event_of_its_window_by_day_and_type(engine: LocalEngine) -> None:
    events = engine.memory.history(EventFilters(), 10_000)
    days = Counter((e.ts.date().isoformat(), e.type) for e in events if e.ts is not None)
    last = max(day for day, _ in days)
    found = call(engine, "activity", days=3660)
    assert found["last_day"] == last
    assert {(d["day"], t): n for d in found["days"] for t, n in d["by_type"].items()} == dict(days)
    assert all(d["total"] == sum(d["by_type"].values()) == sum(d["by_project"].values()) for d in found["days"])
    per_project = Counter((e.ts.date().isoformat(), e.project or "(none)") for e in events if e.ts is not None)
    assert {(d["day"], p): n for d in found["days"] for p, n in d["by_project"].items()} == dict(per_project)
    assert [d["day"] for d in found["days"]] == sorted(d["day"] for d in found["days"])
    counts = [p["events"] for p in found["projects"]]
    assert counts == sorted(counts, reverse=True) and sum(counts) == len(events)
    week = call(engine, "activity", days=1)
    assert week["first_day"] == week["last_day"] == last and [d["day"] for d in week["days"]] == [last]
    shop = call(engine, "activity", days=3660, project=SHOP)
    assert {p["project"] for p in shop["projects"]} == {SHOP}
    assert sum(d["total"] for d in shop["days"]) == sum(1 for e in events if e.project == SHOP and e.ts)


def test_changes_start_with_the_newest_number_then_give_what_came_after_in_order(engine: LocalEngine) -> None:
    start = call(engine, "changes")
    events = engine.memory.history(EventFilters(), 10_000)
    newest = max(e.seq for e in events)
    assert start == {"seq": newest, "events": [], "more": False}
    after = sorted(events, key=lambda e: e.seq)[-5:]
    first = call(engine, "changes", after_seq=after[0].seq - 1, limit=3)
    assert [e["id"] for e in first["events"]] == [e.id for e in after[:3]] and first["more"] is True
    rest = call(engine, "changes", after_seq=first["seq"], limit=3)
    assert [e["id"] for e in rest["events"]] == [e.id for e in after[3:]] and rest["more"] is False
    assert rest["seq"] == newest
    assert call(engine, "changes", after_seq=newest)["events"] == []


def test_sessions_come_a_page_at_a_time_with_before(engine: LocalEngine) -> None:
    every = call(engine, "sessions", limit=100)
    assert len(every) > 3
    paged, before = [], None
    while True:
        page = call(engine, "sessions", limit=3, **({"before": before} if before else {}))
        paged += page
        if len(page) < 3:
            break
        before = page[-1]["last_ts"]
    assert [s["session_id"] for s in paged] == [s["session_id"] for s in every if s["last_ts"]]
