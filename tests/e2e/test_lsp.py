"""``claude-memory lsp`` through pytest-lsp's real LSP client over stdio, on a store imported from the real
fixture tree: every command, both kinds of hover, the code lens, settings (and their fallback) and the
import's ``$/progress``. The first session starts the memory service; the module stops it at the end.

Expected values are computed from the store's content, read through the service's own API."""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types
from pygls.exceptions import JsonRpcException, JsonRpcInvalidParams
from pytest_lsp import ClientServerConfig, LanguageClient

from claude_memory.client.connection import ServiceClient, ServiceUnavailable
from claude_memory.core import locations, why
from claude_memory.core.disclosure import clip, summary
from claude_memory.core.paths import RuntimePaths
from claude_memory.lsp.protocol import COMMANDS
from claude_memory.service.lock import holder_pid
from support import own_fixtures as fx

Cli = Callable[..., subprocess.CompletedProcess[str]]
PROJECT = fx.SHOP  # the workspace folder (absent here: its own project)
FOLDER = f"file://{PROJECT}"
CODE_PATH = fx.CART_FILE  # written, read, edited, grepped and formatted in the fixtures
CODE_URI = f"file://{CODE_PATH}"
CODE = "class Cart:\n    def apply_discount(self, percent):\n        return self.total() * (100 - percent) / 100\n"
SYMBOL = "apply_discount"  # line 1, characters 8-22
SYMBOL_SPAN = (1, 8, 22)
VOLATILE = {"took_ms", "timings", "citation_uses", "last_used", "sessions_used", "store_bytes"}
MD = types.MarkupKind.Markdown
CAPABILITIES = types.ClientCapabilities(
    window=types.WindowClientCapabilities(work_done_progress=True),
    workspace=types.WorkspaceClientCapabilities(configuration=True),
)


def stable(data: Any) -> Any:
    if isinstance(data, dict):
        return {k: stable(v) for k, v in data.items() if k not in VOLATILE}
    if isinstance(data, list):
        return [stable(v) for v in data]
    return data


def alive(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except (FileNotFoundError, ProcessLookupError, IndexError):
        return False


class Store:
    def __init__(self, data: Path, claude_home: Path) -> None:
        self.data, self.claude_home = data, claude_home
        self.pids: set[int] = set()

    def env(self) -> dict[str, str]:
        env = {**os.environ, "CLAUDE_MEMORY_HOME": str(self.data), "CLAUDE_CONFIG_DIR": str(self.claude_home)}
        env.pop("CLAUDE_MEMORY_MODEL_PATH", None)  # keyword search only: no embedding work in the background
        return env

    def service(self, method: str, params: dict[str, Any] | None = None) -> Any:
        """The service's own answer, for the expected values (the service must be running)."""
        with ServiceClient(self.data, timeout=30) as client:
            self.pids.add(int(client.ping()["pid"]))
            return client.call(method, params or {})


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory, fixtures_home: Path, cli: Cli) -> Iterator[Store]:
    data = tmp_path_factory.mktemp("lsp") / "data"
    imported = cli(data, "import", "--claude-home", str(fixtures_home), "--no-wait")
    assert imported.returncode == 0, imported.stderr
    assert holder_pid(RuntimePaths(data).lock) is None  # no service yet: the language server starts it
    found = Store(data, fixtures_home)
    yield found
    with contextlib.suppress(ServiceUnavailable):
        found.pids.add(int(ServiceClient(data, timeout=5).ping()["pid"]))
    stopped = cli(data, "stop")
    assert stopped.returncode == 0, stopped.stderr
    assert holder_pid(RuntimePaths(data).lock) is None
    deadline = time.monotonic() + 15
    while any(alive(pid) for pid in found.pids) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not any(alive(pid) for pid in found.pids), "a memory service outlived the tests"


