"""The in-memory BM25 index answers exactly what the SQL reference (``keyword.search``) answers, on stores
built from the real fixture tree (tests/fixtures): same ids, scores and coverage for many queries and every filter kind,
and it stays so as the store changes (a second import into the delta, a merge into kw_main, new events
that were merged before the index saw them, a fold of the appended rows, a forget)."""

from __future__ import annotations

import json
import math
import random
import re
import shutil
from collections import Counter
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from claude_memory.core.filters import EventFilters, ForgetSelector
from claude_memory.core.tokens import QueryTokenizer
from claude_memory.service.memory import Memory
from claude_memory.store import keyword, postings
from claude_memory.store.eventmap import EventMap
from claude_memory.store.postings import PostingsIndex
from support import own_fixtures

WORK, SPACED, SHOP, INFRA = own_fixtures.WORK, own_fixtures.SPACED, own_fixtures.SHOP, own_fixtures.INFRA
QUERIES = ("ruff format", "apply discount", "echo hello", "container image build", "recent sessions ranking")
REL = 1e-9
Hits = list[tuple[int, float, float]]


@pytest.fixture(scope="module")
def store(fixtures_home: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    data = tmp_path_factory.mktemp("postings") / "data"
    with Memory(data) as memory:
        memory.import_history(fixtures_home, settle_seconds=0)
    return data


def close(a: float, b: float) -> bool:
    return math.isclose(a, b, rel_tol=REL, abs_tol=1e-12)


def assert_same(memory: Memory, index: PostingsIndex, events: EventMap, terms: list[str], filters: EventFilters,
                limit: int) -> Hits:  # fmt: skip
    """The index's answer equals keyword.search's. Scores are sums of floats, which DuckDB adds in its own
    order: events whose scores are equal in exact arithmetic may differ in the last bit there, so such
    near-ties may come in another order, and at the cut-off either may be the one kept."""
    got = index.search(terms, filters, limit, events)
    want = keyword.search(memory.con, terms, filters, limit + 50)  # past the cut-off, for ties across it
    assert len(got) == min(limit, len(want)), (terms, filters)
    reference = {i: (s, c) for i, s, c in want}
    for rank, (event_id, score, coverage) in enumerate(got):
        assert close(score, want[rank][1]), (terms, filters, rank)  # the same score at every rank
        assert event_id in reference, (terms, filters, event_id)
        assert close(score, reference[event_id][0]) and close(coverage, reference[event_id][1]), (terms, event_id)
    assert got == sorted(got, key=lambda h: (-h[1], h[0])), "score descending, then event id"
    if got:
        last = got[-1][1]
        decided = {i for i, s, _ in want[:limit] if not close(s, last)}  # above any tie at the cut-off
        assert decided <= {i for i, _, _ in got}, (terms, filters)
    return got


def vocabulary_queries(memory: Memory, count: int, seed: int) -> list[list[str]]:
    """Stemmed queries of 1-4 words from the store's own texts, plus a word it does not know now and then."""
    tokenizer = QueryTokenizer()
    texts = [str(r[0]) for r in memory.con.execute("SELECT text FROM events ORDER BY id").fetchall()]
    words = sorted({w for t in texts for w in re.findall(r"[A-Za-z][A-Za-z0-9_]{2,}", t)})
    rng = random.Random(seed)
    out = [tokenizer.terms(" ".join(rng.sample(words, rng.randint(1, 4)))) for _ in range(count)]
    out += [tokenizer.terms(q) for q in QUERIES]
    out += [[*q, "zzqxnotaword"] for q in out[:5]]
    return [q for q in out if q]


def filter_cases(memory: Memory) -> list[EventFilters]:
    sessions = [str(r[0]) for r in memory.con.execute("SELECT DISTINCT session_id FROM events ORDER BY 1").fetchall()]
    middle = memory.con.execute("SELECT quantile_disc(ts, 0.5) FROM events").fetchone()
    assert middle and middle[0] is not None
    mid = middle[0].replace(tzinfo=UTC)
    return [
        EventFilters(),
        EventFilters(project=WORK),
        EventFilters(project=INFRA),
        EventFilters(project="/no/such/project"),
        EventFilters(session_id=sessions[0]),
        EventFilters(session_id=sessions[-1]),
        EventFilters(types=("tool_use",)),
        EventFilters(types=("user_prompt", "agent_response")),
        EventFilters(types=("no_such_type",)),
        EventFilters(since=mid),
        EventFilters(until=mid),
        EventFilters(since=mid - timedelta(days=30), until=mid + timedelta(days=1)),
        EventFilters(project=SHOP, types=("agent_response", "tool_use"), until=datetime(2100, 1, 1, tzinfo=UTC)),
    ]


def fresh(memory: Memory) -> tuple[PostingsIndex, EventMap]:
    events = EventMap()
    index = PostingsIndex()
    index.refresh(memory.con, events.refresh(memory.con))
    return index, events


def level(memory: Memory, index: PostingsIndex, events: EventMap) -> None:
    index.refresh(memory.con, events.refresh(memory.con))


def test_same_ids_scores_and_coverage_as_sql_for_many_queries_and_every_filter(store: Path, tmp_path: Path) -> None:
    with Memory(shutil.copytree(store, tmp_path / "d")) as memory:
        index, events = fresh(memory)
        stored = memory.con.execute("SELECT count(*) FROM events").fetchone()
        assert stored is not None and index.documents == stored[0] > 80
        assert index.postings == keyword.delta_rows(memory.con) > 10 * index.documents
        cases = filter_cases(memory)
        answered = dict.fromkeys(range(len(cases)), 0)
        for n, terms in enumerate(vocabulary_queries(memory, 60, seed=1)):
            for k, filters in enumerate(cases):
                got = assert_same(memory, index, events, terms, filters, (200, 10, 1)[n % 3])
                answered[k] += bool(got)
        # every filter except the ones that match nothing let some hits through (so they were exercised)
        assert [k for k, hits in answered.items() if not hits] == [3, 8]
        assert index.search(["zzqxnotaword"], EventFilters(), 10, events) == []
        assert index.search([], EventFilters(), 10, events) == []


def test_postings_of_events_that_do_not_exist_are_not_loaded(store: Path, tmp_path: Path) -> None:
    """A crash can leave postings in kw_delta whose event was never stored (the next import removes them): a load
    skips them, wherever they fall among the others."""
    with Memory(shutil.copytree(store, tmp_path / "d")) as memory:
        stored = keyword.delta_rows(memory.con)
        clean, clean_events = fresh(memory)
        top = memory.con.execute("SELECT min(id), max(id) FROM events").fetchone()
        assert top is not None
        for missing in (int(top[0]) - 1, int(top[1]) + 1, int(top[1]) + 1000):
            memory.con.execute(
                "INSERT INTO kw_delta VALUES ('quaxelbrot', ?, 2, 3), ('ruff', ?, 1, 3)", [missing, missing]
            )
        index, events = fresh(memory)
        assert index.postings == stored and index.search(["quaxelbrot"], EventFilters(), 10, events) == []
        for terms in (["ruff"], ["ruff", "format"], *vocabulary_queries(memory, 10, seed=5)):
            assert index.search(terms, EventFilters(), 20, events) == clean.search(
                terms, EventFilters(), 20, clean_events
            )


def test_pruned_answers_equal_the_full_pass_to_the_last_bit(
    store: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """MaxScore pruning (``_pruned``) skips events that cannot reach the cut; whatever it answers is the full
    pass's answer, float for float, under every filter and cut-off."""
    with Memory(shutil.copytree(store, tmp_path / "d")) as memory:
        index, events = fresh(memory)
        texts = [str(r[0]).lower() for r in memory.con.execute("SELECT text FROM events").fetchall()]
        held = Counter(w for t in texts for w in set(re.findall(r"[a-z][a-z0-9_]{2,}", t)))
        rare = sorted(w for w, n in held.items() if 3 <= n <= 12)
        common = sorted(w for w, n in held.items() if n >= len(texts) // 10)
        rng = random.Random(3)  # where pruning pays: a rare word beside common ones
        mixed = [QueryTokenizer().terms(" ".join([rng.choice(rare), *rng.sample(common, 2)])) for _ in range(40)]
        cases = [
            (terms, filters, limit)
            for terms in [*vocabulary_queries(memory, 80, seed=2), *mixed]
            if len(terms) > 1
            for filters in filter_cases(memory)
            for limit in (1, 3, 10)
        ]
        pruning = PostingsIndex._pruned
        used: list[bool] = []

        def counted(self: PostingsIndex, *args: object) -> object:
            found = pruning(self, *args)  # type: ignore[arg-type]
            used.append(found is not None)
            return found

        monkeypatch.setattr(PostingsIndex, "_pruned", counted)
        pruned = [index.search(terms, filters, limit, events) for terms, filters, limit in cases]
        monkeypatch.setattr(PostingsIndex, "_pruned", lambda *args: None)
        full = [index.search(terms, filters, limit, events) for terms, filters, limit in cases]
        assert pruned == full
        assert sum(used) >= 100, f"pruning answered {sum(used)} of {len(used)} queries"


def test_exact_ties_break_by_event_id_at_the_cut_off(tmp_path: Path) -> None:
    home = tmp_path / "claude"
    folder = home / "projects" / "-nonexistent-ties"
    folder.mkdir(parents=True)
    lines = [
        json.dumps({"type": "user", "uuid": f"t{i}", "sessionId": "ties-1", "cwd": "/nonexistent/ties",
                    "timestamp": f"2026-06-01T08:{i:02d}:00.000Z",
                    "message": {"role": "user", "content": "identical wobblefrost text" if i % 2 else f"other {i}"}})
        for i in range(24)
    ]  # fmt: skip
    (folder / "ties-1.jsonl").write_text("\n".join(lines) + "\n")
    with Memory(tmp_path / "data") as memory:
        memory.import_history(home, settle_seconds=0)
        index, events = fresh(memory)
        got = index.search(["wobblefrost"], EventFilters(), 5, events)
        want = keyword.search(memory.con, ["wobblefrost"], EventFilters(), 5)
        assert got == want  # bit-identical: one term, the same arithmetic
        every = keyword.search(memory.con, ["wobblefrost"], EventFilters(), 100)
        assert len(every) == 12 and len({s for _, s, _ in every}) == 1
        assert [i for i, _, _ in got] == sorted(i for i, _, _ in every)[:5]


def events_by_project(home: Path, tmp_path: Path) -> dict[str, int]:
    """How many events each project of ``home`` holds, from a separate import of all of it."""
    with Memory(tmp_path / "reference") as memory:
        memory.import_history(home, settle_seconds=0)
        rows = memory.con.execute("SELECT project, count(*) FROM events GROUP BY project").fetchall()
    return {str(p): int(n) for p, n in rows}


def test_follows_imports_merges_and_forgets(fixtures_home: Path, tmp_path: Path) -> None:
    count = events_by_project(fixtures_home, tmp_path)
    work, spaced, infra = count[WORK], count[SPACED], count[INFRA]
    with Memory(tmp_path / "data") as memory:
        memory.import_history(fixtures_home, project=WORK, settle_seconds=0)
        index, events = fresh(memory)
        assert index.loads == 1 and index.documents == work
        queries_ = vocabulary_queries(memory, 20, seed=2)

        def check(expected_documents: int) -> None:
            level(memory, index, events)
            assert index.documents == expected_documents
            count = memory.con.execute("SELECT count(*) FROM kw_main").fetchone()
            delta = keyword.delta_rows(memory.con)
            assert index.postings == delta + (int(count[0]) if count else 0)
            for n, terms in enumerate([*queries_, *vocabulary_queries(memory, 20, seed=3)]):
                for filters in (EventFilters(), EventFilters(project=SPACED), EventFilters(types=("tool_use",))):
                    assert_same(memory, index, events, terms, filters, (200, 7)[n % 2])

        # a second import: the new postings are in kw_delta, appended without a reload
        memory.import_history(fixtures_home, project=SPACED, settle_seconds=0)
        assert keyword.delta_rows(memory.con) > 0
        check(work + spaced)
        assert index.loads == 1
        # merging the delta into kw_main changes nothing the index holds
        memory.writer.merge_keyword_index(force=True)
        assert keyword.delta_rows(memory.con) == 0
        check(work + spaced)
        # events merged into kw_main before the index saw them: found there, still without a reload
        memory.import_history(fixtures_home, project=INFRA, settle_seconds=0)
        memory.writer.merge_keyword_index(force=True)
        check(work + spaced + infra)
        assert index.loads == 1
        # a forget (one event, then a whole session) reloads
        row = memory.con.execute(
            "SELECT id, text FROM events WHERE project = ? AND kw_len > 3 ORDER BY id LIMIT 1", [SPACED]
        ).fetchone()
        assert row
        victim, terms = int(row[0]), QueryTokenizer().terms(str(row[1]))
        assert victim in [i for i, _, _ in index.search(terms, EventFilters(), 1000, events)]
        assert memory.forget(ForgetSelector(event_ids=(victim,))) == 1
        check(work + spaced + infra - 1)
        assert index.loads == 2
        assert victim not in [i for i, _, _ in index.search(terms, EventFilters(), 1000, events)]
        session = memory.con.execute("SELECT session_id FROM events WHERE project = ? LIMIT 1", [INFRA]).fetchone()
        assert session
        gone = memory.forget(ForgetSelector(session_id=str(session[0])))
        assert gone > 0
        check(work + spaced + infra - 1 - gone)
        assert index.loads == 3


def test_appended_rows_fold_into_the_main_ones(
    fixtures_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(postings, "FOLD_MIN_POSTINGS", 0)  # fold after every append
    with Memory(tmp_path / "data") as memory:
        memory.import_history(fixtures_home, project=WORK, settle_seconds=0)
        index, events = fresh(memory)
        for project in (SPACED, INFRA):
            memory.import_history(fixtures_home, project=project, settle_seconds=0)
            level(memory, index, events)
            assert index.loads == 1 and index.appended_postings == 0  # folded
            reference, ref_events = fresh(memory)  # built from scratch
            for terms in vocabulary_queries(memory, 30, seed=4):
                for filters in (EventFilters(), EventFilters(project=project)):
                    got = assert_same(memory, index, events, terms, filters, 50)
                    assert got == reference.search(terms, filters, 50, ref_events)


def test_memory_search_uses_the_index_and_ranks_as_with_sql(
    store: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with Memory(shutil.copytree(store, tmp_path / "d")) as memory:
        qs = [*QUERIES, "test"]
        cases = [EventFilters(), EventFilters(project=WORK), EventFilters(types=("tool_use", "user_prompt"))]

        def run() -> list[list[tuple[int, float, str]]]:
            out = []
            for q in qs:
                for filters in cases:
                    hits, _ = memory.search(q, filters, 10, mode="keyword")
                    out.append([(h.event.id, round(h.score, 9), h.confidence) for h in hits])
            return out

        calls: list[int] = []
        original = PostingsIndex.search

        def counted(self: PostingsIndex, *args: object, **kwargs: object) -> Hits:
            calls.append(1)
            return original(self, *args, **kwargs)  # type: ignore[arg-type]

        monkeypatch.setattr(PostingsIndex, "search", counted)
        in_memory = run()
        assert len(calls) == len(qs) * len(cases) and sum(map(bool, in_memory)) >= 12

        def sql(
            self: PostingsIndex, terms: list[str], filters: EventFilters, limit: int, _: EventMap, k1: float, b: float
        ) -> Hits:
            return keyword.search(memory.con, terms, filters, limit, k1=float(k1), b=float(b))

        monkeypatch.setattr(PostingsIndex, "search", sql)
        assert run() == in_memory
