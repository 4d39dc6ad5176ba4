"""Graduation L0 -> L4 by the seed's promotion table (SEED_SPEC §4.2): each row, the reason a memory stays, the
staleness rule and the terminal level."""

from __future__ import annotations

from datetime import datetime, timedelta

import pytest

from claude_memory.core.graduation import MAX_LEVEL, Access, evaluate

NOW = datetime(2026, 11, 27, 12, 0)


def access(count: int, conf: float, sessions: int, days_ago: float) -> Access:
    return Access(count, sessions, conf, NOW - timedelta(days=days_ago))


@pytest.mark.parametrize(
    ("level", "count", "conf", "sessions", "days"),
    [(0, 1, 0.5, 1, 30), (1, 3, 0.7, 2, 60), (2, 5, 0.85, 3, 90), (3, 10, 0.92, 4, 180)],
)
def test_each_row_promotes_at_its_thresholds_and_not_one_step_below(
    level: int, count: int, conf: float, sessions: int, days: int
) -> None:
    verdict = evaluate(level, access(count, conf, sessions, days), NOW)
    assert verdict.promoted and verdict.level == level + 1 and verdict.reason is None
    below = [
        access(count - 1, conf, sessions, days),
        access(count, conf - 0.01, sessions, days),
        access(count, conf, sessions - 1, days) if level else None,  # L0 -> L1 needs no second session
        access(count, conf, sessions, days + 1),
    ]
    for metrics in filter(None, below):
        assert not evaluate(level, metrics, NOW).promoted, metrics


@pytest.mark.parametrize(
    ("level", "metrics", "reason"),
    [
        (1, (2, 0.9, 5, 1), "Access count 2 < 3"),
        (1, (3, 0.69, 5, 1), "Confidence 0.69 < 0.7"),
        (2, (5, 0.9, 2, 1), "Cross-session refs 1 < 2"),
        (3, (10, 0.95, 4, 181), "Last access 181 days ago > 180"),
        (0, (0, 0.0, 0, 0), "Access count 0 < 1"),
    ],
)
def test_the_first_failing_condition_is_the_reason(
    level: int, metrics: tuple[int, float, int, int], reason: str
) -> None:
    verdict = evaluate(level, access(*metrics), NOW)
    assert not verdict.promoted and verdict.level == level and verdict.reason == reason


def test_l4_is_terminal() -> None:
    verdict = evaluate(MAX_LEVEL, access(1_000, 1.0, 100, 0), NOW)
    assert (verdict.promoted, verdict.level, verdict.reason) == (False, MAX_LEVEL, "Already at maximum level")


def test_cross_session_refs_are_distinct_sessions_minus_one() -> None:
    assert access(5, 0.9, 3, 0).cross_session == 2 and access(5, 0.9, 0, 0).cross_session == 0
    assert not evaluate(1, access(9, 0.99, 1, 0), NOW).promoted  # many uses in one session do not make it recurring
