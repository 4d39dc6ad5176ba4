"""Hybrid fusion, follow-ups, session prior, time windows and confidence classes, on hand-made candidates."""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta

import numpy as np
import pytest

from claude_memory.core.ranking import (
    HIGH_COVERAGE,
    NO_TIME,
    SHORT_QUESTION_TERMS,
    SUBSTANCE_TERMS,
    SUGGESTED_COVERAGE,
    Facts,
    Ranked,
    Scope,
    Weights,
    asks_about_user,
    asks_to_aggregate,
    confidence,
    micros,
)
from claude_memory.core.ranking import fuse as fuse_rows
from claude_memory.core.timeexpr import TimeWindow, asks_when, find_window

OLD = datetime(2023, 5, 1, tzinfo=UTC)
NOW = datetime(2026, 11, 22, tzinfo=UTC)


@dataclass
class Row:
    session_id: str
    project: str
    ts: datetime | None
    prev_id: int | None
    next_id: int | None
    length: int = SUBSTANCE_TERMS[0]  # indexed terms: no substance prior, so that the scores below are exact
    question: bool = False
    names_time: bool = False
    user: bool = False  # the user's prompt


def session(name: str, ids: list[int], start: datetime = OLD, project: str = "/p") -> dict[int, Row]:
    """Candidate rows for consecutive events of one session, a minute apart."""
    return {
        i: Row(
            name,
            project,
            start + timedelta(minutes=n),
            ids[n - 1] if n > 0 else None,
            ids[n + 1] if n + 1 < len(ids) else None,
        )
        for n, i in enumerate(ids)
    }


def fuse(
    keyword: dict[int, float],
    semantic: dict[int, float],
    rows: dict[int, Row],
    *,
    coverage: dict[int, float] | None = None,
    window: TimeWindow | None = None,
    scope: Scope | None = None,
    now: datetime | None = None,
    weights: Weights | None = None,
    asks_when: bool = False,
    about_user: bool = False,
    aggregates: bool = False,
    chunks: dict[int, float] | None = None,
) -> list[Ranked]:
    """Every ranked row, from hand-made rows (as the event map would give them) and scores by id. A
    keyword hit without a ``coverage`` matched the whole query (coverage 1)."""
    ids = list(rows)
    row_of = {i: r for r, i in enumerate(ids)}
    sessions = sorted({r.session_id for r in rows.values()})
    scope = scope or Scope()
    facts = Facts(
        ids=np.asarray(ids, dtype=np.int64),
        session=np.asarray([sessions.index(r.session_id) for r in rows.values()], dtype=np.int64),
        ts=np.asarray([micros(r.ts) if r.ts else NO_TIME for r in rows.values()], dtype=np.int64),
        length=np.asarray([r.length for r in rows.values()], dtype=np.int64),
        question=np.asarray([r.question for r in rows.values()], dtype=bool),
        names_time=np.asarray([r.names_time for r in rows.values()], dtype=bool),
        user=np.asarray([r.user for r in rows.values()], dtype=bool),
        prev=np.asarray([row_of.get(r.prev_id, -1) if r.prev_id else -1 for r in rows.values()], dtype=np.int64),
        next=np.asarray([row_of.get(r.next_id, -1) if r.next_id else -1 for r in rows.values()], dtype=np.int64),
        same_session=np.asarray([r.session_id == scope.session_id for r in rows.values()]),
        same_project=np.asarray([r.project == scope.project for r in rows.values()]),
    )
    fused = fuse_rows(
        facts,
        facts.column(keyword),
        facts.column(semantic),
        facts.column({i: 1.0 for i in keyword} | (coverage or {}), 0.0),
        chunks=facts.column(chunks, 1.0) if chunks is not None else None,
        window=window,
        asks_when=asks_when,
        about_user=about_user,
        aggregates=aggregates,
        now=now,
        weights=weights,
    )
    return fused.top(len(fused))


def order(ranked: list[Ranked]) -> list[int]:
    return [r.event_id for r in ranked]


