"""Which events a query, a history listing or a session listing looks at (project, session, event types and a
time range), and which a forget removes. Plain data; the store turns them into SQL
(:func:`claude_memory.store.keyword.filter_sql`, :func:`claude_memory.store.forget.selected_ids_sql`)."""

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


@dataclass(frozen=True, slots=True)
class ForgetSelector:
    """Events to forget: all criteria given must hold."""

    event_ids: tuple[int, ...] = ()
    session_id: str | None = None
    project: str | None = None
    before: datetime | None = None

    def is_empty(self) -> bool:
        return not (self.event_ids or self.session_id or self.project or self.before)
