"""Tasks that survive sessions: ``tasks`` (the list), ``task`` (one, with its history, blockers and suggestions) and
``tasks_rebuild`` (fold the projection again from the task tool calls)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

from pydantic import Field

from claude_memory.service.contract import Engine, NoParams, Params, Result, operation
from claude_memory.service.operations.common import Json, project_arg

if TYPE_CHECKING:
    from claude_memory.wire import Progress

Status = Literal["pending", "in_progress", "blocked", "done", "cancelled"]
OPEN_STATUSES: tuple[Status, ...] = ("in_progress", "blocked", "pending")  # as service/tasks.py orders them


class TasksParams(Params):
    project: str | None = Field(default=None, description="Only this project (a path; normalised to its git root).")
    status: list[Status] = Field(default_factory=list, description="Only these statuses; default: every status.")
    open: bool = Field(default=False, description="Only open tasks (in progress, blocked, pending).")
    limit: int = Field(default=100, ge=1, le=10_000, description="How many tasks.")


class TaskParams(Params):
    id: str = Field(min_length=1, max_length=2_000, description="A task's id (task:<project>:<key>) or an alias.")


class ConditionsParams(Params):
    project: str | None = Field(default=None, description="Only this project (a path; normalised to its git root).")
    resolved: bool | None = Field(default=None, description="Only resolved (true) or unresolved (false) ones.")


class Condition(Result):
    id: str
    text: str
    project: str | None
    resolved: bool
    placeholder: bool = Field(description="The unknown-blocker placeholder of a task blocked with no blocker named.")
    resolved_to: Json | None = Field(description="The task it turned out to be: {id, title}.")
    candidates: list[Json] = Field(description="Tasks it may be (a close but not certain title match).")
    blocks: list[Json] = Field(description="The tasks it blocks, or may block.")


class CorrectParams(Params):
    action: Literal["close", "cancel", "merge"] = Field(description="close: done; cancel; merge: the same as `into`.")
    id: str = Field(min_length=1, max_length=2_000, description="The task to close, cancel, or merge away.")
    into: str | None = Field(default=None, max_length=2_000, description="merge: the task that stays.")


class TaskItem(Result):
    id: str
    title: str
    project: str | None
    status: str
    blockers: list[Json]
    blocker_suggestions: list[Json]
    first_ts: str | None
    last_ts: str | None
    citation: str | None = Field(description="The tool call that last changed it.")


class TaskDetail(TaskItem):
    description: str
    suggested_same: list[str]
    history: list[Json]


class TasksRebuilt(Result):
    tasks: int
    task_events: int


@operation("tasks", TasksParams, list[TaskItem])
def tasks(engine: Engine, p: TasksParams, progress: Progress) -> list[dict[str, Any]]:
    """The tasks Claude Code's task tools (TodoWrite, TaskCreate, TaskUpdate) planned, across sessions: open ones
    (in progress, then blocked, then pending) first, each with its blockers; the most recently changed first."""
    statuses = tuple(p.status) or (OPEN_STATUSES if p.open else ())
    return engine.memory.tasks.listing(project_arg(p.project), statuses, p.limit)


@operation("task", TaskParams, TaskDetail)
def task(engine: Engine, p: TaskParams, progress: Progress) -> dict[str, Any]:
    """One task: its state, blockers (and suggested ones), tasks it may duplicate, and its history, each step with
    the citation of the tool call it came from."""
    return engine.memory.tasks.detail(p.id)


@operation("conditions", ConditionsParams, list[Condition])
def conditions(engine: Engine, p: ConditionsParams, progress: Progress) -> list[dict[str, Any]]:
    """Conditions: blockers named in words that are neither a task nor an artifact ("waiting for the new API"), with
    the tasks they might be, the task they resolved to, and the tasks they block."""
    return engine.memory.tasks.conditions(project_arg(p.project), p.resolved)


@operation("task_correct", CorrectParams, TaskDetail, writes=True)
def task_correct(engine: Engine, p: CorrectParams, progress: Progress) -> dict[str, Any]:
    """A person's correction of the tasks: close one (done), cancel one, or merge one into another (the same work:
    its titles lead to the other from now on). Recorded, not derived, so a rebuild keeps it. Answers the task that
    stays, as ``task``."""
    if (p.action == "merge") != bool(p.into):
        raise ValueError("Give `into` to merge, and only to merge.")
    return engine.memory.tasks.correct(p.action, p.id, p.into)


@operation("tasks_rebuild", NoParams, TasksRebuilt, writes=True)
def tasks_rebuild(engine: Engine, p: NoParams, progress: Progress) -> dict[str, Any]:
    """Fold the task projection again from every stored task tool call (it is derived: the same calls give the same
    projection)."""
    return engine.memory.tasks.rebuild()
