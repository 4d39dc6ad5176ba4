"""Browsing what is stored: recent events (``history``), sessions, projects and the store's figures
(``stats``)."""

from __future__ import annotations

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


class ProjectsParams(Params):
    limit: int = Field(default=100, ge=1, le=10_000, description="How many projects.")


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
    return engine.memory.sessions(project_arg(p.project), p.limit)


@operation("projects", ProjectsParams, list[Project])
def projects(engine: Engine, p: ProjectsParams, progress: Progress) -> list[dict[str, Any]]:
    """The projects remembered, most recently active first, with their event and session counts."""
    return engine.memory.projects(p.limit)


@operation("stats", NoParams, Stats)
def stats(engine: Engine, p: NoParams, progress: Progress) -> dict[str, Any]:
    """What the store holds (``stats --json``)."""
    return engine.memory.stats()
