"""The MCP face (``claude-memory mcp``): a stdio MCP server whose tools each translate their arguments into
one operation of the engine contract, called on the memory service, and format the answer
(:mod:`claude_memory.mcp.text`). Where a tool's argument mirrors an operation's parameter, its schema is
the contract's (:func:`claude_memory.service.contract.field`).

The service is started (or attached to) on the first tool call, and again whenever it stopped in between,
so the server survives a service restart. Nothing but the protocol goes to stdout; logs go to stderr.
See docs/mcp.md.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Final, Literal

from mcp.server import MCPServer
from mcp.server.mcpserver.context import Context
from mcp.server.mcpserver.exceptions import ToolError, UnexpectedToolError
from mcp.types import CallToolResult, TextContent, ToolAnnotations
from pydantic import Field, ValidationError

from claude_memory import __version__
from claude_memory.client.transport import StartingTransport
from claude_memory.mcp import text as mcp_text
from claude_memory.service.contract import field
from claude_memory.service.operations.browse import ProjectsParams
from claude_memory.service.operations.common import EventType, Filters, Mode
from claude_memory.service.operations.disclosure import TimelineParams
from claude_memory.service.operations.search import SearchParams
from claude_memory.service.projects import git_root_or_self, normalise_project_arg
from claude_memory.wire import OpError

log = logging.getLogger("claude_memory.mcp")

SERVER_NAME: Final = "claude-memory"
START_WAIT: Final = 30.0  # seconds for a service started on demand to answer
CALL_TIMEOUT: Final = 120.0  # one request (a forget rewrites the store file)

INSTRUCTIONS: Final = """\
Long-term memory of past Claude Code sessions: the user's prompts, your answers and the tool calls, \
captured from transcripts. Use it when earlier work matters (a past decision, a fix, a command that \
worked, what the user prefers).

Work from cheap to expensive, and never fetch everything:
1. `search` first: one line per hit with its citation [mem:XXXXXX], score and confidence (high, \
suggested, none). It searches the current project; all_projects=true searches every project.
2. `timeline` around promising hits (pass their citations) to see what happened before and after.
3. `get_observations` only for the ids you need in full (at most 20 per call).

At the start of work in a project, `tasks` lists what earlier sessions planned and left open (`task` shows one with \
its history): pick those up instead of planning the same work again.

`insights` lists the rules and preferences the user stated in earlier sessions ("always use pnpm", "never push \
without the tests"), each with its cited statements: follow them unless the user says otherwise now.

Before you change code written in an earlier session, `why` (a file and its lines) says which conversation \
wrote them and what the user asked for.