@contextlib.asynccontextmanager
async def session(
    store: Store,
    *,
    options: Any = None,
    configuration: dict[str, Any] | None = None,
    capabilities: types.ClientCapabilities = CAPABILITIES,
    data: Path | None = None,
) -> AsyncIterator[LanguageClient]:
    """A real ``python -m claude_memory lsp`` process, initialised with the workspace folder."""
    env = store.env() if data is None else {**store.env(), "CLAUDE_MEMORY_HOME": str(data)}
    config = ClientServerConfig(server_command=[sys.executable, "-m", "claude_memory", "lsp"], server_env=env)
    client: Any = await config.start()
    if configuration is not None:
        client.set_configuration(configuration, section="claudeMemory")
    try:
        client.init_result = await client.initialize_session(
            types.InitializeParams(
                capabilities=capabilities,
                workspace_folders=[types.WorkspaceFolder(uri=FOLDER, name="shop")],
                initialization_options=options,
            )
        )
        yield client
    finally:
        # shutdown + exit, so the server exits (pygls' stop() only waits for that); kill it if it does not
        with contextlib.suppress(Exception):
            await asyncio.wait_for(client.shutdown_session(), 15)
        if client._server is not None and client._server.returncode is None:
            client._server.kill()
        await client.stop()
        assert client._server is None or client._server.returncode == 0, "the language server did not exit cleanly"


def open_doc(client: LanguageClient, uri: str, text: str, language: str) -> None:
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(uri=uri, language_id=language, version=1, text=text)
        )
    )


async def lenses_of(client: LanguageClient, uri: str) -> Any:
    return await client.text_document_code_lens_async(
        types.CodeLensParams(text_document=types.TextDocumentIdentifier(uri=uri))
    )


async def hover_at(client: LanguageClient, uri: str, line: int, character: int) -> types.Hover | None:
    return await client.text_document_hover_async(
        types.HoverParams(
            text_document=types.TextDocumentIdentifier(uri=uri), position=types.Position(line=line, character=character)
        )
    )


async def run(client: LanguageClient, command: str, args: dict[str, Any] | None = None, **kw: Any) -> Any:
    arguments = [args] if args is not None else None
    return await client.workspace_execute_command_async(
        types.ExecuteCommandParams(command=command, arguments=arguments, **kw)
    )


def span(line: int, start: int, end: int) -> types.Range:
    return types.Range(start=types.Position(line=line, character=start), end=types.Position(line=line, character=end))


def cite(store: Store, query: str, project: str) -> dict[str, Any]:
    found = store.service("index", {"query": query, "mode": "keyword", "project": project, "limit": 20})
    return next(h for h in found["results"] if h["type"] == "tool_use")


def when(ts: str) -> str:
    return ts[:16].replace("T", " ")


def escape(text: str) -> str:
    return re.sub(r"([\\`*_{}\[\]<>()#+!|~])", r"\\\1", text)


def citation_markdown(d: dict[str, Any], max_chars: int = 600) -> str:
    src = d["source"]
    shown = clip(d["text"], max_chars)
    more = (
        f"\n\n{len(d['text']):,} characters in full: run claudeMemory.show for the rest." if shown != d["text"] else ""
    )
    return (
        f"**`[{d['citation']}]`** · {d['type']} ({d['tool_name']}) · {when(d['timestamp'])} UTC · "
        f"session `{d['session_id']}`\n\n```text\n{shown}\n```\n\n"
        f"Source: `{src['path']}:{src['line_start']}-{src['line_end']}` · project `{d['project']}`{more}"
    )


VERBS = {"Bash": "ran", "Read": "read", "Edit": "edited", "MultiEdit": "edited", "Write": "wrote", "Grep": "searched"}


def code_markdown(path: str, symbol: str, history: dict[str, Any], limit: int) -> str:
    lines = [f"**Memory of `{Path(path).name}`** · {history['file_events']} events touched this file", ""]
    for e in history["events"][:limit]:
        did = VERBS[e["tool_name"]] if e["type"] == "tool_use" else {"agent_response": "said"}.get(e["type"], "asked")
        about = "" if path in e["files"] else f" (mentions `{symbol}`)"
        lines.append(f"- {when(e['timestamp'])} · {did}{about} · `[{e['citation']}]` {escape(summary(e['text']))}")
    return "\n".join(lines)


def line_provenance(store: Store, text: str, line: int) -> str | None:
    """What a hover says about who wrote ``line`` (1-based) of the cart file holding ``text``: from the service's
    own blame."""
    return why.line_hover(store.service("blame", {"path": CODE_PATH, "text": text}), line)


