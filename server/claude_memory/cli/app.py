"""The ``claude-memory`` command line: a thin face over the engine contract
(:mod:`claude_memory.service.operations`).

Each store command is one or two ``call(method, params)`` on a transport (:mod:`claude_memory.client.transport`):
the memory service when one runs for the data directory (it then owns the store), else the store opened in
this process. Both answer with the same JSON, which each command renders one way.

Exit codes: 0 success (a search with no hits included), 1 failure (said in one sentence on stderr; a
service that stops answering mid-command included), 2 usage error, 3 the store is in use by another
process, 4 nothing to act on (show, timeline or forget found no such memory, import --project found no
transcripts), 130 interrupted.
"""

from __future__ import annotations

import json
import random
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path
from typing import Annotated, Any, TextIO

import typer
from pydantic import BaseModel, ConfigDict, Field, ValidationError
from rich.console import Console

from claude_memory import __version__, wire
from claude_memory.cli import blame as blame_command
from claude_memory.cli import insights as insights_command
from claude_memory.cli import lsp as lsp_command
from claude_memory.cli import mcp as mcp_command
from claude_memory.cli import model as model_commands
from claude_memory.cli import plugin as plugin_commands
from claude_memory.cli import repair as repair_command
from claude_memory.cli import service as service_commands
from claude_memory.cli import tasks as tasks_command
from claude_memory.cli import web as web_command
from claude_memory.cli.common import (
    EXIT_CODES,
    EXIT_FAILURE,
    EXIT_INTERRUPTED,
    EXIT_NOTHING,
    ClaudeHomeOpt,
    JsonOpt,
    existing_claude_home,
    fail,
)
from claude_memory.cli.report import Bars, report_text
from claude_memory.client.transport import LONG_TIMEOUT, Transport, connect
from claude_memory.config import default_data_dir
from claude_memory.core import graduation
from claude_memory.core.disclosure import (
    DEFAULT_BUDGET,
    DEFAULT_CONTEXT,
    DEFAULT_WINDOW,
    DETAILS,
    INDEX,
    TIMELINE,
    Timeline,
    TimelineItem,
    TimelineWindow,
)
from claude_memory.core.events import EVENT_TYPES
from claude_memory.core.paths import private_umask
from claude_memory.service.operations.common import MODES
from claude_memory.service.projects import normalise_project_arg
from claude_memory.wire import OpError

STORE_WAIT = 600.0  # seconds a command waits for a store another process holds (--wait)

