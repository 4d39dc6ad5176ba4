"""Absolute dates named in a query ("on 7 May 2023", "May 7, 2023", "in July 2023", "2023-05-07"), as a
time window that search uses as a ranking signal. Relative phrases ("yesterday", "last week") are left
alone: their anchor is the time of the conversation, not of the question. Also whether a query asks for a
time ("when ...", "how long ..."), which events that name one answer best."""

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


def find_window(query: str) -> TimeWindow | None:
    """The first absolute day or month the query names, widened by :data:`SLACK`; None if it names none."""
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
    return None


def asks_when(query: str) -> bool:
    """Whether the query asks when something happened or how long it took: it starts with "when", "since
    when", "how long" or "what year / month / day / date / time", followed by a verb such as "did" or "was"
    or ending with "?". A prompt that only starts like one ("When I run pytest it fails") is a statement,
    and a "when" further in ("what did she say when ...") is a clause, not the question."""
    match = _ASKS_WHEN.match(query)
    return match is not None and (match[3] is not None or query.rstrip().endswith("?"))
