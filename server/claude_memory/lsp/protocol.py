"""The language server's commands (``workspace/executeCommand``): their names and typed arguments.

Each command takes one JSON object argument (or none), validated here; names are camelCase (``allProjects``,
``dryRun``), snake_case is accepted too. Results are the memory service's JSON (docs/lsp.md). This module
imports only pydantic, so ``python -c "from claude_memory.lsp.protocol import COMMANDS"`` stays cheap; the
VS Code extension's tests read the list from here.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from types import MappingProxyType
from typing import Any, Final, Literal, Self

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator
from pydantic.alias_generators import to_camel

SEARCH: Final = "claudeMemory.search"
TIMELINE: Final = "claudeMemory.timeline"
SHOW: Final = "claudeMemory.show"
FORGET: Final = "claudeMemory.forget"
STATS: Final = "claudeMemory.stats"
IMPORT: Final = "claudeMemory.import"
STATUS: Final = "claudeMemory.status"
SESSIONS: Final = "claudeMemory.sessions"
FILE_HISTORY: Final = "claudeMemory.fileHistory"
BLAME: Final = "claudeMemory.blame"
WHY: Final = "claudeMemory.why"
TASKS: Final = "claudeMemory.tasks"
TASK: Final = "claudeMemory.task"
INSIGHTS: Final = "claudeMemory.insights"

COMMANDS: Final[tuple[str, ...]] = (
    SEARCH, TIMELINE, SHOW, FORGET, STATS, IMPORT, STATUS, SESSIONS, FILE_HISTORY, BLAME, WHY, TASKS, TASK, INSIGHTS,
)  # fmt: skip

Mode = Literal["keyword", "semantic", "hybrid"]
EventType = Literal["user_prompt", "agent_response", "tool_use", "compaction", "compact_summary", "subagent_prompt"]
MAX_REFS: Final = 50


class Arguments(BaseModel):
    model_config = ConfigDict(extra="forbid", alias_generator=to_camel, populate_by_name=True, frozen=True)


class Scoped(Arguments):
    """Scope: ``project`` (a path, normalised to its git root), else every project when ``allProjects``
    (default: the ``allProjects`` setting), else the project of the first workspace folder."""

    project: str | None = Field(default=None, max_length=4096)
    all_projects: bool | None = None


class SearchArgs(Scoped):
    query: str = Field(min_length=1, max_length=2_000)
    limit: int | None = Field(default=None, ge=1, le=100)  # default: the searchLimit setting
    mode: Mode | None = None  # default: the searchMode setting
    types: list[EventType] = Field(default_factory=list)
    session: str | None = Field(default=None, max_length=200)


class TimelineArgs(Arguments):
    """Either ``refs`` (citations or event ids: the events around them) or ``session`` (its events)."""

    refs: list[str] = Field(default_factory=list, max_length=MAX_REFS)
    session: str | None = Field(default=None, max_length=200)
    before: int = Field(default=3, ge=0, le=50)
    after: int = Field(default=3, ge=0, le=50)
    limit: int = Field(default=200, ge=1, le=10_000)  # events of a session

    @model_validator(mode="after")
    def _one_target(self) -> Self:
        if bool(self.refs) == bool(self.session):
            raise ValueError("Give either refs (citations) or a session id.")
        return self


class ShowArgs(Arguments):
    """``refs``, or one ``ref``: the memories in full (layer 3)."""

    refs: list[str] = Field(min_length=1, max_length=MAX_REFS)
    context: int = Field(default=2, ge=0, le=20)

    @model_validator(mode="before")
    @classmethod
    def _one_ref(cls, data: Any) -> Any:
        if isinstance(data, dict) and "ref" in data and "refs" not in data:
            data = {**data, "refs": [data["ref"]]}
            data.pop("ref")
        return data


class ForgetArgs(Arguments):
    """What to forget (criteria combine with AND); ``dryRun`` only counts."""

    refs: list[str] = Field(default_factory=list, max_length=10_000)
    session: str | None = Field(default=None, max_length=200)
    project: str | None = Field(default=None, max_length=4096)
    before: datetime | None = None
    dry_run: bool = False

    @model_validator(mode="after")
    def _something(self) -> Self:
        if not (self.refs or self.session or self.project or self.before):
            raise ValueError("Say what to forget: refs, session, project or before.")
        return self


class NoArgs(Arguments):
    pass


class ImportArgs(Arguments):
    project: str | None = Field(default=None, max_length=4096)  # only this project's transcripts


class StatusArgs(Arguments):
    start: bool = True  # start the service if it is not running (false: report it as stopped)


class SessionsArgs(Scoped):
    limit: int = Field(default=20, ge=1, le=1_000)


class FileHistoryArgs(Arguments):
    """A file (``uri`` or ``path``), optionally a ``symbol``; ``project`` scopes the symbol's mentions
    (default: the workspace folder holding the file)."""

    uri: str | None = Field(default=None, max_length=8192)
    path: str | None = Field(default=None, max_length=4096)
    symbol: str | None = Field(default=None, max_length=200)
    project: str | None = Field(default=None, max_length=4096)
    limit: int = Field(default=50, ge=1, le=1_000)

    @model_validator(mode="after")
    def _a_file(self) -> Self:
        if not (self.uri or self.path):
            raise ValueError("Give the file as uri or path.")
        return self


class BlameArgs(Arguments):
    """A document (``uri``): each line range with the edit that wrote it, as the editor holds the text."""

    uri: str = Field(min_length=1, max_length=8192)


class WhyArgs(Arguments):
    """Lines ``startLine``..``endLine`` (1-based; ``endLine`` defaults to ``startLine``) of the document ``uri``."""

    uri: str = Field(min_length=1, max_length=8192)
    start_line: int = Field(ge=1)
    end_line: int | None = Field(default=None, ge=1)

    @model_validator(mode="after")
    def _ordered(self) -> Self:
        if self.end_line is not None and self.end_line < self.start_line:
            raise ValueError(f"endLine {self.end_line} comes before startLine {self.start_line}.")
        return self


class InsightsArgs(Scoped):
    """The user's stated preferences and repeated topics in the scope (``project``, else every project with
    ``allProjects``, else the workspace's); ``all`` adds superseded and forgotten preferences."""

    all: bool = False
    limit: int = Field(default=50, ge=1, le=1_000)