def test_a_long_turn_whose_best_chunk_is_as_close_as_a_short_one_ranks_below_it_with_the_chunk_penalty() -> None:
    """The best of eight chunks reaches a given cosine by chance more often than one chunk does: the penalty takes
    that bias of long turns off (a length prior would reward length itself)."""
    rows = {**session("a", [1]), **session("b", [10]), **session("c", [20])}
    semantic = {1: 0.50, 10: 0.52, 20: 0.30}
    weights = Weights(session=0, follow=0, next_keyword=0, recency=0)
    plain = fuse({}, semantic, rows, now=NOW, weights=weights, chunks={1: 1, 10: 8, 20: 1})
    assert order(plain)[:2] == [10, 1]  # without a penalty the long turn's best chunk wins
    penalised = fuse({}, semantic, rows, now=NOW, weights=replace(weights, chunk_penalty=0.1),
                     chunks={1: 1, 10: 8, 20: 1})  # fmt: skip
    assert order(penalised)[:2] == [1, 10]
    by_id = {r.event_id: r.score for r in penalised}
    assert abs(by_id[1] - 0.2 / 0.22) < 1e-9  # min-max normalised (semantic alone: all of the score)
    assert abs(by_id[10] - (1.0 - 0.1 * 3)) < 1e-9  # log2(8) doublings of 0.1 off the normalised 1.0


def test_a_hit_matching_more_of_the_query_outranks_one_repeating_a_rare_word() -> None:
    facts = {**session("a", [1]), **session("b", [10]), **session("c", [20])}
    weights = Weights(session=0, follow=0, next_keyword=0)
    ranked = fuse({1: 4.0, 10: 3.0, 20: 3.0}, {}, facts, coverage={1: 0.3, 10: 0.9, 20: 0.6}, now=NOW, weights=weights)
    assert order(ranked) == [10, 20, 1]  # BM25 x coverage^0.5: 3.0 x 0.95, 3.0 x 0.77, 4.0 x 0.55
    assert ranked[2].breakdown["keyword"] == 4.0  # the breakdown keeps the raw BM25 and the coverage
    assert ranked[2].breakdown["coverage"] == 0.3
    plain = fuse({1: 4.0, 10: 3.0, 20: 3.0}, {}, facts, coverage={1: 0.3, 10: 0.9, 20: 0.6}, now=NOW,
                 weights=Weights(session=0, follow=0, next_keyword=0, coordination=0))  # fmt: skip
    assert order(plain)[0] == 1


def test_keyword_only_ranks_by_bm25_and_keeps_the_raw_scores() -> None:
    facts = {**session("a", [1, 2, 3]), **session("b", [10, 11, 12])}
    ranked = fuse({1: 2.0, 11: 5.0}, {}, facts, now=NOW, weights=Weights(session=0, follow=0, next_keyword=0))
    assert order(ranked)[:2] == [11, 1]
    assert ranked[0].breakdown["keyword"] == 5.0
    assert ranked[1].breakdown["semantic"] == 0.0


def test_the_contextual_similarity_is_fused_and_the_plain_cosine_decides_confidence() -> None:
    facts = {**session("a", [1]), **session("b", [10])}
    rows = list(facts)
    made = Facts(
        ids=np.asarray(rows, dtype=np.int64),
        session=np.asarray([0, 1], dtype=np.int64),
        ts=np.full(2, NO_TIME, dtype=np.int64),
        length=np.full(2, 30, dtype=np.int64),
        question=np.zeros(2, dtype=bool),
        names_time=np.zeros(2, dtype=bool),
        user=np.zeros(2, dtype=bool),
        prev=np.full(2, -1, dtype=np.int64),
        next=np.full(2, -1, dtype=np.int64),
        same_session=np.zeros(2, dtype=bool),
        same_project=np.zeros(2, dtype=bool),
    )
    contextual, plain = np.asarray([0.3, 0.6]), np.asarray([0.7, 0.2])
    fused = fuse_rows(made, np.full(2, np.nan), contextual, np.zeros(2), cosine=plain, weights=Weights(session=0))
    top = fused.top(2)
    assert [r.event_id for r in top] == [10, 1]  # ranked by the contextual similarity ...
    assert top[0].breakdown["semantic"] == 0.6 and top[0].breakdown["cosine"] == 0.2
    assert confidence(top[1]) == "suggested" and confidence(top[0]) == "none"  # ... classed by the plain cosine


