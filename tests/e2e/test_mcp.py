"""``claude-memory mcp`` through the real MCP client over stdio, against the real fixture tree: the server
starts the memory service itself on the first tool call, and the module stops it at the end."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from mcp import Client, StdioServerParameters
from mcp.types import CallToolResult

from claude_memory.client.connection import ServiceClient, ServiceUnavailable
from claude_memory.core.events import EVENT_TYPES
from claude_memory.core.paths import RuntimePaths
from claude_memory.service.lock import holder_pid
from support import own_fixtures as fx
from support.shared_data import optional_embedding_model

pytestmark = pytest.mark.anyio

Cli = Callable[..., subprocess.CompletedProcess[str]]
PROJECT = fx.WORK  # the fixtures' project of the greeting echo (the path does not exist here)
ECHO = fx.ECHO_WORD
TOOLS = {"search", "timeline", "get_observations", "forget", "stats", "projects", "why", "tasks", "task", "insights"}


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    return "asyncio"


def alive(pid: int) -> bool:
    """True while ``pid`` runs (a zombie waiting for its reaper does not count)."""
    stat = Path(f"/proc/{pid}/stat")
    if Path("/proc/self/stat").exists():
        try:
            return stat.read_text().rsplit(")", 1)[1].split()[0] != "Z"
        except (FileNotFoundError, ProcessLookupError):
            return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def exited(pid: int, wait: float = 15.0) -> bool:
    """True once ``pid`` has ended (``stop`` returns when the lock is free; the process ends just after)."""
    deadline = time.monotonic() + wait
    while alive(pid):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


def service_pid(data: Path) -> int | None:
    try:
        return int(ServiceClient(data, timeout=5).ping()["pid"])
    except ServiceUnavailable:
        return None


class Store:
    def __init__(self, data: Path, claude_home: Path, model: Path | None) -> None:
        self.data, self.claude_home, self.model = data, claude_home, model
        self.pids: set[int] = set()

    def params(self, *, data: Path | None = None, project: str = PROJECT) -> StdioServerParameters:
        env = {
            "CLAUDE_MEMORY_HOME": str(data or self.data),
            "CLAUDE_CONFIG_DIR": str(self.claude_home),  # what the service watches: never the real ~/.claude
            "CLAUDE_PROJECT_DIR": project,
        }
        if "PYTHONPATH" in os.environ:  # the server runs the code under test (the client passes on little else)
            env["PYTHONPATH"] = os.environ["PYTHONPATH"]
        if self.model is not None:
            env["CLAUDE_MEMORY_MODEL_PATH"] = str(self.model)
        return StdioServerParameters(command=sys.executable, args=["-m", "claude_memory", "mcp"], env=env)

    def note_service(self) -> int:
        pid = service_pid(self.data)
        assert pid is not None, "the MCP server should have started the memory service"
        self.pids.add(pid)
        return pid


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory, fixtures_home: Path, cli: Cli) -> Iterator[Store]:
    data = tmp_path_factory.mktemp("mcp") / "data"
    imported = cli(data, "import", "--claude-home", str(fixtures_home), "--no-wait")
    assert imported.returncode == 0, imported.stderr
    found = Store(data, fixtures_home, optional_embedding_model())
    assert holder_pid(RuntimePaths(data).lock) is None  # no service yet: the MCP server starts it
    yield found
    if (pid := service_pid(data)) is not None:
        found.pids.add(pid)
    stopped = cli(data, "stop")
    assert stopped.returncode == 0, stopped.stderr
    assert holder_pid(RuntimePaths(data).lock) is None
    assert all(exited(pid) for pid in found.pids), "a memory service process outlived the tests"


def fx_history(store: Store, session: str) -> list[dict[str, Any]]:
    """A session's stored events, oldest first, read from the memory service the MCP server started."""
    with ServiceClient(store.data, timeout=30) as client:
        events: list[dict[str, Any]] = client.call("history", {"session": session, "limit": 100})
    return sorted(events, key=lambda e: e["timestamp"])


def text(result: CallToolResult) -> str:
    assert len(result.content) == 1
    block: Any = result.content[0]
    return str(block.text)


