"""``workspace/executeCommand``: each command validates its one JSON object argument
(:mod:`claude_memory.lsp.protocol`), makes one service call and returns the service's JSON. Searches and
session lists are scoped to the workspace's project unless told otherwise. Failures are JSON-RPC errors
whose message is one plain sentence (invalid arguments: InvalidParams; the service: RequestFailed)."""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, Final

from lsprotocol import types
from pygls.exceptions import JsonRpcException, JsonRpcInvalidParams

from claude_memory import __version__, wire
from claude_memory.core import locations
from claude_memory.lsp import protocol as p
from claude_memory.lsp import provenance
from claude_memory.lsp.projects import uri_to_path
from claude_memory.service.projects import normalise_project_arg
from claude_memory.wire import OpError

if TYPE_CHECKING:
    from claude_memory.lsp.server import MemoryLanguageServer

PROGRESS_EVERY: Final = 1.0  # seconds between $/progress reports while the service imports
IMPORT_TIMEOUT: Final = 6 * 3600.0  # a first import of a large history takes a while
IMPORT_TITLE: Final = "Importing Claude Code history"
IMPORT_WORKING: Final = "Reading transcripts and storing new events"


class CommandFailed(JsonRpcException):
    """The service could not do what the command asked (LSP RequestFailed)."""

    CODE = types.LSPErrorCodes.RequestFailed.value
    MESSAGE = "The command failed."


def scope(ls: MemoryLanguageServer, args: p.Scoped) -> str | None:
    """``project`` if given; else None (every project) with ``allProjects``; else the workspace's project."""
    if args.project:
        return normalise_project_arg(args.project)
    every = args.all_projects if args.all_projects is not None else ls.settings.all_projects
    return None if every else ls.workspace_projects.default()


async def search(ls: MemoryLanguageServer, args: p.SearchArgs, token: Any) -> Any:
    params: dict[str, Any] = {
        "query": args.query,
        "limit": args.limit or ls.settings.search_limit,
        "mode": args.mode or ls.settings.search_mode,
        "project": scope(ls, args),
    }
    if args.types:
        params["types"] = list(args.types)
    if args.session:
        params["session"] = args.session
    return await ls.call("index", params)


async def timeline(ls: MemoryLanguageServer, args: p.TimelineArgs, token: Any) -> Any:
    if args.session:
        return await ls.call("history", {"session": args.session, "limit": args.limit})
    return await ls.call("timeline", {"refs": list(args.refs), "before": args.before, "after": args.after})


async def show(ls: MemoryLanguageServer, args: p.ShowArgs, token: Any) -> Any:
    return await ls.call("details", {"refs": list(args.refs), "context": args.context, "via": "lsp"})


async def forget(ls: MemoryLanguageServer, args: p.ForgetArgs, token: Any) -> Any:
    params: dict[str, Any] = {"refs": list(args.refs), "dry_run": args.dry_run}
    if args.session:
        params["session"] = args.session
    if args.project:
        params["project"] = normalise_project_arg(args.project)
    if args.before:
        params["before"] = args.before.isoformat()
    result = await ls.call("forget", params, retry=args.dry_run)
    ls.hover_cache.clear()
    return result


async def stats(ls: MemoryLanguageServer, args: p.NoArgs, token: Any) -> Any:
    return await ls.call("stats", {})


async def sessions(ls: MemoryLanguageServer, args: p.SessionsArgs, token: Any) -> Any:
    return await ls.call("sessions", {"project": scope(ls, args), "limit": args.limit})


async def file_history(ls: MemoryLanguageServer, args: p.FileHistoryArgs, token: Any) -> Any:
    path = uri_to_path(args.uri) if args.uri else args.path
    if not path:
        raise JsonRpcInvalidParams(message="The uri is not a file: URI.")
    project = normalise_project_arg(args.project) if args.project else ls.workspace_projects.project_of(path)
    params = {"path": path, "symbol": args.symbol, "project": project, "limit": args.limit}
    return await ls.call("file_history", params)


async def blame(ls: MemoryLanguageServer, args: p.BlameArgs, token: Any) -> Any:
    if uri_to_path(args.uri) is None:
        raise JsonRpcInvalidParams(message="The uri is not a file: URI.")
    found = await provenance.blame_of(ls, args.uri)
    if found is None:
        raise OpError(wire.UNAVAILABLE, "The file could not be blamed: the memory service did not answer.")
    return found


async def why(ls: MemoryLanguageServer, args: p.WhyArgs, token: Any) -> Any:
    if uri_to_path(args.uri) is None:
        raise JsonRpcInvalidParams(message="The uri is not a file: URI.")
    return await provenance.why_document(ls, args.uri, args.start_line, args.end_line)