def test_the_answer_after_a_hit_is_promoted_even_when_no_component_found_it() -> None:
    facts = session("a", [1, 2, 3, 4])
    ranked = fuse({1: 3.0, 4: 1.0}, {}, facts, now=NOW, weights=Weights(session=0, next_keyword=0))
    by_id = {r.event_id: r for r in ranked}
    assert 2 in by_id and by_id[2].follows == 1
    assert by_id[2].score == pytest.approx(Weights().follow * by_id[1].score)
    assert order(ranked).index(2) < order(ranked).index(4)


def test_the_event_after_a_promoted_follow_up_is_promoted_too_and_no_further() -> None:
    facts = session("a", [1, 2, 3, 4, 5])
    weights = Weights(session=0, next_keyword=0)
    ranked = fuse({1: 3.0}, {}, facts, coverage={1: 1.0}, now=NOW, weights=weights)
    by_id = {r.event_id: r for r in ranked}
    assert by_id[3].follows == 2 and by_id[3].score == pytest.approx(by_id[2].score)
    assert by_id[3].breakdown["follow"] == pytest.approx(Weights().follow * by_id[1].score)
    assert 4 not in by_id and 5 not in by_id
    # each step away from the evidence is a class lower
    assert [confidence(by_id[i]) for i in (1, 2, 3)] == ["high", "suggested", "none"]


def test_a_question_whose_answer_matches_gains_from_it() -> None:
    facts = {**session("a", [1, 2]), **session("b", [5, 6])}
    weights = Weights(session=0, follow=0)
    ranked = fuse({2: 4.0, 5: 1.0}, {}, facts, now=NOW, weights=weights)
    by_id = {r.event_id: r for r in ranked}
    assert by_id[1].breakdown["keyword_next"] == 4.0
    assert by_id[1].score > by_id[5].score  # 0.4 * 4.0 beats 1.0


def test_session_prior_lifts_the_company_of_a_strong_hit() -> None:
    facts = {**session("a", [1, 2, 3, 4, 5, 6]), **session("b", [20, 21])}
    keyword = {1: 10.0, 5: 2.0, 21: 2.2}
    ranked = fuse(keyword, {}, facts, now=NOW, weights=Weights(follow=0, next_keyword=0))
    assert order(ranked).index(5) < order(ranked).index(21)
    flat = fuse(keyword, {}, facts, now=NOW, weights=Weights(follow=0, next_keyword=0, session=0))
    assert order(flat).index(21) < order(flat).index(5)


def test_semantic_scores_blend_with_keyword_scores() -> None:
    facts = session("a", [1, 2, 3])
    ranked = fuse({1: 1.0}, {2: 0.9, 3: 0.1, 1: 0.1}, facts, now=NOW, weights=Weights(session=0, follow=0))
    by_id = {r.event_id: r for r in ranked}
    assert by_id[1].score == pytest.approx(0.5)  # keyword 1.0 at half weight, semantic at the floor
    assert by_id[2].score == pytest.approx(0.5)
    assert by_id[3].score == pytest.approx(0.0)


def test_semantic_alone_takes_the_full_weight() -> None:
    facts = session("a", [1, 2])
    ranked = fuse({}, {1: 0.8, 2: 0.4}, facts, now=NOW, weights=Weights(session=0, follow=0))
    assert ranked[0].event_id == 1 and ranked[0].score == pytest.approx(1.0)


def test_ids_without_facts_are_left_out() -> None:
    facts = session("a", [1])
    assert order(fuse({1: 1.0, 99: 9.0}, {98: 0.9}, facts, now=NOW)) == [1]


def test_a_named_day_boosts_events_of_that_day() -> None:
    may7 = datetime(2023, 5, 7, 15, tzinfo=UTC)
    facts = {**session("a", [1], start=may7), **session("b", [2], start=may7 + timedelta(days=30))}
    window = find_window("What did we fix on 7 May 2023?")
    ranked = fuse({1: 1.0, 2: 1.2}, {}, facts, window=window, now=NOW, weights=Weights(session=0, follow=0))
    assert order(ranked) == [1, 2]
    assert ranked[0].breakdown["date"] == 1.0 and ranked[1].breakdown["date"] == 0.0