class TasksArgs(Scoped):
    """Tasks of the scope (``project``, else every project with ``allProjects``, else the workspace's);
    ``status`` filters (default: every status), ``open`` keeps the open ones."""

    status: list[Literal["pending", "in_progress", "blocked", "done", "cancelled"]] = Field(default_factory=list)
    open: bool = False
    limit: int = Field(default=200, ge=1, le=10_000)


class TaskArgs(Arguments):
    """One task by its ``id`` (as ``claudeMemory.tasks`` gives it)."""

    id: str = Field(min_length=1, max_length=2_000)


ARGUMENTS: Final[Mapping[str, type[Arguments]]] = MappingProxyType(
    {
        SEARCH: SearchArgs,
        TIMELINE: TimelineArgs,
        SHOW: ShowArgs,
        FORGET: ForgetArgs,
        STATS: NoArgs,
        IMPORT: ImportArgs,
        STATUS: StatusArgs,
        SESSIONS: SessionsArgs,
        FILE_HISTORY: FileHistoryArgs,
        BLAME: BlameArgs,
        WHY: WhyArgs,
        TASKS: TasksArgs,
        TASK: TaskArgs,
        INSIGHTS: InsightsArgs,
    }
)


class ArgumentError(ValueError):
    """The command's arguments are not valid; the message is one plain sentence."""


def parse_arguments(command: str, arguments: list[Any] | None) -> Arguments:
    """The one JSON object argument of ``command`` (none means ``{}``), validated."""
    model = ARGUMENTS.get(command)
    if model is None:
        raise ArgumentError(f"Unknown command {command!r}; known: {', '.join(COMMANDS)}.")
    values = list(arguments or [])
    if len(values) > 1:
        raise ArgumentError(f"{command} takes one JSON object argument, not {len(values)}.")
    raw = values[0] if values else {}
    if raw is None:
        raw = {}
    if not isinstance(raw, dict):
        raise ArgumentError(f"{command} takes one JSON object argument.")
    try:
        return model.model_validate(raw)
    except ValidationError as exc:
        raise ArgumentError(describe(exc)) from None


def describe(exc: ValidationError) -> str:
    """A validation error as one plain sentence."""
    err = exc.errors()[0]
    where = ".".join(str(p) for p in err.get("loc", ()))
    message = str(err.get("msg", "not valid")).removeprefix("Value error, ").rstrip(".")
    if err.get("type") == "missing":
        return f"The argument {where} is required."
    if not where:
        return f"{message}."
    return f"Invalid argument {where}: {message}."