async def wait_until(check: Callable[[], bool], seconds: float = 10) -> None:
    deadline = time.monotonic() + seconds
    while not check():
        assert time.monotonic() < deadline, "timed out"
        await asyncio.sleep(0.05)


# ---------------------------------------------------------------------- tests


@pytest.mark.asyncio
async def test_capabilities_and_hovers_on_citations(store: Store, tmp_path: Path) -> None:
    async with session(store) as client:
        init: types.InitializeResult = client.init_result  # type: ignore[attr-defined]
        assert init.server_info is not None and init.server_info.name == "claude-memory"
        caps = init.capabilities
        assert caps.execute_command_provider == types.ExecuteCommandOptions(commands=COMMANDS)
        assert caps.hover_provider is True
        assert caps.code_lens_provider == types.CodeLensOptions(resolve_provider=False)

        # The first request starts the service (none ran: see the fixture).
        md_uri = (tmp_path / "notes.md").as_uri()
        line = "The greeting ran ([mem:zzzzzz] is gone)."
        open_doc(client, md_uri, f"# Notes\n\n{line}\n", "markdown")
        gone = await hover_at(client, md_uri, 2, 20)
        start = line.index("[mem:")
        assert gone == types.Hover(
            contents=types.MarkupContent(kind=MD, value="No memory `[mem:zzzzzz]`: forgotten, or never stored here."),
            range=span(2, start, start + len("[mem:zzzzzz]")),
        )
        target = cite(store, fx.ECHO_WORD, fx.WORK)
        [details] = store.service("details", {"refs": [target["citation"]], "context": 0})["details"]
        lines = Path(details["source"]["path"]).read_text(encoding="utf-8").splitlines()
        assert fx.ECHO_WORD in "\n".join(lines[details["source"]["line_start"] - 1 : details["source"]["line_end"]])
        expected = types.MarkupContent(kind=MD, value=citation_markdown(details))
        ref = target["citation"]

        md_text = f"# Notes\n\nSee [{ref}] for the greeting.\n"
        md2 = (tmp_path / "more.md").as_uri()
        open_doc(client, md2, md_text, "markdown")
        assert await hover_at(client, md2, 2, 8) == types.Hover(contents=expected, range=span(2, 4, 4 + len(ref) + 2))

        py_uri = (tmp_path / "tool.py").as_uri()
        open_doc(client, py_uri, f"x = 1  # as in {ref}\n", "python")
        assert await hover_at(client, py_uri, 0, 18) == types.Hover(contents=expected, range=span(0, 15, 15 + len(ref)))

        commit = "untitled:COMMIT_EDITMSG"
        open_doc(client, commit, f"Fix the greeting\n\nSee {ref}.\n", "git-commit")
        assert await hover_at(client, commit, 2, 5) == types.Hover(contents=expected, range=span(2, 4, 4 + len(ref)))
        assert await hover_at(client, commit, 0, 2) is None  # not a file, no citation: nothing to say
        assert await hover_at(client, md2, 0, 3) is None  # a word with no history anywhere