def test_a_longer_event_outranks_a_short_reply_that_matches_as_well() -> None:
    facts = {**session("a", [1]), **session("b", [2]), **session("c", [3])}
    facts[1].length, facts[2].length, facts[3].length = 2, 12, SUBSTANCE_TERMS[1] + 40
    ranked = fuse({1: 1.0, 2: 1.0, 3: 1.0}, {}, facts, now=NOW, weights=Weights(session=0, follow=0))
    assert order(ranked) == [3, 2, 1]
    parts = {r.event_id: r.breakdown["substance"] for r in ranked}
    assert parts[1] == 0.0 and 0.0 < parts[2] < Weights().substance and parts[3] == pytest.approx(Weights().substance)
    flat = fuse({1: 1.0, 2: 1.0, 3: 1.0}, {}, facts, now=NOW, weights=Weights(session=0, follow=0, substance=0))
    assert order(flat) == [1, 2, 3]  # without the prior: a tie, broken by id


def test_a_short_question_yields_to_a_statement_and_passes_on_more_to_its_answer() -> None:
    facts = {**session("a", [1, 2]), **session("b", [10]), **session("c", [20])}
    facts[1].question = True  # "What kind of yoga is it?"
    facts[20].question, facts[20].length = True, SHORT_QUESTION_TERMS + 1  # a long text that ends asking
    ranked = fuse({1: 1.0, 10: 1.0, 20: 1.0}, {}, facts, now=NOW, weights=Weights(session=0, next_keyword=0))
    by_id = {r.event_id: r for r in ranked}
    assert by_id[1].breakdown["question"] == -Weights().question and by_id[20].breakdown["question"] == 0.0
    assert order(ranked).index(10) < order(ranked).index(1) and order(ranked).index(20) < order(ranked).index(1)
    # the answer is promoted from the question's score before its penalty, at the higher rate
    assert by_id[2].follows == 1
    assert by_id[2].score == pytest.approx(Weights().follow_question * (by_id[1].score + Weights().question))
    plain = fuse({1: 1.0, 10: 1.0}, {}, {**session("a", [1, 2]), **session("b", [10])}, now=NOW,
                 weights=Weights(session=0, next_keyword=0))  # fmt: skip
    assert {r.event_id: r for r in plain}[2].score == pytest.approx(Weights().follow * by_id[10].score)


def test_an_event_naming_a_time_ranks_higher_only_when_the_query_asks_when() -> None:
    facts = {**session("a", [1]), **session("b", [2])}
    facts[2].names_time = True  # "we moved to DuckDB last week"
    weights = Weights(session=0, follow=0)
    asked = fuse({1: 1.0, 2: 1.0}, {}, facts, asks_when=True, now=NOW, weights=weights)
    assert order(asked) == [2, 1] and asked[0].breakdown["time"] == Weights().names_time
    other = fuse({1: 1.0, 2: 1.0}, {}, facts, asks_when=False, now=NOW, weights=weights)
    assert order(other) == [1, 2] and other[1].breakdown["time"] == 0.0


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("When did Melanie go camping?", True),
        ("  since when do we pin duckdb", True),
        ("How long has John been surfing?", True),
        ("what year did we drop python 3.10", True),
        ("What date was the release?", True),
        ("when did we switch to duckdb", True),
        ("When Jon opened his studio?", True),
        ("When I run pytest it fails with an import error", False),  # a prompt, not a question
        ("What did Nate feel when he won?", False),  # a clause, not the question
        ("whenever the build fails, what do we do", False),
        ("how did we fix the flaky test", False),
        ("", False),
    ],
)
def test_asks_when(query: str, expected: bool) -> None:
    assert asks_when(query) is expected


def test_the_users_own_words_rank_higher_only_for_a_question_about_the_user() -> None:
    facts = {**session("a", [1]), **session("b", [2])}
    facts[2].user = True  # "by the way, I lead four engineers now"; event 1 is Claude's answer
    weights = Weights(session=0, follow=0, own_words=0.2)
    asked = fuse({1: 1.0, 2: 0.9}, {}, facts, about_user=True, now=NOW, weights=weights)
    assert order(asked) == [2, 1] and asked[0].breakdown["own"] == pytest.approx(0.2)
    other = fuse({1: 1.0, 2: 0.9}, {}, facts, about_user=False, now=NOW, weights=weights)
    assert order(other) == [1, 2] and other[1].breakdown["own"] == 0.0


