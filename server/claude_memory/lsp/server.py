"""The language server (``claude-memory lsp``): a pygls ``LanguageServer`` whose state lives on the instance
(settings, the transport to the memory service, workspace projects, hover cache). Its features are thin
(each turns an LSP request into one operation of the engine contract, run on a worker thread, and shapes the
answer) and register themselves (:mod:`claude_memory.lsp.setup`); this module never imports them.

Nothing but the protocol goes to stdout; logs go to stderr."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Generator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from lsprotocol import types
from pygls.exceptions import JsonRpcInvalidParams
from pygls.lsp.server import LanguageServer
from pygls.protocol import LanguageServerProtocol
from pygls.protocol.language_server import lsp_method

from claude_memory import __version__
from claude_memory.client.transport import StartingTransport
from claude_memory.lsp.hover_cache import BlameCache, HoverCache
from claude_memory.lsp.projects import WorkspaceProjects
from claude_memory.lsp.settings import SECTION, LspSettings, parse_settings, section_of
from claude_memory.wire import OpError

log = logging.getLogger("claude_memory.lsp")

NAME: Final = "claude-memory"


class MemoryProtocol(LanguageServerProtocol):
    """Passes each command its raw arguments and the request's ``workDoneToken`` (pygls' own dispatch
    would convert the arguments by annotation and drop the token)."""

    @lsp_method(types.WORKSPACE_EXECUTE_COMMAND)
    def lsp_workspace__execute_command(self, params: types.ExecuteCommandParams) -> Generator[Any, Any, Any]:
        handler = self.fm.commands.get(params.command)
        if handler is None:
            raise JsonRpcInvalidParams(message=f"Unknown command {params.command!r}.")
        result = yield handler, (list(params.arguments or []),), {"work_done_token": params.work_done_token}
        return result


@dataclass(frozen=True)
class ServerOptions:
    data_dir: Path


class MemoryLanguageServer(LanguageServer):
    def __init__(self, options: ServerOptions) -> None:
        super().__init__(NAME, __version__, protocol_cls=MemoryProtocol)
        self.server_options = options
        self.settings = LspSettings()
        self.transport = StartingTransport(options.data_dir)
        self.workspace_projects = WorkspaceProjects()
        self.hover_cache = HoverCache()
        self.blame_cache = BlameCache()  # line blames of open documents (lsp/provenance.py)
        self.initial_settings = LspSettings()  # from initializationOptions
        self._service_down: str | None = None  # the last failure shown, so it is shown once
        self._shown_problems: dict[str, set[str]] = {}  # by source: the problems shown last time

    # ------------------------------------------------------------------ service

    async def call(self, method: str, params: dict[str, Any], *, retry: bool = True, timeout: float = 0) -> Any:
        """One service request on a worker thread (the event loop keeps serving)."""
        return await asyncio.to_thread(self.transport.call, method, params, retry=retry, timeout=timeout)

    def service_problem(self, exc: OpError, *, show: bool = True) -> None:
        """Log a failed request; tell the user once when the service is unavailable (hovers and lenses
        fail silently otherwise)."""
        log.warning("%s", exc)
        if show and exc.code == "unavailable" and self._service_down != str(exc):
            self._service_down = str(exc)
            self.window_show_message(types.ShowMessageParams(type=types.MessageType.Warning, message=str(exc)))

    def service_ok(self) -> None:
        self._service_down = None

    # ------------------------------------------------------------------ settings and workspace

    def supports_progress(self) -> bool:
        window = self.client_capabilities.window
        return bool(window and window.work_done_progress)

    def apply_initialization(self, options: Any) -> None:
        """Settings from ``initializationOptions`` (the base that ``workspace/configuration`` overrides)."""
        self.initial_settings, problems = parse_settings(section_of(options))
        self._use(self.initial_settings, problems, "initializationOptions")

    def apply_configuration(self, value: Any) -> None:
        settings, problems = parse_settings(section_of(value), self.initial_settings)
        self._use(settings, problems, "configuration")

    def _use(self, settings: LspSettings, problems: list[str], source: str) -> None:
        """Take ``settings``; show each problem once (the same bad value given again is not shown again)."""
        self.settings = settings
        transport = self.transport
        transport.start, transport.start_wait, transport.timeout = (
            settings.start_service,
            settings.start_timeout,
            settings.request_timeout,
        )
        self.hover_cache.clear()
        shown = self._shown_problems.get(source, set())
        for problem in problems:
            if problem not in shown:
                log.warning("%s", problem)
                self.window_show_message(types.ShowMessageParams(type=types.MessageType.Warning, message=problem))
        self._shown_problems[source] = set(problems)

    async def pull_configuration(self) -> None:
        """Settings from ``workspace/configuration`` over the initialization options (if the client has it)."""
        workspace = self.client_capabilities.workspace
        if not (workspace and workspace.configuration):
            return
        try:
            answer = await self.workspace_configuration_async(
                types.ConfigurationParams(items=[types.ConfigurationItem(section=SECTION)])
            )
        except Exception as exc:  # a client that fails this request keeps the settings it gave at start
            log.warning("workspace/configuration failed: %s", exc)
            return
        self.apply_configuration(answer[0] if answer else None)

    def refresh_folders(self) -> None:
        folders = [f.uri for f in self.workspace.folders.values()]
        if not folders and self.workspace.root_uri:
            folders = [self.workspace.root_uri]
        self.workspace_projects.set_folders(folders)