@pytest.mark.asyncio
async def test_code_hover_is_the_file_and_symbol_history_and_cached(store: Store) -> None:
    async with session(store) as client:
        open_doc(client, CODE_URI, CODE, "python")
        hover = await hover_at(client, CODE_URI, 1, 10)  # on apply_discount
        history = store.service("file_history", {"path": CODE_PATH, "symbol": SYMBOL, "project": PROJECT})
        events = history["events"][:5]
        assert history["file_events"] == fx.CART_FILE_EVENTS and len(events) == 5
        assert [e["timestamp"] for e in events] == sorted((e["timestamp"] for e in events), reverse=True)
        mentions = [e for e in events if CODE_PATH not in e["files"]]
        assert mentions and all(re.search(rf"(?<!\w){SYMBOL}(?!\w)", e["text"]) for e in mentions)
        assert all(e["project"] == PROJECT for e in mentions)
        written = line_provenance(store, CODE, 2)  # the line Claude's Edit wrote, first
        assert written is not None and "Add an apply_discount method to the cart" in written
        expected = f"{written}\n\n---\n\n{code_markdown(CODE_PATH, SYMBOL, history, 5)}"
        assert hover == types.Hover(contents=types.MarkupContent(kind=MD, value=expected), range=span(*SYMBOL_SPAN))

        started = time.perf_counter()
        again = await hover_at(client, CODE_URI, 1, 16)
        assert time.perf_counter() - started < 1.0
        assert again == hover
        status = await run(client, "claudeMemory.status", {})
        assert status["language_server"]["hover_cache"] == {"hits": 1, "misses": 1}

        # A keyword is no symbol: the file's own history only.
        on_def = await hover_at(client, CODE_URI, 1, 5)
        only_file = store.service("file_history", {"path": CODE_PATH, "project": PROJECT, "limit": 5})
        assert on_def == types.Hover(
            contents=types.MarkupContent(
                kind=MD, value=f"{written}\n\n---\n\n{code_markdown(CODE_PATH, '', only_file, 5)}"
            ),
            range=span(1, 4, 7),
        )
        # Nothing touched this file and nobody mentioned the word: silent.
        quiet = f"{PROJECT}/src/shop/never_touched.py"
        open_doc(client, f"file://{quiet}", "def zqxwvy():\n    pass\n", "python")
        assert await hover_at(client, f"file://{quiet}", 0, 6) is None


@pytest.mark.asyncio
async def test_code_lens_opens_the_file_timeline(store: Store) -> None:
    async with session(store) as client:
        open_doc(client, CODE_URI, CODE, "python")
        lenses = await lenses_of(client, CODE_URI)
        summary_ = store.service("file_summary", {"paths": [CODE_PATH]})[CODE_PATH]
        assert summary_["count"] == fx.CART_FILE_EVENTS and summary_["last_ts"].startswith(fx.CART_FILE_LAST_TOUCHED)
        command = types.Command(
            title=f"{fx.CART_FILE_EVENTS} memories · last touched {fx.CART_FILE_LAST_TOUCHED}",
            command="claudeMemory.fileHistory",
            arguments=({"uri": CODE_URI},),
        )
        assert lenses[0] == types.CodeLens(range=span(0, 0, 0), command=command)  # (then the functions': below)

        timeline = await run(client, command.command, command.arguments[0])  # type: ignore[index]
        expected = store.service("file_history", {"path": CODE_PATH, "project": PROJECT, "limit": 50})
        assert timeline == expected and len(timeline["events"]) == fx.CART_FILE_EVENTS
        assert all(CODE_PATH in e["files"] for e in timeline["events"])
        assert timeline["events"][0]["timestamp"] == summary_["last_ts"]

        quiet = f"file://{PROJECT}/src/shop/never_touched.py"
        open_doc(client, quiet, "x\n", "python")
        assert await lenses_of(client, quiet) == ()


def change(client: LanguageClient, uri: str, version: int, text: str) -> None:
    """The editor's buffer becomes ``text`` (a whole-document change), unsaved."""
    client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=version),
            content_changes=[types.TextDocumentContentChangeWholeDocument(text=text)],
        )
    )


@pytest.mark.asyncio
async def test_line_hovers_follow_the_buffer_not_the_disk(store: Store) -> None:
    """A hover on a line Claude wrote names the call, the prompt and Claude's words; editing the buffer (never
    saved, and the file does not even exist on disk here) moves, keeps or drops the attribution."""
    async with session(store) as client:
        open_doc(client, CODE_URI, CODE, "python")
        hover = await hover_at(client, CODE_URI, 2, 9)  # on "return": the line's story, then the file's history
        assert hover is not None and isinstance(hover.contents, types.MarkupContent)
        written = line_provenance(store, CODE, 3)
        assert written is not None and hover.contents.value.startswith(written)
        assert written.startswith("**Claude wrote lines 2-3** (exact): Edit [mem:")
        assert "Asked: “Add an apply_discount method to the cart” [mem:" in written
        on_class = await hover_at(client, CODE_URI, 0, 2)  # a line Claude's calls never wrote: the file's history only
        assert on_class is not None and "Claude wrote" not in str(on_class.contents)

        # a person inserts lines above and renames the parameter: the lines moved and changed, still Claude's
        moved = "# shop\n\n" + CODE.replace("percent)", "pct)").replace("(100 - percent)", "(100 - pct)")
        change(client, CODE_URI, 2, moved)
        after = await hover_at(client, CODE_URI, 4, 9)
        assert after is not None and "Claude wrote" in str(after.contents) and "changed since" in str(after.contents)
        assert "Claude wrote" not in str(await hover_at(client, CODE_URI, 0, 3))  # the person's line

        # the person rewrites the body: not Claude's any more
        rewritten = moved.replace("return self.total() * (100 - pct) / 100", "raise NotImplementedError('later')")
        change(client, CODE_URI, 3, rewritten)
        assert "Claude wrote lines" not in str(await hover_at(client, CODE_URI, 4, 9))