def test_the_answer_after_the_users_words_does_not_inherit_their_own_words_bonus() -> None:
    facts = session("a", [1, 2])
    facts[1].user = True  # the user's statement; event 2 is Claude's answer to it
    weights = Weights(session=0, own_words=0.2)
    ranked = {r.event_id: r for r in fuse({1: 1.0}, {}, facts, about_user=True, now=NOW, weights=weights)}
    assert ranked[1].score == pytest.approx(1.0 + 0.2)
    assert ranked[2].followed is not None and ranked[2].score == pytest.approx(Weights().follow_user * 1.0)


def test_a_question_that_counts_reaches_more_sessions_in_its_top_hits() -> None:
    facts = {**session("a", [1, 3, 5]), **session("b", [7])}
    for row in facts.values():
        row.prev_id = row.next_id = None  # no follow-ups: only the spread moves them
    weights = Weights(session=0, spread=0.1)
    counted = fuse({1: 1.0, 3: 0.97, 5: 0.95, 7: 0.9}, {}, facts, aggregates=True, now=NOW, weights=weights)
    assert order(counted) == [1, 7, 3, 5]  # each further hit of session a loses 0.1 per better one
    assert [r.score for r in counted] == pytest.approx([1.0, 0.9, 0.87, 0.75])
    other = fuse({1: 1.0, 3: 0.97, 5: 0.95, 7: 0.9}, {}, facts, aggregates=False, now=NOW, weights=weights)
    assert order(other) == [1, 3, 5, 7]


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("How many musical instruments do I currently own?", True),
        ("What is the order of the six museums I visited from earliest to latest?", True),
        ("How much more money did I raise than my goal?", True),
        ("how many hours in total did I spend driving", True),
        ("What did Caroline research?", False),
        ("where is the retry logic?", False),
    ],
)
def test_asks_to_aggregate(query: str, expected: bool) -> None:
    assert asks_to_aggregate(query) is expected


def test_a_question_about_the_user_promotes_the_answer_after_a_hit_less() -> None:
    facts = session("a", [1, 2, 3])
    facts[1].user = facts[3].user = True  # two of the user's statements; event 2 is Claude's answer to the first
    weights = Weights(session=0, follow=0.8, follow_user=0.5)
    about = fuse({1: 1.0, 3: 0.6}, {}, facts, about_user=True, now=NOW, weights=weights)
    assert order(about) == [1, 3, 2] and about[2].score == pytest.approx(0.5)
    other = fuse({1: 1.0, 3: 0.6}, {}, facts, about_user=False, now=NOW, weights=weights)
    assert order(other) == [1, 2, 3] and other[1].score == pytest.approx(0.8)


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("How many engineers do I lead now?", True),
        ("what did I name the config flag", True),
        ("Where\u2019s my old laptop?", True),
        ("Which book did I finish a week ago?", True),
        ("I keep getting this error in auth.py", False),  # a first-person statement: most prompts read so
        ("fix my flaky test", False),
        ("how do I exit vim", False),  # a how-to: its "I" is anyone
        ("Should I squash these commits?", False),
        ("What should I serve for dinner with my homegrown herbs?", True),
        ("How many engineers do I lead?", True),
        ("what was the name of that Jamaican dish you recommended I try?", False),  # what Claude said
        ("How many eggs did you say I need for the omelette?", False),
        ("can you remind me what you changed in my auth module?", False),
        ("What did Caroline research?", False),  # a question, about someone else
        ("iPhone or Android?", False),
        ("where is the I/O bottleneck, i.e. which call blocks?", False),
        ("", False),
    ],
)
def test_asks_about_user(query: str, expected: bool) -> None:
    assert asks_about_user(query) is expected