async def tasks(ls: MemoryLanguageServer, args: p.TasksArgs, token: Any) -> Any:
    params = {"project": scope(ls, args), "status": list(args.status), "open": args.open, "limit": args.limit}
    return await ls.call("tasks", params)


async def task(ls: MemoryLanguageServer, args: p.TaskArgs, token: Any) -> Any:
    return await ls.call("task", {"id": args.id})


async def insights(ls: MemoryLanguageServer, args: p.InsightsArgs, token: Any) -> Any:
    return await ls.call("insights", {"project": scope(ls, args), "all": args.all, "limit": args.limit})


async def status(ls: MemoryLanguageServer, args: p.StatusArgs, token: Any) -> Any:
    own = {
        "version": __version__,
        "data_dir": str(ls.transport.data_dir),
        "workspace": ls.workspace_projects.projects(),
        "settings": ls.settings.model_dump(by_alias=True),
        "hover_cache": {"hits": ls.hover_cache.hits, "misses": ls.hover_cache.misses},
    }
    if not args.start and not await asyncio.to_thread(ls.transport.running):
        damaged = locations.store_damaged(str(ls.transport.data_dir))  # shown by the editor's status bar
        return {"running": False, "language_server": own, **({"error": damaged} if damaged else {})}
    found = await ls.call("status", {})
    return {"running": True, **found, "language_server": own}


async def import_history(ls: MemoryLanguageServer, args: p.ImportArgs, token: Any) -> Any:
    """Ask the service to import Claude Code's transcripts, reporting ``$/progress`` meanwhile: on the
    client's ``workDoneToken``, else on one the server creates (when the client supports it)."""
    progress = ls.work_done_progress
    if token is None and ls.supports_progress():
        token = f"claude-memory-import-{uuid.uuid4()}"
        try:
            await progress.create_async(token)
        except Exception:  # the client refused: import without progress
            token = None
    params = {"project": normalise_project_arg(args.project) if args.project else None}
    started = time.monotonic()
    task = asyncio.ensure_future(ls.call("import", params, retry=False, timeout=IMPORT_TIMEOUT))
    if token is not None:
        progress.begin(token, types.WorkDoneProgressBegin(title=IMPORT_TITLE, cancellable=False))
        progress.report(token, types.WorkDoneProgressReport(message=f"{IMPORT_WORKING}…"))
    try:
        while not (await asyncio.wait({task}, timeout=PROGRESS_EVERY))[0]:
            if token is not None:
                elapsed = int(time.monotonic() - started)
                progress.report(token, types.WorkDoneProgressReport(message=f"{IMPORT_WORKING}… {elapsed} s"))
        report = task.result()
    except OpError as exc:
        if token is not None:
            progress.end(token, types.WorkDoneProgressEnd(message=str(exc)))
        raise
    ls.hover_cache.clear()
    if token is not None:
        progress.end(token, types.WorkDoneProgressEnd(message=import_summary(report)))
    return report


def import_summary(report: dict[str, Any]) -> str:
    files, events = report.get("files") or {}, report.get("events") or {}
    new, read, found = int(events.get("new") or 0), int(files.get("read") or 0), int(files.get("found") or 0)
    return f"Imported {new} new event{'s' if new != 1 else ''}; {read} of {found} transcripts had new lines."


Runner = Callable[["MemoryLanguageServer", Any, Any], Awaitable[Any]]
RUNNERS: Final[dict[str, Runner]] = {
    p.SEARCH: search,
    p.TIMELINE: timeline,
    p.SHOW: show,
    p.FORGET: forget,
    p.STATS: stats,
    p.IMPORT: import_history,
    p.STATUS: status,
    p.SESSIONS: sessions,
    p.FILE_HISTORY: file_history,
    p.BLAME: blame,
    p.WHY: why,
    p.TASKS: tasks,
    p.INSIGHTS: insights,
    p.TASK: task,
}


def _command(name: str, run: Runner) -> Callable[..., Awaitable[Any]]:
    async def execute(ls: MemoryLanguageServer, arguments: list[Any], work_done_token: Any = None) -> Any:
        try:
            args = p.parse_arguments(name, arguments)
        except p.ArgumentError as exc:
            raise JsonRpcInvalidParams(message=str(exc)) from None
        try:
            return await run(ls, args, work_done_token)
        except OpError as exc:
            ls.service_problem(exc, show=False)
            raise CommandFailed(message=str(exc), data={"code": exc.code}) from None

    execute.__name__ = f"command_{name.rsplit('.', 1)[-1]}"
    return execute


def register(ls: MemoryLanguageServer) -> None:
    assert set(RUNNERS) == set(p.COMMANDS), "every command in protocol.COMMANDS needs a runner"
    for name in p.COMMANDS:
        ls.command(name)(_command(name, RUNNERS[name]))