@pytest.mark.asyncio
async def test_function_lenses_count_claudes_edits_and_open_their_timeline(store: Store) -> None:
    async with session(store) as client:
        open_doc(client, CODE_URI, CODE, "python")
        lenses = await lenses_of(client, CODE_URI)
        blame = store.service("blame", {"path": CODE_PATH, "text": CODE})
        (edit,) = blame["edits"]
        title = f"Claude: 1 edit in 1 session · last {edit['timestamp'][:10]}"
        args = ({"refs": [edit["citation"]], "before": 1, "after": 1},)
        own = [lens for lens in lenses if lens.command is not None and lens.command.command == "claudeMemory.timeline"]
        assert [(lens.range.start.line, lens.command.title, lens.command.arguments) for lens in own] == [  # type: ignore[union-attr]
            (0, title, args),  # class Cart holds the method
            (1, title, args),  # def apply_discount
        ]
        timeline = await run(client, "claudeMemory.timeline", {"refs": [edit["citation"]], "before": 1, "after": 1})
        events = [e for w in timeline["windows"] for e in w["events"]]
        assert any(e["citation"] == edit["citation"] for e in events)


@pytest.mark.asyncio
async def test_the_server_watches_workspace_files_and_refreshes_lenses(store: Store) -> None:
    """With a client that can, the server registers for file changes; a change on disk (or a save) asks the client
    to refresh its code lenses, so lenses follow edits made outside the editor (by Claude, say)."""
    capabilities = types.ClientCapabilities(
        workspace=types.WorkspaceClientCapabilities(
            configuration=True,
            did_change_watched_files=types.DidChangeWatchedFilesClientCapabilities(dynamic_registration=True),
            code_lens=types.CodeLensWorkspaceClientCapabilities(refresh_support=True),
        )
    )
    registered: list[types.RegistrationParams] = []
    refreshed: list[None] = []
    async with session(store, capabilities=capabilities) as client:

        @client.feature(types.CLIENT_REGISTER_CAPABILITY)
        def on_register(params: types.RegistrationParams) -> None:
            registered.append(params)

        @client.feature(types.WORKSPACE_CODE_LENS_REFRESH)
        def on_refresh(params: None) -> None:
            refreshed.append(params)

        await wait_until(lambda: bool(registered))
        (registration,) = registered[0].registrations
        assert registration.method == types.WORKSPACE_DID_CHANGE_WATCHED_FILES
        client.workspace_did_change_watched_files(
            types.DidChangeWatchedFilesParams(
                changes=[types.FileEvent(uri=CODE_URI, type=types.FileChangeType.Changed)]
            )
        )
        await wait_until(lambda: bool(refreshed))
        client.text_document_did_save(
            types.DidSaveTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=CODE_URI))
        )
        await wait_until(lambda: len(refreshed) == 2)