def test_recency_and_scope_break_ties() -> None:
    facts = {
        **session("old", [1], start=NOW - timedelta(days=300)),
        **session("new", [2], start=NOW - timedelta(days=1)),
    }
    ranked = fuse({1: 1.0, 2: 1.0}, {}, facts, now=NOW, weights=Weights(session=0, follow=0))
    assert order(ranked) == [2, 1]
    scoped = fuse(
        {1: 1.0, 2: 1.0}, {}, facts, scope=Scope(session_id="old"), now=NOW, weights=Weights(session=0, follow=0)
    )
    assert order(scoped) == [1, 2]


@pytest.mark.parametrize(
    ("query", "start", "end"),
    [
        ("When did Caroline go to the support group on 7 May 2023?", "2023-05-06", "2023-05-09"),
        ("what happened on May 7th, 2023", "2023-05-06", "2023-05-09"),
        ("the deploy of 2024-02-29", "2024-02-28", "2024-03-02"),
        ("What did Mel paint in July 2023?", "2023-06-30", "2023-08-02"),
        ("the release in December 2023", "2023-11-30", "2024-01-02"),
    ],
)
def test_absolute_dates_become_windows_with_a_day_of_slack(query: str, start: str, end: str) -> None:
    window = find_window(query)
    assert window is not None
    assert window.start.date().isoformat() == start
    assert window.end.date().isoformat() == end


@pytest.mark.parametrize("query", ["what did we do yesterday", "the 31 February 2023 bug", "port 2023 config", ""])
def test_no_window_without_an_absolute_date(query: str) -> None:
    assert find_window(query) is None


ASKED = datetime(2023, 3, 20, 11, 50, tzinfo=UTC)  # a Monday


@pytest.mark.parametrize(
    ("query", "start", "end"),
    [
        ("what did we do yesterday", "2023-03-18", "2023-03-21"),
        ("the bug from the day before yesterday", "2023-03-17", "2023-03-20"),
        ("What was the social media activity I participated 5 days ago?", "2023-03-14", "2023-03-17"),
        ("a couple of days ago we changed the schema", "2023-03-17", "2023-03-20"),
        ("Which book did I finish a week ago?", "2023-03-11", "2023-03-16"),  # ±2 days
        ("What gardening-related activity did I do two weeks ago?", "2023-03-04", "2023-03-09"),
        ("What charity event did I participate in a month ago?", "2023-02-11", "2023-02-26"),  # ±7 days
        ("Who did I meet with during the lunch last Tuesday?", "2023-03-13", "2023-03-16"),
        ("what did we deploy last Monday", "2023-03-12", "2023-03-15"),  # not today, a week before
        ("the three sports events during the past month", "2023-02-17", "2023-03-21"),
        ("the deploy of 2024-02-29, a week ago", "2024-02-28", "2024-03-02"),  # an absolute date wins
    ],
)
def test_relative_dates_count_from_when_the_question_is_asked(query: str, start: str, end: str) -> None:
    window = find_window(query, ASKED)
    assert window is not None
    assert (window.start.date().isoformat(), window.end.date().isoformat()) == (start, end)


@pytest.mark.parametrize("query", ["a few ago", "I never said that a week", "days ago", "the last test failed"])
def test_no_relative_window_without_a_relative_date(query: str) -> None:
    assert find_window(query, ASKED) is None


def ranked_with(coverage: float, cosine: float) -> Ranked:
    return Ranked(1, 1.0, {"coverage": coverage, "cosine": cosine})


def test_confidence_classes_come_from_absolute_evidence() -> None:
    assert confidence(ranked_with(HIGH_COVERAGE, 0.1)) == "high"
    assert confidence(ranked_with(SUGGESTED_COVERAGE, 0.1)) == "suggested"
    assert confidence(ranked_with(0.2, 0.9)) == "suggested"  # cosine alone never makes a hit high
    assert confidence(ranked_with(0.2, 0.3)) == "none"


def test_a_follow_up_is_one_class_below_its_hit() -> None:
    hit = Ranked(7, 2.0, {"coverage": 1.0, "cosine": 0.5})
    follow = Ranked(8, 1.6, {"coverage": 0.0, "cosine": 0.1}, followed=hit)
    assert confidence(follow) == "suggested"
    weak = Ranked(7, 2.0, {"coverage": 0.5, "cosine": 0.5})
    assert confidence(Ranked(8, 1.6, {"coverage": 0.0, "cosine": 0.1}, followed=weak)) == "none"