app = typer.Typer(
    name="claude-memory",
    help="Long-term memory for Claude Code: import transcripts, search them, forget what you choose.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


class BatchQuery(BaseModel):
    """One line of ``search --batch`` input."""

    model_config = ConfigDict(extra="forbid")
    query: str = Field(min_length=1)
    project: str | None = None
    limit: int | None = Field(default=None, ge=1, le=1000)
    as_of: datetime | None = None  # when the question is asked: relative dates in it count from then


class _State:
    def __init__(self, data_dir: Path, wait: float = 0.0) -> None:
        self.data_dir = data_dir
        self.wait = wait


def _print_json(data: Any) -> None:
    typer.echo(json.dumps(data, ensure_ascii=False, indent=2, default=str))


@contextmanager
def _transport(ctx: typer.Context) -> Iterator[Transport]:
    """The running memory service of the data directory when one answers, else the store in this process,
    for the length of one command; an error answer ends the command with its sentence and exit code."""
    state: _State = ctx.obj
    try:
        transport = _connect_waiting(state)
        try:
            for warning in transport.warnings:
                typer.echo(f"Warning: {warning}", err=True)
            yield transport
        finally:
            transport.close()
    except OpError as exc:
        fail(str(exc), EXIT_CODES.get(exc.code, EXIT_FAILURE))


def _connect_waiting(state: _State) -> Transport:
    """:func:`connect`, waiting up to ``--wait`` seconds (one notice on stderr) while another process holds
    the store: parallel commands without a service take turns instead of failing."""
    deadline: float | None = None
    while True:
        try:
            return connect(state.data_dir)
        except OpError as exc:
            if exc.code != wire.BUSY or state.wait <= 0:
                raise
            now = time.monotonic()
            if deadline is None:
                deadline = now + state.wait
                typer.echo("Waiting for another claude-memory process to finish with the store...", err=True)
            elif now >= deadline:
                raise OpError(wire.BUSY, f"{str(exc).rstrip('.')} (waited {state.wait:g} s).") from None
            time.sleep(random.uniform(0.05, 0.25))  # (jittered, so that waiting processes do not move in step)


def _parse_time(value: str | None, option: str) -> datetime | None:
    if value is None:
        return None
    try:
        parsed = datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
    except ValueError:
        raise typer.BadParameter(
            f"'{value}' is not a date like 2026-01-31 or 2026-01-31T14:00", param_hint=option
        ) from None
    return parsed if parsed.tzinfo else parsed.astimezone()


def _types(values: list[str] | None) -> tuple[str, ...]:
    for value in values or []:
        if value not in EVENT_TYPES:
            raise typer.BadParameter(f"'{value}' is not one of {', '.join(EVENT_TYPES)}", param_hint="--type")
    return tuple(values or ())


def _version(value: bool) -> None:
    if value:
        typer.echo(f"claude-memory {__version__}")
        raise typer.Exit()


@app.callback()
def main_callback(
    ctx: typer.Context,
    data_dir: Annotated[
        Path | None,
        typer.Option(
            "--data-dir",
            envvar="CLAUDE_MEMORY_HOME",
            help="Where the memory store lives.",
            show_default="the platform's user data directory",
        ),
    ] = None,
    wait: Annotated[
        float,
        typer.Option(
            "--wait",
            min=0,
            help="Seconds to wait for the store while another claude-memory process holds it (0: fail at once).",
        ),
    ] = STORE_WAIT,
    version: Annotated[
        bool, typer.Option("--version", callback=_version, is_eager=True, help="Show the version and exit.")
    ] = False,
) -> None:
    ctx.obj = _State((data_dir or default_data_dir()).expanduser().absolute(), wait)


# ---------------------------------------------------------------------- import


@app.command("import")
def import_cmd(
    ctx: typer.Context,
    claude_home: ClaudeHomeOpt = None,
    project: Annotated[str | None, typer.Option("--project", help="Only this project (a path).")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the report as JSON.")] = False,
    no_wait: Annotated[
        bool, typer.Option("--no-wait", help="Return before the new events are embedded for semantic search.")
    ] = False,
    settle_seconds: Annotated[
        float,
        typer.Option(
            "--settle-seconds",
            min=0,
            help="A transcript untouched this long is finished for now: its last answer is stored (a tool call "
            "without a result waits 24 hours more).",
        ),
    ] = 60.0,
) -> None:
    """Import Claude Code history (all sessions, subagents included). Safe to run again at any time."""
    home = existing_claude_home(claude_home)
    err = Console(stderr=True)
    bars = Bars(err) if err.is_terminal and not as_json else None
    params = {
        "claude_home": str(home),
        "project": normalise_project_arg(project) if project else None,  # the service resolves from another cwd
        "settle_seconds": settle_seconds,
    }
    with _transport(ctx) as transport:
        try:
            data = transport.call("import", params, progress=bars, timeout=LONG_TIMEOUT)
            if project and not data["files"]["found"]:
                fail(f"No Claude Code transcripts for project {project} under {home}.", EXIT_NOTHING)
            waited = transport.call("embed_wait", {"wait": not no_wait}, progress=bars, timeout=LONG_TIMEOUT)
        except KeyboardInterrupt:
            if transport.service is not None:
                fail("Stopped waiting; the memory service finishes the import on its own.", EXIT_INTERRUPTED)
            fail("Import interrupted; what was stored so far is kept, and running it again resumes.", EXIT_INTERRUPTED)
        finally:
            if bars is not None:
                bars.stop()
        service = transport.service
    data["notes"].extend(waited["notes"])
    data["events"]["embedded"] = waited["embedded"]
    if as_json:
        _print_json(data)
    else:
        # Not rich markup: paths and reasons are data, and "[" in them must print as written.
        report_text(data, Console(markup=False, highlight=False))
    if service is not None:
        later = "; it embeds the new events in the background" if no_wait else ""
        typer.echo(f"The running memory service (pid {service.get('pid')}) did this import{later}.", err=as_json)


def _duration(seconds: float) -> str:
    s = int(seconds)
    days, hours, minutes = s // 86400, s // 3600 % 24, s // 60 % 60
    if days:
        return f"{days} d {hours} h"
    if hours:
        return f"{hours} h {minutes} min"
    return f"{minutes} min {s % 60} s" if minutes else f"{s} s"


@app.command()
def status(ctx: typer.Context, as_json: JsonOpt = False) -> None:
    """Whether semantic search is available, and how much is still waiting to be embedded."""
    with _transport(ctx) as transport:
        found = transport.call("status")
    data = {
        "store": str(ctx.obj.data_dir),
        "events": found["store"]["events"],
        **found["embedding"],
        "service": found["service"],
        "watcher": found["watcher"],
        "spool": found["spool"],
        "endless": found["endless"],
        "warnings": found["warnings"],
    }
    service = data["service"]
    if service is not None:
        for warning in data["warnings"]:
            typer.echo(f"Warning: {warning}", err=True)
    if as_json:
        _print_json(data)
        return
    typer.echo(f"Store: {data['store']} ({data['events']} events)")
    spool = data["spool"]
    if service is None:
        typer.echo("Service: not running (starts on demand)")
        if spool["bytes"]:
            typer.echo(f"Hook captures waiting for the service: {spool['bytes']} bytes")
    else:
        typer.echo(
            f"Service: running (pid {service['pid']}, version {service['version']}, up "
            f"{_duration(service['uptime_seconds'])}); tasks queued: {service['queued_tasks']}"
        )
        watcher = data["watcher"]
        if watcher["error"]:
            typer.echo(f"Watcher: failed on {watcher['root']}: {watcher['error']}")
        else:
            running = watcher["running"]
            typer.echo(
                f"Watcher: watching {watcher['root']}"
                if running
                else f"Watcher: off ({watcher['root']} is scanned now and then)"
            )
        typer.echo(f"Spool: {spool['bytes']} bytes of hook captures waiting; batches being applied: "
                   f"{spool['batches_waiting']}")  # fmt: skip
    if data["available"]:
        typer.echo(f"Semantic search: on ({data['model']})")
    else:
        typer.echo(f"Semantic search: off. {data['reason']}")
    typer.echo(
        f"Embedded events: {data['embedded_events']}; waiting: {data['pending']}; failed: {data['failed']}; "
        f"vectors: {data['vectors']}; in the index: {data['index_live']}"
    )
    typer.echo(endless_line(data["endless"]))


def endless_line(e: dict[str, Any]) -> str:
    """``Mode: endless · working set 47 events · continuity 0.85 (seamless) · 23 consolidated, last 5 min ago``."""
    if e["mode"] != "endless":
        return "Mode: session (claude-memory mode endless keeps a working set across sessions)"
    last = e["last_consolidation"]
    ago = (
        _duration(max(0.0, time.time() - datetime.fromisoformat(last.replace("Z", "+00:00")).timestamp()))
        if last
        else None
    )
    filled = round(e["continuity"] * 10)
    bar = "█" * filled + "░" * (10 - filled)
    how = e["transition"] or "no prompts in the last hour"
    return (
        f"Mode: endless · working set {e['working_set']} events · continuity {bar} {e['continuity']:.2f} ({how}) · "
        f"{e['consolidated']} consolidated, " + (f"last {ago} ago" if ago else "never consolidated")
    )


@app.command()
def mode(
    ctx: typer.Context,
    new: Annotated[str | None, typer.Argument(metavar="[endless|session]", help="Switch to this mode.")] = None,
    as_json: JsonOpt = False,
) -> None:
    """Endless or session mode (the default). Endless mode keeps a working set of each project's recent events (24 h,
    at most 100) across sessions, scores how each prompt continues the one before, and consolidates topics that recur
    into consolidated memories; new sessions then open with that context instead of the last session's summary.
    Switching to it takes the last week in; switching back keeps everything it made."""
    if new is not None and new not in ("endless", "session"):
        fail(f"The mode is endless or session, not {new!r}.", 2)
    with _transport(ctx) as transport:
        data = transport.call("mode", {"set": new})
    _print_json(data) if as_json else typer.echo(endless_line(data))


@app.command()
def consolidate(ctx: typer.Context, as_json: JsonOpt = False) -> None:
    """Run endless mode's consolidation now (the service runs it when 100 events wait, after 30 idle minutes, or
    hourly): each topic that recurs in the working set becomes a consolidated memory."""
    with _transport(ctx) as transport:
        data = transport.call("consolidate", {"force": True})
    _print_json(data) if as_json else typer.echo(f"{data['created']} consolidated memories made.")


@app.command()
def reindex(ctx: typer.Context, as_json: JsonOpt = False) -> None:
    """Rebuild the vector index from the store (it is derived and can always be rebuilt)."""
    with _transport(ctx) as transport:
        count = transport.call("reindex", timeout=LONG_TIMEOUT)["vectors"]
    if as_json:
        _print_json({"vectors": count})
    else:
        typer.echo(f"The vector index holds {count} vectors.")


# ---------------------------------------------------------------------- queries


def _filters(
    project: str | None, session: str | None, types: list[str] | None, since: str | None, until: str | None
) -> dict[str, Any]:
    """The filter parameters of search and history (a project path normalised here: the service resolves
    from another directory)."""
    after, before = _parse_time(since, "--since"), _parse_time(until, "--until")
    return {
        "project": normalise_project_arg(project) if project else None,
        "session": session,
        "types": list(_types(types)),
        "since": after.isoformat() if after else None,
        "until": before.isoformat() if before else None,
    }


ProjectOpt = Annotated[str | None, typer.Option("--project", help="Only this project (a path).")]
SessionOpt = Annotated[str | None, typer.Option("--session", help="Only this session id.")]
TypeOpt = Annotated[list[str] | None, typer.Option("--type", help=f"Only these event types: {', '.join(EVENT_TYPES)}.")]
SinceOpt = Annotated[str | None, typer.Option("--since", help="Only events at or after this date/time.")]
UntilOpt = Annotated[str | None, typer.Option("--until", help="Only events before this date/time.")]


def _one_line(text: str, width: int) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"


@app.command()
def search(
    ctx: typer.Context,
    query: Annotated[str | None, typer.Argument(help="Words to look for.", show_default=False)] = None,
    project: ProjectOpt = None,
    session: SessionOpt = None,
    types: TypeOpt = None,
    since: SinceOpt = None,
    until: UntilOpt = None,
    limit: Annotated[int, typer.Option("--limit", min=1, max=1000, help="How many results.")] = 10,
    mode: Annotated[
        str, typer.Option("--mode", help="keyword (BM25), semantic (embeddings) or hybrid (both, blended).")
    ] = "hybrid",
    batch: Annotated[
        Path | None,
        typer.Option(
            "--batch",
            help='JSON lines of {"query", "project", "limit", "as_of"} (- for stdin); one JSON result line for each.',
        ),
    ] = None,
    smart: Annotated[
        bool,
        typer.Option(
            "--smart",
            help="Expand the best hits within a token budget: high-confidence hits in full, suggested ones with "
            "the events around them, the rest as one-line summaries.",
        ),
    ] = False,
    budget: Annotated[
        int | None,
        typer.Option(
            "--budget",
            min=0,
            help=f"Tokens --smart may use (implies --smart; {DEFAULT_BUDGET} when only --smart is given).",
            show_default=False,
        ),
    ] = None,
    as_json: JsonOpt = False,
) -> None:
    """Search everything remembered: keyword (BM25), semantic or hybrid (the default)."""
    if mode not in MODES:
        raise typer.BadParameter(f"'{mode}' is not one of {', '.join(MODES)}", param_hint="--mode")
    filters = _filters(project, session, types, since, until)
    smart_budget = budget if budget is not None else DEFAULT_BUDGET if smart else None
    if batch is not None:
        with _transport(ctx) as transport:
            _search_batch(transport, batch, {**filters, "limit": limit, "mode": mode}, smart_budget)
        return
    if query is None:
        raise typer.BadParameter("give a query, or --batch FILE", param_hint="QUERY")
    params = {**filters, "query": query, "limit": limit, "mode": mode}
    if smart_budget is not None:
        _smart_search(ctx, params, smart_budget, as_json=as_json)
        return
    with _transport(ctx) as transport:
        data = transport.call("search", params)
    if as_json:
        _print_json(data)
        return
    hits, meta = data["results"], data["meta"]
    if not hits:
        typer.echo("No memories match." if not meta.get("note") else meta["note"])
        return
    for rank, hit in enumerate(hits, start=1):
        src = hit["source"]
        typer.echo(
            f"#{rank} [{_cite(hit)}] {hit['type']} · {_when(hit['timestamp'], 16)} · session {hit['session_id'][:8]} "
            f"· score {hit['score']:.3f}"
        )
        typer.echo(f"   {hit['text']}")
        typer.echo(f"   {src['path']}:{src['line_start']}-{src['line_end']}")


def _cite(event: dict[str, Any]) -> str:
    """An event's citation (mem:AbC123), or its id when it has none."""
    return str(event["citation"] or event["id"])


def _when(timestamp: str | None, width: int) -> str:
    """``2026-01-31T14:02:03.5Z`` -> ``2026-01-31 14:02`` (width 16) or ``2026-01-31 14:02:03`` (19)."""
    return timestamp[:width].replace("T", " ") if timestamp else "?"


def _smart_search(ctx: typer.Context, params: dict[str, Any], budget: int, *, as_json: bool) -> None:
    with _transport(ctx) as transport:
        data = transport.call("smart_search", {**params, "budget": budget, "via": "cli"})
    text = data.pop("text")
    if as_json:
        _print_json(data)
        return
    meta = data["meta"]
    if not data["results"] and not meta["omitted"]:
        typer.echo("No memories match." if not meta.get("note") else meta["note"])
        return
    typer.echo(text, nl=False)
    expanded = meta["expanded"]
    line = (
        f"~{meta['tokens']} of {budget} tokens: {expanded[DETAILS]} in full, {expanded[TIMELINE]} with "
        f"the events around them, {expanded[INDEX]} as one line"
    )
    typer.echo(line + (f"; {meta['omitted']} more did not fit." if meta["omitted"] else "."))


def _search_batch(transport: Transport, source: Path, defaults: dict[str, Any], budget: int | None = None) -> None:
    """One JSON line out per JSON line in; a bad input line gets {"error": ...} and the rest go on. With a
    budget each line is a smart search."""
    stream = sys.stdin if str(source) == "-" else _open_text(source)
    with stream:
        for line_no, line in enumerate(stream, start=1):
            if not line.strip():
                continue
            try:
                request = BatchQuery.model_validate_json(line)
            except ValidationError as exc:
                typer.echo(json.dumps({"error": f"line {line_no}: {_first_error(exc)}"}))
                continue
            params = {**defaults, "query": request.query}
            if request.project is not None:
                params["project"] = normalise_project_arg(request.project)
            if request.limit:
                params["limit"] = request.limit
            if request.as_of is not None:
                params["as_of"] = request.as_of.isoformat()
            if budget is not None:
                data = transport.call("smart_search", {**params, "budget": budget, "via": "cli"})
                data.pop("text")
            else:
                data = transport.call("search", params)
            data["meta"]["line"] = line_no
            typer.echo(json.dumps(data, ensure_ascii=False))


def _open_text(path: Path) -> TextIO:
    try:
        return path.open(encoding="utf-8")
    except OSError as exc:
        fail(f"Could not read {path}: {exc.strerror or exc}.")


def _first_error(exc: ValidationError) -> str:
    err = exc.errors()[0]
    where = ".".join(str(p) for p in err.get("loc", ()))
    return f"{where}: {err['msg']}" if where else str(err["msg"])


@app.command()
def show(
    ctx: typer.Context,
    ref: Annotated[str, typer.Argument(help="A citation (mem:AbC123) or event id.")],
    context: Annotated[
        int, typer.Option("--context", min=0, max=50, help="Neighbouring events each side.")
    ] = DEFAULT_CONTEXT,
    as_json: JsonOpt = False,
) -> None:
    """One memory in full, with its source (transcript path, lines, bytes) and its session neighbours."""
    with _transport(ctx) as transport:
        found = transport.call("details", {"refs": [ref], "context": context, "via": "cli"})["details"]
    if not found:
        fail(f"No memory {ref} (it may have been forgotten).", EXIT_NOTHING)
    data = found[0]
    if as_json:
        _print_json(data)
        return
    src = data["source"]
    typer.echo(f"{data['citation'] or data['id']} · {data['type']} · {data['timestamp'] or '?'}")
    typer.echo(f"Session {data['session_id']} · project {data['project'] or '?'}")
    typer.echo(
        f"Source {src['path']}:{src['line_start']}-{src['line_end']} (bytes {src['byte_start']}-{src['byte_end']})"
    )
    last = (data["last_used"] or "?")[:16]
    used = f"Used {data['citation_uses']} times in {data['sessions_used']} sessions, last {last}"
    typer.echo(f"{used} · level {graduation.name(data['level'])}")
    typer.echo("─" * 40)
    typer.echo(data["text"])
    typer.echo("─" * 40)
    for n in data["neighbours"]:
        mark = "▶" if n["is_target"] else " "
        typer.echo(f"{mark} {n['citation'] or n['id']} {n['type']:<16} {_one_line(n['preview'], 90)}")


@app.command()
def timeline(
    ctx: typer.Context,
    refs: Annotated[list[str], typer.Argument(help="Citations (mem:AbC123) or event ids.", show_default=False)],
    before: Annotated[
        int, typer.Option("--before", min=0, max=50, help="Events to show before each one.")
    ] = DEFAULT_WINDOW,
    after: Annotated[
        int, typer.Option("--after", min=0, max=50, help="Events to show after each one.")
    ] = DEFAULT_WINDOW,
    as_json: JsonOpt = False,
) -> None:
    """The events around some memories, in session order (overlapping stretches shown once)."""
    with _transport(ctx) as transport:
        found = transport.call("timeline", {"refs": refs, "before": before, "after": after})
    if not found["windows"]:
        fail(f"No memory {', '.join(found['missing'])} (forgotten, or never stored).", EXIT_NOTHING)
    for ref in found["missing"]:
        typer.echo(f"Warning: no memory {ref}; showing the others.", err=True)
    if as_json:
        _print_json(found)
    else:
        typer.echo(_timeline_text(found), nl=False)


def _timeline_text(data: dict[str, Any]) -> str:
    """A timeline's text, from its JSON (the layer's own renderer, so it reads as it does everywhere)."""
    windows = tuple(
        TimelineWindow(w["session_id"], w["project"], tuple(TimelineItem(**item) for item in w["events"]))
        for w in data["windows"]
    )
    return Timeline(windows, tuple(data["missing"])).text()


@app.command()
def history(
    ctx: typer.Context,
    project: ProjectOpt = None,
    session: SessionOpt = None,
    types: TypeOpt = None,
    since: SinceOpt = None,
    until: UntilOpt = None,
    limit: Annotated[int, typer.Option("--limit", min=1, max=10_000)] = 20,
    as_json: JsonOpt = False,
) -> None:
    """Recent events, newest first (or one session's events with --session)."""
    filters = _filters(project, session, types, since, until)
    with _transport(ctx) as transport:
        events = transport.call("history", {**filters, "limit": limit})
    if as_json:
        _print_json({"events": events, "meta": {"count": len(events), "limit": limit}})
        return
    if not events:
        typer.echo("No events.")
    for e in events:
        label = f"{e['type']}:{e['tool_name']}" if e["tool_name"] else e["type"]
        typer.echo(f"{_when(e['timestamp'], 19)}  {label:<22} [{_cite(e)}] {_one_line(e['text'], 100)}")


@app.command()
def sessions(
    ctx: typer.Context,
    project: ProjectOpt = None,
    limit: Annotated[int, typer.Option("--limit", min=1, max=10_000)] = 20,
    as_json: JsonOpt = False,
) -> None:
    """Sessions remembered, most recent first."""
    with _transport(ctx) as transport:
        rows = transport.call(
            "sessions", {"project": normalise_project_arg(project) if project else None, "limit": limit}
        )
    if as_json:
        _print_json({"sessions": rows, "meta": {"count": len(rows), "limit": limit}})
        return
    if not rows:
        typer.echo("No sessions.")
    for r in rows:
        title = f" · {_one_line(r['title'], 60)}" if r["title"] else ""
        typer.echo(
            f"{r['session_id']}  {(r['last_ts'] or '?')[:16]}  {r['events']:>5} events  {r['project'] or '?'}{title}"
        )


@app.command()
def projects(
    ctx: typer.Context,
    limit: Annotated[int, typer.Option("--limit", min=1, max=10_000)] = 100,
    as_json: JsonOpt = False,
) -> None:
    """Projects remembered, most recently active first, with their events and sessions."""
    with _transport(ctx) as transport:
        rows = transport.call("projects", {"limit": limit})
    if as_json:
        _print_json({"projects": rows, "meta": {"count": len(rows), "limit": limit}})
        return
    if not rows:
        typer.echo("No projects.")
    for r in rows:
        typer.echo(
            f"{(r['last_ts'] or '?')[:16]}  {r['events']:>6} events  {r['sessions']:>4} sessions  {r['project']}"
        )


@app.command()
def stats(ctx: typer.Context, as_json: JsonOpt = False) -> None:
    """What the store holds."""
    with _transport(ctx) as transport:
        data = transport.call("stats")
    if as_json:
        _print_json(data)
        return
    typer.echo(f"Store: {data['data_dir']} ({data['store_bytes'] / 1e6:.1f} MB, schema {data['schema_version']})")
    typer.echo(f"Events: {data['events']} in {data['sessions']} sessions across {data['projects']} projects")
    for kind, count in data["events_by_type"].items():
        typer.echo(f"  {kind:<16} {count}")
    typer.echo(f"Span: {data['first_event'] or '-'} to {data['last_event'] or '-'}")
    typer.echo(
        f"Events with masked secrets: {data['events_with_masked_secrets']}; with private sections removed: "
        f"{data['events_with_private_sections']}; forgotten: {data['forgotten_events']}"
    )
    masked = data.get("secrets_masked_by_kind") or {}
    if masked:
        typer.echo("Secrets masked, by kind: " + ", ".join(f"{kind} {count}" for kind, count in masked.items()))
    levels = data["graduation"]["levels"]
    typer.echo(
        "Levels: "
        + ", ".join(f"{level} {count}" for level, count in levels.items())
        + f" (graduation last run: {data['graduation']['last_run'] or 'never'})"
    )


# ---------------------------------------------------------------------- forget


@app.command()
def forget(
    ctx: typer.Context,
    refs: Annotated[
        list[str] | None, typer.Argument(help="Citations (mem:AbC123) or event ids to forget.", show_default=False)
    ] = None,
    session: Annotated[str | None, typer.Option("--session", help="Forget a whole session.")] = None,
    project: Annotated[str | None, typer.Option("--project", help="Forget a whole project (a path).")] = None,
    before: Annotated[str | None, typer.Option("--before", help="Forget everything before this date.")] = None,
    yes: Annotated[bool, typer.Option("--yes", "-y", help="Do not ask for confirmation.")] = False,
    as_json: JsonOpt = False,
) -> None:
    """Remove memories for good: from the store and the search index. Criteria combine with AND."""
    before_time = _parse_time(before, "--before")
    if not (refs or session or project or before_time):
        raise typer.BadParameter("say what to forget: citations or event ids, --session, --project or --before")
    request = {
        "refs": list(refs or ()),
        "session": session,
        "project": normalise_project_arg(project) if project else None,
        "before": before_time.isoformat() if before_time else None,
    }
    with _transport(ctx) as transport:
        try:
            # counted first, then confirmed, then forgotten
            count = transport.call("forget", {**request, "dry_run": True})["matching"]
            if count == 0:
                if as_json:
                    _print_json({"forgotten": 0})
                fail("Nothing matches; nothing was forgotten.", EXIT_NOTHING)
            if not yes:
                if not sys.stdin.isatty():
                    fail(f"{count} events match; re-run with --yes to forget them (no terminal to ask on).")
                typer.confirm(f"Forget {count} events for good?", abort=True)
            forgotten = transport.call("forget", {**request, "dry_run": False})["forgotten"]
        except OpError as exc:
            if exc.code != wire.NOT_FOUND:
                raise
            fail(f"No memory {exc.ref}; nothing was forgotten." if exc.ref else str(exc), EXIT_NOTHING)
    if as_json:
        _print_json({"forgotten": forgotten})
    else:
        typer.echo(f"Forgot {forgotten} events.")


service_commands.register(app)
repair_command.register(app)
mcp_command.register(app)
lsp_command.register(app)
web_command.register(app)
plugin_commands.register(app)
model_commands.register(app, _transport)
blame_command.register(app, _transport)
tasks_command.register(app, _transport)
insights_command.register(app, _transport)


def main(argv: list[str] | None = None) -> None:
    private_umask()  # whatever this command creates in the data directory is user-only
    command: Callable[..., Any] = typer.main.get_command(app)
    command(args=argv, prog_name="claude-memory")