When an answer relies on a memory, cite it as [mem:XXXXXX]. `forget` removes memories for good: call it \
only when the user asks, and it does nothing until called with confirm=true. `stats` says what the \
store holds."""


class ToolFailure(Exception):
    """A tool cannot answer; the message is one plain sentence for the model."""


@dataclass(frozen=True, slots=True)
class McpSettings:
    data_dir: Path
    project: str  # the default search scope (a normalised project path)
    start_wait: float = START_WAIT
    timeout: float = CALL_TIMEOUT


def default_project(env: dict[str, str] | None = None, cwd: str | None = None) -> str:
    """The project Claude Code runs in: the git root of ``$CLAUDE_PROJECT_DIR`` (set for MCP servers),
    else of the current directory."""
    environ = os.environ if env is None else env
    where = environ.get("CLAUDE_PROJECT_DIR", "").strip() or cwd or os.getcwd()
    return git_root_or_self(os.path.abspath(os.path.expanduser(where)))


class Gateway:
    """The engine contract over the memory service, started when none answers (one connection per call, so
    a restarted service is simply connected to again and concurrent tool calls never share a socket)."""

    def __init__(self, settings: McpSettings) -> None:
        self.transport = StartingTransport(settings.data_dir, start_wait=settings.start_wait, timeout=settings.timeout)

    def call(self, method: str, params: dict[str, Any], *, retry: bool = True) -> Any:
        """One operation; ``retry`` allows resending one the service dropped (reads only)."""
        try:
            return self.transport.call(method, params, retry=retry)
        except OpError as exc:
            raise ToolFailure(str(exc)) from None


def _result(answer: mcp_text.ToolText) -> CallToolResult:
    return CallToolResult(content=[TextContent(type="text", text=answer.text)], structured_content=answer.data)


def _error(message: str) -> CallToolResult:
    return CallToolResult(content=[TextContent(type="text", text=message)], is_error=True)


def _refs(ids: list[str]) -> list[str]:
    refs = [i.strip() for i in ids if i.strip()]
    if not refs:
        raise ToolFailure("Give at least one citation like mem:AbC123 (from a search result).")
    return list(dict.fromkeys(refs))


Ids = Annotated[
    list[str],
    Field(
        min_length=1,
        max_length=mcp_text.MAX_IDS,
        description="Citations from search results, like mem:AbC123 (event ids work too).",
    ),
]


class MemoryTools:
    """The tools, bound to one gateway and one default project (no module state)."""

    def __init__(self, settings: McpSettings, gateway: Gateway) -> None:
        self.settings = settings
        self.gateway = gateway

    def _run(self, build: Callable[[], mcp_text.ToolText]) -> CallToolResult:
        try:
            answer = build()
        except ToolFailure as exc:
            return _error(str(exc))
        return _result(answer)

    def search(
        self,
        query: Annotated[str, field(SearchParams, "query", max_length=2_000, description="What to look for.")],
        limit: Annotated[
            int, field(SearchParams, "limit", le=mcp_text.MAX_RESULTS, description="Hits to return.")
        ] = 10,
        mode: Annotated[
            Mode,
            field(
                SearchParams,
                "mode",
                description="hybrid (default): words and meaning; keyword: exact terms; semantic: meaning.",
            ),
        ] = "hybrid",
        project: Annotated[
            str | None, Field(description="Search this project (a path) instead of the current one.")
        ] = None,
        all_projects: Annotated[bool, Field(description="Search every project, not just the current one.")] = False,
        types: Annotated[list[EventType] | None, Field(description="Only these kinds of event.")] = None,
        session: Annotated[str | None, field(Filters, "session")] = None,
    ) -> CallToolResult:
        """Layer 1: find memories. One line per hit: citation, type, time, session, score, confidence and a
        one-line summary. Cheap; start here, then use timeline and get_observations on the hits you need."""

        def build() -> mcp_text.ToolText:
            scope: str | None
            if project and project.strip():
                scope = normalise_project_arg(project.strip())
            else:
                scope = None if all_projects else self.settings.project
            params: dict[str, Any] = {"query": query, "limit": limit, "mode": mode, "project": scope}
            if types:
                params["types"] = list(types)
            if session and session.strip():
                params["session"] = session.strip()
            data = self.gateway.call("index", params)
            return mcp_text.search(data, query=query, scope=scope)

        return self._run(build)

    def timeline(
        self,
        ids: Ids,
        before: Annotated[int, field(TimelineParams, "before", le=20)] = 3,
        after: Annotated[int, field(TimelineParams, "after", le=20)] = 3,
    ) -> CallToolResult:
        """Layer 2: the events around some memories in session order (the targets marked ▶), with short
        previews. Use it on promising search hits before fetching anything in full."""

        def build() -> mcp_text.ToolText:
            refs = _refs(ids)
            data = self.gateway.call("timeline", {"refs": refs, "before": before, "after": after})
            if not data.get("windows"):
                raise ToolFailure(_not_found(refs))
            return mcp_text.timeline(data)

        return self._run(build)

    def get_observations(self, ids: Ids) -> CallToolResult:
        """Layer 3: the full text of some memories, with session, project, source transcript lines, files
        and tool facts. Ask only for the ids you need; long texts are clipped to keep the answer bounded."""

        def build() -> mcp_text.ToolText:
            refs = _refs(ids)
            data = self.gateway.call("details", {"refs": refs, "context": 0, "via": "mcp"})
            if not data.get("details"):
                raise ToolFailure(_not_found(refs))
            return mcp_text.details(data)

        return self._run(build)

    def forget(
        self,
        ids: Ids,
        confirm: Annotated[
            bool, Field(description="true removes them for good; false (default) only says what would go.")
        ] = False,
    ) -> CallToolResult:
        """Forget memories for good (from the store and the search index). Only when the user asks: without
        confirm=true it removes nothing and says how many memories would be forgotten."""

        def build() -> mcp_text.ToolText:
            refs = _refs(ids)
            data = self.gateway.call("forget", {"refs": refs, "dry_run": not confirm}, retry=not confirm)
            return mcp_text.forget(data, refs, confirmed=confirm)

        return self._run(build)

    def stats(self) -> CallToolResult:
        """What the memory store holds: events by type, sessions, projects, time span, forgotten events."""
        return self._run(lambda: mcp_text.stats(self.gateway.call("stats", {})))

    def why(
        self,
        file: Annotated[
            str, Field(min_length=1, max_length=4096, description="The file: absolute, or relative to the project.")
        ],
        start_line: Annotated[
            int | None, Field(ge=1, description="First line of interest (1-based); default: 1.")
        ] = None,
        end_line: Annotated[
            int | None, Field(ge=1, description="Last line of interest; default: start_line, or the end.")
        ] = None,
    ) -> CallToolResult:
        """Which earlier conversation wrote these lines of a file, and why: the prompt that asked for them, your
        answer around the edit and the call, with citations. Ask before changing code written in an earlier
        session; lines changed since (a fuzzy match) are labelled so."""

        def build() -> mcp_text.ToolText:
            path = file.strip()
            if not os.path.isabs(path):
                path = os.path.join(self.settings.project, path)
            path = os.path.normpath(path)
            if not os.path.isfile(path):
                raise ToolFailure(f"{path} is not a file.")
            start = start_line or 1
            end = end_line or (start_line if start_line else None)
            if end is not None and end < start:
                raise ToolFailure(f"end_line {end} comes before start_line {start}.")
            data = self.gateway.call("blame", {"path": path, "start": start, "end": end})
            return mcp_text.why(data, start, end or data["lines"])

        return self._run(build)

    def tasks(
        self,
        status: Annotated[
            list[Literal["pending", "in_progress", "blocked", "done", "cancelled"]] | None,
            Field(description="Only these statuses; default: the open ones (in progress, blocked, pending)."),
        ] = None,
        all_projects: Annotated[bool, Field(description="Every project's tasks, not just the current one's.")] = False,
    ) -> CallToolResult:
        """The tasks planned in earlier sessions with the task tools (TodoWrite, TaskCreate, TaskUpdate), one line
        each: status, title, citation, blockers. Look here at the start of work in a project, before planning it
        again: the same task under another wording is one task."""

        def build() -> mcp_text.ToolText:
            params = {"status": list(status or []), "open": not status,
                      "project": None if all_projects else self.settings.project}  # fmt: skip
            return mcp_text.tasks(self.gateway.call("tasks", params))

        return self._run(build)

    def task(
        self, id: Annotated[str, Field(min_length=1, max_length=2_000, description="A task id from `tasks`.")]
    ) -> CallToolResult:
        """One task in full: status, description, blockers (and suggested ones), tasks it may duplicate, and its
        history, each step with the citation of the tool call it came from."""
        return self._run(lambda: mcp_text.task(self.gateway.call("task", {"id": id})))

    def insights(
        self,
        all_projects: Annotated[
            bool, Field(description="Every project's preferences, not just the current one's.")
        ] = False,
    ) -> CallToolResult:
        """The rules and preferences the user stated in earlier sessions, each with how often and its cited
        statements (a later contrary one replaces an earlier one), and the topics they keep asking about."""
        params = {"project": None if all_projects else self.settings.project}
        return self._run(lambda: mcp_text.insights(self.gateway.call("insights", params)))

    def projects(
        self, limit: Annotated[int, field(ProjectsParams, "limit", le=mcp_text.MAX_RESULTS)] = 20
    ) -> CallToolResult:
        """The projects remembered, most recently active first, with their event and session counts (pass one
        to search as project= to look there)."""
        return self._run(lambda: mcp_text.projects(self.gateway.call("projects", {"limit": limit})))


def _not_found(refs: list[str]) -> str:
    return f"No memory {', '.join(refs)} (forgotten, or never stored); search again for current citations."


def argument_error(exc: ValidationError) -> str:
    """A tool-argument validation error as one plain sentence."""
    err = exc.errors()[0]
    where = ".".join(str(p) for p in err.get("loc", ())) or "arguments"
    if err.get("type") == "missing":
        return f"The argument {where} is required."
    return f"Invalid argument {where}: {str(err.get('msg', 'not valid')).rstrip('.')}."


class MemoryServer(MCPServer[Any]):
    """MCPServer whose argument errors read as one plain sentence (not a pydantic report)."""

    async def call_tool(self, name: str, arguments: dict[str, Any], context: Context[Any, Any] | None = None) -> Any:
        try:
            return await super().call_tool(name, arguments, context)
        except ToolError as exc:
            if not isinstance(exc, UnexpectedToolError) and isinstance(exc.__cause__, ValidationError):
                return _error(argument_error(exc.__cause__))
            raise


READ_ONLY: Final = ToolAnnotations(read_only_hint=True, destructive_hint=False, open_world_hint=False)


def build_server(settings: McpSettings) -> MemoryServer:
    tools = MemoryTools(settings, Gateway(settings))
    server = MemoryServer(SERVER_NAME, instructions=INSTRUCTIONS, version=__version__, log_level="WARNING")
    server.add_tool(tools.search, name="search", annotations=READ_ONLY)
    server.add_tool(tools.timeline, name="timeline", annotations=READ_ONLY)
    server.add_tool(tools.get_observations, name="get_observations", annotations=READ_ONLY)
    server.add_tool(
        tools.forget,
        name="forget",
        annotations=ToolAnnotations(read_only_hint=False, destructive_hint=True, open_world_hint=False),
    )
    server.add_tool(tools.stats, name="stats", annotations=READ_ONLY)
    server.add_tool(tools.projects, name="projects", annotations=READ_ONLY)
    server.add_tool(tools.why, name="why", annotations=READ_ONLY)
    server.add_tool(tools.tasks, name="tasks", annotations=READ_ONLY)
    server.add_tool(tools.task, name="task", annotations=READ_ONLY)
    server.add_tool(tools.insights, name="insights", annotations=READ_ONLY)
    return server


def run(settings: McpSettings) -> None:
    """Serve on stdin/stdout until the client closes the connection."""
    log.info("claude-memory MCP server for %s (project %s)", settings.data_dir, settings.project)
    build_server(settings).run("stdio")
