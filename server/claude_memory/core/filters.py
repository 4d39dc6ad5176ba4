"""Which events a query, a history listing or a session listing looks at: project, session, event types
and a time range. Plain data; the store turns it into SQL (:func:`claude_memory.store.keyword.filter_sql`)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime


@dataclass(frozen=True, slots=True)
class EventFilters:
    project: str | None = None  # a normalised project path
    session_id: str | None = None
    types: tuple[str, ...] = ()
    since: datetime | None = None
    until: datetime | None = None
