"""The text traits DuckDB computes for each stored event (store/traits.py), on an in-memory database."""

from __future__ import annotations

import duckdb
import pytest

from claude_memory.store import traits


def traits_of(text: str) -> tuple[bool, bool]:
    con = duckdb.connect()
    row = con.execute(
        f"SELECT {traits.is_question('t')}, {traits.names_time('t')} FROM (SELECT ? AS t)", [text]
    ).fetchone()
    assert row is not None
    return bool(row[0]), bool(row[1])


@pytest.mark.parametrize(
    ("text", "question"),
    [
        ("What kind of yoga is it?", True),
        ("Should I also update the tests?\n\n", True),
        ("Is it? No. It was the cache.", False),
        ("done ?x", False),
        ("", False),
    ],
)
def test_a_question_is_a_text_ending_with_a_question_mark(text: str, question: bool) -> None:
    assert traits_of(text)[0] is question


@pytest.mark.parametrize(
    ("text", "names_time"),
    [
        ("I went there yesterday", True),
        ("We shipped it 3 days ago.", True),
        ("Last Friday we met the team", True),
        ("I've had them for three years now", True),
        ("the release in March", True),
        ("copyright 2023", True),
        ("I may try it", False),  # the verb, not the month
        ("target es2020 in tsconfig", False),  # no word boundary
        ("the marching band", False),
        ("Fixed the flaky test in test_auth.py", False),
    ],
)
def test_a_text_names_a_time_with_relative_days_durations_weekdays_months_or_years(text: str, names_time: bool) -> None:
    assert traits_of(text)[1] is names_time
