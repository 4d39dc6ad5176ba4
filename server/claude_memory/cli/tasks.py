"""``claude-memory tasks`` and ``claude-memory task show|rebuild``: the tasks Claude Code's task tools planned, across
sessions (:mod:`claude_memory.service.operations.tasks`)."""

from __future__ import annotations

import json
from collections.abc import Callable
from contextlib import AbstractContextManager
from typing import Annotated, Any

import typer

from claude_memory.cli.common import EXIT_NOTHING, JsonOpt, fail
from claude_memory.client.transport import Transport
from claude_memory.service.projects import normalise_project_arg

TransportFactory = Callable[[typer.Context], AbstractContextManager[Transport]]
MARK = {"in_progress": "▶", "blocked": "■", "pending": "○", "done": "✓", "cancelled": "✗"}


def _blocker(b: dict[str, Any]) -> str:
    if b.get("resolved_to"):
        return f"{b['title']} (now the task {b['resolved_to']['title']})"
    return str(b["title"]) + (" (placeholder)" if b["placeholder"] else "")


def _blockers(task: dict[str, Any]) -> list[str]:
    lines = [f"    blocked by: {_blocker(b)}" for b in task["blockers"]]
    lines += [f"    maybe blocked by: {b['title']}" for b in task["blocker_suggestions"]]
    return lines


def task_lines(rows: list[dict[str, Any]]) -> list[str]:
    out = []
    for t in rows:
        day = (t["last_ts"] or "")[:10]
        out.append(f"{MARK.get(t['status'], '?')} {t['status']:<11} {day:<10}  {t['title']}")
        out += _blockers(t)
    return out


def _show(rows: list[dict[str, Any]], as_json: bool, empty: str) -> None:
    """Tasks as JSON, or a line each with their blockers; none is ``empty`` and exit 4."""
    if as_json:
        typer.echo(json.dumps(rows, ensure_ascii=False, indent=2))
        return
    if not rows:
        fail(empty, EXIT_NOTHING)
    for line in task_lines(rows):
        typer.echo(line)


