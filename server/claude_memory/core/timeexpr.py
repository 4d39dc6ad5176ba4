"""Dates named in a query, as a time window that search uses as a ranking signal: absolute ones ("on 7 May 2023",
"May 7, 2023", "in July 2023", "2023-05-07") and, counted from the time the question is asked, relative ones
("yesterday", "5 days ago", "two weeks ago", "a month ago", "last Tuesday", "the past week"). Also whether a
query asks for a time ("when ...", "how long ..."), which events that name one answer best."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Final

_MONTHS: Final = ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec")
_MONTH: Final = (
    r"(jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sept?(?:ember)?|"
    r"oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)"
)
_DAY: Final = r"(\d{1,2})(?:st|nd|rd|th)?"
_YEAR: Final = r"((?:19|20)\d{2})"
_DAY_MONTH_YEAR: Final = re.compile(rf"\b{_DAY}\s+(?:of\s+)?{_MONTH}\.?,?\s+{_YEAR}\b", re.IGNORECASE)
_MONTH_DAY_YEAR: Final = re.compile(rf"\b{_MONTH}\.?\s+{_DAY},?\s+{_YEAR}\b", re.IGNORECASE)
_ISO_DAY: Final = re.compile(r"\b((?:19|20)\d{2})-(\d{2})-(\d{2})\b")
_MONTH_YEAR: Final = re.compile(rf"\b{_MONTH}\.?,?\s+(?:of\s+)?{_YEAR}\b", re.IGNORECASE)
_ASKS_WHEN: Final = re.compile(
    r"\s*(when|since when|how long|what (year|month|day|date|time))\b"
    r"(\s+(did|do|does|was|were|is|are|will|would|has|have|had|can|could|should|ago)\b)?",
    re.IGNORECASE,
)
SLACK: Final = timedelta(days=1)  # a day named in a question may be the evening before or after, in UTC
_WEEKDAYS: Final = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
_COUNTS: Final = {"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
                  "eight": 8, "nine": 9, "ten": 10, "a couple of": 2, "a few": 3}  # fmt: skip
_UNIT_DAYS: Final = {"day": 1, "week": 7, "month": 30, "year": 365}
_AGO: Final = re.compile(
    r"\b(\d{1,3}|an?|one|two|three|four|five|six|seven|eight|nine|ten|a\s+couple\s+of|a\s+few)\s+(day|week|month|year)s?"
    r"\s+ago\b",
    re.IGNORECASE,
)
_LAST_WEEKDAY: Final = re.compile(rf"\blast\s+({'|'.join(_WEEKDAYS)})\b", re.IGNORECASE)
_YESTERDAY: Final = re.compile(r"\b(?:the\s+day\s+before\s+)?yesterday\b", re.IGNORECASE)
_PAST: Final = re.compile(r"\b(?:the\s+)?(?:past|last)\s+(week|month|year)\b", re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class TimeWindow:
    start: datetime  # inclusive, UTC
    end: datetime  # exclusive, UTC
    text: str  # the words that named it

    def contains(self, ts: datetime | None) -> bool:
        if ts is None:
            return False
        if ts.tzinfo is None:
            ts = ts.replace(tzinfo=UTC)
        return self.start <= ts < self.end


def _month(name: str) -> int:
    return _MONTHS.index(name[:3].lower()) + 1


def _day_window(year: int, month: int, day: int, text: str) -> TimeWindow | None:
    try:
        start = datetime(year, month, day, tzinfo=UTC)
    except ValueError:  # "31 February": not a date
        return None
    return TimeWindow(start - SLACK, start + timedelta(days=1) + SLACK, text)


def find_window(query: str, now: datetime | None = None) -> TimeWindow | None:
    """The first absolute day or month the query names, widened by :data:`SLACK`; else, when ``now`` (the time
    the question is asked) is given, the first relative one; None if it names none."""
    if match := _DAY_MONTH_YEAR.search(query):
        return _day_window(int(match[3]), _month(match[2]), int(match[1]), match[0])
    if match := _MONTH_DAY_YEAR.search(query):
        return _day_window(int(match[3]), _month(match[1]), int(match[2]), match[0])
    if match := _ISO_DAY.search(query):
        return _day_window(int(match[1]), int(match[2]), int(match[3]), match[0])
    if match := _MONTH_YEAR.search(query):
        year, month = int(match[2]), _month(match[1])
        start = datetime(year, month, 1, tzinfo=UTC)
        end = datetime(year + month // 12, month % 12 + 1, 1, tzinfo=UTC)
        return TimeWindow(start - SLACK, end + SLACK, match[0])
    return _relative_window(query, now) if now is not None else None


def _relative_window(query: str, now: datetime) -> TimeWindow | None:
    """A relative date counted from ``now``: the day it names with :data:`SLACK` (a week ago ±2 days, a month
    ago ±7, a year ago ±30: the further back, the looser people count), or the span it names up to ``now``."""
    if now.tzinfo is None:
        now = now.replace(tzinfo=UTC)
    today = now.replace(hour=0, minute=0, second=0, microsecond=0)
    if match := _YESTERDAY.search(query):
        day = today - timedelta(days=2 if match[0].lower().startswith("the") else 1)
        return TimeWindow(day - SLACK, day + timedelta(days=1) + SLACK, match[0])
    if match := _AGO.search(query):
        count = int(match[1]) if match[1].isdigit() else _COUNTS[" ".join(match[1].lower().split())]
        unit = _UNIT_DAYS[match[2].lower()]
        day = today - timedelta(days=count * unit)
        slack = max(SLACK, timedelta(days={1: 1, 7: 2, 30: 7, 365: 30}[unit]))
        return TimeWindow(day - slack, day + timedelta(days=1) + slack, match[0])
    if match := _LAST_WEEKDAY.search(query):
        back = (today.weekday() - _WEEKDAYS.index(match[1].lower())) % 7 or 7
        day = today - timedelta(days=back)
        return TimeWindow(day - SLACK, day + timedelta(days=1) + SLACK, match[0])
    if match := _PAST.search(query):
        span = timedelta(days=_UNIT_DAYS[match[1].lower()])
        return TimeWindow(today - span - SLACK, now + SLACK, match[0])
    return None


def asks_when(query: str) -> bool:
    """Whether the query asks when something happened or how long it took: it starts with "when", "since
    when", "how long" or "what year / month / day / date / time", followed by a verb such as "did" or "was"
    or ending with "?". A prompt that only starts like one ("When I run pytest it fails") is a statement,
    and a "when" further in ("what did she say when ...") is a clause, not the question."""
    match = _ASKS_WHEN.match(query)
    return match is not None and (match[3] is not None or query.rstrip().endswith("?"))
