"""Two traits of an event's text that ranking uses as priors (:func:`claude_memory.core.ranking.fuse`),
computed by DuckDB when the event is stored and kept in the events table, so that the in-memory event map
loads them with the rest (reading the text for them at every reload took 300 ms at 100k events):

- ``is_question``: the text ends with a question mark. A short question is rarely the memory wanted: its
  answer, right after it, is.
- ``names_time``: the text names a time (:data:`TIME_WORDS`): a relative day or period ("yesterday",
  "today", "last week", "recently", "lately"), a duration ("three years", "a few days"), a weekday, a month
  (not "may") or a number from 1900 to 2099. It is what a question asking "when" or "how long" needs.

Both are SQL expressions over the ``text`` column, so new events (:mod:`claude_memory.store.writer`) and the
migration that filled them for older stores compute exactly the same thing (the migration refers to these
definitions rather than a frozen copy: a store upgraded later gets what the writer computes then). Changing
one means a new migration that recomputes the column. In RE2, white space, word boundaries and case
folding are ASCII only.
"""

from __future__ import annotations

from typing import Final

_NUMBER: Final = r"([0-9]+|a|an|one|two|three|four|five|six|seven|eight|nine|ten|few|several|couple of)"
_PERIOD: Final = (
    r"(week|weekend|month|year|night|morning|afternoon|evening|summer|winter|spring|fall|autumn|"
    r"monday|tuesday|wednesday|thursday|friday|saturday|sunday)"
)
# RE2 (DuckDB) syntax. "may" is left out: far more often the verb than the month.
TIME_WORDS: Final = (
    r"\b(yesterday|today|tonight|tomorrow|ago|recently|lately|"
    rf"(last|next|this|past|coming) {_PERIOD}|"
    r"monday|tuesday|wednesday|thursday|friday|saturday|sunday|weekend|"
    r"january|february|march|april|june|july|august|september|october|november|december|"
    r"(19|20)[0-9][0-9]|"
    rf"{_NUMBER} (days?|weeks?|months?|years?))\b"
)


def is_question(column: str) -> str:
    """SQL: whether the text in ``column`` ends with a question mark (trailing white space aside)."""
    return rf"regexp_matches({column}, '\?\s*$')"


def names_time(column: str) -> str:
    """SQL: whether the text in ``column`` names a time (:data:`TIME_WORDS`, any case)."""
    return f"regexp_matches({column}, '{TIME_WORDS}', 'i')"
