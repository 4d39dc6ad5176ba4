"""Progressive disclosure past the index: the events around some memories (layer 2, ``timeline``) and
memories in full (layer 3, ``details``)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pydantic import Field

from claude_memory.core.disclosure import DEFAULT_CONTEXT, DEFAULT_WINDOW
from claude_memory.service.contract import Engine, Params, Result, operation
from claude_memory.service.operations.common import Event, Json

if TYPE_CHECKING:
    from claude_memory.wire import Progress

Refs = list[str]


class TimelineParams(Params):
    refs: Refs = Field(min_length=1, max_length=10_000, description="Citations (mem:AbC123) or event ids.")
    before: int = Field(default=DEFAULT_WINDOW, ge=0, le=50, description="Events to show before each one.")
    after: int = Field(default=DEFAULT_WINDOW, ge=0, le=50, description="Events to show after each one.")


class DetailsParams(Params):
    refs: Refs = Field(min_length=1, max_length=10_000, description="Citations (mem:AbC123) or event ids.")
    context: int = Field(default=DEFAULT_CONTEXT, ge=0, le=50, description="Neighbouring events each side.")
    via: str = Field(default="service", max_length=40, description="Which face asked (recorded with citation uses).")


class TimelineResult(Result):
    windows: list[Json]
    targets: list[str | int]
    missing: list[str]
    tokens: int


class Detail(Event):
    tools: list[Json]
    tokens: int
    citation_uses: int  # its accesses (core/graduation.py): uses, distinct sessions, the last, and its level
    sessions_used: int
    last_used: str | None
    level: int
    neighbours: list[Json]


class DetailsResult(Result):
    details: list[Detail]
    missing: list[str]


@operation("timeline", TimelineParams, TimelineResult)
def timeline(engine: Engine, p: TimelineParams, progress: Progress) -> dict[str, Any]:
    """Layer 2: the events around some memories, in session order (``timeline --json``)."""
    return engine.memory.timeline(p.refs, before=p.before, after=p.after).to_json()


@operation("details", DetailsParams, DetailsResult)
def details(engine: Engine, p: DetailsParams, progress: Progress) -> dict[str, Any]:
    """Layer 3: memories in full with their source and neighbours (``show --json``); counts a use of each
    citation."""
    found: list[Json] = []
    missing: list[str] = []
    for ref in p.refs:
        item = engine.memory.details(ref, context=p.context, via=p.via)
        if item is None:
            missing.append(ref)
        else:
            found.append(item.to_json())
    return {"details": found, "missing": missing}
