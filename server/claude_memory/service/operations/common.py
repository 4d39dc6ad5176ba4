"""Parameter and result pieces several operations share: the event filters and an event record."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal, get_args

from pydantic import Field

from claude_memory.core.events import EVENT_TYPES
from claude_memory.core.filters import EventFilters
from claude_memory.service.contract import Params, Result
from claude_memory.service.projects import normalise_project_arg

Mode = Literal["keyword", "semantic", "hybrid"]
MODES: tuple[str, ...] = get_args(Mode)
EventType = Literal["user_prompt", "agent_response", "tool_use", "compaction", "compact_summary", "subagent_prompt"]
Json = dict[str, Any]


def project_arg(value: str | None) -> str | None:
    """A project parameter as the store keys it (its git root); faces send absolute paths."""
    return normalise_project_arg(value) if value else None


class Filters(Params):
    project: str | None = Field(default=None, description="Only this project (a path; normalised to its git root).")
    session: str | None = Field(default=None, description="Only this session id.")
    types: list[str] = Field(default_factory=list, description=f"Only these event types: {', '.join(EVENT_TYPES)}.")
    since: datetime | None = Field(default=None, description="Only events at or after this time (ISO).")
    until: datetime | None = Field(default=None, description="Only events before this time (ISO).")

    def filters(self) -> EventFilters:
        unknown = [t for t in self.types if t not in EVENT_TYPES]
        if unknown:
            raise ValueError(f"Unknown event type {unknown[0]!r}; known: {', '.join(EVENT_TYPES)}.")
        return EventFilters(
            project=project_arg(self.project),
            session_id=self.session,
            types=tuple(self.types),
            since=self.since,
            until=self.until,
        )


class Source(Result):
    path: str | None
    line_start: int | None
    line_end: int | None
    byte_start: int | None
    byte_end: int | None
    uuid: str | None


class Event(Result):
    """One stored event as every listing shows it."""

    id: int
    citation: str | None
    type: str
    timestamp: str | None
    session_id: str
    project: str | None
    agent_id: str | None
    tool_name: str | None
    tool_use_id: str | None = None
    files: list[str]
    text: str
    source: Source
    metadata: Json