@pytest.mark.asyncio
async def test_blame_and_why_commands(store: Store) -> None:
    async with session(store) as client:
        open_doc(client, CODE_URI, CODE, "python")
        blamed = await run(client, "claudeMemory.blame", {"uri": CODE_URI})
        assert blamed == store.service("blame", {"path": CODE_PATH, "text": CODE})
        assert [(r["start"], r["end"], r["edit"] is not None) for r in blamed["ranges"]] == [
            (1, 1, False),
            (2, 3, True),
        ]
        told = await run(client, "claudeMemory.why", {"uri": CODE_URI, "startLine": 1, "endLine": 3})
        assert told["markdown"] == why.why_markdown(blamed, 1, 3)
        assert (
            "Line 1: not written by Claude." in told["markdown"] and "Lines 2-3 (exact): Edit [mem:" in told["markdown"]
        )
        with pytest.raises(JsonRpcInvalidParams, match="endLine 1 comes before startLine 3"):
            await run(client, "claudeMemory.why", {"uri": CODE_URI, "startLine": 3, "endLine": 1})
        with pytest.raises(JsonRpcInvalidParams, match="not a file: URI"):
            await run(client, "claudeMemory.blame", {"uri": "untitled:Untitled-1"})


@pytest.mark.asyncio
async def test_commands_return_the_service_json_scoped_to_the_workspace(store: Store) -> None:
    async with session(store) as client:
        found = await run(client, "claudeMemory.search", {"query": "apply discount", "mode": "keyword"})
        expected = store.service(
            "index", {"query": "apply discount", "mode": "keyword", "limit": 10, "project": PROJECT}
        )
        assert stable(found) == stable(expected) and found["results"]
        assert {h["project"] for h in found["results"]} == {PROJECT}
        assert await run(client, "claudeMemory.tasks", {"open": True}) == store.service(
            "tasks", {"open": True, "project": PROJECT, "status": [], "limit": 200}
        )
        with pytest.raises(JsonRpcException, match="No task task:nope is remembered"):
            await run(client, "claudeMemory.task", {"id": "task:nope"})
        assert await run(client, "claudeMemory.insights", {"allProjects": True}) == store.service(
            "insights", {"project": None, "all": False, "limit": 50}
        )

        args = {"query": fx.ECHO_WORD, "allProjects": True, "limit": 20}
        everywhere = await run(client, "claudeMemory.search", args)
        assert {h["project"] for h in everywhere["results"]} == {fx.WORK, fx.SPACED}
        work = await run(client, "claudeMemory.search", {"query": fx.ECHO_WORD, "project": fx.WORK})
        assert work["results"] and {h["project"] for h in work["results"]} == {fx.WORK}
        hit = work["results"][0]["citation"]

        timeline = await run(client, "claudeMemory.timeline", {"refs": [hit], "before": 1, "after": 1})
        assert timeline == store.service("timeline", {"refs": [hit], "before": 1, "after": 1})
        assert timeline["targets"] == [hit]
        session_id = work["results"][0]["session_id"]
        events = await run(client, "claudeMemory.timeline", {"session": session_id})
        assert events == store.service("history", {"session": session_id, "limit": 200}) and events

        shown = await run(client, "claudeMemory.show", {"ref": hit, "context": 0})
        direct = store.service("details", {"refs": [hit], "context": 0})
        assert stable(shown) == stable(direct) and shown["missing"] == []
        assert direct["details"][0]["citation_uses"] == shown["details"][0]["citation_uses"] + 1

        stats = await run(client, "claudeMemory.stats")
        assert stable(stats) == stable(store.service("stats")) and stats["sessions"] == len(fx.SESSIONS)

        sessions = await run(client, "claudeMemory.sessions", {})
        assert sessions == store.service("sessions", {"project": PROJECT, "limit": 20})
        assert {s["session_id"] for s in sessions} == {fx.CART, fx.SECRETS}  # the workspace's own project
        assert len(await run(client, "claudeMemory.sessions", {"allProjects": True})) == len(fx.SESSIONS)

        history = await run(client, "claudeMemory.fileHistory", {"path": CODE_PATH, "symbol": SYMBOL})
        assert history == store.service(
            "file_history", {"path": CODE_PATH, "symbol": SYMBOL, "project": PROJECT, "limit": 50}
        )

        status = await run(client, "claudeMemory.status")
        assert status["running"] is True and status["store"]["events"] == stats["events"]
        assert status["service"]["pid"] == store.service("ping")["pid"]
        assert status["language_server"]["workspace"] == [{"folder": PROJECT, "project": PROJECT}]
        assert status["language_server"]["settings"]["searchMode"] == "hybrid"

        with pytest.raises(JsonRpcInvalidParams, match="Invalid argument limit: Input should be less than or equal"):
            await run(client, "claudeMemory.search", {"query": "x", "limit": 500})
        with pytest.raises(JsonRpcInvalidParams, match=r"^The argument query is required\.$"):
            await run(client, "claudeMemory.search", {})
        with pytest.raises(JsonRpcInvalidParams, match="Give either refs"):
            await run(client, "claudeMemory.timeline", {})


