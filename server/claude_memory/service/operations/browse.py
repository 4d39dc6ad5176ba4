"""Browsing what is stored: recent events (``history``), sessions, projects, the store's figures (``stats``),
activity per day (``activity``) and what arrived since a point (``changes``, for faces that follow live)."""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Any

from pydantic import Field

from claude_memory.service.contract import Engine, NoParams, Params, Result, operation
from claude_memory.service.operations.common import Event, Filters, Json, project_arg

if TYPE_CHECKING:
    from claude_memory.wire import Progress


class HistoryParams(Filters):
    limit: int = Field(default=20, ge=1, le=10_000, description="How many events.")


class SessionsParams(Params):
    project: str | None = Field(default=None, description="Only this project (a path).")
    limit: int = Field(default=20, ge=1, le=10_000, description="How many sessions.")
    before: datetime | None = Field(
        default=None, description="Only sessions last active before this time (ISO): the page after one ending there."
    )


class ProjectsParams(Params):
    limit: int = Field(default=100, ge=1, le=10_000, description="How many projects.")


class ActivityParams(Params):
    days: int = Field(default=30, ge=1, le=3660, description="How many days, up to the most recent event.")
    project: str | None = Field(default=None, description="Only this project (a path; normalised to its git root).")


class ChangesParams(Params):
    after_seq: int | None = Field(
        default=None, ge=0, description="The insertion number last seen (the `seq` of an earlier answer); none: start."
    )
    limit: int = Field(default=100, ge=1, le=1000, description="At most this many events.")


class Day(Result):
    day: str
    total: int
    by_type: dict[str, int]
    by_project: dict[str, int]  # the window's ten busiest projects ("(none)": no project), the rest as "other"


class ProjectCount(Result):
    project: str | None
    events: int


class Activity(Result):
    first_day: str | None
    last_day: str | None
    days: list[Day]  # only the days with events, oldest first
    projects: list[ProjectCount]  # the busiest of the window, at most 10
    sessions_week: int  # sessions active in the seven days up to last_day


class Changes(Result):
    seq: int  # the newest insertion number: pass it back as after_seq
    events: list[Event]  # inserted after after_seq, oldest first
    more: bool  # more than limit arrived: ask again with the seq of the last event


class Session(Result):
    session_id: str
    project: str | None
    title: str | None
    git_branch: str | None
    claude_code_version: str | None
    first_ts: str | None
    last_ts: str | None
    transcript: str | None
    events: int
    prompts: int
    subagents: int


class Project(Result):
    project: str
    events: int
    sessions: int
    first_ts: str | None
    last_ts: str | None


class Stats(Result):
    events: int
    events_by_type: dict[str, int]
    sessions: int
    projects: int
    subagents: int
    transcripts_tracked: int
    forgotten_events: int
    first_event: str | None
    last_event: str | None
    events_with_masked_secrets: int
    secrets_masked_by_kind: dict[str, int]  # masks per kind of credential (never the values)
    events_with_private_sections: int
    keyword_index: Json
    schema_version: int
    data_dir: str
    store_bytes: int
    graduation: Json  # {levels: {L0: n, ..., L4: n}, last_run}


@operation("history", HistoryParams, list[Event])
def history(engine: Engine, p: HistoryParams, progress: Progress) -> list[dict[str, Any]]:
    """Events matching the filters, newest first."""
    return [e.to_json() for e in engine.memory.history(p.filters(), p.limit)]


@operation("sessions", SessionsParams, list[Session])
def sessions(engine: Engine, p: SessionsParams, progress: Progress) -> list[dict[str, Any]]:
    """Sessions, most recent first, with their event, prompt and subagent counts."""
    return engine.memory.sessions(project_arg(p.project), p.limit, p.before)


@operation("projects", ProjectsParams, list[Project])
def projects(engine: Engine, p: ProjectsParams, progress: Progress) -> list[dict[str, Any]]:
    """The projects remembered, most recently active first, with their event and session counts."""
    return engine.memory.projects(p.limit)


@operation("stats", NoParams, Stats)
def stats(engine: Engine, p: NoParams, progress: Progress) -> dict[str, Any]:
    """What the store holds (``stats --json``)."""
    return engine.memory.stats()


@operation("activity", ActivityParams, Activity)
def activity(engine: Engine, p: ActivityParams, progress: Progress) -> dict[str, Any]:
    """Events per day, by type and by project, over the last ``days`` days of activity (up to the most recent event),
    the busiest projects of that window and the sessions active in its last week."""
    return engine.memory.activity(p.days, project_arg(p.project))


@operation("changes", ChangesParams, Changes)
def changes(engine: Engine, p: ChangesParams, progress: Progress) -> dict[str, Any]:
    """The events stored after insertion number ``after_seq``, oldest first, and the newest number (a live view's
    poll: without ``after_seq`` it only learns where to start)."""
    latest, found = engine.memory.arrived(p.after_seq, p.limit + 1)
    more = len(found) > p.limit
    events = found[: p.limit]
    seq = events[-1].seq if more else latest
    return {"seq": seq, "events": [e.to_json() for e in events], "more": more}
