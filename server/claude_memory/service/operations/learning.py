"""What the memory learns from use: ``graduate`` (the graduation worker's pass, now); from the prompts: ``insights``
(preferences and repeated topics), ``insight``, ``insight_mark`` (pin, forget) and ``insights_rebuild``; and endless
mode: ``mode``, ``endless`` (its state, working set and consolidated memories) and ``consolidate``."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

from pydantic import ConfigDict, Field

from claude_memory.service.contract import Engine, NoParams, NotFound, Params, Priority, Result, operation
from claude_memory.service.operations.common import Json, project_arg

if TYPE_CHECKING:
    from claude_memory.wire import Progress


class GraduateParams(Params):
    ignore_cooldown: bool = Field(
        default=False, description="Evaluate memories evaluated within the last hour too (a forced run)."
    )


class Graduated(Result):
    evaluated: int
    graduated: int
    by_level: dict[str, int]  # promotions out of each level: {"L0": 3, ...}


@operation("graduate", GraduateParams, Graduated, Priority.INTERACTIVE, writes=True)
def graduate(engine: Engine, p: GraduateParams, progress: Progress) -> dict[str, Any]:
    """Run the graduation worker now (it runs every 5 minutes in the service): used memories climb a level when
    their accesses, confidence, sessions and recency meet the seed's promotion table."""
    return engine.memory.graduation.run(cooldown=not p.ignore_cooldown)


class InsightsParams(Params):
    project: str | None = Field(default=None, description="Only this project (a path; normalised to its git root).")
    all: bool = Field(default=False, description="Superseded and forgotten preferences too.")
    limit: int = Field(default=50, ge=1, le=1_000, description="How many of each kind.")


class InsightParams(Params):
    id: str = Field(
        min_length=1, max_length=400, description="An insight's id (pref:…, topic:…) or a citation of its evidence."
    )


class MarkParams(InsightParams):
    mark: Literal["pin", "forget", "none"] = Field(
        description="pin: always listed first and given at SessionStart; forget: never listed nor given (its evidence "
        "stays in memory); none: clear the mark."
    )


class Insight(Result):
    model_config = ConfigDict(extra="allow")  # a preference or a topic, as documented in service/insights.py
    id: str
    kind: Literal["preference", "topic"]
    text: str
    count: int
    evidence: list[Json]


class InsightsResult(Result):
    preferences: list[Insight]
    topics: list[Insight]


class InsightsRebuilt(Result):
    prompts: int


@operation("insights", InsightsParams, InsightsResult)
def insights(engine: Engine, p: InsightsParams, progress: Progress) -> dict[str, Any]:
    """What the user's prompts say that outlives them: the preferences and rules they stated (each with every
    statement as cited evidence, its scope, and what it supersedes) and the topics they keep asking about."""
    return engine.memory.insights.listing(project_arg(p.project), include_all=p.all, limit=p.limit)


@operation("insight", InsightParams, Insight)
def insight(engine: Engine, p: InsightParams, progress: Progress) -> dict[str, Any]:
    """One insight with all its evidence (superseded or forgotten ones too)."""
    found = engine.memory.insights.show(p.id.strip())
    if found is None:
        raise NotFound(f"No insight is called {p.id.strip()!r}.", p.id)
    return found


@operation("insight_mark", MarkParams, Insight, writes=True)
def insight_mark(engine: Engine, p: MarkParams, progress: Progress) -> dict[str, Any]:
    """Pin a preference, forget it, or clear its mark."""
    found = engine.memory.insights.mark(p.id.strip(), None if p.mark == "none" else p.mark)
    if found is None:
        raise NotFound(f"No preference is called {p.id.strip()!r}.", p.id)
    return found


@operation("insights_rebuild", NoParams, InsightsRebuilt, Priority.LONG, writes=True)
def insights_rebuild(engine: Engine, p: NoParams, progress: Progress) -> dict[str, Any]:
    """Read every prompt again for insights (what the incremental reading gives too)."""
    return {"prompts": engine.memory.insights.rebuild()}


class ModeParams(Params):
    set: Literal["endless", "session"] | None = Field(
        default=None, description="Switch to this mode; none: only say which one is on."
    )
    config: Json | None = Field(
        default=None,
        description="Endless mode's settings to change (seed §9.1): {working_set: {max_events, time_window_hours, "
        "min_relevance_score}, consolidation: {trigger_interval_seconds, trigger_event_count, trigger_idle_seconds, "
        "min_events, max_summary_chars}, continuity: {min_score_for_seamless, topic_decay_hours}}.",
    )


class EndlessState(Result):
    mode: str
    working_set: int
    continuity: float
    transition: str | None
    consolidated: int
    last_consolidation: str | None
    transitions_24h: dict[str, int]


class EndlessParams(Params):
    project: str | None = Field(default=None, description="Only this project (a path; normalised to its git root).")
    limit: int = Field(default=20, ge=1, le=1_000, description="How many working-set items and consolidated memories.")


class EndlessView(Result):
    state: EndlessState
    working_set: list[Json]
    consolidated: list[Json]


class ConsolidateParams(Params):
    force: bool = Field(default=True, description="Run even when no trigger holds (count, idle time, an hour).")


class Consolidated(Result):
    ran: bool
    created: int


@operation("mode", ModeParams, EndlessState, writes=True)
def mode(engine: Engine, p: ModeParams, progress: Progress) -> dict[str, Any]:
    """Endless or session mode (the default). Endless keeps a working set of recent events across sessions, logs
    each prompt's continuity and consolidates recurring topics; switching to it takes the last week in. Switching
    back keeps everything it made."""
    memory = engine.memory
    if p.config is not None:
        memory.endless.configure(p.config)
    return memory.endless.set_mode(p.set) if p.set else memory.endless.status(None)


@operation("endless", EndlessParams, EndlessView)
def endless(engine: Engine, p: EndlessParams, progress: Progress) -> dict[str, Any]:
    """Endless mode's state for a project (or all): the mode, continuity, the working set and consolidated
    memories."""
    project = project_arg(p.project)
    memory = engine.memory
    return {
        "state": memory.endless.status(project),
        "working_set": memory.endless.working_set(project, p.limit),
        "consolidated": memory.endless.consolidated(project, p.limit),
    }


@operation("consolidate", ConsolidateParams, Consolidated, writes=True)
def consolidate(engine: Engine, p: ConsolidateParams, progress: Progress) -> dict[str, Any]:
    """Run endless mode's consolidation now: each recurring topic of the working set becomes a consolidated memory."""
    memory = engine.memory
    memory.endless.refresh()
    return memory.endless.consolidate(force=p.force)
