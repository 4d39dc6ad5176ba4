"""The store queries behind the editor's hovers and lenses (store/files.py, service methods file_history and
file_summary), on a real DuckDB store imported from the fixtures, against a brute-force reading of every
event."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from claude_memory.core.filters import EventFilters
from claude_memory.service import dispatch
from claude_memory.service.local import LocalEngine
from claude_memory.service.memory import Memory
from claude_memory.service.operations import registry
from claude_memory.store import files
from claude_memory.store.queries import StoredEvent
from support import own_fixtures

PROJECT = own_fixtures.SHOP
PATH = own_fixtures.CART_FILE  # written, read, edited, grepped and formatted in the fixtures' long session


@pytest.fixture(scope="module")
def memory(tmp_path_factory: pytest.TempPathFactory, fixtures_home: Path) -> Iterator[Memory]:
    with Memory(tmp_path_factory.mktemp("files") / "data") as found:
        found.import_history(fixtures_home)
        yield found


def call(memory: Memory, method: str, params: dict[str, Any]) -> Any:
    return dispatch.run(LocalEngine(memory), registry(), method, params)


def newest_first(events: list[StoredEvent]) -> list[StoredEvent]:
    return sorted(events, key=lambda e: (e.ts is not None, e.ts, e.seq), reverse=True)


def touching(memory: Memory) -> list[StoredEvent]:
    """The events whose tool calls touched PATH, found by reading every event."""
    return [e for e in memory.history(EventFilters(), 100_000) if PATH in e.files]


@pytest.mark.parametrize("symbol", ["apply_discount", "total", "Cart", "never_said_zq"])
def test_file_history_is_the_file_and_the_symbol_newest_first(memory: Memory, symbol: str) -> None:
    everything = memory.history(EventFilters(), 100_000)
    word = re.compile(rf"(?<!\w){re.escape(symbol)}(?!\w)")
    touched = [e for e in everything if PATH in e.files]
    wanted = [e for e in everything if PATH in e.files or (e.project == PROJECT and word.search(e.text))]
    for limit in (3, 1000):
        found = files.file_history(
            memory.con, PATH, symbol=symbol, terms=memory.tokenizer.terms(symbol), project=PROJECT, limit=limit
        )
        assert [e.id for e in found.events] == [e.id for e in newest_first(wanted)[:limit]]
        assert found.file_events == len(touched) >= 6
    mentions = [e for e in wanted if PATH not in e.files]
    assert bool(mentions) == (symbol != "never_said_zq")


def test_without_a_project_the_symbol_is_looked_for_where_the_file_was_touched(memory: Memory) -> None:
    found = files.file_history(memory.con, PATH, symbol="total", terms=["total"], limit=1000)
    assert found.projects == (PROJECT,)
    elsewhere = files.file_history(memory.con, "/no/such/file.py", symbol="total", terms=["total"], limit=10)
    assert elsewhere.events == [] and elsewhere.projects == () and elsewhere.file_events == 0


def test_service_methods_cache_per_generation_and_summarise(memory: Memory) -> None:
    params = {"path": PATH, "symbol": "apply_discount", "project": PROJECT, "limit": 5}
    touched = len(touching(memory))
    first = call(memory, "file_history", params)
    assert first["unchanged"] is False and len(first["events"]) == 5 and first["file_events"] == touched
    assert first["symbol_projects"] == [PROJECT]
    assert call(memory, "file_history", {**params, "known_generation": first["generation"]}) == {
        "path": PATH,
        "symbol": "apply_discount",
        "project": PROJECT,
        "generation": first["generation"],
        "unchanged": True,
    }
    assert call(memory, "file_history", {**params, "known_generation": "0-0-0"}) == first
    summary = call(memory, "file_summary", {"paths": [PATH, "/nope.py", PATH]})
    newest = max(e.ts for e in touching(memory) if e.ts is not None)
    assert summary == {
        PATH: {"count": touched, "last_ts": newest.strftime("%Y-%m-%dT%H:%M:%S.%fZ")},
        "/nope.py": {"count": 0, "last_ts": None},
    }
    assert call(memory, "file_summary", {"paths": [PATH]}) == {PATH: summary[PATH]}