def register(app: typer.Typer, transport: TransportFactory) -> None:
    """Add ``tasks`` and the ``task`` group; ``transport`` is the app's (the running service, else this process)."""

    @app.command("tasks")
    def tasks_cmd(
        ctx: typer.Context,
        status: Annotated[
            list[str] | None,
            typer.Option(
                "--status", help="Only this status (repeatable): pending, in_progress, blocked, done, cancelled."
            ),
        ] = None,
        project: Annotated[str | None, typer.Option("--project", help="Only this project (a path).")] = None,
        open_only: Annotated[
            bool, typer.Option("--open", help="Only open tasks (in progress, blocked, pending).")
        ] = False,
        as_json: JsonOpt = False,
    ) -> None:
        """The tasks Claude Code planned with its task tools (TodoWrite, TaskCreate, TaskUpdate), across sessions:
        open ones first, with their blockers.

        A task is the same across sessions when its title is (or nearly is: a reworded title); a to-do list that
        jumps from pending to completed is read as started, then finished; an item dropped from the same session's
        next list is cancelled. Derived from the stored calls: `task rebuild` makes it again."""
        params = {"status": status or [], "open": open_only,
                  "project": normalise_project_arg(project) if project else None}  # fmt: skip
        with transport(ctx) as t:
            rows = t.call("tasks", params)
        _show(
            rows,
            as_json,
            "No tasks are remembered" + (" with those filters." if status or project or open_only else "."),
        )

    @app.command("blocked")
    def blocked_cmd(
        ctx: typer.Context,
        project: Annotated[str | None, typer.Option("--project", help="Only this project (a path).")] = None,
        as_json: JsonOpt = False,
    ) -> None:
        """The blocked tasks, each with what blocks it (a resolved condition shows the task it turned out to be)."""
        params = {"status": ["blocked"], "project": normalise_project_arg(project) if project else None}
        with transport(ctx) as t:
            rows = t.call("tasks", params)
        _show(rows, as_json, "No task is blocked.")

    @app.command("conditions")
    def conditions_cmd(
        ctx: typer.Context,
        resolved: Annotated[
            bool | None, typer.Option("--resolved/--unresolved", help="Only resolved, or only unresolved, ones.")
        ] = None,
        project: Annotated[str | None, typer.Option("--project", help="Only this project (a path).")] = None,
        as_json: JsonOpt = False,
    ) -> None:
        """Blockers named in words that are neither a task nor an issue link: what they block, the tasks they might be,
        and the task they resolved to."""
        params = {"resolved": resolved, "project": normalise_project_arg(project) if project else None}
        with transport(ctx) as t:
            rows = t.call("conditions", params)
        if as_json:
            typer.echo(json.dumps(rows, ensure_ascii=False, indent=2))
            return
        if not rows:
            fail("No conditions are remembered" + (" with those filters." if resolved is not None or project else "."),
                 EXIT_NOTHING)  # fmt: skip
        for c in rows:
            state = (
                f"→ {c['resolved_to']['title']}"
                if c["resolved_to"]
                else ("placeholder" if c["placeholder"] else "open")
            )
            typer.echo(f"{c['text']}  ({state})")
            for b in c["blocks"]:
                typer.echo(f"    blocks: {b['title']}")
            for m in c["candidates"]:
                typer.echo(f"    maybe the task: {m['title']}")

    group = typer.Typer(help="One task: its history and blockers; close or merge tasks by hand; rebuild them all.",
                        no_args_is_help=True)  # fmt: skip

    @group.command("show")
    def show_cmd(
        ctx: typer.Context,
        task_id: Annotated[str, typer.Argument(help="The task's id (task:<project>:<key>), as `tasks --json` shows.")],
        as_json: JsonOpt = False,
    ) -> None:
        """A task's state, blockers and suggested blockers, and its history, each step with the citation of the tool
        call it came from."""
        with transport(ctx) as t:
            data = t.call("task", {"id": task_id})
        if as_json:
            typer.echo(json.dumps(data, ensure_ascii=False, indent=2))
            return
        typer.echo(f"{data['title']}  ({data['status']})")
        typer.echo(f"{data['id']} · project {data['project'] or '?'}")
        if data["description"]:
            typer.echo(data["description"])
        for line in _blockers(data):
            typer.echo(line.strip())
        if data["suggested_same"]:
            typer.echo("Maybe the same as: " + ", ".join(data["suggested_same"]))
        for h in data["history"]:
            what = h.get("to") or h.get("initial_status") or h.get("mode") or ""
            why = f" ({h['reason']})" if h.get("reason") else ""
            typer.echo(f"  {(h['timestamp'] or '?')[:16]}  {h['citation'] or '':<10}  {h['type']} {what}{why}")

    @group.command("close")
    def close_cmd(
        ctx: typer.Context,
        task_id: Annotated[str, typer.Argument(help="The task's id, as `tasks --json` shows.")],
        cancel: Annotated[bool, typer.Option("--cancel", help="Cancelled, not done.")] = False,
        as_json: JsonOpt = False,
    ) -> None:
        """Mark a task done (or cancelled) by hand, when Claude's lists never did. Recorded, so a rebuild keeps it."""
        with transport(ctx) as t:
            data = t.call("task_correct", {"action": "cancel" if cancel else "close", "id": task_id})
        typer.echo(json.dumps(data, ensure_ascii=False, indent=2) if as_json else f"{data['title']}: {data['status']}.")

    @group.command("merge")
    def merge_cmd(
        ctx: typer.Context,
        keep: Annotated[str, typer.Argument(help="The task that stays.")],
        other: Annotated[str, typer.Argument(help="The same work under another title: merged into KEEP.")],
        as_json: JsonOpt = False,
    ) -> None:
        """Two tasks are the same work: OTHER is cancelled as merged, and its titles lead to KEEP from now on
        (recorded, so a rebuild keeps it)."""
        with transport(ctx) as t:
            data = t.call("task_correct", {"action": "merge", "id": other, "into": keep})
        typer.echo(json.dumps(data, ensure_ascii=False, indent=2) if as_json else f"Merged into {data['title']}.")

    @group.command("rebuild")
    def rebuild_cmd(ctx: typer.Context, as_json: JsonOpt = False) -> None:
        """Fold the tasks again from every stored task tool call (they are derived data: the same calls give the same
        tasks)."""
        with transport(ctx) as t:
            data = t.call("tasks_rebuild", {})
        if as_json:
            typer.echo(json.dumps(data))
        else:
            typer.echo(f"{data['tasks']} tasks from {data['task_events']} task events.")

    app.add_typer(group, name="task")
