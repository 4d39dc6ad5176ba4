"""Endless mode's rules (core/endless.py, SEED_SPEC §9): the continuity score and its transitions, topics, and the
consolidation with its confidence formula."""

from __future__ import annotations

import math
from datetime import datetime, timedelta

import pytest

from claude_memory.core.endless import Item, Snapshot, confidence, consolidate, continuity, snapshot, topics

T0 = datetime(2026, 11, 27, 9, 0)


def test_the_first_prompt_is_a_break_at_one_half() -> None:
    assert continuity(None, snapshot("fix the api"), timedelta()) == continuity(None, Snapshot(), timedelta(hours=9))
    assert (
        continuity(None, Snapshot(), timedelta()).score == 0.5
        and continuity(None, Snapshot(), timedelta()).transition == "break"
    )


@pytest.mark.parametrize(
    ("a", "b", "hours", "expected"),
    [
        # identical topics, files and entities, no time between: 0.3 + 0.2 + 0.3 + 0.2
        (Snapshot(("api",), ("a.py",), ("CartService",)), Snapshot(("api",), ("a.py",), ("CartService",)), 0, 1.0),
        # nothing shared, an instant later: only time proximity, 0.3 -> a break
        (Snapshot(("api",), ("a.py",), ("X",)), Snapshot(("git",), ("b.py",), ("Y",)), 0, 0.3),
        # half the topics (Jaccard 1/3), same files, 48 h later (proximity e^-1)
        (Snapshot(("api", "test")), Snapshot(("api", "bug")), 48, 0.3 / 3 + 0.3 * math.exp(-1)),
    ],
)
def test_the_score_is_the_seeds_weighted_sum(a: Snapshot, b: Snapshot, hours: float, expected: float) -> None:
    assert continuity(a, b, timedelta(hours=hours)).score == pytest.approx(expected, abs=1e-4)


def test_transitions_follow_the_thresholds() -> None:
    same = Snapshot(("api",), ("a.py",), ("CartService",))
    assert continuity(same, same, timedelta()).transition == "seamless"
    shifted = Snapshot(("api", "test"), ("a.py",), ())
    step = continuity(same, shifted, timedelta(minutes=5))  # 0.15 + 0.2 + ~0.3
    assert 0.4 <= step.score < 0.7 and step.transition == "topic_shift"
    assert continuity(same, Snapshot(("git",)), timedelta(days=10)).transition == "break"


def test_snapshots_and_topics_are_read_from_text() -> None:
    snap = snapshot("Refactor the CartService in src/shop/cart.py and useCart; the api test fails in python")
    assert set(snap.topics) >= {"python", "api", "test", "refactor"}
    assert "src/shop/cart.py" in snap.files and {"CartService", "useCart"} <= set(snap.entities)
    assert topics("def apply_discount(cart):\n    fix the rounding bug") == ["apply_discount", "bug", "fix"]


def test_consolidation_groups_a_recurring_topic_with_the_seeds_confidence() -> None:
    items = [
        Item(i, T0 + timedelta(hours=i), f"Fix the discount rounding, step {i}. More.", ("discount", "fix"))
        for i in range(4)
    ]
    items.append(Item(9, T0, "Something else entirely, about the docs.", ("docs",)))
    (made,) = consolidate(items, set())
    assert made.source_events == [0, 1, 2, 3] and made.topics[:2] == ["discount", "fix"]
    assert made.summary.startswith("Topics: discount, fix\n\nKey points:\n- Fix the discount rounding, step 0.")
    # 4 events, an hour apart, 2 topics: 0.4 * 0.4 + 0.4 * (1 - 1/24) + 0.2 * 1
    assert made.confidence == pytest.approx(0.4 * 0.4 + 0.4 * (23 / 24) + 0.2, abs=1e-4)
    assert confidence(20, timedelta(days=2), 6) == pytest.approx(0.4 + 0 + 0.1)
    assert consolidate(items, {2}) == []  # an event already consolidated: the group is not made again
    assert consolidate(items[:2], set()) == []  # fewer than three events
