"""Progressive disclosure on a real store built from the real fixture tree (tests/fixtures): the three layers,
smart search within a budget, and the layer cache's invalidation by imports and forgets."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

from claude_memory.core.disclosure import (
    DETAILS,
    HIGH,
    INDEX,
    NONE,
    SUGGESTED,
    TIMELINE,
    SearchIndex,
    SmartSearch,
    estimate_tokens,
)
from claude_memory.core.filters import EventFilters, ForgetSelector
from claude_memory.service.memory import Memory
from claude_memory.service.search import SearchHit
from support import own_fixtures

WORK = own_fixtures.WORK
ECHO = own_fixtures.ECHO_WORD
TOPIC = own_fixtures.TOPIC
BIG = own_fixtures.CART  # the fixtures' longest session
SMALL = own_fixtures.GREETING  # prompt, answer, Bash call, answer
MISSING = "mem:zzzzzz"


@pytest.fixture(scope="module")
def store(fixtures_home: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    data = tmp_path_factory.mktemp("disclosure") / "data"
    with Memory(data) as memory:
        memory.import_history(fixtures_home, settle_seconds=0)
    return data


@pytest.fixture()
def memory(store: Path) -> Iterator[Memory]:
    with Memory(store) as memory:
        yield memory


@pytest.fixture()
def own_memory(store: Path, tmp_path: Path) -> Iterator[Memory]:
    """A copy of the store for tests that import or forget."""
    shutil.copytree(store, tmp_path / "data")
    with Memory(tmp_path / "data") as memory:
        yield memory


def _session_order(memory: Memory, session: str) -> list[tuple[int, str]]:
    """(id, citation) of a session's events in session order: by time, then insertion order."""
    rows = memory.con.execute(
        "SELECT id, citation FROM events WHERE session_id = ? ORDER BY ts NULLS LAST, seq", [session]
    ).fetchall()
    return [(int(i), f"mem:{c}") for i, c in rows]


def _set_confidence(memory: Memory, monkeypatch: pytest.MonkeyPatch, by_rank: dict[int, str]) -> list[int]:
    """Make search label hits by rank (another part of search computes real confidences); returns a list
    that records each call's query."""
    real = memory.search
    calls: list[int] = []

    def search(
        query: str, filters: EventFilters, limit: int, mode: str = "hybrid", as_of: datetime | None = None
    ) -> tuple[list[SearchHit], Any]:
        hits, meta = real(query, filters, limit, mode, as_of)
        calls.append(len(hits))
        for rank, hit in enumerate(hits, start=1):
            hit.confidence = by_rank.get(rank, NONE)
        return hits, meta

    monkeypatch.setattr(memory, "search", search)
    return calls