@pytest.mark.asyncio
async def test_forget_then_the_citation_hover_says_so(store: Store, tmp_path: Path) -> None:
    async with session(store) as client:
        found = await run(client, "claudeMemory.search", {"query": "prefers uv over pip", "allProjects": True})
        target = next(h for h in found["results"] if "prefers uv over pip" in h["summary"])
        ref = target["citation"]
        assert await run(client, "claudeMemory.forget", {"refs": [ref], "dryRun": True}) == {
            "matching": 1,
            "forgotten": 0,
        }
        doc = (tmp_path / "n.md").as_uri()
        open_doc(client, doc, f"{ref}\n", "markdown")
        before = await hover_at(client, doc, 0, 2)
        assert before is not None and "prefers uv over pip" in before.contents.value  # type: ignore[union-attr]

        assert await run(client, "claudeMemory.forget", {"refs": [ref]}) == {"matching": 1, "forgotten": 1}
        assert await hover_at(client, doc, 0, 2) == types.Hover(
            contents=types.MarkupContent(kind=MD, value=f"No memory `[{ref}]`: forgotten, or never stored here."),
            range=span(0, 0, len(ref)),
        )
        assert (await run(client, "claudeMemory.show", {"refs": [ref]})) == {"details": [], "missing": [ref]}
        with pytest.raises(JsonRpcException) as failed:
            await run(client, "claudeMemory.forget", {"refs": [ref]})
        assert failed.value.code == types.LSPErrorCodes.RequestFailed.value
        assert failed.value.message == f"No memory {ref} (it may have been forgotten already)."


@pytest.mark.asyncio
async def test_import_reports_progress(store: Store) -> None:
    async with session(store) as client:
        report = await run(client, "claudeMemory.import", {})
        transcripts = len(list((store.claude_home / "projects").rglob("*.jsonl")))
        assert report["files"]["found"] == transcripts and report["events"]["new"] == 0  # already imported
        [(token, progress)] = client.progress_reports.items()
        assert str(token).startswith("claude-memory-import-")
        assert progress[0] == types.WorkDoneProgressBegin(title="Importing Claude Code history", cancellable=False)
        assert progress[1] == types.WorkDoneProgressReport(message="Reading transcripts and storing new events…")
        for middle in progress[2:-1]:
            assert isinstance(middle, types.WorkDoneProgressReport)
            assert re.fullmatch(r"Reading transcripts and storing new events… \d+ s", middle.message or "")
        read, found = report["files"]["read"], report["files"]["found"]
        assert progress[-1] == types.WorkDoneProgressEnd(
            message=f"Imported 0 new events; {read} of {found} transcripts had new lines."
        )