async def call(client: Client, tool: str, args: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    result = await client.call_tool(tool, args)
    assert result.is_error is False, text(result)
    assert isinstance(result.structured_content, dict)
    return text(result), result.structured_content


async def fails(client: Client, tool: str, args: dict[str, Any]) -> str:
    result = await client.call_tool(tool, args)
    assert result.is_error is True
    message = text(result)
    assert "Traceback" not in message and "\n" not in message.strip() and message.strip().endswith(".")
    return message


# ---------------------------------------------------------------------- tests


async def test_tools_schemas_and_instructions_without_starting_the_service(tmp_path: Path, store: Store) -> None:
    data = tmp_path / "untouched"
    async with Client(store.params(data=data)) as client:
        assert client.server_info is not None and client.server_info.name == "claude-memory"
        guide = client.instructions or ""
        assert guide.index("`search`") < guide.index("`timeline`") < guide.index("`get_observations`")
        assert "[mem:XXXXXX]" in guide and "all_projects" in guide and "confirm=true" in guide and "`why`" in guide
        tools = {t.name: t for t in (await client.list_tools()).tools}
    assert set(tools) == TOOLS
    search = tools["search"].input_schema
    assert search["required"] == ["query"]
    props = search["properties"]
    assert set(props) == {"query", "limit", "mode", "project", "all_projects", "types", "session"}
    assert props["limit"]["default"] == 10 and props["limit"]["maximum"] == 20
    assert props["mode"]["enum"] == ["keyword", "semantic", "hybrid"] and props["mode"]["default"] == "hybrid"
    assert props["all_projects"] == {**props["all_projects"], "type": "boolean", "default": False}
    types_schema = next(s for s in props["types"]["anyOf"] if s.get("type") == "array")
    assert tuple(types_schema["items"]["enum"]) == tuple(EVENT_TYPES)
    timeline = tools["timeline"].input_schema
    assert timeline["required"] == ["ids"] and timeline["properties"]["ids"]["maxItems"] == 20
    assert timeline["properties"]["before"]["default"] == timeline["properties"]["after"]["default"] == 3
    details = tools["get_observations"].input_schema
    assert details["required"] == ["ids"] and details["properties"]["ids"]["maxItems"] == 20
    forget = tools["forget"].input_schema
    assert forget["required"] == ["ids"] and forget["properties"]["confirm"]["default"] is False
    assert tools["stats"].input_schema["properties"] == {}
    limit = tools["projects"].input_schema["properties"]["limit"]
    assert (limit["default"], limit["minimum"], limit["maximum"]) == (20, 1, 20)
    assert tools["task"].input_schema["required"] == ["id"] and tools["tasks"].input_schema.get("required") is None
    why = tools["why"].input_schema
    assert why["required"] == ["file"] and set(why["properties"]) == {"file", "start_line", "end_line"}
    forget_hints = tools["forget"].annotations
    assert forget_hints is not None and forget_hints.destructive_hint is True
    assert all(tools[n].annotations.read_only_hint for n in TOOLS - {"forget"})  # type: ignore[union-attr]
    assert not (data / "service.lock").exists() or holder_pid(RuntimePaths(data).lock) is None


async def test_search_then_timeline_then_observations(store: Store) -> None:
    async with Client(store.params()) as client:
        found, data = await call(client, "search", {"query": ECHO, "mode": "keyword", "limit": 5})
        store.note_service()
        hits = data["results"]
        assert 1 <= len(hits) <= 5 and {h["project"] for h in hits} == {PROJECT}
        assert ECHO in hits[0]["summary"]
        # every hit says it, or is the follow-up of one that does (ranked by that one's score)
        with ServiceClient(store.data, timeout=30) as service:
            same = service.call("search", {"query": ECHO, "mode": "keyword", "limit": 5, "project": PROJECT})
        breakdown = {str(r["id"]): r["score_breakdown"] for r in same["results"]}
        assert [h["id"] for h in hits] == list(breakdown)
        for h in hits:
            assert "hello" in h["summary"].lower() or breakdown[h["id"]]["keyword"] == 0 < breakdown[h["id"]]["follow"]
        for h in hits:
            assert h["citation"].startswith("mem:") and f"[{h['citation']}]" in found
            assert isinstance(h["id"], str) and h["id"].isdigit()
        assert f"in project {PROJECT}" in found and f"Bash: echo {ECHO}" in found

        top = next(h for h in hits if h["type"] == "tool_use")
        around, timeline = await call(client, "timeline", {"ids": [top["citation"]], "before": 2, "after": 1})
        assert timeline["targets"] == [top["citation"]] and timeline["missing"] == []
        [window] = timeline["windows"]
        assert window["session_id"] == top["session_id"] and window["project"] == PROJECT
        kinds = [e["type"] for e in window["events"]]
        assert "user_prompt" in kinds and "tool_use" in kinds and len(kinds) <= 4
        assert f"**▶ [{top['citation']}]" in around
        session = [e for e in fx_history(store, top["session_id"]) if e["type"] in ("user_prompt", "agent_response")]
        asked = next(e for e in reversed(session) if e["type"] == "user_prompt" and e["timestamp"] <= top["timestamp"])
        answered = next(e for e in session if e["type"] == "agent_response" and e["timestamp"] >= top["timestamp"])
        assert asked["text"] in around and answered["text"] in around and ECHO in answered["text"]

        full, details = await call(client, "get_observations", {"ids": [top["citation"]]})
        [obs] = details["observations"]
        assert obs["citation"] == top["citation"] and obs["clipped"] is False
        assert obs["text"].startswith(f"Bash: echo {ECHO}") and "Print a greeting" in obs["text"]
        assert f"## [{top['citation']}] tool_use" in full and "Print a greeting" in full
        source = Path(obs["source"]["path"])
        assert source.is_relative_to(store.claude_home) and top["session_id"] in source.name
        lines = source.read_text(encoding="utf-8").splitlines()
        quoted = "\n".join(lines[obs["source"]["line_start"] - 1 : obs["source"]["line_end"]])
        assert ECHO in quoted  # the citation points into the real transcript

        hybrid, blended = await call(client, "search", {"query": "greeting hello from fake"})
        assert blended["meta"]["mode"] in {"hybrid", "keyword"} and blended["results"]
        assert {h["project"] for h in blended["results"]} == {PROJECT} and "[mem:" in hybrid


async def test_scope_is_the_current_project_unless_lifted(store: Store) -> None:
    args = {"query": fx.TOPIC, "mode": "keyword", "limit": 20}
    async with Client(store.params()) as client:
        scoped, data = await call(client, "search", args)
        assert data["results"] == [] and data["scope"] == PROJECT
        assert f"No memories match in project {PROJECT}" in scoped and "all_projects=true" in scoped

        everywhere, data = await call(client, "search", {**args, "all_projects": True})
        assert data["scope"] is None and data["results"]
        assert any(fx.TOPIC in h["summary"] for h in data["results"])
        assert {h["project"] for h in data["results"]} == {fx.SHOP, fx.INFRA}
        assert "in all projects" in everywhere and fx.INFRA in everywhere

        _, data = await call(client, "search", {**args, "project": fx.INFRA})
        assert data["results"] and {h["project"] for h in data["results"]} == {fx.INFRA}
    async with Client(store.params(project=fx.INFRA)) as client:
        _, data = await call(client, "search", args)
        assert data["scope"] == fx.INFRA and data["results"]


async def test_forget_needs_confirm_then_the_memory_is_gone(store: Store) -> None:
    async with Client(store.params()) as client:
        _, data = await call(client, "search", {"query": "prefers uv over pip", "mode": "keyword"})
        target = next(h for h in data["results"] if "prefers uv over pip" in h["summary"])
        cite = target["citation"]

        dry, data = await call(client, "forget", {"ids": [cite]})
        assert data == {"refs": [cite], "matching": 1, "forgotten": 0, "confirmed": False}
        assert dry.startswith(f"1 memory would be forgotten ({cite}). Nothing was removed") and "confirm=true" in dry
        _, still = await call(client, "get_observations", {"ids": [cite]})
        assert "prefers uv over pip" in still["observations"][0]["text"]

        done, data = await call(client, "forget", {"ids": [cite], "confirm": True})
        assert data["forgotten"] == 1 and done.startswith(f"Forgot 1 memory for good ({cite})")
        _, after = await call(client, "search", {"query": "prefers uv over pip", "mode": "keyword"})
        assert cite not in {h["citation"] for h in after["results"]}
        assert "No memory" in await fails(client, "get_observations", {"ids": [cite]})
        assert "No memory" in await fails(client, "forget", {"ids": [cite], "confirm": True})
        _, stats = await call(client, "stats", {})
        assert stats["forgotten_events"] >= 1


async def test_tasks_say_when_there_are_none(store: Store) -> None:
    async with Client(store.params()) as client:
        text_, data = await call(client, "tasks", {})
    assert text_ == "No tasks with that status are remembered for this scope." and data == {"tasks": []}


async def test_insights_give_the_preferences_the_user_stated_with_their_citations(store: Store) -> None:
    async with Client(store.params()) as client:
        shown, data = await call(client, "insights", {"all_projects": True})
    (uv,) = [p for p in data["preferences"] if "uv over pip" in p["text"]]
    assert uv["count"] == 1 and uv["evidence"][0]["citation"] in shown
    assert shown.startswith("## The user's preferences and rules") and "uv over pip" in shown


async def test_stats(store: Store) -> None:
    async with Client(store.params()) as client:
        shown, data = await call(client, "stats", {})
    sessions, projects = len(fx.SESSIONS), len(fx.PROJECTS)
    assert data["events"] == sum(data["events_by_type"].values()) > 80
    assert data["sessions"] == sessions and data["projects"] == projects
    assert "## Memory statistics" in shown
    assert f"- Events: {data['events']} in {sessions} sessions across {projects} projects" in shown


async def test_projects(store: Store) -> None:
    """The projects tool: the operation added through the contract, reached from MCP."""
    async with Client(store.params()) as client:
        shown, data = await call(client, "projects", {})
        _, stats = await call(client, "stats", {})
    rows = data["projects"]
    assert {r["project"] for r in rows} == set(fx.PROJECTS) and len(rows) == stats["projects"]
    assert sum(r["events"] for r in rows) == stats["events"] and sum(r["sessions"] for r in rows) == stats["sessions"]
    assert [r["last_ts"] for r in rows] == sorted((r["last_ts"] for r in rows), reverse=True)
    assert shown.startswith("## Projects") and all(r["project"] in shown for r in rows)


async def test_errors_are_one_plain_sentence(store: Store) -> None:
    async with Client(store.params()) as client:
        assert "mem:zzzzzz" in await fails(client, "get_observations", {"ids": ["mem:zzzzzz"]})
        assert "mem:zzzzzz" in await fails(client, "timeline", {"ids": ["mem:zzzzzz"]})
        assert await fails(client, "search", {"query": "x", "limit": 50}) == (
            "Invalid argument limit: Input should be less than or equal to 20."
        )
        assert await fails(client, "search", {}) == "The argument query is required."
        assert "types" in await fails(client, "search", {"query": "x", "types": ["nonsense"]})
        assert "citation" in await fails(client, "get_observations", {"ids": ["  "]})
        assert "ids" in await fails(client, "forget", {"ids": []})
        assert await fails(client, "task", {"id": "task:nope"}) == (
            "No task task:nope is remembered; `claude-memory tasks` lists them."
        )
        assert await fails(client, "why", {"file": "no/such/file.py"}) == f"{PROJECT}/no/such/file.py is not a file."
        assert await fails(client, "why", {"file": __file__, "start_line": 9, "end_line": 2}) == (
            "end_line 2 comes before start_line 9."
        )


async def test_unavailable_service_that_cannot_start(tmp_path: Path, store: Store) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory")
    async with Client(store.params(data=blocker / "data")) as client:
        message = await fails(client, "search", {"query": "hello"})
    assert "not running and could not be started" in message


async def test_reconnects_after_the_service_restarts(store: Store, cli: Cli) -> None:
    async with Client(store.params()) as client:
        _, before = await call(client, "stats", {})
        first = store.note_service()
        stopped = cli(store.data, "stop")
        assert stopped.returncode == 0, stopped.stderr
        assert service_pid(store.data) is None and exited(first)
        _, after = await call(client, "stats", {})  # the same MCP session starts a new service
        second = store.note_service()
    assert second != first and after["events"] == before["events"]