def test_index_summarises_each_hit_in_search_order(memory: Memory) -> None:
    filters = EventFilters(project=WORK)
    index = memory.index(ECHO, filters, 10, "keyword")
    hits, _ = memory.search(ECHO, filters, 10, "keyword")
    assert len(index.entries) == len(hits) >= 5
    for rank, (entry, hit) in enumerate(zip(index.entries, hits, strict=True), start=1):
        assert (entry.rank, entry.id, entry.score, entry.confidence) == (rank, hit.event.id, hit.score, hit.confidence)
        assert entry.citation == hit.to_json()["citation"] and entry.project == WORK
        assert entry.session_id == hit.event.session_id and entry.type == hit.event.type
    expected = {  # by how the stored text begins: the call line, or the first sentence
        f"Bash: echo {ECHO}\n": f"Bash: echo {ECHO}",
        f"The command printed {ECHO}. Done.": f"The command printed {ECHO}.",
        f"Run the {ECHO} echo again and tell me what it printed": (
            f"Run the {ECHO} echo again and tell me what it printed"
        ),
        f"It printed {ECHO} again.": f"It printed {ECHO} again.",
        f"Before the compaction we ran echo {ECHO}, ": (
            f"Before the compaction we ran echo {ECHO}, which printed {ECHO}."
        ),
        "I will run the command.": "I will run the command.",  # follow-ups
        "What did we do before the compaction?": "What did we do before the compaction?",  # in a folded one's place
        "Running it again.": "Running it again.",
        "/compact focus on the echo command": "/compact focus on the echo command",
        "This session is being continued from a previous conversation that ran out of context. ": (
            "This session is being continued from a previous conversation that ran out of context."
        ),
    }
    for entry, hit in zip(index.entries, hits, strict=True):
        (start,) = [k for k in expected if hit.event.text.startswith(k)]
        assert entry.summary == expected[start]
    lines = index.text().splitlines(keepends=True)
    assert len(lines) == len(index.entries)
    assert index.tokens == sum(-(-len(line) // 4) for line in lines) == index.to_json()["meta"]["tokens"]


def test_timeline_follows_session_order_and_merges_windows(memory: Memory) -> None:
    order = _session_order(memory, BIG)
    assert len(order) >= 25
    target_id, target = order[12]
    one = memory.timeline([target], before=2, after=3)
    (window,) = one.windows
    assert window.session_id == BIG and window.project is not None
    assert [i.id for i in window.items] == [i for i, _ in order[10:16]]
    assert [i.position for i in window.items] == list(range(11, 17))
    assert [t.id for t in one.targets] == [target_id]
    assert all(len(i.preview) <= 200 and "\n" not in i.preview for i in window.items)
    assert one.tokens == estimate_tokens(one.text()) and one.missing == ()

    overlapping = memory.timeline([target, order[15][1]], before=2, after=2)
    (merged,) = overlapping.windows
    assert [i.id for i in merged.items] == [i for i, _ in order[10:18]]  # 10-14 and 13-17, once each
    assert [t.id for t in overlapping.targets] == [target_id, order[15][0]]

    apart = memory.timeline([order[22][1], order[3][1]], before=1, after=1)
    assert [[i.id for i in w.items] for w in apart.windows] == [
        [i for i, _ in order[2:5]],
        [i for i, _ in order[21:24]],
    ]

    by_id = memory.timeline([str(target_id), MISSING])
    assert [t.id for t in by_id.targets] == [target_id] and by_id.missing == (MISSING,)
    assert len(by_id.windows[0].items) == 7  # the default: 3 each side


def test_timeline_stops_at_the_ends_of_a_session(memory: Memory) -> None:
    order = _session_order(memory, SMALL)
    assert len(order) == 4
    start = memory.timeline([order[0][1]], before=3, after=1)
    assert [i.id for i in start.windows[0].items] == [i for i, _ in order[:2]]
    end = memory.timeline([order[3][1]], before=1, after=3)
    assert [i.id for i in end.windows[0].items] == [i for i, _ in order[2:]]
    nothing = memory.timeline([MISSING])
    assert nothing.windows == () and nothing.missing == (MISSING,) and nothing.tokens == 0


def test_details_carry_source_tools_and_count_citation_uses(memory: Memory) -> None:
    row = memory.con.execute(
        "SELECT citation, text FROM events WHERE tool_name = 'Edit' "
        "AND json_extract_string(metadata, '$.is_error') = 'true' AND json_exists(metadata, '$.input') "
        "ORDER BY seq LIMIT 1"
    ).fetchone()
    assert row is not None
    ref, text = f"mem:{row[0]}", row[1]
    details = memory.details(ref, via="test")
    assert details is not None and details.citation == ref and details.content == text
    assert [t.to_json() for t in details.tools] == [{"name": "Edit", "input": {"replace_all": True}, "status": "error"}]
    src = details.source
    raw = Path(src["path"]).read_bytes()[src["byte_start"] : src["byte_end"]]
    assert raw.count(b"\n") == src["line_end"] - src["line_start"] + 1
    lines = [json.loads(line) for line in raw.splitlines()]  # whole lines: the call's to its result's
    assert lines[0]["uuid"] and lines[-1]["uuid"] and lines[0]["type"] == "assistant" and lines[-1]["type"] == "user"
    assert src["uuid"].encode() in raw
    assert details.files and details.files[0] in text
    assert [n.is_target for n in details.neighbours].count(True) == 1 and len(details.neighbours) <= 5
    assert details.tokens == estimate_tokens(details.text()) and text in details.text()

    hits_before = memory.layer_cache.hits
    again = memory.details(ref, via="test")
    assert again is not None and memory.layer_cache.hits == hits_before + 1  # served from the cache ...
    assert again.citation_uses == details.citation_uses + 1  # ... yet counted
    found = memory.details(ref)
    assert found is not None
    shown = found.to_json()
    assert shown is not None and shown["citation_uses"] == details.citation_uses + 2
    legacy = {"id", "citation", "type", "timestamp", "session_id", "project", "agent_id", "tool_name", "files"}
    assert legacy | {"text", "source", "metadata", "citation_uses", "neighbours"} <= set(shown)
    assert shown["metadata"]["is_error"] is True and shown["text"] == text
    assert memory.details(MISSING) is None


BUDGETS = (0, 1, 2, 3, 5, 8, 13, 21, 34, 55, 89, 144, 233, 377, 610, 987, 1597, 2000, 4181, 100_000)


def _check_within_budget(result: SmartSearch, budget: int, ranked: list[int]) -> None:
    packing = result.packing
    assert packing.tokens <= budget
    assert estimate_tokens(result.text()) <= packing.tokens
    accounted = (
        sum(e.tokens for e, _ in packing.layers)
        + sum(d.tokens for d in packing.details)
        + (packing.timeline.tokens if packing.timeline else 0)
    )
    assert packing.tokens == accounted == result.to_json()["meta"]["tokens"]
    shown = [e.id for e, _ in packing.layers]
    assert shown == ranked[: len(shown)] and packing.omitted == len(ranked) - len(shown)


def test_smart_search_never_exceeds_the_budget(memory: Memory, monkeypatch: pytest.MonkeyPatch) -> None:
    _set_confidence(memory, monkeypatch, {1: HIGH, 2: SUGGESTED, 3: SUGGESTED})
    filters = EventFilters()
    ranked = [e.id for e in memory.index(TOPIC, filters, 8, "keyword").entries]
    assert len(ranked) == 8
    for budget in BUDGETS:
        _check_within_budget(memory.smart_search(TOPIC, filters, 8, "keyword", budget=budget), budget, ranked)
    assert memory.smart_search(TOPIC, filters, 8, "keyword", budget=0).packing.layers == ()

    full = memory.smart_search(TOPIC, filters, 8, "keyword", budget=100_000).packing
    assert [layer for _, layer in full.layers] == [DETAILS, TIMELINE, TIMELINE] + [INDEX] * 5
    (top,) = full.details
    stored = memory.con.execute("SELECT text FROM events WHERE id = ?", [ranked[0]]).fetchone()
    assert stored is not None and top.id == ranked[0] and top.content == stored[0]
    assert full.timeline is not None and {t.id for t in full.timeline.targets} == set(ranked[1:3])


def test_smart_search_with_no_confidence_keeps_index_lines(memory: Memory, monkeypatch: pytest.MonkeyPatch) -> None:
    _set_confidence(memory, monkeypatch, {})
    result = memory.smart_search(ECHO, EventFilters(), 10, "keyword", budget=100_000)
    assert result.packing.layers and {layer for _, layer in result.packing.layers} == {INDEX}
    assert result.packing.details == () and result.packing.timeline is None
    assert result.text() == memory.index(ECHO, EventFilters(), 10, "keyword").text()


def test_smart_search_counts_a_use_only_for_hits_shown_in_full(memory: Memory, monkeypatch: pytest.MonkeyPatch) -> None:
    _set_confidence(memory, monkeypatch, {1: HIGH, 2: SUGGESTED})
    entries = memory.index(TOPIC, EventFilters(), 3, "keyword").entries

    def uses(citation: str | None) -> int:
        assert citation is not None
        row = memory.con.execute("SELECT count(*) FROM citation_uses WHERE citation = ?", [citation[4:]]).fetchone()
        return int(row[0]) if row else 0

    before = [uses(e.citation) for e in entries]
    result = memory.smart_search(TOPIC, EventFilters(), 3, "keyword", budget=100_000, via="hook")
    assert [layer for _, layer in result.packing.layers] == [DETAILS, TIMELINE, INDEX]
    assert [uses(e.citation) for e in entries] == [before[0] + 1, before[1], before[2]]
    assert result.packing.details[0].citation_uses == before[0] + 1


def _transcript_line(uuid: str, text: str, minute: int) -> str:
    return json.dumps(
        {
            "type": "user",
            "uuid": uuid,
            "sessionId": "quokka-session",
            "cwd": "/x",
            "timestamp": f"2026-06-01T00:{minute:02d}:00Z",
            "message": {"role": "user", "content": text},
        }
    )


def test_cached_layers_see_newly_imported_events(
    own_memory: Memory, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    memory = own_memory
    calls: list[str] = []
    real = memory.search

    def counting(
        query: str, filters: EventFilters, limit: int, mode: str = "hybrid", as_of: datetime | None = None
    ) -> Any:
        calls.append(query)
        return real(query, filters, limit, mode, as_of)

    monkeypatch.setattr(memory, "search", counting)
    assert memory.index("quokka", EventFilters(), 5, "keyword").entries == ()
    assert memory.index("quokka", EventFilters(), 5, "keyword").entries == ()
    assert calls == ["quokka"]  # the repeat came from the cache

    home = tmp_path / "claude"
    transcript = home / "projects" / "-x" / "quokka-session.jsonl"
    transcript.parent.mkdir(parents=True)
    transcript.write_text(_transcript_line("q-1", "a brand new prompt about quokka migrations", 1) + "\n")
    memory.import_history(home, settle_seconds=0)
    (entry,) = memory.index("quokka", EventFilters(), 5, "keyword").entries
    assert entry.summary == "a brand new prompt about quokka migrations" and len(calls) == 2
    assert entry.citation is not None

    first = memory.timeline([entry.citation])
    before_details = memory.details(entry.citation)
    assert [len(w.items) for w in first.windows] == [1]
    assert before_details is not None and len(before_details.neighbours) == 1
    with transcript.open("a") as out:
        out.write(_transcript_line("q-2", "and a follow-up about wombat caching", 2) + "\n")
    memory.import_history(home, settle_seconds=0)
    later = memory.timeline([entry.citation])
    assert [i.preview for i in later.windows[0].items] == [
        "a brand new prompt about quokka migrations",
        "and a follow-up about wombat caching",
    ]
    after_details = memory.details(entry.citation)
    assert after_details is not None and len(after_details.neighbours) == 2


def test_forget_invalidates_cached_layers(own_memory: Memory) -> None:
    memory = own_memory
    filters = EventFilters(project=WORK)
    index = memory.index(ECHO, filters, 50, "keyword")
    assert len(index.entries) < 50  # every match, so one fewer shows after the forget
    victim = index.entries[0]
    assert victim.citation is not None
    assert memory.details(victim.citation) is not None
    assert memory.timeline([victim.citation]).targets[0].id == victim.id
    memory.index(ECHO, filters, 50, "keyword")
    assert memory.layer_cache.hits >= 1  # primed

    assert memory.forget(ForgetSelector(event_ids=(victim.id,))) == 1
    after = memory.index(ECHO, filters, 50, "keyword")

    def shown(found: SearchIndex) -> list[str | None]:  # the entries' citations and their folded near-duplicates'
        return [c for e in found.entries for c in (e.citation, *e.duplicates)]

    assert victim.id not in {e.id for e in after.entries} and len(shown(after)) == len(shown(index)) - 1
    assert memory.details(victim.citation) is None
    gone = memory.timeline([victim.citation])
    assert gone.windows == () and gone.missing == (victim.citation,)