@pytest.mark.asyncio
async def test_settings_fall_back_one_by_one_and_follow_configuration(store: Store, tmp_path: Path) -> None:
    options = {"claudeMemory": {"hoverLimit": 500, "codeLens": False, "hoverMaxChars": 100, "hoverProvenance": False}}
    async with session(store, options=options, configuration={"searchMode": "fuzzy", "hoverLimit": 2}) as client:
        await wait_until(lambda: len(client.messages) >= 2)
        assert client.messages == [
            types.ShowMessageParams(
                type=types.MessageType.Warning,
                message="Ignoring the setting claudeMemory.hoverLimit (Input should be less than or equal to 50); "
                "using the default 5.",
            ),
            types.ShowMessageParams(
                type=types.MessageType.Warning,
                message="Ignoring the setting claudeMemory.searchMode (Input should be 'hybrid', 'keyword' or "
                "'semantic'); using the default 'hybrid'.",
            ),
        ]
        status = await run(client, "claudeMemory.status")
        settings = status["language_server"]["settings"]
        assert (settings["hoverLimit"], settings["codeLens"], settings["hoverMaxChars"], settings["searchMode"]) == (
            2,
            False,
            100,
            "hybrid",
        )
        open_doc(client, CODE_URI, CODE, "python")
        assert await lenses_of(client, CODE_URI) == ()
        history = store.service("file_history", {"path": CODE_PATH, "symbol": SYMBOL, "project": PROJECT})
        hover = await hover_at(client, CODE_URI, 1, 10)
        assert hover == types.Hover(
            contents=types.MarkupContent(kind=MD, value=code_markdown(CODE_PATH, SYMBOL, history, 2)),
            range=span(*SYMBOL_SPAN),
        )
        ref = cite(store, fx.ECHO_WORD, fx.WORK)["citation"]
        [details] = store.service("details", {"refs": [ref], "context": 0})["details"]
        doc = (tmp_path / "c.md").as_uri()
        open_doc(client, doc, f"[{ref}]\n", "markdown")
        assert await hover_at(client, doc, 0, 3) == types.Hover(
            contents=types.MarkupContent(kind=MD, value=citation_markdown(details, 100)), range=span(0, 0, len(ref) + 2)
        )

        client.set_configuration({"codeLens": True, "hoverCitations": False}, section="claudeMemory")
        client.workspace_did_change_configuration(types.DidChangeConfigurationParams(settings=None))
        deadline = time.monotonic() + 10
        while True:
            settings = (await run(client, "claudeMemory.status"))["language_server"]["settings"]
            if settings["codeLens"] or time.monotonic() > deadline:
                break
            await asyncio.sleep(0.05)
        assert settings["codeLens"] is True and settings["hoverCitations"] is False
        assert settings["hoverLimit"] == 5 and settings["hoverMaxChars"] == 100  # the start options still apply
        assert await hover_at(client, doc, 0, 3) is None
        assert len(client.messages) == 2  # the bad start option is not reported twice


@pytest.mark.asyncio
async def test_without_a_service_hovers_are_silent_and_commands_say_why(store: Store, tmp_path: Path) -> None:
    data = tmp_path / "never-started"
    options = {"startService": False}
    async with session(store, options=options, data=data) as client:
        status = await run(client, "claudeMemory.status", {"start": False})
        assert status["running"] is False and status["language_server"]["data_dir"] == str(data)
        why = (
            f"The memory service for {data} is not running (claudeMemory.startService is off); start it with "
            "`claude-memory serve --detach`."
        )
        open_doc(client, CODE_URI, CODE, "python")
        assert await hover_at(client, CODE_URI, 1, 10) is None
        assert await hover_at(client, CODE_URI, 1, 12) is None
        assert client.messages == [types.ShowMessageParams(type=types.MessageType.Warning, message=why)]  # once
        with pytest.raises(JsonRpcException) as failed:
            await run(client, "claudeMemory.stats")
        assert (failed.value.code, failed.value.message) == (types.LSPErrorCodes.RequestFailed.value, why)
    assert holder_pid(RuntimePaths(data).lock) is None


def test_commands_module_is_light() -> None:
    """The extension reads the command list without the language server's dependencies."""
    code = "import sys; from claude_memory.lsp.protocol import COMMANDS; print(len(COMMANDS), 'pygls' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    assert out == [str(len(COMMANDS)), "False"]


@pytest.mark.asyncio
async def test_a_damaged_store_is_named_by_status_and_commands_and_no_service_is_started(
    store: Store, tmp_path: Path
) -> None:
    data = tmp_path / "damaged"
    data.mkdir()
    (data / "memory.duckdb").write_bytes(b"this is not a database")
    sentence = f"The memory store {data / 'memory.duckdb'} is damaged and cannot be read; run 'claude-memory repair'."
    locations.record_damaged(str(data), sentence)  # as a service that failed to open it left it
    async with session(store, data=data) as client:
        status = await run(client, "claudeMemory.status", {"start": False})  # what the status bar shows
        assert status["running"] is False and status["error"] == sentence
        with pytest.raises(JsonRpcException) as failed:
            await run(client, "claudeMemory.stats")  # would start a service: it says why it does not
        assert failed.value.message == sentence
    assert holder_pid(RuntimePaths(data).lock) is None and not (data / "logs" / "service.log").exists()
